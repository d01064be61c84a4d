// Command web-reader builds two Extism plugins from one package: web-reader.wasm
// (export fetch) reads web pages through the host's http_request, which only
// reaches hosts the person granted; html-to-markdown.wasm (export
// html_to_markdown, built with -tags offline) converts HTML it is given and
// has no network import, so it runs without any grant. The logic is plain Go
// so `go test` runs it natively against real loopback servers; the
// exports*.go files hold the wasm-only glue.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/web-reader.wasm .
// and the same with -tags offline -o bin/html-to-markdown.wasm. The source
// builds with TinyGo too: tinygo build -target wasip1 -buildmode=c-shared.
package main

func main() {}
