module github.com/packs-run/packs/wasm-examples/web-reader

go 1.24

require github.com/extism/go-pdk v1.1.3

require golang.org/x/net v0.41.0
