package hostfns

import (
	"fmt"
	"slices"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/wasmbin"
)

// extismEnv is the module Extism's PDKs import their host functions from.
const extismEnv = "extism:host/env"

// renamed lists the extism:host/env imports that RewriteImports moves to our
// namespaces, so our audited implementations serve them instead of
// go-sdk's (http: http.DefaultClient, redirects to any host, a panic on a
// bad glob, nothing recorded; log: a process-wide level that is off by
// default; config: reads that nobody audits), and the kernel functions that
// go-sdk forwards to the plugin's kernel (KernelNamespace, kernel.go).
var renamed = withKernel(map[string]string{
	"http_request":     NetworkNamespace,
	"http_status_code": NetworkNamespace,
	"http_headers":     NetworkNamespace,
	"log_trace":        LogNamespace,
	"log_debug":        LogNamespace,
	"log_info":         LogNamespace,
	"log_warn":         LogNamespace,
	"log_error":        LogNamespace,
	"get_log_level":    LogNamespace,
	"config_get":       ConfigNamespace,
})

// RewriteImports renames the Extism http_*, log_* and config_get imports
// (module "extism:host/env") to NetworkNamespace, LogNamespace and
// ConfigNamespace, so our audited, grant-checked implementations serve
// them, and the kernel functions go-sdk forwards to KernelNamespace. Only the import section is re-encoded; every other byte is copied.
// A module with nothing to rename comes back as the same slice. It returns
// an error wrapping ErrBadModule (and wasmbin.ErrMalformed) when the binary
// does not parse (wasmbin.Parse), which includes a section that declares
// more entries than it has bytes (wazero v1.12.0 allocates for the declared
// count before reading, so a 16-byte module could exhaust the host's
// memory); it never panics. The runtime calls it before handing any bytes
// to wazero.
func RewriteImports(wasm []byte) ([]byte, error) {
	mod, err := parseModule(wasm)
	if err != nil {
		return nil, err
	}
	sec, ok := mod.Section(wasmbin.SectionImport)
	if !ok {
		return wasm, nil
	}
	var list []wasmbin.Import
	for i, im := range mod.Imports {
		if ns, ok := renamed[im.Name]; ok && im.Module == extismEnv {
			if list == nil {
				list = slices.Clone(mod.Imports)
			}
			list[i].Module = ns
		}
	}
	if list == nil {
		return wasm, nil
	}
	return wasmbin.Replace(wasm, sec, wasmbin.AppendImports(nil, list)), nil
}

// ImportedGroups returns the capability groups whose host functions the
// module imports, in the order of capability.All(): network for
// NetworkNamespace (or Extism's http_* not yet rewritten), terminal_exec for
// ExecNamespace. The runtime computes it once per module and passes it to
// Require for every call.
func ImportedGroups(wasm []byte) ([]capability.Name, error) {
	mod, err := parseModule(wasm)
	if err != nil {
		return nil, err
	}
	need := map[capability.Name]bool{}
	for _, im := range mod.Imports {
		switch {
		case im.Module == NetworkNamespace, im.Module == extismEnv && renamed[im.Name] == NetworkNamespace:
			need[capability.Network] = true
		case im.Module == ExecNamespace:
			need[capability.TerminalExec] = true
		case im.Module == SecretsNamespace:
			need[capability.SecretsAccess] = true
		}
	}
	var out []capability.Name
	for _, n := range capability.All() {
		if need[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// parseModule is wasmbin.Parse with its errors wrapping ErrBadModule.
func parseModule(wasm []byte) (*wasmbin.Module, error) {
	mod, err := wasmbin.Parse(wasm)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadModule, err)
	}
	return mod, nil
}
