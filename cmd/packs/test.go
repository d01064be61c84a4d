package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/internal/author"
	"github.com/packs-run/packs/packs"
)

// testCaseJSON is one case of packs test --json (one JSON object a line,
// as packs recipe test --json prints its cases).
type testCaseJSON struct {
	Name     string   `json:"name"`
	Tool     string   `json:"tool"`
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Pass     bool     `json:"pass"`
	Status   string   `json:"status"` // the call's outcome: ok, error, denied, ...
	Failures []string `json:"failures"`
}

func (c *cli) testCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "test [DIR] [--json]",
		Short: "Run a pack's own tests offline, through the real runtime",
		Long: `test runs the cases in the pack's tests/*.yaml (DIR defaults to .): each
calls one tool through the same pipeline as packs run (schema, gate, grant,
integrity, sandbox, audit), with the grant the case names and host effects
faked by the case (HTTP answers, workspace files, stub commands), then
checks the output or error and the capabilities exercised, allowed and
denied. Nothing reaches the network or the real commands. The format is
in docs/authoring.md. A pack's recipe tests (tests/recipe_test.yaml) run
too, as packs recipe test runs them.

One line per case goes to stdout ("ok" or "FAIL" and why); with --json, one
JSON object per case instead (name, tool, file, line, pass, status,
failures; recipe cases as packs recipe test --json prints them), and
findings go to stderr. Exit status: 0 when every case passes, 1 when any
fails or a test file has errors.`,
		Args: nargs(0, 1, "at most one pack folder"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := packDir(args)
			_, statErr := os.Stat(filepath.Join(dir, filepath.FromSlash(packs.RecipeTestFile)))
			if hasRecipeTests := statErr == nil; hasRecipeTests {
				if err := c.testRecipes(cmd.Context(), dir, asJSON); err != nil {
					return err
				}
				if !hasToolTests(dir) {
					return nil
				}
			}
			opt := author.TestOptions{CacheDir: c.validateCache(), Report: c.stdout}
			findings := c.stdout
			if asJSON {
				opt.Report, findings = nil, c.stderr
			}
			results, fs, err := author.Test(cmd.Context(), dir, opt)
			for _, f := range fs {
				fmt.Fprintln(findings, f.String())
			}
			if asJSON {
				for _, r := range results {
					line, jerr := json.Marshal(testCaseJSON{Name: r.Case.Name, Tool: r.Case.Tool, File: r.Case.File, Line: r.Case.Line,
						Pass: r.Passed(), Status: string(r.Outcome.Status), Failures: orEmpty(r.Failures)})
					if jerr != nil {
						return jerr
					}
					fmt.Fprintf(c.stdout, "%s\n", line)
				}
			}
			passed := 0
			for _, r := range results {
				if r.Passed() {
					passed++
				}
			}
			switch {
			case errors.Is(err, author.ErrNoTests):
				return fmt.Errorf("test: %s has no tests: add tests/*.yaml (see docs/authoring.md)", dir)
			case err != nil && len(results) > 0:
				return fmt.Errorf("test: %s: %d of %d cases failed", dir, len(results)-passed, len(results))
			case err != nil:
				return fmt.Errorf("test: %s: %s", dir, trimOrigin(err))
			}
			fmt.Fprintf(c.stderr, "%s: %d cases passed\n", dir, passed)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per case")
	return cmd
}

// hasToolTests reports whether dir's tests/ holds test files other than the
// recipe tests.
func hasToolTests(dir string) bool {
	cases, fs := author.LoadTests(dir)
	return len(cases) > 0 || len(fs) > 0
}
