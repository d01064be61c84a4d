// Command webfetch is the Extism plugin of the built-in web-fetch pack. It
// reaches the network only through packs' http_request host function, so
// every URL, redirect and address is decided by the pack's grant and the
// host's SSRF rules, and recorded. The host enforces the timeouts the
// request names (docs/abi.md: first_byte_timeout_ms, body_timeout_ms) and
// says through http_truncated whether the body timeout cut the body.
//
// Build (internal/builtin's go generate does it):
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -ldflags='-s -w' -buildmode=c-shared -o ../../wasm/web-fetch.wasm .
package main

import (
	"encoding/json"

	"github.com/extism/go-pdk"

	"github.com/packs-run/packs/internal/builtin/guest/fetch"
)

func main() {}

//go:wasmimport extism:host/env http_request
func httpRequest(req, body uint64) uint64

//go:wasmimport extism:host/env http_status_code
func httpStatusCode() int32

//go:wasmimport extism:host/env http_headers
func httpHeaders() uint64

//go:wasmimport packs:host/network http_truncated
func httpTruncated() int32

// do sends r through the host. A denial or a network failure ends the call
// in the host, which reports it; what comes back here is a response.
func do(r fetch.Request) (fetch.Response, error) {
	enc, err := json.Marshal(r)
	if err != nil {
		return fetch.Response{}, err
	}
	// The host frees the request block once it has read it.
	req := pdk.AllocateBytes(enc)
	off := httpRequest(req.Offset(), 0)
	resp := fetch.Response{Status: int(httpStatusCode()), Headers: map[string]string{}, Truncated: httpTruncated() != 0}
	if off != 0 {
		m := pdk.FindMemory(off)
		resp.Body = m.ReadBytes()
		m.Free()
	}
	if h := httpHeaders(); h != 0 {
		m := pdk.FindMemory(h)
		if err := json.Unmarshal(m.ReadBytes(), &resp.Headers); err != nil {
			return fetch.Response{}, err
		}
		m.Free()
	}
	return resp, nil
}

//go:wasmexport web_fetch
func webFetch() int32 {
	out, err := fetch.WebFetch(pdk.Input(), do)
	if err != nil {
		pdk.SetError(err)
		return 1
	}
	pdk.Output(out)
	return 0
}
