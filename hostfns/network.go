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
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	extism "github.com/extism/go-sdk"

	"github.com/packs-run/packs/capability"
)

// MaxResponseBytes caps the body of one HTTP response handed to a guest; a
// longer body fails the request with ErrResponseTooLarge.
const MaxResponseBytes = 16 << 20

// maxRedirects bounds a redirect chain; each hop is decided on its own.
const maxRedirects = 10

// network serves the network group. Its client is its own (never
// http.DefaultClient): no proxy from the environment, no idle connections
// kept between calls, every URL and redirect parsed strictly and decided by
// name, and every dial decided on the address it connects to.
type network struct {
	client    *http.Client
	injecting *http.Client // client with secret injection: what requests use
	dialer    *net.Dialer
	// lookup resolves a name once; the dial goes to exactly an address it
	// returned, so a second answer (DNS rebinding) is never consulted.
	lookup func(ctx context.Context, name string) ([]netip.Addr, error)
}

func newNetwork() *network {
	r := &net.Resolver{PreferGo: true}
	n := &network{
		dialer: &net.Dialer{Timeout: 30 * time.Second},
		lookup: func(ctx context.Context, name string) ([]netip.Addr, error) { return r.LookupNetIP(ctx, "ip", name) },
	}
	n.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil,
			DialContext:            n.dial,
			DisableKeepAlives:      true,
			ForceAttemptHTTP2:      true,
			TLSHandshakeTimeout:    10 * time.Second,
			MaxResponseHeaderBytes: 1 << 20,
		},
		CheckRedirect: checkRedirect,
	}
	// The client requests go through: the same transport, with the
	// grant's secret bindings added to each hop for its host only
	// (secrets.go); the dial still decides the address before a byte of
	// the request is sent.
	n.injecting = &http.Client{Transport: injecting{next: n.client.Transport}, CheckRedirect: checkRedirect}
	return n
}

// dial connects to addr (host:port, from a URL already decided by name):
// it resolves the host once, decides and records each address it dials
// (capability.Grant.Dial, with the reserved addresses of ctx), and dials
// that address itself, never the name. TLS still verifies the name: the
// transport takes the server name from the URL, not from the connection.
func (n *network) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, ok := CallFrom(ctx)
	if !ok {
		return nil, ErrNoCall
	}
	targets, err := n.resolve(ctx, c, addr)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, t := range targets {
		if err := c.decide(t.decision); err != nil {
			return nil, err
		}
		conn, err := n.dialer.DialContext(ctx, network, t.addr.String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// target is one address a dial may connect to, with its allowing decision
// (recorded just before the connection is tried).
type target struct {
	addr     netip.AddrPort
	decision capability.Decision
}

// resolve parses addr, looks its host up once (an address literal is not
// looked up) and decides every address. It returns the allowed ones in the
// resolver's order; when none is allowed it records the first denial and
// returns its error.
func (n *network) resolve(ctx context.Context, c *Call, addr string) ([]target, error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: dial address %q: %v", ErrInvalidRequest, addr, err)
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil || port == 0 {
		return nil, fmt.Errorf("%w: dial address %q: bad port", ErrInvalidRequest, addr)
	}
	name, ip, err := capability.ParseHost(h)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	ips := []netip.Addr{ip}
	if name != "" {
		if ips, err = n.lookupFor(ctx)(ctx, name); err != nil {
			return nil, fmt.Errorf("hostfns: resolving %s: %w", name, err)
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("hostfns: resolving %s: no address", name)
		}
	} else {
		name = ip.String()
	}
	reserved := reservedFrom(ctx)
	var out []target
	var denied capability.Decision
	for i, a := range ips {
		ap := netip.AddrPortFrom(a.WithZone("").Unmap(), uint16(port))
		d := c.Grant.Dial(name, ap, reserved...)
		switch {
		case d.Allowed():
			out = append(out, target{ap, d})
		case i == 0 || denied.Allowed():
			denied = d
		}
	}
	if len(out) == 0 {
		return nil, c.decide(denied)
	}
	return out, nil
}

// checkRedirect parses, decides and records each hop of a redirect chain
// as the first URL was; its dial is decided by address again.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("%w: stopped after %d redirects", ErrInvalidRequest, maxRedirects)
	}
	c, ok := CallFrom(req.Context())
	if !ok {
		return ErrNoCall
	}
	u, port, err := parseURL(req.URL.String())
	if err != nil {
		return err
	}
	req.URL = u
	return c.decideURL(u, port)
}

