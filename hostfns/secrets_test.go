package hostfns

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
)

const tokenValue = "tok_HostfnsSecretValue_0123456789"

// secretCall is a call granted the loopback network, with API_TOKEN bound
// to 127.0.0.1 on port as a bearer header; grantSecret false leaves
// secrets_access ungranted.
func secretCall(t *testing.T, port string, grantSecret bool) (*Call, *memRecorder, context.Context) {
	t.Helper()
	req := capability.Request{
		Network:       loopback,
		SecretsAccess: []string{"API_TOKEN"},
		SecretsInject: []capability.SecretInjection{{Name: "API_TOKEN", Host: "127.0.0.1:" + port, Header: "Authorization", Value: "Bearer {{secret.API_TOKEN}}"}},
	}
	c, rec := newCall(t, req)
	if !grantSecret {
		g, err := capability.Resolve(capability.PackRef{Name: "probe"}, req,
			[]capability.UserGrant{{Capability: capability.Network, Scope: capability.ScopeOnce}}, nil, capability.Env{Home: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		c.Grant = g
		approve(t, c)
	}
	ctx := WithSecrets(context.Background(), NewSecrets(map[string][]byte{"API_TOKEN": []byte(tokenValue)}))
	return c, rec, ctx
}

// TestSecretInjection: granted, the header reaches the bound host and the
// use is recorded; not granted, no header is sent. Either way the guest's
// response never holds the value, even from a server that echoes it.
func TestSecretInjection(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "auth=%s", r.Header.Get("Authorization"))
		w.Header().Set("X-Echo", r.Header.Get("Authorization"))
	})
	for _, granted := range []bool{true, false} {
		t.Run(fmt.Sprint("granted=", granted), func(t *testing.T) {
			c, rec, ctx := secretCall(t, srv.port, granted)
			resp, err := newNetwork().fetch(ctx, c, HTTPRequest{URL: srv.at("127.0.0.1", "/v1"), Headers: map[string]string{"Authorization": "guest's own"}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := "auth=guest's own"
			if granted {
				want = "auth=Bearer " + Masked
			}
			if got := string(resp.Body); got != want {
				t.Errorf("body = %q, want %q", got, want)
			}
			if strings.Contains(fmt.Sprint(resp), tokenValue) {
				t.Errorf("the guest's response holds the value: %+v", resp)
			}
			requireRecorded(t, rec, capability.SecretsAccess, "API_TOKEN@127.0.0.1:"+srv.port, granted)
			if strings.Contains(dump(rec.all()), tokenValue) {
				t.Errorf("an exercise holds the value:\n%s", dump(rec.all()))
			}
		})
	}
}

// TestSecretInjectionRedirect: a redirect to another host (another name
// for the same server) drops the header; back to the bound host it is
// added again.
func TestSecretInjectionRedirect(t *testing.T) {
	var seen []string
	srv := newServer(t, nil)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Host+" "+r.Header.Get("Authorization"))
		switch r.URL.Path {
		case "/start":
			http.Redirect(w, r, srv.at("localhost", "/away"), http.StatusFound)
		case "/away":
			http.Redirect(w, r, srv.at("127.0.0.1", "/back"), http.StatusFound)
		}
	})
	c, rec, ctx := secretCall(t, srv.port, true)
	if _, err := newNetwork().fetch(ctx, c, HTTPRequest{URL: srv.at("127.0.0.1", "/start")}, nil); err != nil {
		t.Fatal(err)
	}
	bearer := "Bearer " + tokenValue
	want := []string{"127.0.0.1:" + srv.port + " " + bearer, "localhost:" + srv.port + " ", "127.0.0.1:" + srv.port + " " + bearer}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
	if got := len(rec.denials()); got != 0 {
		t.Errorf("denials:\n%s", dump(rec.all()))
	}
}

// TestSecretInjectionQuery: a query binding sets the parameter, replacing
// one the guest wrote.
func TestSecretInjectionQuery(t *testing.T) {
	var got string
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Query().Get("key") + "|" + r.URL.Query().Get("q")
	})
	req := capability.Request{
		Network: loopback, SecretsAccess: []string{"K"},
		SecretsInject: []capability.SecretInjection{{Name: "K", Host: "127.0.0.1:" + srv.port, Query: "key"}},
	}
	c, _ := newCall(t, req)
	ctx := WithSecrets(context.Background(), NewSecrets(map[string][]byte{"K": []byte("v&1")}))
	if _, err := newNetwork().fetch(ctx, c, HTTPRequest{URL: srv.at("127.0.0.1", "/?key=guess&q=x")}, nil); err != nil {
		t.Fatal(err)
	}
	if want := "v&1|x"; got != want {
		t.Errorf("server saw %q, want %q", got, want)
	}
}

// TestSecretInjectionUnavailable: a granted binding whose value the runtime
// did not supply refuses the request before it is sent.
func TestSecretInjectionUnavailable(t *testing.T) {
	srv := newServer(t, hello)
	c, _, _ := secretCall(t, srv.port, true)
	if _, err := newNetwork().fetch(context.Background(), c, HTTPRequest{URL: srv.at("127.0.0.1", "/")}, nil); !errors.Is(err, ErrSecretUnavailable) {
		t.Fatalf("err = %v, want ErrSecretUnavailable", err)
	}
	if got := srv.hits.Load(); got != 0 {
		t.Errorf("server hit %d times", got)
	}
}

