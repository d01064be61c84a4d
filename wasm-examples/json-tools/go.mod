module github.com/packs-run/packs/wasm-examples/json-tools

go 1.24

require github.com/extism/go-pdk v1.1.3
