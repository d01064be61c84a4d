// Command incident-triage is a WASI command with two tools: triage
// summarizes the errors in the log files of the workspace (counts by level,
// a timeline, spikes, the most frequent error signatures with first and last
// occurrence), and search_logs returns the matching entries themselves.
//
// The runtime starts it with the tool's name as argv[0], the JSON arguments
// on stdin and the workspace mounted at /workspace (granted host paths appear
// at their own paths, so absolute patterns reach them); it prints the JSON result
// on stdout, or a message on stderr and exits 1. Being an ordinary Go
// program over io/fs, it runs natively under `go test` with a temp folder.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -o bin/incident-triage.wasm .
// The same source builds with TinyGo: tinygo build -target wasip1.
package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"time"
)

// workspace is where the runtime mounts the chat's workspace in the guest.
const workspace = "/workspace"

// tools maps argv[0] to a tool.
var tools = map[string]func(e env, input []byte) ([]byte, error){
	"triage":      triage,
	"search_logs": searchLogs,
}

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr, env{open: dirFS, workspace: workspace, now: time.Now()}))
}

func dirFS(dir string) fs.FS { return os.DirFS(dir) }

func run(argv []string, stdin io.Reader, stdout, stderr io.Writer, e env) int {
	name := ""
	if len(argv) > 0 {
		name = path.Base(argv[0])
	}
	tool, ok := tools[name]
	if !ok {
		fmt.Fprintf(stderr, "incident-triage: no tool %q: run the module with argv[0] set to triage or search_logs\n", name)
		return 2
	}
	input, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "incident-triage: reading the arguments: %v\n", err)
		return 1
	}
	out, err := tool(e, input)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if _, err := fmt.Fprintf(stdout, "%s\n", out); err != nil {
		return 1
	}
	return 0
}
