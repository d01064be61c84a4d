// Command goplugin is the runtime's trivial Go plugin: the guest of the
// tests and benchmarks that need a real standard-Go module (about 2 MB, with
// the Go runtime's start-up in its reactor initializer). Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o goplugin.wasm .
package main

import (
	"encoding/json"
	"os"

	"github.com/extism/go-pdk"
)

// echo returns its input: the trivial tool of the benchmarks.
//
//go:wasmexport echo
func echo() int32 {
	pdk.Output(pdk.Input())
	return 0
}

// getenv reports whether the variable named {"name": ...} is visible, and
// its value.
//
//go:wasmexport getenv
func getenv() int32 {
	var in struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(pdk.Input(), &in); err != nil {
		pdk.SetError(err)
		return 1
	}
	v, ok := os.LookupEnv(in.Name)
	out, _ := json.Marshal(map[string]any{"set": ok, "value": v})
	pdk.Output(out)
	return 0
}

// readfile returns the content of the file {"path": ...} as a string, or
// the error it met.
//
//go:wasmexport readfile
func readfile() int32 {
	var in struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal(pdk.Input(), &in); err != nil {
		pdk.SetError(err)
		return 1
	}
	b, err := os.ReadFile(in.Path)
	res := map[string]any{"content": string(b)}
	if err != nil {
		res = map[string]any{"error": err.Error()}
	}
	out, _ := json.Marshal(res)
	pdk.Output(out)
	return 0
}

// calls counts the calls this instance has served.
var calls int

// state reports {"calls": n}, the calls this instance served before this
// one, and counts this one: a fresh instance per call always says 0.
//
//go:wasmexport state
func state() int32 {
	out, _ := json.Marshal(map[string]int{"calls": calls})
	calls++
	pdk.Output(out)
	return 0
}

func main() {}