// resource is how a request is recorded: scheme://host[:port]/path, never
// the user info, query or fragment, which may hold secrets.
func resource(u *url.URL) string {
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

// parseURL reads a guest's URL strictly: http or https, a host that is a
// name (IDNA lookup rules) or an address literal, an optional decimal port,
// no user info, no zone ID, no percent sign anywhere in the authority. The
// URL it returns has the host in the canonical form decisions use; port is
// the explicit port or the scheme's.
func parseURL(raw string) (*url.URL, uint16, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	scheme = strings.ToLower(scheme)
	if !ok || scheme != "http" && scheme != "https" {
		return nil, 0, fmt.Errorf("%w: only http:// and https:// URLs are allowed", ErrInvalidRequest)
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	switch {
	case authority == "":
		return nil, 0, fmt.Errorf("%w: the URL has no host", ErrInvalidRequest)
	case strings.ContainsAny(authority, "@%\\"):
		return nil, 0, fmt.Errorf("%w: the URL's host holds user info, a zone ID or an escape", ErrInvalidRequest)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: url: %v", ErrInvalidRequest, errors.Unwrap(err))
	}
	u.Scheme = scheme
	if u.Opaque != "" || u.User != nil || u.Host != authority {
		return nil, 0, fmt.Errorf("%w: the URL is ambiguous", ErrInvalidRequest)
	}
	h, ps := authority, ""
	if i := strings.LastIndexByte(authority, ':'); i >= 0 && !strings.Contains(authority[i:], "]") {
		h, ps = authority[:i], authority[i+1:]
		if ps == "" {
			return nil, 0, fmt.Errorf("%w: the URL has an empty port", ErrInvalidRequest)
		}
	}
	name, ip, err := capability.ParseHost(h)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	port := uint16(80)
	if scheme == "https" {
		port = 443
	}
	if ps != "" {
		p, err := strconv.ParseUint(ps, 10, 16)
		if err != nil || p == 0 || ps[0] == '0' {
			return nil, 0, fmt.Errorf("%w: the URL's port is not a number from 1 to 65535", ErrInvalidRequest)
		}
		port = uint16(p)
	}
	switch {
	case name != "":
		u.Host = name
	case ip.Is4():
		u.Host = ip.String()
	default:
		u.Host = "[" + ip.String() + "]"
	}
	if ps != "" {
		u.Host += ":" + ps
	}
	return u, port, nil
}

// decideURL decides and records the host of u, parsed by parseURL, by name
// on port.
func (c *Call) decideURL(u *url.URL, port uint16) error {
	d := c.Grant.Host(net.JoinHostPort(u.Hostname(), strconv.Itoa(int(port))))
	ex := d.Record(c.Pack, c.Tool, c.Invocation)
	ex.Resource = resource(u)
	if err := c.record(ex); err != nil {
		return err
	}
	return d.Err()
}

// HTTPRequest is the request a guest passes to http_request, as Extism's
// PDKs encode it.
//
// Two fields are packs' own (docs/abi.md §4.2), both optional:
// FirstByteTimeoutMS fails the request (ErrFirstByteTimeout) when the
// response headers have not arrived in time; BodyTimeoutMS hands back what
// arrived of the body when the rest takes longer (counted from the
// headers), and http_truncated then answers 1. A body timeout never runs
// past the call's own deadline: the host stops reading a little before it,
// so the guest still gets the partial body.
type HTTPRequest struct {
	URL                string            `json:"url"`
	Method             string            `json:"method,omitempty"`
	Headers            map[string]string `json:"headers,omitempty"`
	FirstByteTimeoutMS int64             `json:"first_byte_timeout_ms,omitempty"`
	BodyTimeoutMS      int64             `json:"body_timeout_ms,omitempty"`
}

// HTTPResponse is what http_request hands back: the status and headers
// (served by http_status_code and http_headers) and the body.
type HTTPResponse struct {
	Status    int
	Headers   map[string]string // lower-case names, values joined by ","
	Body      []byte
	Truncated bool // the body timeout cut Body short
}

// Why a request's own context was cancelled.
var (
	errFirstByte = errors.New("first byte timeout")
	errBodyTime  = errors.New("body timeout")
)

// deadlineMargin is how long before the call's deadline a body timeout
// hands back what arrived: time for the guest to answer with it.
const deadlineMargin = 500 * time.Millisecond

// bodyTimeout is how long the body may take: the request's body timeout,
// shortened to end deadlineMargin before ctx's deadline; 0 means no timeout.
func bodyTimeout(ctx context.Context, ms int64) time.Duration {
	d := time.Duration(ms) * time.Millisecond
	if dl, ok := ctx.Deadline(); ok && ms > 0 {
		if left := time.Until(dl) - deadlineMargin; left > 0 && left < d {
			d = left
		}
	}
	return d
}

// seconds writes d for a person: "1 second", "2.5 seconds".
func seconds(d time.Duration) string {
	if d == time.Second {
		return "1 second"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " seconds"
}

// fetch performs one guest request for c: scheme and host decided and
// recorded, redirects and dials checked, the body capped.
func (n *network) fetch(ctx context.Context, c *Call, r HTTPRequest, body []byte) (HTTPResponse, error) {
	u, port, err := parseURL(r.URL)
	if err != nil {
		return HTTPResponse{}, err
	}
	if err := c.decideURL(u, port); err != nil {
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
	if r.FirstByteTimeoutMS < 0 || r.BodyTimeoutMS < 0 {
		return HTTPResponse{}, fmt.Errorf("%w: a timeout is negative", ErrInvalidRequest)
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(WithCall(rctx, c), method, u.String(), rd)
	if err != nil {
		return HTTPResponse{}, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	firstByte := time.Duration(r.FirstByteTimeoutMS) * time.Millisecond
	var first *time.Timer
	if firstByte > 0 {
		first = time.AfterFunc(firstByte, func() { cancel(errFirstByte) })
	}
	resp, err := n.clientFor(ctx).Do(req)
	// The headers arrived (or the request failed): the first-byte timer no
	// longer applies. A timer that fired meanwhile still fails the request.
	if first != nil && !first.Stop() && err == nil {
		resp.Body.Close()
		err = errFirstByte
	}
	if err != nil {
		if errors.Is(context.Cause(rctx), errFirstByte) {
			return HTTPResponse{}, fmt.Errorf("%w: %s %s: server did not respond within %s", ErrFirstByteTimeout, method, resource(u), seconds(firstByte))
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			// Keep our sentinels reachable and the query string out of the message.
			err = fmt.Errorf("hostfns: http %s %s: %w", method, resource(u), ue.Err)
		}
		return HTTPResponse{}, err
	}
	defer resp.Body.Close()
	if d := bodyTimeout(ctx, r.BodyTimeoutMS); d > 0 {
		t := time.AfterFunc(d, func() { cancel(errBodyTime) })
		defer t.Stop()
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	truncated := false
	if err != nil && errors.Is(context.Cause(rctx), errBodyTime) {
		truncated, err = true, nil
	}
	if err != nil {
		return HTTPResponse{}, fmt.Errorf("hostfns: http %s %s: reading the body: %w", method, resource(u), err)
	}
	if len(b) > MaxResponseBytes {
		return HTTPResponse{}, fmt.Errorf("%w: %s %s: body over %d bytes", ErrResponseTooLarge, method, resource(u), MaxResponseBytes)
	}
	// A server that echoes an injected secret does not hand it to the
	// guest, not even the start of it where the body timeout cut it.
	sec := secretsFrom(ctx)
	mask := sec.Mask
	if truncated {
		mask = sec.MaskCut
	}
	out := HTTPResponse{Status: resp.StatusCode, Headers: map[string]string{}, Body: mask(b), Truncated: truncated}
	for k, v := range resp.Header {
		out.Headers[strings.ToLower(k)] = sec.MaskString(strings.Join(v, ","))
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
	c.status, c.headers, c.cut = 0, nil, false
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
	c.status, c.headers, c.cut = int32(resp.Status), resp.Headers, resp.Truncated
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

// truncated is http_truncated() -> i32: 1 when the body timeout of the
// last request cut its body short, else 0 (docs/abi.md §4.2).
func (n *network) truncated(ctx context.Context, _ *extism.CurrentPlugin, stack []uint64) {
	c := mustCall(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		stack[0] = 1
	} else {
		stack[0] = 0
	}
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
