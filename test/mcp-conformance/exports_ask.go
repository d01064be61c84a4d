//go:build wasip1

package main

import (
	"encoding/json"

	"github.com/extism/go-pdk"
)

//go:wasmimport packs:host/ask ask
func hostAsk(request uint64) uint64

// askPerson puts one question to the person (docs/abi.md §4.8) and returns
// the host's answer as it came.
func askPerson(message string, schema map[string]any) ([]byte, error) {
	b, err := json.Marshal(map[string]any{"message": message, "schema": schema})
	if err != nil {
		return nil, err
	}
	req := pdk.AllocateBytes(b)
	out := pdk.FindMemory(hostAsk(req.Offset()))
	return out.ReadBytes(), nil
}

//go:wasmexport test_elicitation
func testElicitation() int32 {
	return call(func(in []byte) ([]byte, error) {
		var args struct {
			Message string `json:"message"`
		}
		if err := json.Unmarshal(in, &args); err != nil {
			return nil, err
		}
		answer, err := askPerson(args.Message, elicitationSchema)
		if err != nil {
			return nil, err
		}
		return elicitationResult(answer), nil
	})
}

//go:wasmexport test_elicitation_sep1034_defaults
func testElicitationDefaults() int32 {
	return call(func([]byte) ([]byte, error) {
		answer, err := askPerson("Please review and update the form fields with defaults", defaultsSchema)
		if err != nil {
			return nil, err
		}
		return elicitationResult(answer), nil
	})
}
