//go:build wasip1 && offline

package main

// This file is bin/html-to-markdown.wasm's (built with -tags offline): a
// module without the http_request import, so converting HTML needs no grant.

//go:wasmexport html_to_markdown
func htmlToMarkdownExport() int32 { return call(htmlToMarkdown) }
