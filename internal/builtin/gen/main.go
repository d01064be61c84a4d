// Command gen rebuilds the built-in packs' WebAssembly modules from
// guest/ into wasm/, records the Go version in wasm/GOVERSION, and writes
// digests.go with each pack's packs.lock integrity. Run it from
// internal/builtin: go generate ./internal/builtin (or make builtins).
package main

import (
	"fmt"
	"os"

	"github.com/packs-run/packs/internal/builtin"
)

func main() {
	if err := builtin.Generate("."); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
