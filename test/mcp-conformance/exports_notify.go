//go:build wasip1

package main

import (
	"encoding/json"

	"github.com/extism/go-pdk"
)

//go:wasmimport packs:host/progress progress
func progress(request uint64)

// report sends one progress report (docs/abi.md §4.7).
func report(done, total int, msg string) {
	b, _ := json.Marshal(map[string]any{"progress": done, "total": total, "message": msg})
	mem := pdk.AllocateBytes(b)
	progress(mem.Offset())
}

//go:wasmexport test_tool_with_logging
func testToolWithLogging() int32 {
	for _, msg := range logLines {
		pdk.Log(pdk.LogInfo, msg)
	}
	return call(func([]byte) ([]byte, error) { return []byte(loggingDone), nil })
}

//go:wasmexport test_tool_with_progress
func testToolWithProgress() int32 {
	for _, p := range progressSteps {
		report(p, 100, progressMessage(p))
	}
	return call(func([]byte) ([]byte, error) { return []byte(progressDone), nil })
}
