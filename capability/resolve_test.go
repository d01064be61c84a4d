package capability_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
)

func mustPolicy(t testing.TB, doc string) *capability.Policy {
	t.Helper()
	if doc == "" {
		return nil
	}
	p, err := capability.ParsePolicy("policy.toml", []byte(doc))
	if err != nil {
		t.Fatalf("ParsePolicy: %v", err)
	}
	return p
}

var testEnv = capability.Env{Home: "/home/ann", Workspace: "/ws", Getenv: func(k string) string {
	if k == "DATA" {
		return "/srv/data"
	}
	return ""
}}

const digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
const digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

var fullRequest = capability.Request{
	TerminalExec:    capability.ExecRequest{Commands: []string{"git", "jq"}, Blocked: []string{"rm"}},
	FilesystemRead:  []string{"~/projects", "$DATA/in"},
	FilesystemWrite: []string{"./out"},
	Network:         []string{"api.corp.example", "api.github.com", "*.example.com"},
	EnvRead:         []string{"AWS_*", "HOME"},
	SecretsAccess:   []string{"gh-token", "npm-token"},
}

func all(names ...capability.Name) []capability.UserGrant {
	var out []capability.UserGrant
	for _, n := range names {
		out = append(out, capability.UserGrant{Capability: n, Scope: capability.ScopePersistent})
	}
	return out
}

