package hostfns

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
)

// Fakes replace where a call's host effects land, for offline pack tests
// (packs test): never what decides them. Under WithFakes every request is
// still parsed, decided and recorded exactly as without it (the URL by name
// and port, then each address the lookup returned, through
// capability.Grant.Dial; a command by its name, through Grant.Command);
// only what happens once a decision allowed it changes: the connection the
// dial would open, the program the command name finds.
//
// A guest cannot reach this: it is a value of the host's context, put there
// by the Go code that starts the call, and no host function, tool,
// manifest or argument sets it.
type Fakes struct {
	// HTTP answers a request in place of the connection the dial would
	// have made to the first allowed address. Nil keeps the network.
	HTTP http.RoundTripper
	// Lookup resolves names in place of DNS (the addresses are decided as
	// DNS answers are). Nil keeps the resolver.
	Lookup func(ctx context.Context, name string) ([]netip.Addr, error)
	// ExecPath replaces SafePath as the only list of folders a granted
	// command name is looked up in (a stub placed there runs in its
	// place). Empty keeps SafePath. An absolute command is used as is.
	ExecPath string
}

type fakesKey struct{}

// WithFakes returns a context under which the host functions of calls
// started with it use f (see Fakes).
func WithFakes(ctx context.Context, f Fakes) context.Context {
	return context.WithValue(ctx, fakesKey{}, f)
}

// fakesFrom returns the Fakes WithFakes put in ctx.
func fakesFrom(ctx context.Context) Fakes {
	f, _ := ctx.Value(fakesKey{}).(Fakes)
	return f
}

// fakeTransport is the transport of a request under Fakes.HTTP: it makes
// the dial's decisions (resolve, decide and record the first allowed
// address, as dial does before it connects) and then hands the request to
// the fake instead of connecting.
type fakeTransport struct {
	n    *network
	fake http.RoundTripper
}

func (t fakeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c, ok := CallFrom(req.Context())
	if !ok {
		return nil, ErrNoCall
	}
	port := req.URL.Port()
	if port == "" {
		port = "80"
		if req.URL.Scheme == "https" {
			port = "443"
		}
	}
	targets, err := t.n.resolve(req.Context(), c, net.JoinHostPort(req.URL.Hostname(), port))
	if err != nil {
		return nil, err
	}
	if err := c.decide(targets[0].decision); err != nil {
		return nil, err
	}
	resp, err := t.fake.RoundTrip(req)
	if err != nil {
		return nil, fmt.Errorf("hostfns: fake http %s: %w", strconv.Quote(req.URL.Redacted()), err)
	}
	return resp, nil
}

// client is the HTTP client for a request under ctx: the network's own, or
// one whose transport is the fake (with the same redirect checks).
func (n *network) clientFor(ctx context.Context) *http.Client {
	f := fakesFrom(ctx)
	if f.HTTP == nil {
		return n.injecting
	}
	return &http.Client{Transport: injecting{next: fakeTransport{n: n, fake: f.HTTP}}, CheckRedirect: checkRedirect}
}

// lookupFor is the resolver for a request under ctx.
func (n *network) lookupFor(ctx context.Context) func(context.Context, string) ([]netip.Addr, error) {
	if f := fakesFrom(ctx); f.Lookup != nil {
		return f.Lookup
	}
	return n.lookup
}
