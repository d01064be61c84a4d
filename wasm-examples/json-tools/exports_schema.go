//go:build wasip1 && !noschema

package main

// This file is bin/json-schema.wasm's (built without tags): validate_json,
// the one tool that needs the schema library and so pays for its package
// initializer.

//go:wasmexport validate_json
func validateJSONExport() int32 { return call(validateJSON) }
