// Command gen writes digests.go with each built-in pack's packs.lock
// integrity, after build.sh has rebuilt the modules. Run both from
// internal/builtin: go generate ./internal/builtin (or make builtins).
package main

import (
	"fmt"
	"os"

	"github.com/packs-run/packs/internal/builtin"
)

func main() {
	if err := builtin.WriteDigests("."); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