func TestSecretInjectable(t *testing.T) {
	tests := []struct {
		scheme, host string
		want         bool
	}{
		{"https", "api.github.com", true},
		{"http", "api.github.com", false},
		{"http", "127.0.0.1", true},
		{"http", "::1", true},
		{"http", "localhost", true},
		{"http", "10.0.0.1", false},
	}
	for _, tt := range tests {
		if got := injectable(tt.scheme, tt.host); got != tt.want {
			t.Errorf("injectable(%s, %s) = %v, want %v", tt.scheme, tt.host, got, tt.want)
		}
	}
}

// TestSecretRequireReveal: a module that imports secret_get runs only under
// a grant that reveals; the refusal is recorded.
func TestSecretRequireReveal(t *testing.T) {
	req := capability.Request{SecretsAccess: []string{"A", "reveal:B"}}
	for _, tt := range []struct {
		name  string
		grant []string
		ok    bool
	}{{"inject only", []string{"A", "B"}, false}, {"reveal", []string{"reveal:B"}, true}} {
		t.Run(tt.name, func(t *testing.T) {
			c, rec := newCall(t, capability.Request{})
			g, err := capability.Resolve(capability.PackRef{Name: "probe"}, req,
				[]capability.UserGrant{{Capability: capability.SecretsAccess, Resources: tt.grant, Scope: capability.ScopeOnce}}, nil, capability.Env{Home: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			c.Grant = g
			approve(t, c)
			err = Require(c, []capability.Name{capability.SecretsAccess})
			if got := err == nil; got != tt.ok {
				t.Fatalf("Require = %v, want ok=%v", err, tt.ok)
			}
			if !tt.ok && (!errors.Is(err, capability.ErrDenied) || len(rec.denials()) != 1) {
				t.Errorf("denial %v not recorded:\n%s", err, dump(rec.all()))
			}
		})
	}
}

func TestSecretsMask(t *testing.T) {
	s := NewSecrets(map[string][]byte{"A": []byte(`x"y`), "B": []byte("long-secret"), "C": []byte("secret"), "D": []byte(" tok en/+=<> ")})
	tests := []struct{ in, want string }{
		{"?key=+tok+en%2F%2B%3D%3C%3E+&q=1", "?key=" + Masked + "&q=1"},     // a query parameter (url.Values)
		{"/x?key=%20tok%20en%2F%2B%3D%3C%3E%20", "/x?key=" + Masked},        // percent-encoded
		{`{"h":"Bearer tok en/+=<>"}`, `{"h":"Bearer ` + Masked + `"}`},     // a header value, trimmed
		{`{"v":" tok en/+=\u003c\u003e "}`, `{"v":"` + Masked + `"}`},       // JSON, HTML-escaped (Go)
		{`{"u":"?k=+tok+en%2F%2B%3D%3C%3E+"}`, `{"u":"?k=` + Masked + `"}`}, // a URL inside JSON
		{`{"v":"x\"y"}`, `{"v":"` + Masked + `"}`},
		{"raw x\"y here", "raw " + Masked + " here"},
		{"long-secret", Masked},
		{"nothing", "nothing"},
	}
	for _, tt := range tests {
		if got := string(s.Mask([]byte(tt.in))); got != tt.want {
			t.Errorf("Mask(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	var none *Secrets
	if got := string(none.Mask([]byte("a"))); got != "a" {
		t.Errorf("nil Mask = %q", got)
	}
}

// TestSecretInjectionQueryEcho: a query binding puts the value on the wire
// percent-encoded; a server that echoes its request URL (in the body, a
// header, or inside JSON) hands the guest no form of the value.
func TestSecretInjectionQueryEcho(t *testing.T) {
	const value = "k3y with/+&=ü~\"<x>_0123456789"
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Echo", r.RequestURI)
		b, _ := json.Marshal(map[string]string{"uri": r.RequestURI, "url": r.URL.String()})
		fmt.Fprintf(w, "%s %s", r.RequestURI, b)
	})
	req := capability.Request{
		Network: loopback, SecretsAccess: []string{"K"},
		SecretsInject: []capability.SecretInjection{{Name: "K", Host: "127.0.0.1:" + srv.port, Query: "key"}},
	}
	c, _ := newCall(t, req)
	ctx := WithSecrets(context.Background(), NewSecrets(map[string][]byte{"K": []byte(value)}))
	resp, err := newNetwork().fetch(ctx, c, HTTPRequest{URL: srv.at("127.0.0.1", "/?q=x")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := string(resp.Body) + " " + fmt.Sprint(resp.Headers)
	if !strings.Contains(got, Masked) {
		t.Errorf("the echo holds no mask: %s", got)
	}
	for _, form := range []string{value, url.QueryEscape(value), strings.ReplaceAll(url.QueryEscape(value), "+", "%20"), "k3y+with", "k3y%20with"} {
		if strings.Contains(got, form) {
			t.Errorf("the guest's response holds the value as %q: %s", form, got)
		}
	}
}

// TestSecretInjectionTruncatedEcho: a body the timeout cuts in the middle
// of an echoed value hands the guest no start of it either.
func TestSecretInjectionTruncatedEcho(t *testing.T) {
	release := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		io.WriteString(w, "auth="+auth[:len(auth)-6])
		w.(http.Flusher).Flush()
		<-release
	})
	t.Cleanup(func() { close(release) })
	c, _, ctx := secretCall(t, srv.port, true)
	resp, err := newNetwork().fetch(ctx, c, HTTPRequest{URL: srv.at("127.0.0.1", "/"), FirstByteTimeoutMS: 5000, BodyTimeoutMS: 50}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Truncated {
		t.Fatalf("the body was not cut: %q", resp.Body)
	}
	if got := string(resp.Body); strings.Contains(got, tokenValue[:minCut]) || !strings.Contains(got, Masked) {
		t.Errorf("body = %q: the start of the value is not masked", got)
	}
}
