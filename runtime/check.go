package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
	"github.com/packs-run/packs/packs"
)

// Rule ids of the findings Check returns (see the list in package packs).
const (
	RuleWasmCompile = "wasm-compile"
	RuleWasmExport  = "wasm-export"
	RuleWasmImport  = "wasm-import"
)

// Check compiles every wasm module p's tools name, as Precompile does (so
// it fills the compilation cache), and returns one error finding, at the
// tool's line of tools.json, for each tool whose module cannot run:
// RuleWasmCompile when it is not valid WebAssembly or does not compile,
// RuleWasmImport when it imports something its ABI does not provide,
// RuleWasmExport when it lacks the export the tool calls. Exec tools are
// not looked at. p is a loaded pack (packs.Load).
func (r *Runtime) Check(ctx context.Context, p *packs.Pack) []packs.Finding {
	var out []packs.Finding
	for _, t := range p.Tools {
		rule, err := r.check(ctx, p, t)
		if err != nil {
			out = append(out, packs.Finding{
				Pack: p.Name, File: t.File, Line: t.Line, Severity: packs.SeverityError, Rule: rule,
				Message: fmt.Sprintf("tool %s: %s: %v", t.Name, t.Run.Wasm, err),
			})
		}
	}
	return out
}

// check prepares and compiles t's module and says which rule it breaks.
func (r *Runtime) check(ctx context.Context, p *packs.Pack, t *packs.Tool) (string, error) {
	if t.Run.ABI != packs.ABIExtism && t.Run.ABI != packs.ABIWASI {
		return "", nil
	}
	m, err := r.load(ctx, p, t)
	var ie *importError
	switch {
	case errors.As(err, &ie):
		return RuleWasmImport, err
	case err != nil:
		return RuleWasmCompile, err
	}
	if t.Run.ABI == packs.ABIExtism {
		// Compile through go-sdk, exactly as Invoke will: the plugin's
		// kernel module is compiled and cached too. A module that does not
		// compile is reported as such, whatever its exports.
		if _, err := r.plugin(ctx, m); err != nil {
			return RuleWasmCompile, err
		}
	}
	if err := checkExport(m, t); err != nil {
		return RuleWasmExport, err
	}
	return "", nil
}

// extismEnv lists what extism/go-sdk v1.7.1 serves in "extism:host/env":
// the kernel's memory, input, output, error and var functions, and its own
// config, HTTP and log functions (RewriteImports moves those to our
// namespaces, but a module may still name them here).
var extismEnv = []string{
	"alloc", "free", "length", "length_unsafe", "reset", "memory_bytes",
	"load_u8", "load_u64", "store_u8", "store_u64",
	"input_load_u8", "input_load_u64", "input_set", "input_length", "input_offset",
	"output_set", "output_length", "output_offset", "error_set", "error_get",
	"config_get", "var_get", "var_set", "http_request", "http_status_code", "http_headers",
	"get_log_level", "log_trace", "log_debug", "log_info", "log_warn", "log_error",
}

// providedImports returns, per ABI, the functions an instance gets to
// import: for WASI commands those of wasi_snapshot_preview1 (as the shared
// WASI runtime instantiated them), for Extism plugins those too, the
// kernel's (extismEnv) and every host function of hostfns.
func (r *Runtime) providedImports() map[packs.ABI]map[importName]bool {
	wasi := map[importName]bool{}
	for name := range r.wasi.Module(wasi_snapshot_preview1.ModuleName).ExportedFunctionDefinitions() {
		wasi[importName{module: wasi_snapshot_preview1.ModuleName, name: name, fn: true}] = true
	}
	extism := map[importName]bool{}
	for k := range wasi {
		extism[k] = true
	}
	for _, name := range extismEnv {
		extism[importName{module: "extism:host/env", name: name, fn: true}] = true
	}
	for _, f := range hostfns.ExtismFunctions(capability.All()) {
		extism[importName{module: f.Namespace, name: f.Name, fn: true}] = true
	}
	return map[packs.ABI]map[importName]bool{packs.ABIWASI: wasi, packs.ABIExtism: extism}
}

// importError is a module that imports what its ABI does not provide.
type importError struct {
	abi     packs.ABI
	missing []importName
}

func (e *importError) Error() string {
	names := make([]string, len(e.missing))
	for i, im := range e.missing {
		names[i] = im.String()
	}
	list := strings.Join(names, ", ")
	if e.abi == packs.ABIWASI {
		return fmt.Sprintf("a WASI command may import only functions of %s, and this one imports %s: build it as an Extism plugin to use host functions",
			wasi_snapshot_preview1.ModuleName, list)
	}
	return fmt.Sprintf("the module imports %s, which packs host ABI v1 does not provide: build it with an Extism PDK and import only what docs/abi.md lists", list)
}

// checkImports refuses a module that imports anything its ABI does not
// provide: wazero would refuse it at instantiation, on the first call.
func (r *Runtime) checkImports(info moduleInfo, abi packs.ABI) error {
	have := r.provides[abi]
	var missing []importName
	for _, im := range info.imports {
		if !have[im] {
			missing = append(missing, im)
		}
	}
	if len(missing) > 0 {
		return &importError{abi: abi, missing: missing}
	}
	return nil
}
