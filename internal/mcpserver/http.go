package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/internal/httpguard"
)

// MCPPath is where the Streamable HTTP endpoint is served.
const MCPPath = "/mcp"

// MetricsPath is where HTTPConfig.Metrics is served.
const MetricsPath = "/metrics"

// HTTPServer is the Streamable HTTP transport, bound and ready to serve.
type HTTPServer struct {
	ln    net.Listener
	srv   *http.Server
	reach httpguard.Reach
}

// Listen binds cfg.Addr (loopback unless another host is named) and builds
// the guarded handler. It refuses to listen without a bearer token, on
// loopback too (ErrTokenRequired).
func (s *Server) Listen(cfg HTTPConfig) (*HTTPServer, error) {
	addr, err := cfg.listenAddr()
	if err != nil {
		return nil, err
	}
	if err := httpguard.CheckToken(cfg.Token); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTokenRequired, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: listening on %s: %w", addr, err)
	}
	h, err := s.handler(ln.Addr().String(), cfg)
	if err == nil {
		var hosts *httpguard.Hosts
		if hosts, err = httpguard.New(ln.Addr().String(), cfg.AllowedHosts); err == nil {
			return &HTTPServer{ln: ln, reach: hosts.Reach(), srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}, nil
		}
	}
	ln.Close()
	return nil, err
}

// handler serves MCPPath for a server bound to boundAddr: each new MCP
// session gets its own SDK server and chat.
func (s *Server) handler(boundAddr string, cfg HTTPConfig) (http.Handler, error) {
	hosts, err := httpguard.New(boundAddr, cfg.AllowedHosts)
	if err != nil {
		return nil, err
	}
	// The SDK calls getServer for every request, also for those of an
	// existing session (to read its protocol versions); a conn opens its
	// chat only when a session starts using it, so the spare ones are free.
	mcpHandler := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		c := s.newConn()
		c.person = personOf(r)
		return c.srv
	}, &mcp.StreamableHTTPOptions{
		Logger: s.log,
		// The guard in front checks Host and Origin against our own
		// allowlist, which also covers non-loopback binds and --allow-host.
		DisableLocalhostProtection: true,
		SessionTimeout:             time.Hour,
	})
	mux := http.NewServeMux()
	mux.Handle(MCPPath, mcpHandler)
	if cfg.Metrics != nil {
		mux.Handle("GET "+MetricsPath, metricsRole(cfg.Metrics))
	}
	return guard(hosts, mux, cfg.Token, cfg.OIDC), nil
}

// URL is the endpoint clients connect to. For a server on every interface
// it names the loopback address, which always works from this machine.
// Addr is the address the server listens on.
func (h *HTTPServer) Addr() net.Addr { return h.ln.Addr() }

// URL is where clients on this machine reach the server.
func (h *HTTPServer) URL() string { return "http://" + h.reach.OpenAt[0] + MCPPath }

// Reach says where the server can be opened, and whether it listens
// beyond this machine.
func (h *HTTPServer) Reach() httpguard.Reach { return h.reach }

// Serve serves until ctx ends, then shuts down, giving open requests a few
// seconds to finish.
func (h *HTTPServer) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- h.srv.Serve(h.ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := h.srv.Shutdown(sctx); err != nil {
		h.srv.Close() // open event streams never end by themselves
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
