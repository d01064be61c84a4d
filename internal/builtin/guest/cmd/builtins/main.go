// Command builtins is the Extism plugin of the built-in packs that need no
// network: current-time, session-file-system, stateless-todo-list,
// test-math and test-weather each name their exports in their tools.json.
// The time zone database is compiled in (time/tzdata): the sandbox has no
// /usr/share/zoneinfo.
//
// Build (internal/builtin's go generate does it):
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -ldflags='-s -w' -buildmode=c-shared -o ../../wasm/builtins.wasm .
package main

import (
	_ "time/tzdata"

	"github.com/extism/go-pdk"

	"github.com/packs-run/packs/internal/builtin/guest/tools"
)

func main() {}

// call runs one tool over the Extism input; the return value is the
// Extism status (0 success, 1 failure, with the error set).
func call(tool tools.Tool) int32 {
	out, err := tool(pdk.Input())
	if err != nil {
		pdk.SetError(err)
		return 1
	}
	pdk.Output(out)
	return 0
}

//go:wasmexport get_current_time
func getCurrentTime() int32 { return call(tools.GetCurrentTime) }

//go:wasmexport read_file
func readFile() int32 { return call(tools.ReadFile) }

//go:wasmexport write_file
func writeFile() int32 { return call(tools.WriteFile) }

//go:wasmexport list_directory
func listDirectory() int32 { return call(tools.ListDirectory) }

//go:wasmexport grep_files
func grepFiles() int32 { return call(tools.GrepFiles) }

//go:wasmexport delete_file
func deleteFile() int32 { return call(tools.DeleteFile) }

//go:wasmexport stat_file
func statFile() int32 { return call(tools.StatFile) }

//go:wasmexport write_todos
func writeTodos() int32 { return call(tools.WriteTodos) }

//go:wasmexport add
func add() int32 { return call(tools.Add) }

//go:wasmexport subtract
func subtract() int32 { return call(tools.Subtract) }

//go:wasmexport multiply
func multiply() int32 { return call(tools.Multiply) }

//go:wasmexport divide
func divide() int32 { return call(tools.Divide) }

//go:wasmexport get_weather
func getWeather() int32 { return call(tools.GetWeather) }

//go:wasmexport get_forecast
func getForecast() int32 { return call(tools.GetForecast) }
