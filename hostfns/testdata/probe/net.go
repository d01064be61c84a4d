//go:build net

package main

import (
	"encoding/json"
	"strings"

	pdk "github.com/extism/go-pdk"
)

func init() { extra["http"] = httpOp }

func httpOp(c command) report {
	method := pdk.MethodGet
	if strings.EqualFold(c.Method, "POST") {
		method = pdk.MethodPost
	}
	req := pdk.NewHTTPRequest(method, c.URL)
	if c.Data != "" {
		req.SetBody([]byte(c.Data))
	}
	resp := req.Send()
	r := result(string(resp.Body()), nil)
	r.Status = int(resp.Status())
	r.Headers, _ = json.Marshal(resp.Headers())
	return r
}
