//go:build wasip1

package main

import "github.com/extism/go-pdk"

// call runs one tool over the Extism input and sets the output or the error.
// The return value is the Extism status: 0 success, 1 failure.
func call(tool func([]byte) ([]byte, error)) int32 {
	out, err := tool(pdk.Input())
	if err != nil {
		pdk.SetError(err)
		return 1
	}
	pdk.Output(out)
	return 0
}
