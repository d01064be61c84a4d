package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"strings"
	"unicode/utf8"
)

// response is what an HTTP GET brought back.
type response struct {
	Status  int
	Headers map[string]string // lower-case names
	Body    []byte
}

// getter performs one GET. In the plugin it is the host's http_request, which
// checks the grant, follows redirects only to granted hosts and caps the
// body; natively (in tests) it is an ordinary HTTP client.
type getter func(url string, headers map[string]string) (response, error)

const (
	defaultMaxChars = 20000
	maxMaxChars     = 200000
	userAgent       = "packs-web-reader/0.1"
)

func argError(format string, args ...any) error {
	return fmt.Errorf("web-reader: "+format, args...)
}

// decodeArgs decodes the arguments strictly into v.
func decodeArgs(input []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return argError("arguments: %v", err)
	}
	return nil
}

type fetchArgs struct {
	URL         string `json:"url"`
	Format      string `json:"format"`
	MaxChars    *int   `json:"max_chars"`
	MainContent *bool  `json:"main_content"`
	Links       bool   `json:"links"`
}

type fetchResult struct {
	URL         string `json:"url"`
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	Title       string `json:"title,omitempty"`
	Content     string `json:"content"`
	Chars       int    `json:"chars"`
	TotalChars  int    `json:"total_chars"`
	Truncated   bool   `json:"truncated"`
	Links       []Link `json:"links,omitempty"`
}

func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, argError("url %q must be an absolute http or https URL, such as https://example.com/page", raw)
	}
	u.Fragment = ""
	return u, nil
}

func maxChars(p *int) (int, error) {
	if p == nil {
		return defaultMaxChars, nil
	}
	if *p < 1 || *p > maxMaxChars {
		return 0, argError("max_chars must be from 1 to %d", maxMaxChars)
	}
	return *p, nil
}

// fetch is the fetch tool: GET a page and return it as Markdown (or as the
// text it is), cut to max_chars.
func fetch(input []byte, get getter) ([]byte, error) {
	var a fetchArgs
	if err := decodeArgs(input, &a); err != nil {
		return nil, err
	}
	u, err := checkURL(a.URL)
	if err != nil {
		return nil, err
	}
	limit, err := maxChars(a.MaxChars)
	if err != nil {
		return nil, err
	}
	switch a.Format {
	case "", "markdown", "raw":
	default:
		return nil, argError("format %q: want markdown (the default) or raw", a.Format)
	}
	resp, err := get(u.String(), map[string]string{
		"User-Agent": userAgent,
		"Accept":     "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.5",
	})
	if err != nil {
		return nil, fmt.Errorf("web-reader: GET %s: %w", u.Redacted(), err)
	}
	if resp.Status >= 300 || resp.Status < 200 {
		return nil, fmt.Errorf("web-reader: GET %s: HTTP %d%s: check the URL, or try the site's home page", u.Redacted(), resp.Status, statusText(resp.Status))
	}
	ctype := resp.Headers["content-type"]
	kind, text, err := classify(ctype, resp.Body)
	if err != nil {
		return nil, fmt.Errorf("web-reader: %s: %w", u.Redacted(), err)
	}
	res := fetchResult{URL: u.String(), Status: resp.Status, ContentType: ctype}
	if kind == "html" && a.Format != "raw" {
		page := convert(text, u, a.MainContent == nil || *a.MainContent)
		res.Title, text = page.Title, page.Markdown
		if a.Links {
			res.Links = page.Links
		}
	}
	res.Content, res.TotalChars, res.Truncated = truncate(text, limit)
	res.Chars = utf8.RuneCountInString(res.Content)
	return marshal(res)
}

type convertArgs struct {
	HTML        string `json:"html"`
	BaseURL     string `json:"base_url"`
	MainContent bool   `json:"main_content"`
	Links       bool   `json:"links"`
	MaxChars    *int   `json:"max_chars"`
}

type convertResult struct {
	Title      string `json:"title,omitempty"`
	Markdown   string `json:"markdown"`
	TotalChars int    `json:"total_chars"`
	Truncated  bool   `json:"truncated"`
	Links      []Link `json:"links,omitempty"`
}

