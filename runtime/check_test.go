package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/wasmbin"
	"github.com/packs-run/packs/packs"
)

// importingModule is wasmModule(1, "run") with function imports of type
// () -> () from each "module.name" of imports.
func importingModule(imports ...string) []byte {
	m := wasmModule(1, "run")
	content := wasmbin.AppendU32(nil, uint32(len(imports)))
	for _, im := range imports {
		mod, name, _ := strings.Cut(im, ".")
		content = append(wasmbin.AppendName(wasmbin.AppendName(content, mod), name), wasmbin.KindFunc, 0)
	}
	sec := append(wasmbin.AppendU32([]byte{wasmbin.SectionImport}, uint32(len(content))), content...)
	// The import section goes after the type section (the first one). The
	// imported functions shift the index of "run"; exporting index 0 then
	// names the first import, which is a function of the same type.
	typeEnd := 8 + 2 + int(m[9])
	return append(append(append([]byte{}, m[:typeEnd]...), sec...), m[typeEnd:]...)
}

func TestCheck(t *testing.T) {
	h := newHarness(t, Config{})
	cases := []struct {
		name      string
		wasm      []byte
		run       string // Extism function, "" for WASI
		rule, say string
	}{
		{"plugin", importingModule("extism:host/env.output_set", "packs:host/log.log_info", "wasi_snapshot_preview1.fd_write"), "run", "", ""},
		{"unknown module", importingModule("env.abort"), "run", RuleWasmImport, "env.abort"},
		{"unknown kernel function", importingModule("extism:host/env.nope"), "run", RuleWasmImport, "extism:host/env.nope"},
		{"WASI importing a host function", importingModule("packs:host/network.http_request"), "", RuleWasmImport, "a WASI command may import only"},
		{"missing export", wasmModule(1, "run"), "walk", RuleWasmExport, `calls the export "walk"`},
		{"malformed", []byte("\x00asm\x01\x00\x00\x00\x07\x05\xff\xff\xff\xff\x0f"), "run", RuleWasmCompile, "declares"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "x.wasm")
			if err := os.WriteFile(src, c.wasm, 0o644); err != nil {
				t.Fatal(err)
			}
			p := modulePack(t, "check", "", src, map[string]string{"x": c.run})
			got := h.rt.Check(context.Background(), p)
			perr := h.rt.Precompile(context.Background(), p)
			if c.rule == "" {
				if len(got) != 0 || perr != nil {
					t.Fatalf("Check = %v, Precompile = %v; want nothing", got, perr)
				}
				return
			}
			if len(got) != 1 || got[0].Rule != c.rule || got[0].Line != 1 || got[0].Severity != packs.SeverityError || !strings.Contains(got[0].Message, c.say) {
				t.Fatalf("Check = %+v; want one %s error saying %q", got, c.rule, c.say)
			}
			if !errors.Is(perr, ErrModule) || !strings.Contains(perr.Error(), c.say) {
				t.Fatalf("Precompile = %v; want ErrModule saying %q", perr, c.say)
			}
			if _, err := h.invoke(p, "x", `{}`); !errors.Is(err, ErrModule) {
				t.Fatalf("Invoke = %v; want ErrModule", err)
			}
		})
	}
}
