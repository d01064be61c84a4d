//go:build wasip1

package main

import "github.com/extism/go-pdk"

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

func call(tool func([]byte) ([]byte, error)) int32 {
	out, err := tool(pdk.Input())
	if err != nil {
		pdk.SetError(err)
		return 1
	}
	pdk.Output(out)
	return 0
}

//go:wasmexport fetch
func fetchExport() int32 {
	return call(func(in []byte) ([]byte, error) { return fetch(in, hostGet) })
}

//go:wasmexport html_to_markdown
func htmlToMarkdownExport() int32 { return call(htmlToMarkdown) }