// TestResolveLayers asks one question of a resolved grant per row and checks
// the answer, the layer that gave it and the sentinel a denial wraps.
func TestResolveLayers(t *testing.T) {
	everything := all(capability.All()...)
	tests := []struct {
		name   string
		ref    capability.PackRef
		user   []capability.UserGrant
		policy string
		ask    func(capability.Grant) capability.Decision
		allow  bool
		layer  capability.Layer
		sent   error
	}{
		{name: "no user grant", user: nil,
			ask: func(g capability.Grant) capability.Decision { return g.Host("api.github.com") }, layer: capability.LayerUser, sent: capability.ErrNotGranted},
		{name: "granted all", user: everything,
			ask: func(g capability.Grant) capability.Decision { return g.Host("api.github.com") }, allow: true},
		{name: "not requested host", user: everything,
			ask: func(g capability.Grant) capability.Decision { return g.Host("evil.org") }, layer: capability.LayerRequest, sent: capability.ErrNotRequested},
		{name: "not requested capability", user: everything, policy: "",
			ask: func(g capability.Grant) capability.Decision {
				return capability.Grant{}.Host("x")
			}, layer: capability.LayerRequest, sent: capability.ErrNotRequested},
		{name: "user narrowed: kept", user: []capability.UserGrant{{Capability: capability.Network, Resources: []string{"a.example.com"}}},
			ask: func(g capability.Grant) capability.Decision { return g.Host("a.example.com") }, allow: true},
		{name: "user narrowed: cut", user: []capability.UserGrant{{Capability: capability.Network, Resources: []string{"a.example.com"}}},
			ask: func(g capability.Grant) capability.Decision { return g.Host("b.example.com") }, layer: capability.LayerUser, sent: capability.ErrNotGranted},
		{name: "policy ceiling keeps", user: everything, policy: "[ceilings]\nnetwork = [\"*.corp.example\"]\n",
			ask: func(g capability.Grant) capability.Decision { return g.Host("api.corp.example") }, allow: true},
		{name: "policy ceiling cuts", user: everything, policy: "[ceilings]\nnetwork = [\"*.corp.example\"]\n",
			ask: func(g capability.Grant) capability.Decision { return g.Host("api.github.com") }, layer: capability.LayerPolicy, sent: capability.ErrPolicyCeiling},
		{name: "policy ceiling narrows a wildcard", user: everything, policy: "[ceilings]\nnetwork = [\"docs.example.com\"]\n",
			ask: func(g capability.Grant) capability.Decision { return g.Host("docs.example.com") }, allow: true},
		{name: "policy ceiling narrows a wildcard: rest cut", user: everything, policy: "[ceilings]\nnetwork = [\"docs.example.com\"]\n",
			ask: func(g capability.Grant) capability.Decision { return g.Host("www.example.com") }, layer: capability.LayerPolicy, sent: capability.ErrPolicyCeiling},
		{name: "policy never terminal_exec", user: everything, policy: "[ceilings]\nnever = [\"terminal_exec\"]\n",
			ask: func(g capability.Grant) capability.Decision { return g.Command("git") }, layer: capability.LayerPolicy, sent: capability.ErrPolicyCeiling},
		{name: "policy empty ceiling", user: everything, policy: "[ceilings]\nsecrets_access = []\n",
			ask: func(g capability.Grant) capability.Decision { return g.Secret("gh-token") }, layer: capability.LayerPolicy, sent: capability.ErrPolicyCeiling},
		{name: "policy command ceiling", user: everything, policy: "[ceilings]\nterminal_exec = [\"jq\"]\n",
			ask: func(g capability.Grant) capability.Decision { return g.Command("git") }, layer: capability.LayerPolicy, sent: capability.ErrPolicyCeiling},
		{name: "pack's blocked command", user: everything,
			ask: func(g capability.Grant) capability.Decision { return g.Command("/bin/rm") }, layer: capability.LayerRequest, sent: capability.ErrNotRequested},
		{name: "revoked", user: []capability.UserGrant{{Capability: capability.Network, Scope: capability.ScopePersistent, Revoked: true}},
			ask: func(g capability.Grant) capability.Decision { return g.Host("api.github.com") }, layer: capability.LayerUser, sent: capability.ErrRevoked},
		{name: "revoked then granted for a chat", user: []capability.UserGrant{
			{Capability: capability.Network, Scope: capability.ScopePersistent, Revoked: true},
			{Capability: capability.Network, Scope: capability.ScopeChat}},
			ask: func(g capability.Grant) capability.Decision { return g.Host("api.github.com") }, allow: true},
		{name: "pre-approved", policy: "[[preapprove]]\npack = \"p\"\ngrants = [\"network\"]\n",
			ask: func(g capability.Grant) capability.Decision { return g.Host("api.github.com") }, allow: true},
		{name: "pre-approved narrowly", policy: "[[preapprove]]\npack = \"p\"\ngrants = [\"network=api.github.com\"]\n",
			ask: func(g capability.Grant) capability.Decision { return g.Host("api.corp.example") }, layer: capability.LayerUser, sent: capability.ErrNotGranted},
		{name: "pre-approval pinned to other content", ref: capability.PackRef{Name: "p", Digest: digestA},
			policy: "[[preapprove]]\npack = \"p\"\ndigest = \"" + digestB + "\"\ngrants = [\"network\"]\n",
			ask:    func(g capability.Grant) capability.Decision { return g.Host("api.github.com") }, layer: capability.LayerUser, sent: capability.ErrNotGranted},
		{name: "pre-approval pinned to this content", ref: capability.PackRef{Name: "p", Digest: digestA},
			policy: "[[preapprove]]\npack = \"p\"\ndigest = \"" + digestA + "\"\ngrants = [\"network\"]\n",
			ask:    func(g capability.Grant) capability.Decision { return g.Host("api.github.com") }, allow: true},
		{name: "revoked beats pre-approval", user: []capability.UserGrant{{Capability: capability.Network, Revoked: true}},
			policy: "[[preapprove]]\npack = \"p\"\ngrants = [\"network\"]\n",
			ask:    func(g capability.Grant) capability.Decision { return g.Host("api.github.com") }, layer: capability.LayerUser, sent: capability.ErrRevoked},
		{name: "pre-approval is still capped", policy: "[ceilings]\nnetwork = [\"*.corp.example\"]\n[[preapprove]]\npack = \"p\"\ngrants = [\"network\"]\n",
			ask: func(g capability.Grant) capability.Decision { return g.Host("api.github.com") }, layer: capability.LayerPolicy, sent: capability.ErrPolicyCeiling},
		{name: "env ceiling keeps", user: everything, policy: "[ceilings]\nenv_read = [\"AWS_REGION\"]\n",
			ask: func(g capability.Grant) capability.Decision { return g.Env("AWS_REGION") }, allow: true},
		{name: "env ceiling cuts", user: everything, policy: "[ceilings]\nenv_read = [\"AWS_REGION\"]\n",
			ask: func(g capability.Grant) capability.Decision { return g.Env("AWS_SECRET_ACCESS_KEY") }, layer: capability.LayerPolicy, sent: capability.ErrPolicyCeiling},
		{name: "path granted", user: everything,
			ask: func(g capability.Grant) capability.Decision { return g.Path("/home/ann/projects/a/b.txt", false) }, allow: true},
		{name: "path outside", user: everything,
			ask: func(g capability.Grant) capability.Decision { return g.Path("/home/ann/.ssh/id_ed25519", false) }, layer: capability.LayerRequest, sent: capability.ErrNotRequested},
		{name: "path sibling with the same prefix", user: everything,
			ask: func(g capability.Grant) capability.Decision { return g.Path("/home/ann/projectsX/a", false) }, layer: capability.LayerRequest, sent: capability.ErrNotRequested},
		{name: "path escaping with ..", user: everything,
			ask: func(g capability.Grant) capability.Decision { return g.Path("/ws/out/../../etc/passwd", true) }, layer: capability.LayerRequest, sent: capability.ErrNotRequested},
		{name: "path unclean but inside", user: everything,
			ask: func(g capability.Grant) capability.Decision { return g.Path("/ws/out/./a//b", true) }, allow: true},
		{name: "path relative", user: everything,
			ask: func(g capability.Grant) capability.Decision { return g.Path("ws/out/a", true) }, layer: capability.LayerRequest, sent: capability.ErrNotRequested},
		{name: "path write needs write grant", user: all(capability.FilesystemRead),
			ask: func(g capability.Grant) capability.Decision { return g.Path("/ws/out/x", true) }, layer: capability.LayerUser, sent: capability.ErrNotGranted},
		{name: "path write granted", user: everything,
			ask: func(g capability.Grant) capability.Decision { return g.Path("/ws/out/x", true) }, allow: true},
		{name: "path ceiling narrows", user: everything, policy: "[ceilings]\nfilesystem_read = [\"~/projects/shared\"]\n",
			ask: func(g capability.Grant) capability.Decision { return g.Path("/home/ann/projects/shared/x", false) }, allow: true},
		{name: "path ceiling cuts", user: everything, policy: "[ceilings]\nfilesystem_read = [\"~/projects/shared\"]\n",
			ask: func(g capability.Grant) capability.Decision { return g.Path("/home/ann/projects/secret/x", false) }, layer: capability.LayerPolicy, sent: capability.ErrPolicyCeiling},
		{name: "path user narrowing", user: []capability.UserGrant{{Capability: capability.FilesystemRead, Resources: []string{"~/projects/a"}}},
			ask: func(g capability.Grant) capability.Decision { return g.Path("/home/ann/projects/b", false) }, layer: capability.LayerUser, sent: capability.ErrNotGranted},
		{name: "path from variable", user: everything,
			ask: func(g capability.Grant) capability.Decision { return g.Path("/srv/data/in/x.csv", false) }, allow: true},
		{name: "secret listed", user: everything,
			ask: func(g capability.Grant) capability.Decision { return g.Secret("gh-token") }, allow: true},
		{name: "secret not listed", user: everything,
			ask: func(g capability.Grant) capability.Decision { return g.Secret("aws-root") }, layer: capability.LayerRequest, sent: capability.ErrNotRequested},
		{name: "user grant beyond policy", user: []capability.UserGrant{{Capability: capability.Network, Resources: []string{"api.github.com"}}},
			policy: "[ceilings]\nnetwork = [\"*.corp.example\"]\n",
			ask:    func(g capability.Grant) capability.Decision { return g.Host("api.github.com") }, layer: capability.LayerPolicy, sent: capability.ErrPolicyCeiling},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := tt.ref
			if ref.Name == "" {
				ref.Name = "p"
			}
			g, err := capability.Resolve(ref, fullRequest, tt.user, mustPolicy(t, tt.policy), testEnv)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			d := tt.ask(g)
			if got := d.Allowed(); got != tt.allow {
				t.Fatalf("allowed = %v (%s), want %v", got, d.Reason(), tt.allow)
			}
			if tt.allow {
				if d.Err() != nil {
					t.Fatalf("Err() = %v for an allow", d.Err())
				}
				return
			}
			if d.Layer() != tt.layer {
				t.Errorf("layer = %q (%s), want %q", d.Layer(), d.Reason(), tt.layer)
			}
			err = d.Err()
			if !errors.Is(err, capability.ErrDenied) || !errors.Is(err, tt.sent) {
				t.Errorf("Err() = %v, want it to wrap ErrDenied and %v", err, tt.sent)
			}
			var de *capability.DeniedError
			if !errors.As(err, &de) || de.Layer != tt.layer {
				t.Errorf("Err() = %#v, want a *DeniedError from layer %q", err, tt.layer)
			}
		})
	}
}

