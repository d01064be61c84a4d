package runtime

import (
	"cmp"
	"slices"

	"github.com/packs-run/packs/internal/wasmbin"
)

// The Extism ABI leaves a reactor's initializer (the "_initialize" export that
// a Go c-shared or Rust wasm32-wasi plugin has) to the first call:
// extism/go-sdk runs it lazily and keeps the "done" flag private. A pool
// that hands out fresh instances would then pay the guest runtime's start-up
// (about 1.5 ms for standard Go) on every call. So the runtime renames the
// export before compiling: go-sdk no longer sees a reactor, and the pool calls
// initExport itself while the instance waits, before any invocation is known.
const (
	reactorInit = "_initialize"
	initExport  = "_packs_initialize"
)

// moduleInfo is what the runtime needs to know about a module before it
// instantiates one.
type moduleInfo struct {
	imports  []importName // what it imports, sorted, each once
	exports  []string     // exported function names, sorted
	minPages uint32       // the largest declared minimum of its memories
}

// importName is one import: a function, or anything else (a memory, a
// table, a global, a tag), which no ABI of ours provides.
type importName struct {
	module, name string
	fn           bool
}

func (a importName) compare(b importName) int {
	return cmp.Or(cmp.Compare(a.module, b.module), cmp.Compare(a.name, b.name))
}

func (a importName) String() string {
	if a.fn {
		return a.module + "." + a.name
	}
	return a.module + "." + a.name + " (not a function)"
}

// exportsFunc reports whether the module exports function name.
func (m moduleInfo) exportsFunc(name string) bool {
	_, ok := slices.BinarySearch(m.exports, name)
	return ok
}

// inspect reads wasm with wasmbin.Parse, the guard that every module passes
// before wazero sees it.
func inspect(wasm []byte) (moduleInfo, error) {
	mod, err := wasmbin.Parse(wasm)
	if err != nil {
		return moduleInfo{}, err
	}
	info := moduleInfo{minPages: mod.MinPages}
	for _, im := range mod.Imports {
		info.imports = append(info.imports, importName{module: im.Module, name: im.Name, fn: im.Kind() == wasmbin.KindFunc})
	}
	for _, e := range mod.Exports {
		if e.Kind() == wasmbin.KindFunc {
			info.exports = append(info.exports, e.Name)
		}
	}
	slices.SortFunc(info.imports, importName.compare)
	info.imports = slices.Compact(info.imports)
	slices.Sort(info.exports)
	return info, nil
}

// renameExport returns wasm with its function export from renamed to to. It
// returns wasm itself (not a copy) when there is no such export, when to is
// already exported, or when the module exports "hs_init" (a Haskell plugin,
// whose initializer go-sdk must run in a fixed order with hs_init). Only the
// export section is re-encoded; every other byte is kept.
func renameExport(wasm []byte, from, to string) ([]byte, error) {
	mod, err := wasmbin.Parse(wasm)
	if err != nil {
		return nil, err
	}
	sec, ok := mod.Section(wasmbin.SectionExport)
	if !ok {
		return wasm, nil
	}
	target := -1
	for i, e := range mod.Exports {
		switch {
		case e.Name == to || e.Name == "hs_init":
			return wasm, nil
		case e.Name == from && e.Kind() == wasmbin.KindFunc:
			target = i
		}
	}
	if target < 0 {
		return wasm, nil
	}
	exports := slices.Clone(mod.Exports)
	exports[target].Name = to
	return wasmbin.Replace(wasm, sec, wasmbin.AppendExports(nil, exports)), nil
}
