package mcpserver

import (
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/packs-run/packs/internal/httpguard"
	"github.com/packs-run/packs/internal/identity"
)

// ErrTokenRequired is returned when the HTTP transport would listen
// without a bearer token, or with one too weak (httpguard.CheckToken): on
// loopback too, since a tool allowed to reach 127.0.0.1 would otherwise
// open its own MCP session and approve its own calls.
var ErrTokenRequired = errors.New("mcpserver: a bearer token is required")

// ErrBadAddr is returned for an --http address or an allowed host that
// cannot be parsed. It is httpguard.ErrBadAddr, which the shared guard
// returns.
var ErrBadAddr = httpguard.ErrBadAddr

// DefaultHTTPAddr is where `packs mcp --http` listens when given an address
// without a host (":7777") or no address at all: loopback only.
const DefaultHTTPAddr = "127.0.0.1:7777"

// HTTPConfig configures the Streamable HTTP transport.
type HTTPConfig struct {
	// Addr is host:port. A missing host means loopback (127.0.0.1), never
	// every interface: listening beyond loopback must be asked for by name.
	Addr string
	// AllowedHosts are extra Host header values (names or IPs, without port)
	// that the server answers to, e.g. the name a reverse proxy forwards. The
	// loopback names and the bound host are always allowed.
	AllowedHosts []string
	// Token is the bearer token every request must carry. Required, on
	// loopback too; httpguard.NewToken makes one.
	Token string
	// OIDC, when set, also admits bearer JWTs its issuer signed for packs:
	// each session is its person's, with their roles (methodRoles), and
	// its chat and audit rows name them. The Token still admits its holder.
	OIDC *identity.Provider
	// Metrics, when set, is served at GET MetricsPath behind the same
	// guard and token (telemetry.Metrics.Handler).
	Metrics http.Handler
}

// listenAddr returns the address to bind, defaulting the host to loopback.
func (c HTTPConfig) listenAddr() (string, error) {
	return httpguard.ListenAddr(c.Addr, DefaultHTTPAddr)
}

// guard puts the Host and Origin allowlist (DNS rebinding), then the
// bearer check, in front of next.
func guard(hosts *httpguard.Hosts, next http.Handler, token string, oidc *identity.Provider) http.Handler {
	next = auth.RequireBearerToken(verifier(token, oidc), &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reason := hosts.Check(r); reason != "" {
			http.Error(w, "packs: forbidden: "+reason, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
