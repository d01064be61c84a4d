package runtime

import (
	"slices"
	"testing"

	"github.com/packs-run/packs/capability"
)

// TestGrantedEnviron: without an env_read grant the process environment is
// not even read; with one, only the granted variables are passed on.
func TestGrantedEnviron(t *testing.T) {
	h := newHarness(t, Config{PoolSize: -1})
	p := modulePack(t, "envpack", "[capabilities]\nenv_read = [\"BENCHT_*\"]\n", pluginWasm, map[string]string{"echo": "echo"})
	environ := []string{"BENCHT_A=1", "HOME=/root", "BENCHT_B=2", "=weird", "BENCHTX=3"}
	tests := []struct {
		name  string
		grant []capability.Name
		want  []string
		reads bool
	}{
		{"granted", []capability.Name{capability.EnvRead}, []string{"BENCHT_A=1", "BENCHT_B=2"}, true},
		{"not granted", []capability.Name{}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read := false
			got := grantedEnviron(h.grant(p, tt.grant), func() []string { read = true; return environ })
			if !slices.Equal(got, tt.want) || read != tt.reads {
				t.Errorf("got %q (environment read: %t), want %q (%t)", got, read, tt.want, tt.reads)
			}
		})
	}
}