// htmlToMarkdown is the offline conversion tool, for HTML the model already has.
func htmlToMarkdown(input []byte) ([]byte, error) {
	var a convertArgs
	if err := decodeArgs(input, &a); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.HTML) == "" {
		return nil, argError("html is empty: pass the page's HTML source")
	}
	limit, err := maxChars(a.MaxChars)
	if err != nil {
		return nil, err
	}
	var base *url.URL
	if a.BaseURL != "" {
		if base, err = checkURL(a.BaseURL); err != nil {
			return nil, argError("base_url %q must be an absolute http or https URL, such as https://example.com/", a.BaseURL)
		}
	}
	page := convert(a.HTML, base, a.MainContent)
	res := convertResult{Title: page.Title}
	res.Markdown, res.TotalChars, res.Truncated = truncate(page.Markdown, limit)
	if a.Links {
		res.Links = page.Links
	}
	return marshal(res)
}

// classify decides how to read a body: "html" or "text", decoded to UTF-8.
// Anything else (images, PDFs, archives) is an error: this tool reads pages.
func classify(ctype string, body []byte) (string, string, error) {
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		mt = ""
	}
	text := decode(body, strings.ToLower(params["charset"]))
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return "html", text, nil
	case strings.HasPrefix(mt, "text/") || mt == "application/json" || mt == "application/xml" ||
		strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml") || mt == "application/javascript" ||
		mt == "application/yaml" || mt == "application/x-yaml" || mt == "application/toml":
		return "text", text, nil
	case mt == "" || mt == "application/octet-stream":
		if looksHTML(body) {
			return "html", text, nil
		}
		if utf8.Valid(body) && !bytes.ContainsRune(body, 0) {
			return "text", text, nil
		}
	}
	if mt == "" {
		mt = "binary data"
	}
	return "", "", fmt.Errorf("the response is %s, not HTML or text: this tool reads web pages and text files", mt)
}

func looksHTML(b []byte) bool {
	head := bytes.ToLower(bytes.TrimSpace(b[:min(len(b), 512)]))
	return bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html")) ||
		bytes.Contains(head, []byte("<head")) || bytes.Contains(head, []byte("<body"))
}

// cp1252 maps Windows-1252's 0x80-0x9F to Unicode; the rest of the range
// is Latin-1, whose bytes equal their code points.
var cp1252 = [32]rune{
	'€', 0x81, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0x8D, 'Ž', 0x8F,
	0x90, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0x9D, 'ž', 'Ÿ',
}

// decode turns body into UTF-8 text. Latin-1 and Windows-1252 (declared, or
// guessed for bytes that are not UTF-8) are converted; other charsets are
// read as UTF-8 with invalid bytes replaced.
func decode(body []byte, charset string) string {
	legacy := charset == "iso-8859-1" || charset == "latin1" || charset == "windows-1252" || charset == "cp1252"
	if !legacy && (utf8.Valid(body) || charset != "") {
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	var b strings.Builder
	b.Grow(len(body))
	for _, c := range body {
		switch {
		case c < 0x80:
			b.WriteByte(c)
		case c < 0xA0:
			b.WriteRune(cp1252[c-0x80])
		default:
			b.WriteRune(rune(c))
		}
	}
	return b.String()
}

// truncate cuts s to at most limit characters, at a paragraph or line break
// in the last fifth when there is one, and says how long s was.
func truncate(s string, limit int) (string, int, bool) {
	total := utf8.RuneCountInString(s)
	if total <= limit {
		return s, total, false
	}
	head, n := s, 0
	for i := range s {
		if n == limit {
			head = s[:i]
			break
		}
		n++
	}
	for _, sep := range []string{"\n\n", "\n"} {
		if i := strings.LastIndex(head, sep); i > len(head)*4/5 {
			head = head[:i]
			break
		}
	}
	return head, total, true
}

// statusText names the statuses a reader meets; net/http has the full table
// but would add megabytes of TLS and HTTP/2 code to the module.
func statusText(code int) string {
	switch code {
	case 301:
		return " Moved Permanently"
	case 302:
		return " Found"
	case 304:
		return " Not Modified"
	case 400:
		return " Bad Request"
	case 401:
		return " Unauthorized"
	case 403:
		return " Forbidden"
	case 404:
		return " Not Found"
	case 410:
		return " Gone"
	case 429:
		return " Too Many Requests"
	case 500:
		return " Internal Server Error"
	case 502:
		return " Bad Gateway"
	case 503:
		return " Service Unavailable"
	case 504:
		return " Gateway Timeout"
	}
	return ""
}

// marshal encodes v without escaping <, > and &, which are common in what
// these tools return and cost a model six characters each when escaped.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