func TestResolveBlocked(t *testing.T) {
	pol := mustPolicy(t, "[packs]\nblocked = [\"evil\"]\nblocked_digests = [\""+digestA+"\"]\n")
	for _, ref := range []capability.PackRef{{Name: "evil"}, {Name: "renamed", Digest: digestA}, {Name: "renamed", Digest: "SHA256:" + digestA[7:]}} {
		_, err := capability.Resolve(ref, fullRequest, all(capability.All()...), pol, testEnv)
		if !errors.Is(err, capability.ErrDenied) || !errors.Is(err, capability.ErrBlocked) {
			t.Errorf("Resolve(%v) error = %v, want ErrDenied and ErrBlocked", ref, err)
		}
	}
	if _, err := capability.Resolve(capability.PackRef{Name: "fine", Digest: digestB}, fullRequest, nil, pol, testEnv); err != nil {
		t.Errorf("Resolve of an unblocked pack: %v", err)
	}
}

func TestResolveLimitsAndScope(t *testing.T) {
	req := capability.Request{Network: []string{"a.example"}, EnvRead: []string{"HOME"}, Limits: capability.Limits{MemoryPages: 4096, Timeout: time.Minute}}
	pol := mustPolicy(t, "[ceilings]\nmemory_mb = 32\ntimeout = \"10s\"\noutput_bytes = 4096\n")
	user := []capability.UserGrant{{Capability: capability.Network, Scope: capability.ScopeChat}, {Capability: capability.EnvRead, Scope: capability.ScopeOnce}}
	g, err := capability.Resolve(capability.PackRef{Name: "p"}, req, user, pol, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	got := g.Limits()
	want := capability.Limits{MemoryPages: 512, Timeout: 10 * time.Second, InputBytes: 1 << 20, OutputBytes: 4096}
	if got != want {
		t.Errorf("Limits() = %+v, want %+v", got, want)
	}
	if g.Scope() != capability.ScopeOnce {
		t.Errorf("Scope() = %q, want once (the narrowest held grant)", g.Scope())
	}
	if got, want := g.Names(), []capability.Name{capability.Network, capability.EnvRead}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	g, _ = capability.Resolve(capability.PackRef{Name: "p"}, req, user, nil, testEnv)
	if got := g.Limits(); got.MemoryPages != 4096 || got.Timeout != time.Minute {
		t.Errorf("without a policy Limits() = %+v, want the request's", got)
	}
}

func TestResolveEffectiveResources(t *testing.T) {
	pol := mustPolicy(t, "[ceilings]\nnetwork = [\"*.corp.example\", \"docs.example.com\"]\nfilesystem_read = [\"~/projects/shared\"]\n")
	g, err := capability.Resolve(capability.PackRef{Name: "p"}, fullRequest, all(capability.All()...), pol, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := g.Resources(capability.Network), []string{"api.corp.example", "docs.example.com"}; !slices.Equal(got, want) {
		t.Errorf("Resources(network) = %v, want %v", got, want)
	}
	if got, want := g.Mounts(), []capability.Mount{{HostPath: "/home/ann/projects/shared"}, {HostPath: "/ws/out", Writable: true}}; !slices.Equal(got, want) {
		t.Errorf("Mounts() = %v, want %v", got, want)
	}
	if got := g.Resources(capability.SecretsAccess); !slices.Equal(got, []string{"gh-token", "npm-token"}) {
		t.Errorf("Resources(secrets_access) = %v", got)
	}
}

func TestResolveUnexpandablePath(t *testing.T) {
	req := capability.Request{FilesystemRead: []string{"$NOPE/x"}, Network: []string{"a.example"}}
	g, err := capability.Resolve(capability.PackRef{Name: "p"}, req, all(capability.All()...), nil, testEnv)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if g.Has(capability.FilesystemRead) || !g.Has(capability.Network) {
		t.Errorf("Names() = %v, want only network", g.Names())
	}
}

func TestResolveBadRequest(t *testing.T) {
	_, err := capability.Resolve(capability.PackRef{Name: "p"}, capability.Request{Network: []string{"http://x"}}, nil, nil, testEnv)
	var pe *capability.PatternError
	if !errors.As(err, &pe) || pe.Field != capability.Network {
		t.Errorf("Resolve of a bad request: %v, want a *PatternError for network", err)
	}
}

// TestZeroValuesGrantNothing is the capability-level half of "the model can
// never grant anything": nothing outside this package can build a Grant,
// Decision or Approval, and their zero values allow nothing.
func TestZeroValuesGrantNothing(t *testing.T) {
	var g capability.Grant
	for _, n := range capability.All() {
		if g.Has(n) {
			t.Errorf("zero Grant has %s", n)
		}
	}
	if len(g.Names()) != 0 || len(g.Mounts()) != 0 || g.Pack() != "" {
		t.Error("zero Grant lists something")
	}
	for _, d := range []capability.Decision{g.Host("example.com"), g.Env("HOME"), g.Path("/", false), g.Path("/tmp", true), g.Command("sh"), g.Secret("s"), {}} {
		if d.Allowed() || !errors.Is(d.Err(), capability.ErrDenied) {
			t.Errorf("zero Grant decision %v allows", d)
		}
	}
	if g.Limits() != capability.DefaultLimits() {
		t.Error("zero Grant has non-default limits")
	}
	var a capability.Approval
	for _, inv := range []string{"", "inv-1"} {
		if !errors.Is(a.Covers(capability.Call{Invocation: inv}), capability.ErrApprovalMismatch) {
			t.Errorf("zero Approval covers %q", inv)
		}
	}
	if a.Verdict() != capability.Deny || a.Approver() != "" || a.Remembered() {
		t.Error("zero Approval is not a denial")
	}
	var v capability.Verdict
	if v != capability.Deny {
		t.Error("zero Verdict is not Deny")
	}
}

// TestGlobMounts checks mounts with a glob and a mount of the whole
// filesystem root.
func TestGlobMounts(t *testing.T) {
	req := capability.Request{FilesystemRead: []string{"~/logs/*.log", "/"}, FilesystemWrite: []string{"~/out/*/result.json"}}
	g, err := capability.Resolve(capability.PackRef{Name: "p"}, req, all(capability.FilesystemRead, capability.FilesystemWrite), nil, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path  string
		write bool
		want  bool
	}{
		{"/home/ann/logs/app.log", false, true},
		{"/etc/hosts", false, true}, // the "/" mount
		{"/home/ann/out/run1/result.json", true, true},
		{"/home/ann/out/run1/other.json", true, false},
		{"/home/ann/out/run1/deep/result.json", true, false},
		{"/home/ann/logs/app.log", true, false},
	}
	for _, tt := range tests {
		if got := g.Path(tt.path, tt.write).Allowed(); got != tt.want {
			t.Errorf("Path(%q, write=%v) = %v, want %v", tt.path, tt.write, got, tt.want)
		}
	}
	pol := mustPolicy(t, "[ceilings]\nfilesystem_read = [\"~/logs\"]\n")
	g, _ = capability.Resolve(capability.PackRef{Name: "p"}, req, all(capability.FilesystemRead), pol, testEnv)
	// "/" is wider than the ceiling, so it becomes the whole of ~/logs.
	if !g.Path("/home/ann/logs/app.txt", false).Allowed() || g.Path("/etc/hosts", false).Allowed() {
		t.Errorf("ceiling ~/logs: mounts %v", g.Mounts())
	}
}
