//go:build wasip1 && !offline

package main

import "github.com/extism/go-pdk"

// This file is bin/web-reader.wasm's: the only place that imports the host's
// http_request, so only that module needs the network grant.

// hostGet performs a GET through the host's http_request. A denied host or a
// failed connection ends the call in the host, which reports it; what comes
// back here is a response.
func hostGet(url string, headers map[string]string) (response, error) {
	req := pdk.NewHTTPRequest(pdk.MethodGet, url)
	for k, v := range headers {
		req.SetHeader(k, v)
	}
	res := req.Send()
	return response{Status: int(res.Status()), Headers: res.Headers(), Body: res.Body()}, nil
}

//go:wasmexport fetch
func fetchExport() int32 {
	return call(func(in []byte) ([]byte, error) { return fetch(in, hostGet) })
}
