package hostfns

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	extism "github.com/extism/go-sdk"
)

// MaxResponseBytes caps the body of one HTTP response handed to a guest; a
// longer body fails the request with ErrResponseTooLarge.
const MaxResponseBytes = 16 << 20

// maxRedirects bounds a redirect chain; each hop is decided on its own.
const maxRedirects = 10

// network serves the network group. Its client is its own (never
// http.DefaultClient): no proxy from the environment, no idle connections
// kept between calls, every redirect and every dial checked against the
// grant of the call in the request's context.
type network struct {
	client *http.Client
}

func newNetwork() *network {
	dialer := &net.Dialer{Timeout: 30 * time.Second, Resolver: &net.Resolver{PreferGo: true}}
	return &network{client: &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil,
			DialContext:            dialGranted(dialer),
			DisableKeepAlives:      true,
			ForceAttemptHTTP2:      true,
			TLSHandshakeTimeout:    10 * time.Second,
			MaxResponseHeaderBytes: 1 << 20,
		},
		CheckRedirect: checkRedirect,
	}}
}

// dialGranted checks the address actually dialed. The URL host was decided
// already; this catches anything that would dial elsewhere. A host that is
// an IP literal must match an IP pattern: a name pattern never matches one.
func dialGranted(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, ok := CallFrom(ctx)
		if !ok {
			return nil, ErrNoCall
		}
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("%w: dial address %q: %v", ErrInvalidRequest, addr, err)
		}
		if dec := c.Grant.Host(host); !dec.Allowed() {
			return nil, c.decide(dec)
		}
		return d.DialContext(ctx, network, addr)
	}
}

// checkRedirect decides and records each hop of a redirect chain.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("%w: stopped after %d redirects", ErrInvalidRequest, maxRedirects)
	}
	c, ok := CallFrom(req.Context())
	if !ok {
		return ErrNoCall
	}
	return c.decideURL(req.URL)
}

// resource is how a request is recorded: scheme://host[:port]/path, never
// the user info, query or fragment, which may hold secrets.
func resource(u *url.URL) string {
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

// decideURL checks the scheme, then decides and records the host.
func (c *Call) decideURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: scheme %q: only http and https are allowed", ErrInvalidRequest, u.Scheme)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("%w: URL %q has no host", ErrInvalidRequest, resource(u))
	}
	d := c.Grant.Host(u.Hostname())
	ex := d.Record(c.Pack, c.Tool, c.Invocation)
	ex.Resource = resource(u)
	if err := c.record(ex); err != nil {
		return err
	}
	return d.Err()
}

// HTTPRequest is the request a guest passes to http_request, as Extism's
// PDKs encode it.
type HTTPRequest struct {
	URL     string            `json:"url"`
	Method  string            `json:"method,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// HTTPResponse is what http_request hands back: the status and headers
// (served by http_status_code and http_headers) and the body.
type HTTPResponse struct {
	Status  int
	Headers map[string]string // lower-case names, values joined by ","
	Body    []byte
}

// fetch performs one guest request for c: scheme and host decided and
// recorded, redirects and dials checked, the body capped.
func (n *network) fetch(ctx context.Context, c *Call, r HTTPRequest, body []byte) (HTTPResponse, error) {
	u, err := url.Parse(r.URL)
	if err != nil {
		return HTTPResponse{}, fmt.Errorf("%w: url: %v", ErrInvalidRequest, err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if err := c.decideURL(u); err != nil {
		return HTTPResponse{}, err
	}
	method := strings.ToUpper(r.Method)
	if method == "" {
		method = http.MethodGet
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(WithCall(ctx, c), method, u.String(), rd)
	if err != nil {
		return HTTPResponse{}, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	resp, err := n.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			// Keep our sentinels reachable and the query string out of the message.
			err = fmt.Errorf("hostfns: http %s %s: %w", method, resource(u), ue.Err)
		}
		return HTTPResponse{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return HTTPResponse{}, fmt.Errorf("hostfns: http %s %s: reading the body: %w", method, resource(u), err)
	}
	if len(b) > MaxResponseBytes {
		return HTTPResponse{}, fmt.Errorf("%w: %s %s: body over %d bytes", ErrResponseTooLarge, method, resource(u), MaxResponseBytes)
	}
	out := HTTPResponse{Status: resp.StatusCode, Headers: map[string]string{}, Body: b}
	for k, v := range resp.Header {
		out.Headers[strings.ToLower(k)] = strings.Join(v, ",")
	}
	return out, nil
}

// request is http_request(request, body i64) -> i64, Extism's signature:
// request is a memory block holding HTTPRequest as JSON, body a block or 0;
// the result is a block with the response body, or 0 when it is empty.
// A denial or failure traps the call.
func (n *network) request(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
	c := mustCall(ctx)
	c.mu.Lock()
	c.status, c.headers = 0, nil
	c.mu.Unlock()
	var r HTTPRequest
	if err := json.Unmarshal(mustReadBytes(p, stack[0]), &r); err != nil {
		panic(fmt.Errorf("%w: http_request: %v", ErrInvalidRequest, err))
	}
	var body []byte
	if stack[1] != 0 {
		body = mustReadBytes(p, stack[1])
	}
	resp, err := n.fetch(ctx, c, r, body)
	if err != nil {
		panic(err)
	}
	c.mu.Lock()
	c.status, c.headers = int32(resp.Status), resp.Headers
	c.mu.Unlock()
	if len(resp.Body) == 0 {
		stack[0] = 0
		return
	}
	stack[0] = mustWrite(p, resp.Body)
}

// statusCode is http_status_code() -> i32: the last response's status, 0
// before any.
func (n *network) statusCode(ctx context.Context, _ *extism.CurrentPlugin, stack []uint64) {
	c := mustCall(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	stack[0] = extism.EncodeI32(c.status)
}

// headers is http_headers() -> i64: the last response's headers as a JSON
// object in a memory block, or 0 before any.
func (n *network) headers(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
	c := mustCall(ctx)
	c.mu.Lock()
	h := c.headers
	c.mu.Unlock()
	if h == nil {
		stack[0] = 0
		return
	}
	b, err := json.Marshal(h)
	if err != nil {
		panic(fmt.Errorf("hostfns: http_headers: %w", err))
	}
	stack[0] = mustWrite(p, b)
}
