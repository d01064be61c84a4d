package runtime

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
)

// stateGuests are the guests that report, then change, the state an
// instance holds (see testdata/plugin_state.wat, wasi_state.wat and the Go
// plugin's state export): untouched is how their report starts in a fresh
// instance.
func stateGuests(tb testing.TB) []struct{ name, src, fn, untouched string } {
	guests := []struct{ name, src, fn, untouched string }{
		// memory, global, table, Extism var; then the open descriptors
		{"wat-plugin", "testdata/plugin_state.wasm", "touch", `"0000`},
		// memory, global, table; then the open descriptors
		{"wasi-command", "testdata/wasi_state.wasm", "", `"000`},
	}
	if goPluginWasm != "" {
		guests = append(guests, struct{ name, src, fn, untouched string }{"go-plugin", goPluginWasm, "state", `{"calls":0}`})
	} else {
		tb.Logf("go-plugin skipped: %v", goPluginErr)
	}
	return guests
}

// TestNothingSurvivesACall: whatever one call changes in its instance (a
// byte of memory, a global, a table entry, an Extism var, an open file
// descriptor; a Go variable), the next call of the same tool, under the
// same grant and workspace (the same pool), does not see it: every call
// reports the state of a fresh instance. It holds with the pool off, with
// one ready instance, and with several.
func TestNothingSurvivesACall(t *testing.T) {
	for _, g := range stateGuests(t) {
		for _, size := range []int{-1, 1, 2} {
			t.Run(fmt.Sprintf("%s/pool=%d", g.name, size), func(t *testing.T) {
				h := newHarness(t, Config{PoolSize: size})
				p := modulePack(t, "state", "", g.src, map[string]string{"touch": g.fn})
				gr := h.grant(p, nil)
				var first string
				for i := range 4 {
					res, err := h.rt.invoke(context.Background(), h.invocation(p, "touch", `{}`, gr))
					if err != nil {
						t.Fatalf("call %d: %v", i, err)
					}
					got := string(res.Output)
					if i == 0 {
						first = got
						if !strings.HasPrefix(got, g.untouched) {
							t.Fatalf("call 0: got %s, want the state of a fresh instance (%s…)", got, g.untouched)
						}
						continue
					}
					if got != first {
						t.Fatalf("call %d: got %s, want %s: the instance kept state from an earlier call", i, got, first)
					}
				}
			})
		}
	}
}

// TestStateGuestsSeeTheirOwnWrites is the control of
// TestNothingSurvivesACall: the same guests, called twice in one kept
// instance (plain go-sdk or raw wazero, as a long-lived plugin host runs
// them), report their first call's changes on the second. Every kind of
// state they report is one a guest can really change and read back.
func TestStateGuestsSeeTheirOwnWrites(t *testing.T) {
	ctx := context.Background()
	for _, g := range stateGuests(t) {
		t.Run(g.name, func(t *testing.T) {
			ws := t.TempDir()
			fs := wazero.NewFSConfig().WithDirMount(ws, "/workspace")
			cfg := wazero.NewModuleConfig().WithFSConfig(fs).WithStartFunctions()
			var call func() string
			if g.fn == "" {
				cache, err := wazero.NewCompilationCacheWithDir(sharedCache)
				if err != nil {
					t.Fatal(err)
				}
				rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache))
				defer rt.Close(ctx)
				if err := instantiateWASI(ctx, rt); err != nil {
					t.Fatal(err)
				}
				var out strings.Builder
				mod, err := rt.InstantiateWithConfig(ctx, readFile(t, g.src), cfg.WithStdout(&out))
				if err != nil {
					t.Fatal(err)
				}
				call = func() string {
					out.Reset()
					if _, err := mod.ExportedFunction("_start").Call(ctx); err != nil {
						t.Fatal(err)
					}
					return `"` + out.String() + `"`
				}
			} else {
				newPeer := peerFactory(t, "extism-reused", g.src, g.fn)
				pr := newPeer().(*extismPeer)
				in, err := pr.cp.Instance(ctx, extism.PluginInstanceConfig{ModuleConfig: cfg})
				if err != nil {
					t.Fatal(err)
				}
				defer in.Close(ctx)
				call = func() string {
					_, out, err := in.CallWithContext(ctx, g.fn, nil)
					if err != nil {
						t.Fatal(err)
					}
					if g.fn == "state" {
						return string(out)
					}
					return `"` + string(out) + `"`
				}
			}
			first, second := call(), call()
			if !strings.HasPrefix(first, g.untouched) {
				t.Fatalf("first call: got %s, want %s…", first, g.untouched)
			}
			// Every character of the report changed (the descriptor count
			// by the one left open), or the Go counter did.
			for i := 1; i < len(first)-1 && g.fn != "state"; i++ {
				if first[i] == second[i] {
					t.Errorf("second call: got %s after %s: position %d did not change", second, first, i)
				}
			}
			if first == second {
				t.Errorf("second call: got %s again", second)
			}
		})
	}
}

// readFile returns the content of path.
func readFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
