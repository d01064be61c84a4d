package hostfns

import (
	"context"
	"errors"
	"fmt"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero/api"
)

// KernelNamespace serves the Extism kernel's functions that go-sdk's
// extism:host/env forwards to the calling plugin's kernel (alloc,
// input_load_u8, store_u8, output_set, ...). go-sdk looks the kernel's
// export up anew on every call, and wazero builds a new function for
// each lookup, with a 10 KiB call stack of its own: an echo of 23 bytes,
// whose last 7 go a byte at a time each way, left 130 KiB of garbage
// behind, half of all a warm call allocated. RewriteImports moves
// these imports here, where each instance looks each kernel function up
// once (Call.kernelFunc) and calls the same kernel, with the same
// arguments, as go-sdk would. The functions go-sdk implements in Go itself
// (load_u64, store_u64, input_load_u64) stay with it.
const KernelNamespace = "packs:host/kernel"

// kernelFuncs are the kernel functions KernelNamespace forwards, with
// go-sdk's (and the kernel's) signatures.
var kernelFuncs = []struct {
	name            string
	params, results []api.ValueType
}{
	{"alloc", i64, i64},
	{"free", i64, nil},
	{"load_u8", i64, i32},
	{"input_load_u8", i64, i32},
	{"store_u8", []api.ValueType{api.ValueTypeI64, api.ValueTypeI32}, nil},
	{"input_set", i64i64, nil},
	{"output_set", i64i64, nil},
	{"input_length", nil, i64},
	{"input_offset", nil, i64},
	{"output_length", nil, i64},
	{"output_offset", nil, i64},
	{"length", i64, i64},
	{"length_unsafe", i64, i64},
	{"reset", nil, nil},
	{"error_set", i64, nil},
	{"error_get", nil, i64},
	{"memory_bytes", nil, i64},
}

var (
	i32    = []api.ValueType{api.ValueTypeI32}
	i64    = []api.ValueType{api.ValueTypeI64}
	i64i64 = []api.ValueType{api.ValueTypeI64, api.ValueTypeI64}
)

// withKernel adds the kernel functions to renamed, moved to
// KernelNamespace.
func withKernel(renamed map[string]string) map[string]string {
	for _, f := range kernelFuncs {
		renamed[f.name] = KernelNamespace
	}
	return renamed
}

// errNoKernel: a kernel function ran outside a plugin call of go-sdk's
// (which puts the calling plugin's kernel in the context). It traps the
// guest.
var errNoKernel = errors.New("hostfns: no Extism kernel in context")

// kernelFunctions returns the forwarders of KernelNamespace.
func kernelFunctions() []extism.HostFunction {
	fns := make([]extism.HostFunction, len(kernelFuncs))
	for i, k := range kernelFuncs {
		fns[i] = fn(KernelNamespace, k.name, forwardToKernel(i), k.params, k.results...)
	}
	return fns
}

// forwardToKernel calls kernel function i of the calling plugin's kernel:
// the module go-sdk's CallWithContext put in the context, the one its own
// extism:host/env would call.
func forwardToKernel(i int) extism.HostFunctionStackCallback {
	return func(ctx context.Context, _ *extism.CurrentPlugin, stack []uint64) {
		kernel, ok := ctx.Value(extism.PluginCtxKey("extism")).(api.Module)
		if !ok || kernel == nil {
			panic(errNoKernel)
		}
		c, _ := CallFrom(ctx)
		if err := c.kernelFunc(kernel, i).CallWithStack(ctx, stack); err != nil {
			panic(err)
		}
	}
}

// kernelFunc returns kernel function i of kernel, looked up once per
// instance: a Call serves one instance, whose kernel is always the same
// module, and runs one guest call at a time. Without a Call (c nil) it is
// looked up every time, as go-sdk does.
func (c *Call) kernelFunc(kernel api.Module, i int) api.Function {
	if c == nil {
		c = &Call{}
	}
	if c.kernel != kernel {
		c.kernel, c.kernelFns = kernel, make([]api.Function, len(kernelFuncs))
	}
	f := c.kernelFns[i]
	if f == nil {
		if f = kernel.ExportedFunction(kernelFuncs[i].name); f == nil {
			panic(fmt.Errorf("hostfns: the Extism kernel has no function %q", kernelFuncs[i].name))
		}
		c.kernelFns[i] = f
	}
	return f
}
