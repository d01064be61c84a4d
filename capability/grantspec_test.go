package capability_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
)

func TestParseGrantSpec(t *testing.T) {
	tests := []struct {
		spec string
		want capability.UserGrant
		err  bool
	}{
		{spec: "network", want: capability.UserGrant{Capability: capability.Network, Scope: capability.ScopePersistent}},
		{spec: "network=chat", want: capability.UserGrant{Capability: capability.Network, Scope: capability.ScopeChat}},
		{spec: "env_read=once", want: capability.UserGrant{Capability: capability.EnvRead, Scope: capability.ScopeOnce}},
		{spec: "network=api.example.com", want: capability.UserGrant{Capability: capability.Network, Resources: []string{"api.example.com"}, Scope: capability.ScopePersistent}},
		{spec: "network=a.example, b.example,a.example", want: capability.UserGrant{Capability: capability.Network, Resources: []string{"a.example", "b.example"}, Scope: capability.ScopePersistent}},
		{spec: "filesystem_read=~/projects", want: capability.UserGrant{Capability: capability.FilesystemRead, Resources: []string{"~/projects"}, Scope: capability.ScopePersistent}},
		{spec: "teleport", err: true},
		{spec: "network=", err: true},
		{spec: "network=a.example,,b", err: true},
		{spec: "network=https://a.example", err: true},
		{spec: "filesystem_read=../etc", err: true},
		{spec: "terminal_exec=rm -rf", err: true},
	}
	for _, tt := range tests {
		got, err := capability.ParseGrantSpec(tt.spec, capability.ScopePersistent)
		if (err != nil) != tt.err {
			t.Errorf("ParseGrantSpec(%q) error = %v, want error %v", tt.spec, err, tt.err)
			continue
		}
		if err != nil {
			if !errors.Is(err, capability.ErrBadSpec) {
				t.Errorf("ParseGrantSpec(%q) error %v does not wrap ErrBadSpec", tt.spec, err)
			}
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseGrantSpec(%q) = %+v, want %+v", tt.spec, got, tt.want)
		}
	}
	if _, err := capability.ParseScope("forever"); err == nil {
		t.Error("ParseScope(forever) = nil error")
	}
}

func TestParseGrantList(t *testing.T) {
	tests := []struct {
		list string
		want []string // UserGrant.String() of each
		err  bool
	}{
		{list: "all", want: []string{"terminal_exec", "filesystem_read", "filesystem_write", "network", "env_read", "secrets_access"}},
		{list: "none", want: []string{}},
		{list: "network,env_read", want: []string{"network", "env_read"}},
		{list: "network=api.github.com,api.corp.example,env_read=HOME", want: []string{"network=api.github.com,api.corp.example", "env_read=HOME"}},
		{list: "network=x.example.com", want: []string{"network=x.example.com"}},
		{list: "env_read=AWS_REGION", want: []string{"env_read=AWS_REGION"}},
		{list: "filesystem_read=~/projects/a", want: []string{"filesystem_read=~/projects/a"}},
		{list: "terminal_exec=git", want: []string{"terminal_exec=git"}},
		{list: "network=evil.org", err: true},
		{list: "network=*", err: true},
		{list: "env_read=PATH", err: true},
		{list: "filesystem_read=~/.ssh", err: true},
		{list: "terminal_exec=sh", err: true},
		{list: "teleport", err: true},
	}
	for _, tt := range tests {
		got, err := capability.ParseGrantList(tt.list, fullRequest, capability.ScopePersistent)
		if (err != nil) != tt.err {
			t.Errorf("ParseGrantList(%q) error = %v, want error %v", tt.list, err, tt.err)
			continue
		}
		if err != nil {
			continue
		}
		var s []string
		for _, u := range got {
			s = append(s, u.String())
		}
		if !slices.Equal(s, tt.want) || got == nil {
			t.Errorf("ParseGrantList(%q) = %v, want %v", tt.list, s, tt.want)
		}
	}
	narrow := capability.Request{Network: []string{"a.example"}}
	if _, err := capability.ParseGrantList("env_read", narrow, capability.ScopePersistent); !errors.Is(err, capability.ErrBadSpec) {
		t.Errorf("granting an unrequested capability: %v, want ErrBadSpec", err)
	}
}

