// Package fetch is web-fetch's web_fetch as plain Go: the request goes to
// a Doer (the host's http_request in the module, a real client in tests),
// and the response becomes spec 003's result.
package fetch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Timeouts of spec 003, which the host enforces.
const (
	FirstByteTimeoutMS = 1000
	BodyTimeoutMS      = 30000
)

// TimedOutSuffix ends content whose body did not arrive in time.
const TimedOutSuffix = "[..more content timed out...]"

// MaxContent caps the content returned, after conversion, so the result
// stays within the host's output limit.
const MaxContent = 512 << 10

// TooLongSuffix ends content cut at MaxContent.
const TooLongSuffix = "[..content cut at 524288 bytes...]"

// BinaryError is the result's error for content that is not text.
const BinaryError = "binary content is not supported: only the metadata is returned"

// ErrInvalid marks arguments the tool cannot use.
var ErrInvalid = errors.New("invalid argument")

// Request is what the host is asked to do.
type Request struct {
	URL                string            `json:"url"`
	Method             string            `json:"method"`
	Headers            map[string]string `json:"headers,omitempty"`
	FirstByteTimeoutMS int               `json:"first_byte_timeout_ms,omitempty"`
	BodyTimeoutMS      int               `json:"body_timeout_ms,omitempty"`
}

// Response is what the host answered.
type Response struct {
	Status    int
	Headers   map[string]string // lower-case names
	Body      []byte
	Truncated bool // the body timeout cut it
}

// Doer performs a request.
type Doer func(Request) (Response, error)

type args struct {
	URL        string `json:"url"`
	Method     string `json:"method"`
	AsMarkdown bool   `json:"as_markdown"`
	AsText     bool   `json:"as_text"`
}

// Result is web_fetch's result, field for field as spec 003 lists them.
type Result struct {
	URL          string  `json:"url"`
	StatusCode   int     `json:"status_code"`
	ContentType  string  `json:"content_type"`
	Size         int     `json:"size"`
	LastModified string  `json:"last_modified,omitempty"`
	Filename     string  `json:"filename,omitempty"`
	Format       string  `json:"format"`
	Content      *string `json:"content,omitempty"`
	Truncated    bool    `json:"truncated"`
	Error        string  `json:"error,omitempty"`
}

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

// WebFetch is the tool: JSON arguments in, JSON result out.
func WebFetch(input []byte, do Doer) ([]byte, error) {
	var a args
	d := json.NewDecoder(bytes.NewReader(input))
	d.DisallowUnknownFields()
	if err := d.Decode(&a); err != nil {
		return nil, invalid("arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	r, err := fetch(a, do)
	if err != nil {
		return nil, err
	}
	return json.Marshal(r)
}

// CheckURL refuses what is not an absolute http(s) URL with a host.
func CheckURL(raw string) (*url.URL, error) {
	lower := strings.ToLower(raw)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
		return nil, invalid("url %q must start with http:// or https://", raw)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, invalid("url %q is not a valid URL", raw)
	}
	return u, nil
}

func fetch(a args, do Doer) (Result, error) {
	u, err := CheckURL(a.URL)
	if err != nil {
		return Result{}, err
	}
	method := strings.ToUpper(a.Method)
	switch method {
	case "":
		method = "GET"
	case "GET", "HEAD":
	default:
		return Result{}, invalid("method %q: use GET or HEAD", a.Method)
	}
	resp, err := do(Request{
		URL: a.URL, Method: method, FirstByteTimeoutMS: FirstByteTimeoutMS, BodyTimeoutMS: BodyTimeoutMS,
		Headers: map[string]string{"accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8"},
	})
	if err != nil {
		return Result{}, err
	}
	r := Result{
		URL: a.URL, StatusCode: resp.Status, ContentType: resp.Headers["content-type"],
		Size: len(resp.Body), LastModified: resp.Headers["last-modified"],
		Filename: filename(resp.Headers["content-disposition"], u), Format: "raw",
		Truncated: resp.Truncated,
	}
	if method == "HEAD" {
		// Nothing was received but the headers: the size the server declares.
		if n, err := strconv.Atoi(resp.Headers["content-length"]); err == nil && n >= 0 {
			r.Size = n
		}
		return r, nil
	}
	mt, params, _ := mime.ParseMediaType(r.ContentType)
	if !textual(mt, resp.Body) {
		r.Error = BinaryError
		return r, nil
	}
	body := decode(resp.Body, params["charset"])
	isHTML := mt == "text/html" || mt == "application/xhtml+xml" || mt == "" && looksHTML(body)
	switch {
	case isHTML && a.AsMarkdown:
		body, r.Format = Markdown(body), "markdown"
	case isHTML && a.AsText:
		body, r.Format = Text(body), "text"
	}
	if len(body) > MaxContent {
		cut := MaxContent
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
		body = body[:cut] + "\n" + TooLongSuffix
	}
	if r.Truncated {
		body += "\n" + TimedOutSuffix
	}
	r.Content = &body
	return r, nil
}

// textual reports whether a body of media type mt is text the tool returns.
func textual(mt string, body []byte) bool {
	switch {
	case strings.HasPrefix(mt, "text/"),
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"),
		mt == "application/json", mt == "application/xml", mt == "application/javascript",
		mt == "application/ecmascript", mt == "application/x-javascript", mt == "application/x-www-form-urlencoded",
		mt == "application/yaml", mt == "application/x-yaml", mt == "application/toml", mt == "application/x-ndjson":
		return true
	case mt == "", mt == "application/octet-stream":
		// Untyped: text when it decodes as UTF-8 without control bytes.
		return utf8.Valid(body) && !bytes.ContainsAny(body, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0e\x0f")
	}
	return false
}

// decode returns body as UTF-8: Latin-1 is converted, anything else that
// is not valid UTF-8 has its bad bytes replaced.
func decode(body []byte, charset string) string {
	switch strings.ToLower(charset) {
	case "iso-8859-1", "latin1", "latin-1", "windows-1252", "us-ascii":
		if !utf8.Valid(body) {
			var b strings.Builder
			for _, c := range body {
				b.WriteRune(rune(c))
			}
			return b.String()
		}
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

func looksHTML(s string) bool {
	head := strings.ToLower(strings.TrimSpace(s))
	if len(head) > 512 {
		head = head[:512]
	}
	return strings.HasPrefix(head, "<!doctype html") || strings.Contains(head, "<html") || strings.Contains(head, "<body")
}

// filename is the name from Content-Disposition, else the URL's last path
// segment when it looks like a file name.
func filename(disposition string, u *url.URL) string {
	if disposition != "" {
		if _, params, err := mime.ParseMediaType(disposition); err == nil {
			if f := path.Base(strings.ReplaceAll(params["filename"], "\\", "/")); params["filename"] != "" && f != "." && f != "/" {
				return f
			}
		}
	}
	if base := path.Base(u.Path); base != "." && base != "/" && strings.Contains(base, ".") {
		return base
	}
	return ""
}
