// Command json-tools is an Extism plugin (exports query, transform and
// validate_json) that reads, reshapes and checks JSON documents. The tool
// logic is plain Go in this package so it runs natively under `go test`; the
// exports live in exports.go, built only for GOOS=wasip1.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/json-tools.wasm .
// The same source builds with TinyGo: tinygo build -target wasip1 -buildmode=c-shared.
package main

func main() {}
