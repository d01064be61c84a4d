package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
	"github.com/packs-run/packs/internal/secrets"
	"github.com/packs-run/packs/packs"
)

const apiToken = "tok_PipelineSecret_9f8e7d6c5b4a"

// apiServer is an HTTP API on loopback that answers 200 with the caller's
// Authorization header echoed (a careless API) only to the right bearer
// token, and 401 otherwise.
func apiServer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+apiToken {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"unauthorized"}`)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"user": "octocat", "echo": r.Header.Get("Authorization")})
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return srv, u.Host
}

// secretPack is the example pack: plugin_http calling the API, with
// API_TOKEN injected as a bearer header for the API's host only.
func secretPack(t *testing.T, host string) *packs.Pack {
	toml := fmt.Sprintf(`[capabilities]
network = ["127.0.0.1:*"]
secrets_access = ["API_TOKEN"]

[[secrets.inject]]
name = "API_TOKEN"
host = %q
header = "Authorization"
value = "Bearer {{secret.API_TOKEN}}"
`, host)
	return modulePack(t, "gh", toml, "testdata/plugin_http.wasm", map[string]string{"get": "get"})
}

func secretPipeline(t *testing.T, h *harness, store *secrets.Store, user userGrants) *Pipeline {
	t.Helper()
	cfg := PipelineConfig{Grants: user, Audit: h.rec}
	if store != nil {
		cfg.Secrets = store
	}
	pl, err := NewPipeline(h.rt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// everything is all the pipeline kept of its calls: exercises and call
// records, as JSON.
func (h *harness) everything(t *testing.T) string {
	b, err := json.Marshal(map[string]any{"exercises": h.rec.Exercises(), "calls": h.rec.Calls()})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSecretPipelineInjection: the example pack reaches the API with the
// injected token when the person granted it, gets 401 without the grant,
// and a clear error naming the secret when it is not set. The value is in
// no output, no error, no exercise and no call record.
func TestSecretPipelineInjection(t *testing.T) {
	srv, host := apiServer(t)
	store := secrets.Open(t.TempDir())
	if err := store.Set("API_TOKEN", []byte(apiToken)); err != nil {
		t.Fatal(err)
	}
	args := fmt.Sprintf(`{"url": %q}`, srv.URL+"/user")
	network := capability.UserGrant{Capability: capability.Network, Scope: capability.ScopePersistent}
	secret := capability.UserGrant{Capability: capability.SecretsAccess, Resources: []string{"API_TOKEN"}, Scope: capability.ScopePersistent}

	t.Run("granted", func(t *testing.T) {
		h := newHarness(t, Config{})
		p := secretPack(t, host)
		o := h.call(secretPipeline(t, h, store, userGrants{network, secret}), p, "get", args)
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		var got map[string]string
		if err := json.Unmarshal(o.Output, &got); err != nil {
			t.Fatalf("output %s: %v", o.Output, err)
		}
		if got["user"] != "octocat" || got["echo"] != "Bearer "+hostfns.Masked {
			t.Errorf("output = %s, want the user and a masked echo", o.Output)
		}
		ex := h.rec.find(o.Invocation, capability.SecretsAccess)
		if len(ex) != 1 || !ex[0].Allowed || ex[0].Resource != "API_TOKEN@"+host {
			t.Errorf("secret exercises = %+v, want one allowed API_TOKEN@%s", ex, host)
		}
		if all := h.everything(t) + string(o.Output); strings.Contains(all, apiToken) {
			t.Errorf("the value leaked:\n%s", all)
		}
	})
	t.Run("not granted", func(t *testing.T) {
		h := newHarness(t, Config{})
		p := secretPack(t, host)
		o := h.call(secretPipeline(t, h, store, userGrants{network}), p, "get", args)
		if o.Err != nil || !strings.Contains(string(o.Output), "unauthorized") {
			t.Errorf("output = %s (%v), want the API's 401 body", o.Output, o.Err)
		}
		if ex := h.rec.find(o.Invocation, capability.SecretsAccess); len(ex) != 1 || ex[0].Allowed || ex[0].Resource != "API_TOKEN@"+host {
			t.Errorf("secret exercises without a grant = %+v, want one denial of API_TOKEN@%s", ex, host)
		}
	})
	t.Run("not set", func(t *testing.T) {
		h := newHarness(t, Config{})
		p := secretPack(t, host)
		o := h.call(secretPipeline(t, h, secrets.Open(t.TempDir()), userGrants{network, secret}), p, "get", args)
		var me *SecretMissingError
		if !errors.As(o.Err, &me) || me.Name != "API_TOKEN" || !errors.Is(o.Err, ErrSecretMissing) {
			t.Fatalf("err = %v, want a SecretMissingError for API_TOKEN", o.Err)
		}
	})
}

// TestSecretPipelineReveal: a tool that reads a secret itself runs only
// under a grant that names reveal:API_TOKEN, and even then what it outputs
// is masked; the approval card says the tool reads the value.
func TestSecretPipelineReveal(t *testing.T) {
	store := secrets.Open(t.TempDir())
	if err := store.Set("API_TOKEN", []byte(apiToken)); err != nil {
		t.Fatal(err)
	}
	toml := "[capabilities]\nsecrets_access = [{ name = \"API_TOKEN\", reveal = true }]\n"
	for _, tt := range []struct {
		name  string
		grant []string // nil: a bare grant
		ok    bool
	}{{"bare grant", nil, false}, {"inject only", []string{"API_TOKEN"}, false}, {"reveal", []string{"reveal:API_TOKEN"}, true}} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			p := modulePack(t, "rv", toml, "testdata/plugin_secret.wasm", map[string]string{"get": "get"})
			pl := secretPipeline(t, h, store, userGrants{{Capability: capability.SecretsAccess, Resources: tt.grant, Scope: capability.ScopePersistent}})
			var card []string
			o, err := pl.Call(context.Background(), Request{Pack: p, Ref: capability.PackRef{Name: p.Name}, Tool: "get", Arguments: json.RawMessage(`{}`),
				Workspace: h.ws, Approvers: []capability.Approver{cardApprover{&card}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := o.Err == nil; got != tt.ok {
				t.Fatalf("err = %v, want ok=%v", o.Err, tt.ok)
			}
			if !tt.ok && !errors.Is(o.Err, capability.ErrDenied) {
				t.Errorf("err = %v, want a denial", o.Err)
			}
			reveals := strings.Contains(strings.Join(card, "\n"), "reveals the secret API_TOKEN to the tool")
			if reveals != tt.ok {
				t.Errorf("approval card touches %q: reveal said = %v, want %v", card, reveals, tt.ok)
			}
			if tt.ok && !strings.Contains(string(o.Output), hostfns.Masked) {
				t.Errorf("output = %s, want the masked value", o.Output)
			}
			if all := h.everything(t) + string(o.Output) + fmt.Sprint(o.Err); strings.Contains(all, apiToken) {
				t.Errorf("the value leaked:\n%s", all)
			}
		})
	}
}

// cardApprover approves and keeps what the approval card showed.
type cardApprover struct{ touches *[]string }

func (cardApprover) Name() string { return "card" }
func (a cardApprover) Approve(_ context.Context, p capability.Pending) (capability.Verdict, error) {
	*a.touches = p.Touches
	return capability.RunOnce, nil
}
