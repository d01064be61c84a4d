package hostfns

//go:generate wat2wasm --debug-names testdata/kernel.wat -o testdata/kernel.wasm

import (
	"context"
	"slices"
	"testing"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
)

// kernelPlugin compiles testdata/kernel.wasm, rewritten, with go-sdk and
// the host functions of no group.
func kernelPlugin(t *testing.T) *extism.CompiledPlugin {
	t.Helper()
	ctx := context.Background()
	wasm, err := RewriteImports(readTestdata(t, "kernel.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := extism.NewCompiledPlugin(ctx, extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}},
		extism.PluginConfig{EnableWasi: true}, ExtismFunctions(nil))
	if err != nil {
		t.Fatalf("the guest does not link against the kernel forwarders: %v", err)
	}
	t.Cleanup(func() { cp.Close(ctx) })
	return cp
}

// The guest imports every function KernelNamespace forwards, so a
// signature that differs from the kernel's fails to link (kernelPlugin).
func TestKernelGuestImportsEveryForwarder(t *testing.T) {
	rt := wazero.NewRuntimeWithConfig(context.Background(), wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(context.Background())
	wasm, err := RewriteImports(readTestdata(t, "kernel.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := importsOf(rt, wasm)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, k := range kernelFuncs {
		want = append(want, KernelNamespace+"."+k.name)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("imports after the rewrite =\n%q\nwant\n%q", got, want)
	}
}

// Each call reaches its own instance's kernel, also when one Call (and so
// one set of looked-up functions) meets several instances in turn, and
// without a Call at all.
func TestKernelForwarders(t *testing.T) {
	cp := kernelPlugin(t)
	ctx := context.Background()
	newInstance := func() *extism.Plugin {
		p, err := cp.Instance(ctx, extism.PluginInstanceConfig{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close(ctx) })
		return p
	}
	a, b := newInstance(), newInstance()
	shared := &Call{}
	cases := []struct {
		name     string
		p        *extism.Plugin
		call     *Call // nil: no Call in the context
		fn, in   string
		wantRC   uint32
		want     string
		wantFail string
	}{
		{"first instance", a, shared, "echo", "first", 0, "first", ""},
		{"second instance, same Call", b, shared, "echo", "second!", 0, "second!", ""},
		{"first again", a, shared, "echo", "third call", 0, "third call", ""},
		{"no Call", b, nil, "echo", "bare", 0, "bare", ""},
		{"empty input", a, &Call{}, "echo", "", 0, "", ""},
		{"error_set", b, shared, "fail", "x", 1, "", "no"},
		{"free, input_set, reset", a, shared, "scratch", "x", 0, "", ""},
		{"after reset", a, shared, "echo", "still here", 0, "still here", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cctx := ctx
			if tc.call != nil {
				cctx = WithCall(ctx, tc.call)
			}
			rc, out, err := tc.p.CallWithContext(cctx, tc.fn, []byte(tc.in))
			gotFail := ""
			if err != nil {
				gotFail = err.Error()
			}
			if rc != tc.wantRC || string(out) != tc.want || gotFail != tc.wantFail {
				t.Errorf("%s(%q) = %d, %q, %v; want %d, %q, %q", tc.fn, tc.in, rc, out, err, tc.wantRC, tc.want, tc.wantFail)
			}
		})
	}
}

// A kernel function outside a go-sdk call (no kernel in the context)
// traps instead of reaching some other kernel.
func TestKernelForwarderWithoutKernel(t *testing.T) {
	f := forwardToKernel(0)
	defer func() {
		if r := recover(); r != errNoKernel {
			t.Fatalf("recovered %v, want %v", r, errNoKernel)
		}
	}()
	f(WithCall(context.Background(), &Call{}), nil, make([]uint64, 1))
}
