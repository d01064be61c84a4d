package hostfns

import (
	"errors"
	"maps"
	"testing"

	"github.com/packs-run/packs/capability"
)

func TestEnviron(t *testing.T) {
	cases := []struct {
		name  string
		grant []string
		want  map[string]string
	}{
		{"not granted", nil, map[string]string{}},
		{"one name", []string{"PROBE_TOKEN"}, map[string]string{"PROBE_TOKEN": "t0k3n"}},
		{"a prefix", []string{"PROBE_*"}, map[string]string{"PROBE_TOKEN": "t0k3n", "PROBE_OTHER": "x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, rec := newCall(t, capability.Request{EnvRead: tc.grant})
			got := Environ(c, append(probeEnv, "malformed", "=nokey"))
			if !maps.Equal(got, tc.want) {
				t.Fatalf("Environ = %v, want %v", got, tc.want)
			}
			for k := range tc.want {
				requireRecorded(t, rec, capability.EnvRead, k, true)
			}
			if got, want := len(rec.all()), len(tc.want); got != want {
				t.Fatalf("%d exercises recorded, want one per exposed variable (%d):\n%s", got, want, dump(rec.all()))
			}
		})
	}
}

// TestEnvironFailsClosed: a variable whose exposure cannot be recorded is
// not exposed; a Call without a recorder exposes nothing.
func TestEnvironFailsClosed(t *testing.T) {
	c, rec := newCall(t, capability.Request{EnvRead: []string{"PROBE_TOKEN"}})
	rec.fail = errors.New("disk full")
	if got := Environ(c, probeEnv); len(got) != 0 {
		t.Fatalf("Environ with a failing recorder = %v, want nothing", got)
	}
	c.Recorder = nil
	if got := Environ(c, probeEnv); len(got) != 0 {
		t.Fatalf("Environ without a recorder = %v, want nothing", got)
	}
}

// TestEnvGuest pairs a granted variable with a denied one as the guest
// sees them: in the WASI environment, and through config_get, where the
// attempt on the secret is recorded as a denial.
func TestEnvGuest(t *testing.T) {
	c, rec := newCall(t, capability.Request{EnvRead: []string{"PROBE_TOKEN"}})
	if r := mustProbe(t, c, "base", op{"op": "getenv", "name": "PROBE_TOKEN"}); !r.Found || r.Data != "t0k3n" {
		t.Fatalf("getenv PROBE_TOKEN = %+v, want t0k3n", r)
	}
	for _, name := range []string{"SECRET", "HOME", "PATH"} {
		if r := mustProbe(t, c, "base", op{"op": "getenv", "name": name}); r.Found {
			t.Fatalf("getenv %s = %q, want not set", name, r.Data)
		}
	}
	if r := mustProbe(t, c, "base", op{"op": "config", "name": "PROBE_TOKEN"}); !r.Found || r.Data != "t0k3n" {
		t.Fatalf("config PROBE_TOKEN = %+v, want t0k3n", r)
	}
	requireRecorded(t, rec, capability.EnvRead, "PROBE_TOKEN", true)
	if r := mustProbe(t, c, "base", op{"op": "config", "name": "SECRET"}); r.Found || r.Data != "" {
		t.Fatalf("config SECRET = %+v, want not set", r)
	}
	requireRecorded(t, rec, capability.EnvRead, "SECRET", false)
}
