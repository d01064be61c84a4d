// Command web-fetch is an Extism plugin (exports fetch and html_to_markdown)
// that reads web pages through the host's http_request, which only reaches
// hosts the person granted, and turns HTML into Markdown a model can read.
// The logic is plain Go in this package so `go test` runs it natively
// against real loopback servers; exports.go holds the wasm-only glue.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/web-fetch.wasm .
// The same source builds with TinyGo: tinygo build -target wasip1 -buildmode=c-shared.
package main

func main() {}
