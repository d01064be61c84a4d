package hostfns

//go:generate wat2wasm --debug-names testdata/imports.wat -o testdata/imports.wasm
//go:generate wat2wasm --debug-names testdata/noimports.wat -o testdata/noimports.wasm

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/packs-run/packs/capability"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// importsOf compiles wasm with wazero and lists its function imports as
// "module.name", or returns the compile error.
func importsOf(rt wazero.Runtime, wasm []byte) ([]string, error) {
	m, err := rt.CompileModule(context.Background(), wasm)
	if err != nil {
		return nil, err
	}
	defer m.Close(context.Background())
	var out []string
	for _, f := range m.ImportedFunctions() {
		mod, name, _ := f.Import()
		out = append(out, mod+"."+name)
	}
	return out, nil
}

func TestRewriteImports(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	in := readTestdata(t, "imports.wasm")
	out, err := RewriteImports(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := importsOf(rt, out)
	if err != nil {
		t.Fatalf("the rewritten module does not compile: %v", err)
	}
	want := []string{
		NetworkNamespace + ".http_request", NetworkNamespace + ".http_status_code", NetworkNamespace + ".http_headers",
		KernelNamespace + ".alloc", LogNamespace + ".log_info", LogNamespace + ".get_log_level",
		ConfigNamespace + ".config_get", ExecNamespace + ".exec",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("imports =\n%q\nwant\n%q", got, want)
	}
	m, err := rt.CompileModule(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if mems := m.ImportedMemories(); len(mems) != 1 {
		t.Fatalf("memory import lost: %v", mems)
	} else if max, ok := mems[0].Max(); mems[0].Min() != 1 || !ok || max != 4 {
		t.Fatalf("memory limits changed: %d..%d", mems[0].Min(), max)
	}
	if !bytes.Equal(in[len(in)-40:], out[len(out)-40:]) {
		t.Fatal("the sections after the import section changed")
	}
	again, err := RewriteImports(out)
	if err != nil || !bytes.Equal(again, out) {
		t.Fatalf("rewriting twice changed the module (err %v)", err)
	}
	groups, err := ImportedGroups(out)
	if err != nil || !slices.Equal(groups, []capability.Name{capability.TerminalExec, capability.Network}) {
		t.Fatalf("ImportedGroups = %v, %v", groups, err)
	}
	if groups, _ := ImportedGroups(in); !slices.Equal(groups, []capability.Name{capability.TerminalExec, capability.Network}) {
		t.Fatalf("ImportedGroups before the rewrite = %v: Extism's http_request is network too", groups)
	}
}

func TestRewriteImportsUnchanged(t *testing.T) {
	in := readTestdata(t, "noimports.wasm")
	out, err := RewriteImports(in)
	if err != nil || &out[0] != &in[0] {
		t.Fatalf("a module with nothing to rename was copied or refused: %v", err)
	}
	if groups, err := ImportedGroups(in); err != nil || len(groups) != 0 {
		t.Fatalf("ImportedGroups = %v, %v", groups, err)
	}
}

func TestRewriteImportsProbe(t *testing.T) {
	if probeErr != nil {
		t.Skip(probeErr)
	}
	for variant, want := range map[string][]capability.Name{
		"base": nil,
		"net":  {capability.Network},
		"exec": {capability.TerminalExec},
		"full": {capability.TerminalExec, capability.Network},
	} {
		out, err := RewriteImports(probes[variant])
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ImportedGroups(out); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: ImportedGroups = %v, %v; want %v", variant, got, err, want)
		}
	}
}

// TestRewriteImportsBad: malformed binaries are refused with ErrBadModule.
func TestRewriteImportsBad(t *testing.T) {
	good := readTestdata(t, "imports.wasm")
	cases := map[string][]byte{
		"empty":                {},
		"not wasm":             []byte("#!/bin/sh\necho hi\n"),
		"a component":          {0, 'a', 's', 'm', 0x0d, 0, 1, 0},
		"truncated header":     good[:6],
		"section past the end": append(wasmHeader(), 2, 0x10, 0),
		"size LEB too long":    append(wasmHeader(), 2, 0x80, 0x80, 0x80, 0x80, 0x80, 0),
		"size LEB overflow":    append(wasmHeader(), 2, 0xff, 0xff, 0xff, 0xff, 0x7f),
		"too many imports":     append(wasmHeader(), 2, 5, 0xff, 0xff, 0xff, 0xff, 0x0f),
		"unknown import kind":  append(wasmHeader(), 2, 5, 1, 0, 0, 0x09, 0),
		"name past the end":    append(wasmHeader(), 2, 3, 1, 0x7f, 0),
		"trailing bytes":       append(wasmHeader(), 2, 6, 1, 0, 0, 0x00, 0, 0xaa),
		"two import sections":  append(append(wasmHeader(), 2, 1, 0), 2, 1, 0),
		"bad limits flags":     append(wasmHeader(), 2, 6, 1, 0, 0, 0x02, 0x09, 0),
		"truncated good":       good[:len(good)/2],
		"export count lie":     []byte("\x00asm\x01\x00\x00\x00\aA\xc7\xf9\xa3x\x86\xf7"),
		"function count lie":   append(wasmHeader(), 3, 5, 0xff, 0xff, 0xff, 0xff, 0x0f),
	}
	for name, in := range cases {
		if _, err := RewriteImports(in); !errors.Is(err, ErrBadModule) {
			t.Errorf("%s: RewriteImports: %v, want ErrBadModule", name, err)
		}
		if _, err := ImportedGroups(in); !errors.Is(err, ErrBadModule) {
			t.Errorf("%s: ImportedGroups: %v, want ErrBadModule", name, err)
		}
	}
}

// FuzzRewriteImports: never panics; a module wazero compiles still
// compiles after the rewrite, with the same imports but renamed, and a
// second rewrite changes nothing.
func FuzzRewriteImports(f *testing.F) {
	f.Add(readTestdata(f, "imports.wasm"))
	f.Add(readTestdata(f, "noimports.wasm"))
	f.Add(append(wasmHeader(), 2, 1, 0))
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := RewriteImports(in)
		if err != nil {
			// Not handed to wazero: it may allocate whatever a refused
			// module's counts claim (TestRewriteImportsBad has such cases).
			return
		}
		before, compileErr := importsOf(rt, in)
		if compileErr != nil {
			return
		}
		after, err := importsOf(rt, out)
		if err != nil {
			t.Fatalf("the rewrite broke a valid module: %v", err)
		}
		if len(before) != len(after) {
			t.Fatalf("imports %q became %q", before, after)
		}
		for i := range before {
			mod, name, _ := bytes.Cut([]byte(before[i]), []byte("."))
			want := before[i]
			if ns, ok := renamed[string(name)]; ok && string(mod) == extismEnv {
				want = ns + "." + string(name)
			}
			if after[i] != want {
				t.Fatalf("import %d: %q became %q, want %q", i, before[i], after[i], want)
			}
		}
		again, err := RewriteImports(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("a second rewrite changed the module (%v)", err)
		}
	})
}

// wasmHeader returns a fresh copy of the header of a version 1 module.
func wasmHeader() []byte { return []byte("\x00asm\x01\x00\x00\x00") }
