//go:build exec

package main

import (
	"encoding/json"

	pdk "github.com/extism/go-pdk"
)

//go:wasmimport packs:host/exec exec
func hostExec(request uint64) uint64

func init() { extra["exec"] = execOp }

func execOp(c command) report {
	in, _ := json.Marshal(map[string]any{"argv": c.Argv})
	mem := pdk.AllocateBytes(in)
	out := pdk.FindMemory(hostExec(mem.Offset()))
	r := result("", nil)
	r.Exec = out.ReadBytes()
	return r
}
