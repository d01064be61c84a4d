//go:build wasip1 && noschema

package main

// This file is bin/json-tools.wasm's (built with -tags noschema): query and
// transform, without the schema library, whose package initializer compiles
// five drafts' metaschemas in every new instance (about 120 ms under wazero)
// whether or not the call checks a schema.

//go:wasmexport query
func queryExport() int32 { return call(query) }

//go:wasmexport transform
func transformExport() int32 { return call(transform) }
