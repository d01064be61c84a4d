package hostfns

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/packs-run/packs/capability"
)

// fakeHTTP answers every request it gets with the same body and counts them.
type fakeHTTP struct{ hits atomic.Int64 }

func (f *fakeHTTP) RoundTrip(r *http.Request) (*http.Response, error) {
	f.hits.Add(1)
	return &http.Response{
		StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/plain"}},
		Body: io.NopCloser(strings.NewReader("fake " + r.URL.String())), Request: r,
	}, nil
}

// fakeLookup resolves every name to 93.184.215.14.
func fakeLookup(context.Context, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
}

// TestFakeHTTPDecidesFirst: with Fakes.HTTP the request is still decided
// and recorded by name and by the address the lookup gave, exactly as
// without it; a host that is not granted, or a name that resolves to a
// special-purpose address, never reaches the fake.
func TestFakeHTTPDecidesFirst(t *testing.T) {
	cases := []struct {
		name      string
		grant     []string
		url       string
		lookup    func(context.Context, string) ([]netip.Addr, error)
		wantHits  int64
		wantErr   error
		resources map[string]bool // resource → allowed
	}{
		{"granted", []string{"api.example.com"}, "https://api.example.com/v1/x?k=secret", fakeLookup, 1, nil,
			map[string]bool{"https://api.example.com/v1/x": true, "api.example.com:443 (93.184.215.14)": true}},
		{"not granted", []string{"api.example.com"}, "https://evil.example.net/", fakeLookup, 0, capability.ErrNotRequested,
			map[string]bool{"https://evil.example.net/": false}},
		{"granted name on a private address", []string{"api.example.com"}, "https://api.example.com/", func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("10.0.0.1")}, nil
		}, 0, capability.ErrSpecialAddress, map[string]bool{"https://api.example.com/": true, "api.example.com:443 (10.0.0.1)": false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeHTTP{}
			c, rec := newCall(t, capability.Request{Network: tc.grant})
			ctx := WithFakes(context.Background(), Fakes{HTTP: f, Lookup: tc.lookup})
			resp, err := newNetwork().fetch(ctx, c, HTTPRequest{URL: tc.url}, nil)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr != nil) != (err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if got := f.hits.Load(); got != tc.wantHits {
				t.Fatalf("fake hits = %d, want %d", got, tc.wantHits)
			}
			if tc.wantErr == nil && (resp.Status != 200 || !strings.HasPrefix(string(resp.Body), "fake https://api.example.com/v1/x")) {
				t.Fatalf("response = %d %q", resp.Status, resp.Body)
			}
			for res, allowed := range tc.resources {
				requireRecorded(t, rec, capability.Network, res, allowed)
			}
		})
	}
}

// TestFakeExecPath: a stub on Fakes.ExecPath runs in place of the real
// command, and only after the grant allowed the command's name; a command
// the grant does not name is denied before any lookup.
func TestFakeExecPath(t *testing.T) {
	dir := t.TempDir()
	stub := filepath.Join(dir, "git")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\necho stubbed \"$@\"\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := WithFakes(context.Background(), Fakes{ExecPath: dir})

	c, rec := newCall(t, capability.Request{TerminalExec: capability.ExecRequest{Commands: []string{"git"}}})
	res, err := Exec(ctx, c, []string{"git", "status"}, ExecOptions{})
	if err != nil || res.ExitCode != 3 || string(res.Stdout) != "stubbed status\n" {
		t.Fatalf("exec = %+v, %v; want the stub's output and exit 3", res, err)
	}
	requireRecorded(t, rec, capability.TerminalExec, "git", true)

	c, rec = newCall(t, capability.Request{TerminalExec: capability.ExecRequest{Commands: []string{"ls"}}})
	if _, err := Exec(ctx, c, []string{"git", "status"}, ExecOptions{}); !errors.Is(err, capability.ErrDenied) {
		t.Fatalf("err = %v, want a denial: the stub must not bypass the grant", err)
	}
	requireRecorded(t, rec, capability.TerminalExec, "git", false)

	// A granted command with no stub is not found: the fake path is the
	// only one searched, so a test never runs the real program.
	c, _ = newCall(t, capability.Request{TerminalExec: capability.ExecRequest{Commands: []string{"ls"}}})
	if _, err := Exec(ctx, c, []string{"ls"}, ExecOptions{}); !errors.Is(err, ErrCommandNotFound) {
		t.Fatalf("err = %v, want ErrCommandNotFound", err)
	}
}
