package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wasmSection encodes one section of a module.
func wasmSection(id byte, content ...byte) []byte {
	return append([]byte{id, byte(len(content))}, content...)
}

// extismModule builds an Extism plugin: its imports (each a function of
// type () -> i32 from "module.name"), and one function of that type,
// returning 0, exported as export.
func extismModule(export string, imports ...string) string {
	out := []byte("\x00asm\x01\x00\x00\x00")
	out = append(out, wasmSection(1, 1, 0x60, 0, 1, 0x7f)...)
	if len(imports) > 0 {
		content := []byte{byte(len(imports))}
		for _, im := range imports {
			mod, name, _ := strings.Cut(im, ".")
			content = append(content, byte(len(mod)))
			content = append(content, mod...)
			content = append(content, byte(len(name)))
			content = append(content, name...)
			content = append(content, 0, 0) // a function of type 0
		}
		out = append(out, wasmSection(2, content...)...)
	}
	out = append(out, wasmSection(3, 1, 0)...)
	out = append(out, wasmSection(7, append(append([]byte{1, byte(len(export))}, export...), 0, byte(len(imports)))...)...)
	out = append(out, wasmSection(10, 1, 4, 0, 0x41, 0, 0x0b)...) // i32.const 0, end
	return string(out)
}

// wasmPack writes a pack "mods" with two tools: "ok" on line 2 of
// tools.json (bin/ok.wasm, a good plugin) and "probe" on line 3, whose
// module is bin/probe.wasm holding probe and whose run object is run
// (an Extism function name, or "wasi" for a WASI command).
func wasmPack(t *testing.T, probe, run string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mods")
	schema := `"input_schema": {"type": "object"}`
	writeFiles(t, dir, map[string]string{
		"SKILL.md": "---\nname: mods\ndescription: Tools with modules.\n---\n# Mods\n\nCall them.\n",
		"tools.json": "[\n" +
			`{"name": "ok", "description": "Works.", ` + schema + `, "run": {"wasm": "bin/ok.wasm", "function": "run"}},` + "\n" +
			`{"name": "probe", "description": "Maybe.", ` + schema + `, "run": {"wasm": "bin/probe.wasm", ` + runObject(run) + `}}` + "\n]\n",
		"bin/ok.wasm":    extismModule("run", "extism:host/env.input_length", "packs:host/exec.exec"),
		"bin/probe.wasm": probe,
	})
	return dir
}

func runObject(run string) string {
	if run == "wasi" {
		return `"abi": "wasi"`
	}
	return `"function": "` + run + `"`
}

func TestValidateModules(t *testing.T) {
	tests := []struct {
		name, probe, run string
		rule, says       string // "" when the pack is clean
	}{
		{"good", extismModule("go", "extism:host/env.output_set"), "go", "", ""},
		{"Extism http_request, renamed", extismModule("go", "extism:host/env.http_request"), "go", "", ""},
		{"invalid type section", "\x00asm\x01\x00\x00\x00" + string(wasmSection(1, 1, 0x61, 0, 0)), "go", "wasm-compile", "compile"},
		{"count lie", "\x00asm\x01\x00\x00\x00" + string(wasmSection(7, 0xff, 0xff, 0xff, 0xff, 0x0f)), "go", "wasm-compile", "declares 4294967295 entries"},
		{"missing export", extismModule("go"), "gone", "wasm-export", `calls the export "gone"`},
		{"unknown import", extismModule("go", "env.abort"), "go", "wasm-import", "env.abort"},
		{"unknown kernel function", extismModule("go", "extism:host/env.frobnicate"), "go", "wasm-import", "extism:host/env.frobnicate"},
		{"WASI command", extismModule("_start", "wasi_snapshot_preview1.sched_yield"), "wasi", "", ""},
		{"WASI command with a host function", extismModule("_start", "packs:host/exec.exec"), "wasi", "wasm-import", "packs:host/exec.exec"},
		{"WASI reactor", extismModule("_initialize"), "wasi", "wasm-export", "exports _start"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := wasmPack(t, tt.probe, tt.run)
			home := filepath.Join(t.TempDir(), "home")
			r := withHome(t, home, "validate", dir)
			if _, err := os.Stat(home); !os.IsNotExist(err) {
				t.Errorf("validate created the state directory (%v)", err)
			}
			if tt.rule == "" {
				r.mustCode(t, 0)
				if r.stdout != "" {
					t.Errorf("findings for a clean pack:\n%s", r.stdout)
				}
				return
			}
			r.mustCode(t, 1)
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			prefix := filepath.Join(dir, "tools.json") + ":3: error: " + tt.rule + ": tool probe: bin/probe.wasm: "
			if len(lines) != 1 || !strings.HasPrefix(lines[0], prefix) || !strings.Contains(lines[0], tt.says) {
				t.Fatalf("findings:\n%s\nwant exactly one starting %q and saying %q", r.stdout, prefix, tt.says)
			}
		})
	}
}

// TestValidateWarmsCache: with a state directory, validate leaves compiled
// code in its cache for later runs.
func TestValidateWarmsCache(t *testing.T) {
	home := t.TempDir()
	cache := filepath.Join(home, "cache")
	if err := os.Mkdir(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	withHome(t, home, "validate", wasmPack(t, extismModule("go"), "go")).mustCode(t, 0)
	entries, err := os.ReadDir(cache)
	if err != nil || len(entries) == 0 {
		t.Fatalf("the cache holds %d entries after validate (%v)", len(entries), err)
	}
}

// TestValidateExamples: the example packs (built by make examples) compile
// and validate clean.
func TestValidateExamples(t *testing.T) {
	dirs, err := filepath.Glob("../../wasm-examples/*/tools.json")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no example packs found (%v)", err)
	}
	args := []string{"validate"}
	for _, f := range dirs {
		dir := filepath.Dir(f)
		if bins, _ := filepath.Glob(filepath.Join(dir, "bin", "*.wasm")); len(bins) == 0 {
			t.Skipf("%s is not built: run make examples", dir)
		}
		args = append(args, dir)
	}
	r := withHome(t, filepath.Join(t.TempDir(), "none"), args...).mustCode(t, 0)
	if r.stdout != "" {
		t.Errorf("findings for the examples:\n%s", r.stdout)
	}
}
