package hostfns

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/packs-run/packs/capability"
)

// execProxy is the only way out of a confined native command's network
// namespace (sandbox.go): an HTTP proxy that serves one call. It takes
// CONNECT host:port (tunnels, for TLS) and plain http:// requests, and
// decides each exactly as http_request decides a guest's: the name against
// the grant (recorded), then every address it resolves to against
// Grant.Dial, with loopback, private, link-local and metadata addresses
// refused unless the grant names them (recorded); it dials the decided
// address itself. Plain requests get the grant's secret bindings for their
// host, as http_request's do; a tunnel carries TLS the proxy cannot read,
// so nothing is injected into one. Redirects are the client's: each hop is
// a new request through the proxy, decided again.
type execProxy struct {
	ctx   context.Context // carries the Call for the network group
	stop  context.CancelFunc
	ln    net.Listener
	net   *network
	conns sync.WaitGroup
}

// proxyHeaderTimeout bounds how long a client may take to send its request
// line and headers.
const proxyHeaderTimeout = 30 * time.Second

func startProxy(ctx context.Context, c *Call, ln net.Listener) *execProxy {
	ctx, stop := context.WithCancel(WithCall(ctx, c))
	p := &execProxy{ctx: ctx, stop: stop, ln: ln, net: newNetwork()}
	p.conns.Add(1)
	go func() {
		defer p.conns.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			p.conns.Add(1)
			go func() {
				defer p.conns.Done()
				p.serve(conn)
			}()
		}
	}()
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	return p
}

// close stops accepting, ends every connection and waits for them.
func (p *execProxy) close() {
	p.stop()
	p.conns.Wait()
}

// serve handles one client connection: one request (or one tunnel).
func (p *execProxy) serve(conn net.Conn) {
	defer conn.Close()
	stop := context.AfterFunc(p.ctx, func() { conn.Close() })
	defer stop()
	_ = conn.SetReadDeadline(time.Now().Add(proxyHeaderTimeout))
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	c, _ := CallFrom(p.ctx)
	if req.Method == http.MethodConnect {
		p.tunnel(c, conn, br, req)
		return
	}
	p.forward(c, conn, req)
}

// refuse answers the client with why its connection was not made: the
// command's own error then says it (curl: "CONNECT tunnel failed,
// response 403").
func refuse(conn net.Conn, err error) {
	status := http.StatusForbidden
	if !errors.Is(err, capability.ErrDenied) {
		status = http.StatusBadGateway
	}
	msg := oneLine(err.Error())
	fmt.Fprintf(conn, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s\n",
		status, http.StatusText(status), len(msg)+1, msg)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// tunnel decides CONNECT host:port and, when allowed, splices the client to
// the decided address.
func (p *execProxy) tunnel(c *Call, conn net.Conn, br *bufio.Reader, req *http.Request) {
	u, port, err := parseURL("https://" + req.RequestURI)
	if err == nil && (u.Path != "" || u.RawQuery != "") {
		err = fmt.Errorf("%w: CONNECT takes host:port", ErrInvalidRequest)
	}
	if err == nil {
		err = c.decideURL(u, port)
	}
	var upstream net.Conn
	if err == nil {
		upstream, err = p.net.dial(p.ctx, "tcp", net.JoinHostPort(u.Hostname(), fmt.Sprint(port)))
	}
	if err != nil {
		refuse(conn, err)
		return
	}
	defer upstream.Close()
	stop := context.AfterFunc(p.ctx, func() { upstream.Close() })
	defer stop()
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(upstream, br) // what the client sent after its headers first
		if tc, ok := upstream.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(conn, upstream)
		if cw, ok := conn.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}()
	<-done
	<-done
}

// hopHeaders are a proxy's own, never passed on.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// forward decides a plain http:// request and relays it with the grant's
// secret bindings for its host; the answer goes back as it came, the
// connection closed after it.
func (p *execProxy) forward(c *Call, conn net.Conn, req *http.Request) {
	u, port, err := parseURL(req.RequestURI)
	if err == nil && u.Scheme != "http" {
		err = fmt.Errorf("%w: a proxy request is http://; https goes through CONNECT", ErrInvalidRequest)
	}
	if err == nil {
		err = c.decideURL(u, port)
	}
	if err != nil {
		refuse(conn, err)
		return
	}
	out := req.Clone(p.ctx)
	out.URL, out.RequestURI, out.Host = u, "", u.Host
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	resp, err := p.net.injecting.Transport.RoundTrip(out)
	if err != nil {
		refuse(conn, err)
		return
	}
	defer resp.Body.Close()
	resp.Close = true
	for _, h := range hopHeaders {
		if h != "Transfer-Encoding" && h != "Trailer" {
			resp.Header.Del(h)
		}
	}
	_ = resp.Write(conn)
}
