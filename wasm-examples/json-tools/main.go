// Command json-tools is an Extism plugin (exports query, transform and
// validate_json) that reads, reshapes and checks JSON documents. The tool
// logic is plain Go in this package so it runs natively under `go test`; the
// exports live in exports.go, built only for GOOS=wasip1.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -tags noschema -o bin/json-tools.wasm .
// (query, transform) and the same without the tag -o bin/json-schema.wasm
// (validate_json): only validate_json pays the schema library's package
// initializer. The same source builds with TinyGo: tinygo build -target
// wasip1 -buildmode=c-shared.
package main

func main() {}
