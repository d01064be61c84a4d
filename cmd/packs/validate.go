package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

func (c *cli) validateCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "validate [--json] PATH...",
		Short: "Check pack folders and print every finding",
		Long: `validate checks each pack folder: its entry doc and frontmatter, skill.toml
and tools.json, and compiles every wasm module a tool names: a module that
does not compile (wasm-compile), imports what packs host ABI v1 does not
provide (wasm-import) or lacks the export its tool calls (wasm-export) is an
error at that tool's line of tools.json. Compiled code goes to the state
directory's cache when the state directory exists (--home, PACKS_HOME, ...);
validate never creates one. Each finding is printed on stdout as

  file:line: error|warning: rule: message

and a one-line summary per pack goes to stderr ("PATH: ok", "PATH: ok, 2
warnings", "PATH: 1 error, 0 warnings"). With --json, stdout holds one JSON
array of {pack, file, line, severity, rule, message} and nothing else.

Exit status: 0 when no pack has errors, 1 when any has, 2 on usage errors
(no PATH, an unknown flag, a PATH that is not a folder).`,
		Args: nargs(1, -1, "one or more pack folders"),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, p := range args {
				if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
					return usageError("validate: %s is not a folder: give the path of a pack folder", p)
				}
			}
			all := []packs.Finding{}
			failed := 0
			ctx := cmd.Context()
			var rt *runtime.Runtime
			defer func() {
				if rt != nil {
					rt.Close(context.WithoutCancel(ctx))
				}
			}()
			for _, p := range args {
				fs, err := c.validateOne(ctx, p, &rt)
				if err != nil {
					return err
				}
				all = append(all, fs...)
				if errs, _ := count(fs); errs > 0 {
					failed++
				}
				if !asJSON {
					c.printFindings(p, fs)
				}
			}
			if asJSON {
				enc := json.NewEncoder(c.stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(all); err != nil {
					return err
				}
			}
			if failed > 0 {
				return exitWith(exitFailure, fmt.Errorf("validate: %d of %d pack(s) have errors: fix them and run packs validate again", failed, len(args)))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the findings as one JSON array")
	return cmd
}

// validateOne finds what is wrong with the pack folder p: its own
// findings, what this machine lacks for it (a warning here; the installer
// makes it an error), what it would ship, and its wasm modules checked on
// *rt (started on first use; the caller closes it).
func (c *cli) validateOne(ctx context.Context, p string, rt **runtime.Runtime) ([]packs.Finding, error) {
	pk, err := packs.Load(p, packs.LoadOptions{})
	var fs []packs.Finding
	var le *packs.LoadError
	switch {
	case errors.As(err, &le):
		fs = le.Findings
	case err != nil:
		return nil, err
	default:
		fs = pk.Findings
		h, err := app.Host(c.validateHome(), c.getenv("PATH"), false)
		if err != nil {
			return nil, err
		}
		fs = append(fs, packs.CheckHost(pk, h)...)
	}
	fs = append(fs, packs.CheckShipped(p, pk, fs)...)
	if le == nil && hasWasm(pk) {
		if *rt == nil {
			if *rt, err = runtime.New(ctx, runtime.Config{CacheDir: c.validateCache(), PoolSize: -1}); err != nil {
				return nil, err
			}
		}
		fs = append(fs, (*rt).Check(ctx, pk)...)
	}
	return fs, nil
}

// printFindings prints p's findings on stdout, one a line, and its summary
// on stderr.
func (c *cli) printFindings(p string, fs []packs.Finding) {
	for _, f := range fs {
		fmt.Fprintln(c.stdout, f.String())
	}
	switch errs, warns := count(fs); {
	case errs > 0:
		fmt.Fprintf(c.stderr, "%s: %s, %s\n", p, plural(errs, "error"), plural(warns, "warning"))
	case warns > 0:
		fmt.Fprintf(c.stderr, "%s: ok, %s\n", p, plural(warns, "warning"))
	default:
		fmt.Fprintf(c.stderr, "%s: ok\n", p)
	}
}

// hasWasm reports whether any of p's tools is a wasm module.
func hasWasm(p *packs.Pack) bool {
	return slices.ContainsFunc(p.Tools, func(t *packs.Tool) bool { return t.Run.Wasm != "" })
}

// validateCache returns the compilation cache of the state directory when
// that directory exists, else "" (an in-memory cache): validate warms the
// cache for a later run, but never creates a state directory. "cache" is
// the state directory's layout (dist.Home.CacheDir).
func (c *cli) validateCache() string {
	home := c.validateHome()
	if home == "" {
		return ""
	}
	dir := filepath.Join(home, "cache")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	return dir
}

// validateHome returns the state directory when it exists, else "".
func (c *cli) validateHome() string {
	home, err := dist.ResolveHome(c.home, c.getenv, os.UserHomeDir)
	if err != nil {
		return ""
	}
	if fi, err := os.Stat(home); err != nil || !fi.IsDir() {
		return ""
	}
	return home
}

// count returns the number of errors and warnings.
func count(fs []packs.Finding) (errs, warns int) {
	for _, f := range fs {
		if f.Severity == packs.SeverityError {
			errs++
		} else {
			warns++
		}
	}
	return errs, warns
}

// plural renders "1 error", "2 errors".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
