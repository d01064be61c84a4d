module github.com/packs-run/packs/wasm-examples/json-tools

go 1.24

require (
	github.com/extism/go-pdk v1.1.3
	github.com/ohler55/ojg v1.28.5
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2
	golang.org/x/text v0.14.0
)

// packs' patched copy: metaschemas compile on first use, not in every
// instance's init (RATIONALE.md, "Why a patched jsonschema?").
replace github.com/santhosh-tekuri/jsonschema/v6 => ../../third_party/jsonschema
