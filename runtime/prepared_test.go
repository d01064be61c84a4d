package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreparedKept: a module prepared by one Runtime is read, not prepared
// again, by the next one on the same cache; a damaged copy is never used:
// the module is prepared again, the call still works, and the copy is
// replaced.
func TestPreparedKept(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, p string)
	}{
		{"intact", func(*testing.T, string) {}},
		{"a byte changed", func(t *testing.T, p string) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			data[len(data)-1] ^= 0xff
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated", func(t *testing.T, p string) {
			if err := os.Truncate(p, 40); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			p := modulePack(t, "kept", "", pluginWasm, map[string]string{"echo": "echo"})
			first := newHarness(t, Config{CacheDir: cache, PoolSize: -1})
			if _, err := first.rt.invoke(context.Background(), first.invocation(p, "echo", `{"a":1}`, first.grant(p, nil))); err != nil {
				t.Fatal(err)
			}
			kept, _ := filepath.Glob(filepath.Join(cache, preparedDir, "*.wasm"))
			if len(kept) != 1 {
				t.Fatalf("prepared modules kept: %q, want one", kept)
			}
			tt.damage(t, kept[0])
			second := newHarness(t, Config{CacheDir: cache, PoolSize: -1})
			m, err := second.rt.module(context.Background(), p, p.Tools[0], nil)
			if err != nil {
				t.Fatal(err)
			}
			_, ok := second.rt.readPrepared(m.key)
			if !ok {
				t.Fatal("no intact prepared copy after the second load")
			}
			res, err := second.rt.invoke(context.Background(), second.invocation(p, "echo", `{"a":1}`, second.grant(p, nil)))
			if err != nil || string(res.Output) != `{"a":1}` {
				t.Fatalf("call after a %s copy: %s, %v", tt.name, res.Output, err)
			}
			prepared, err := prepareBytes(m.key.abi, mustRead(t, filepath.Join(p.Dir, "bin", "x.wasm")))
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := second.rt.readPrepared(m.key); string(got) != string(prepared) {
				t.Error("the kept copy is not the module's prepared form")
			}
		})
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestPreparedKeptStartsWithItsData: a module whose data segments become an
// image (stripData) runs from the prepared-module cache in a new process
// exactly as in the process that prepared it: the image is made again from
// the kept bytes, never expected to have survived in memory. The images of
// this process are forgotten between the two runtimes, as a new process
// would start without them.
func TestPreparedKeptStartsWithItsData(t *testing.T) {
	for _, g := range stateGuests(t) {
		t.Run(g.name, func(t *testing.T) {
			cache := t.TempDir()
			p := modulePack(t, "kept-data", "", g.src, map[string]string{"touch": g.fn})
			var outs []string
			for i := range 2 {
				images.Range(func(k, _ any) bool { images.Delete(k); return true })
				h := newHarness(t, Config{CacheDir: cache, PoolSize: -1})
				res, err := h.rt.invoke(context.Background(), h.invocation(p, "touch", `{}`, h.grant(p, nil)))
				if err != nil {
					t.Fatalf("process %d: %v", i+1, err)
				}
				outs = append(outs, string(res.Output))
			}
			if !strings.HasPrefix(outs[0], g.untouched) || outs[1] != outs[0] {
				t.Fatalf("fresh state from the prepared copy = %q, want %q twice (from %s…)", outs[1], outs[0], g.untouched)
			}
		})
	}
}