func TestExplain(t *testing.T) {
	pol := mustPolicy(t, fullPolicy)
	user := []capability.UserGrant{
		{Capability: capability.Network, Resources: []string{"api.corp.example", "api.github.com"}, Scope: capability.ScopeChat},
		{Capability: capability.EnvRead, Revoked: true},
		{Capability: capability.FilesystemRead, Scope: capability.ScopePersistent},
	}
	rep, err := capability.Explain(capability.PackRef{Name: "p"}, fullRequest, user, pol, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Blocked != nil || rep.Mandated {
		t.Errorf("Blocked = %v, Mandated = %v", rep.Blocked, rep.Mandated)
	}
	if rep.Limits.MemoryPages != 1024 || rep.Limits.Timeout != 30*time.Second || rep.Limits.OutputBytes != 65536 {
		t.Errorf("Limits = %+v", rep.Limits)
	}
	type row struct {
		held       bool
		policy     bool
		user       bool
		effective  []string
		sentinel   error
		reasonPart string
	}
	want := map[capability.Name]row{
		capability.TerminalExec:    {policy: true, effective: nil, sentinel: capability.ErrNotGranted},
		capability.FilesystemRead:  {held: true, policy: true, user: true, effective: []string{"/home/ann/projects"}},
		capability.FilesystemWrite: {policy: true, sentinel: capability.ErrNotGranted},
		capability.Network:         {held: true, policy: true, user: true, effective: []string{"api.corp.example"}},
		capability.EnvRead:         {policy: false, sentinel: capability.ErrPolicyCeiling, reasonPart: "never beyond [CORP_*]"},
		capability.SecretsAccess:   {sentinel: capability.ErrPolicyCeiling, reasonPart: "never grants"},
	}
	if len(rep.Capabilities) != len(want) {
		t.Fatalf("%d capability reports, want %d", len(rep.Capabilities), len(want))
	}
	for _, c := range rep.Capabilities {
		w := want[c.Capability]
		if c.Held() != w.held || c.Policy.Allowed != w.policy || c.User.Allowed != w.user || !slices.Equal(c.Effective, w.effective) {
			t.Errorf("%s: held %v policy %v user %v effective %v; want %+v", c.Capability, c.Held(), c.Policy.Allowed, c.User.Allowed, c.Effective, w)
		}
		if w.sentinel != nil && !errors.Is(c.Err, w.sentinel) {
			t.Errorf("%s: Err = %v, want %v", c.Capability, c.Err, w.sentinel)
		}
		if w.reasonPart != "" && !strings.Contains(c.Policy.Reason, w.reasonPart) {
			t.Errorf("%s: policy reason %q lacks %q", c.Capability, c.Policy.Reason, w.reasonPart)
		}
	}
	if c := rep.Capabilities[3]; c.Scope != capability.ScopeChat || !strings.Contains(c.Policy.Reason, "dropped api.github.com") {
		t.Errorf("network: scope %q, policy reason %q", c.Scope, c.Policy.Reason)
	}

	rep, err = capability.Explain(capability.PackRef{Name: "p"}, capability.Request{EnvRead: []string{"CORP_ID"}}, user, pol, testEnv)
	if err != nil || len(rep.Capabilities) != 1 || !errors.Is(rep.Capabilities[0].Err, capability.ErrRevoked) {
		t.Errorf("revoked env_read within the ceiling: %+v, %v", rep.Capabilities, err)
	}

	rep, err = capability.Explain(capability.PackRef{Name: "evil-pack"}, fullRequest, user, pol, testEnv)
	if err != nil || !errors.Is(rep.Blocked, capability.ErrBlocked) {
		t.Fatalf("blocked pack: %v, %v", rep.Blocked, err)
	}
	for _, c := range rep.Capabilities {
		if c.Held() || !errors.Is(c.Err, capability.ErrBlocked) {
			t.Errorf("blocked pack holds %s (%v)", c.Capability, c.Err)
		}
	}
	rep, _ = capability.Explain(capability.PackRef{Name: "corp-guidelines"}, capability.Request{}, nil, pol, testEnv)
	if !rep.Mandated || len(rep.Capabilities) != 0 {
		t.Errorf("mandated pack report: %+v", rep)
	}
}

func TestLockRoundTrip(t *testing.T) {
	grants := []capability.UserGrant{
		{Capability: capability.Network, Resources: []string{"api.github.com"}, Scope: capability.ScopePersistent},
		{Capability: capability.EnvRead, Scope: capability.ScopePersistent},
		{Capability: capability.TerminalExec, Scope: capability.ScopeChat},
		{Capability: capability.SecretsAccess, Scope: capability.ScopePersistent, Revoked: true},
	}
	lock := capability.ToLock(fullRequest, grants)
	want := map[capability.Name]capability.LockCapability{
		capability.TerminalExec:    {},
		capability.FilesystemRead:  {},
		capability.FilesystemWrite: {},
		capability.Network:         {Granted: true, Resources: []string{"api.github.com"}},
		capability.EnvRead:         {Granted: true, Resources: []string{"AWS_*", "HOME"}},
		capability.SecretsAccess:   {},
	}
	if !reflect.DeepEqual(lock, want) {
		t.Errorf("ToLock = %+v\nwant %+v", lock, want)
	}
	back := capability.FromLock(lock)
	g, err := capability.Resolve(capability.PackRef{Name: "p"}, fullRequest, back, nil, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Names(); !slices.Equal(got, []capability.Name{capability.Network, capability.EnvRead}) {
		t.Errorf("grant from the lock holds %v", got)
	}
	if !g.Host("api.github.com").Allowed() || g.Host("api.corp.example").Allowed() || !g.Env("AWS_REGION").Allowed() {
		t.Error("grant from the lock differs from the stored grants")
	}
}

func BenchmarkResolve(b *testing.B) {
	pol := mustPolicy(b, fullPolicy)
	user := all(capability.All()...)
	ref := capability.PackRef{Name: "p"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := capability.Resolve(ref, fullRequest, user, pol, testEnv); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecide is one gate decision through the policy approver, the
// path every auto-approved tool call takes.
func BenchmarkDecide(b *testing.B) {
	pol := mustPolicy(b, fullPolicy)
	g := capability.NewGate(pol.Approver(), &person{verdict: capability.Deny})
	p := capability.Pending{Invocation: "inv", Chat: "c", Pack: "json-tools", Tool: "query"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Decide(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHostDecision is one capability check in a host function.
func BenchmarkHostDecision(b *testing.B) {
	g, err := capability.Resolve(capability.PackRef{Name: "p"}, fullRequest, all(capability.All()...), mustPolicy(b, fullPolicy), testEnv)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if !g.Host("api.corp.example").Allowed() {
			b.Fatal("denied")
		}
	}
}

// BenchmarkResolveTypical resolves what most packs ask for: a couple of
// hosts and a workspace folder, under a policy with ceilings.
func BenchmarkResolveTypical(b *testing.B) {
	pol := mustPolicy(b, fullPolicy)
	req := capability.Request{Network: []string{"api.corp.example", "docs.corp.example"}, FilesystemRead: []string{"./"}}
	user := all(capability.Network, capability.FilesystemRead)
	ref := capability.PackRef{Name: "p"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := capability.Resolve(ref, req, user, pol, testEnv); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzParseGrantList: packs add --grant and packs grant read grants with
// ParseGrantList; whatever it accepts is a valid grant within the request,
// and it never panics.
func FuzzParseGrantList(f *testing.F) {
	for _, s := range []string{"all", "none", "network,env_read", "network=api.example.com,docs.example.com,env_read", "env_read=HOME", "network=chat", "filesystem_read=~/projects/a", ",", "=", "network=,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		grants, err := capability.ParseGrantList(s, fullRequest, capability.ScopePersistent)
		if err != nil {
			if !errors.Is(err, capability.ErrBadSpec) {
				t.Fatalf("ParseGrantList(%q) error %v does not wrap ErrBadSpec", s, err)
			}
			return
		}
		for _, u := range grants {
			if err := capability.ValidateGrant(u); err != nil {
				t.Fatalf("ParseGrantList(%q) accepted an invalid grant %+v: %v", s, u, err)
			}
			if err := capability.CheckGrant(fullRequest, u); err != nil {
				t.Fatalf("ParseGrantList(%q) accepted a grant wider than the request %+v: %v", s, u, err)
			}
		}
	})
}
