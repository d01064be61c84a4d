package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/approve"
	"github.com/packs-run/packs/internal/recipe"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

func (c *cli) recipeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "recipe list|show|run",
		Short: "List, show and run a pack's recipes",
		Long: `recipe works with a pack's recipes (recipes/*.yaml): declarative workflows
whose every step is a call through the approval gate, run under the pack's
grant and recorded in the audit log under one run id. PACK is an installed
pack's name or a pack folder.`,
	}
	cmd.AddCommand(c.recipeListCommand(), c.recipeShowCommand(), c.recipeRunCommand(), c.recipeTestCommand())
	return cmd
}

func (c *cli) recipeListCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list PACK [--json]",
		Short: "List a pack's recipes",
		Args:  nargs(1, 1, "PACK"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, _, err := c.recipePack(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				out := []recipeSummary{}
				for _, r := range p.Recipes {
					out = append(out, summarize(r))
				}
				return writeJSON(c.stdout, out)
			}
			if len(p.Recipes) == 0 {
				fmt.Fprintf(c.stderr, "pack %s has no recipes\n", p.Name)
				return nil
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTEPS\tNAME")
			for _, r := range p.Recipes {
				fmt.Fprintf(tw, "%s\t%d\t%s\n", r.ID, len(r.Steps), r.Name)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

func (c *cli) recipeShowCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show PACK RECIPE [--json]",
		Short: "Show a recipe: parameters, preconditions, steps, verification, rollback",
		Args:  nargs(2, 2, "PACK and RECIPE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, _, err := c.recipePack(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			r, err := findRecipe(p, args[1])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(c.stdout, describeRecipe(r))
			}
			showRecipe(c.stdout, r)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the recipe as JSON")
	return cmd
}

func (c *cli) recipeRunCommand() *cobra.Command {
	var (
		params    []string
		workspace string
		yes       bool
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "run PACK RECIPE [--param K=V]... [--workspace DIR] [--yes] [--json]",
		Short: "Run a recipe, each step through the approval gate",
		Long: `run runs a recipe of PACK: its preconditions, its steps in order, its
verification, and on a failure its rollback in reverse order. Every one of
them is a call through the approval gate, under the pack's grant, recorded
in the audit log with an invocation id that starts with the run id.

--param K=V sets a parameter (repeat it); defaults fill the rest. A
required parameter without a value is asked for at a terminal, and is a
usage error without one. --yes is you approving
the whole run: it approves the steps whose confirmation is auto or prompt,
but a step marked always still asks you at the terminal (and is denied
when nobody can answer). Without --yes each call asks at the terminal, or
is denied without one. The enterprise policy decides before anyone.

The progress goes to stderr; the result (spec 001's RecipeResult) to
stdout, as text or with --json as one JSON object.

Exit status: 0 success, 1 a step, check or verification failed, 2 usage
(an unknown recipe or parameter), 3 a call was denied, 4 a parameter
value does not fit, 5 a step hit its time or output limit.`,
		Args: nargs(2, 2, "PACK and RECIPE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			values := map[string]string{}
			for _, kv := range params {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return usageError("recipe run: --param %q is not K=V", kv)
				}
				if _, dup := values[k]; dup {
					return usageError("recipe run: --param %s is given twice", k)
				}
				values[k] = v
			}
			return c.runRecipe(cmd.Context(), args[0], args[1], values, workspace, yes, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&params, "param", nil, "a parameter as K=V (repeatable)")
	f.StringVar(&workspace, "workspace", "", "the folder the commands run in (default <home>/workspaces/cli)")
	f.BoolVarP(&yes, "yes", "y", false, "approve the run's auto and prompt steps")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// recipePack loads PACK (a folder or an installed pack).
func (c *cli) recipePack(ctx context.Context, arg string) (*packs.Pack, capability.PackRef, error) {
	a, err := c.open(ctx)
	if err != nil {
		return nil, capability.PackRef{}, err
	}
	defer a.Close()
	p, ref, err := loadForRun(ctx, a, arg, nil)
	return p, ref, err
}

func findRecipe(p *packs.Pack, id string) (*packs.Recipe, error) {
	r, ok := p.Recipe(id)
	if ok {
		return r, nil
	}
	var ids []string
	for _, r := range p.Recipes {
		ids = append(ids, r.ID)
	}
	return nil, usageError("recipe: pack %s has no recipe %q (it has: %s): see packs recipe list %s", p.Name, id, orNone(strings.Join(ids, ", ")), p.Name)
}

func (c *cli) runRecipe(ctx context.Context, packArg, id string, values map[string]string, workspace string, yes, asJSON bool) error {
	a, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	// Every step's check of the pack finds the files checked here.
	content := &packs.ContentCache{}
	p, ref, err := loadForRun(ctx, a, packArg, content)
	if err != nil {
		return err
	}
	rc, err := findRecipe(p, id)
	if err != nil {
		return err
	}
	if missing := rc.Missing(values); len(missing) > 0 && c.interactive {
		if err := c.askParams(rc, missing, values); err != nil {
			return err
		}
	}
	args, err := rc.Bind(values)
	if err != nil {
		var pe *packs.ParamError
		if errors.As(err, &pe) && (strings.HasPrefix(pe.Reason, "is required") || strings.HasPrefix(pe.Reason, "recipe ")) {
			return usageError("recipe run: %v: see packs recipe show %s %s", err, p.Name, rc.ID)
		}
		return exitWith(exitInvalid, fmt.Errorf("recipe run: %w", err))
	}
	ws, err := runWorkspace(a, workspace)
	if err != nil {
		return err
	}
	pl, release, err := a.OpenPipeline(ctx, app.PipelineOptions{OneShot: true, Content: content, Version: version()})
	if err != nil {
		return err
	}
	defer release()
	r := &recipe.Runner{Pipeline: pl, Pack: p, Ref: ref, Workspace: ws, Client: "cli", OnCall: func(call recipe.Call) { printCall(c.stderr, call) }}
	if yes {
		r.Blanket = []capability.Approver{cliApprover{}}
	}
	if c.interactive {
		r.Approvers = []capability.Approver{approve.NewTerminal(c.stdin, c.stderr)}
	}
	res, err := r.Run(ctx, rc, args)
	if err != nil {
		return fmt.Errorf("recipe run: %w", err)
	}
	if asJSON {
		if err := writeJSON(c.stdout, res); err != nil {
			return err
		}
	} else {
		printResult(c.stdout, res)
	}
	if res.Status == recipe.StatusSuccess {
		return nil
	}
	code := exitFailure
	if res.Err != nil && !errors.Is(res.Err, packs.ErrExpectation) {
		code = runtime.EndingOf(res.Err).ExitCode
	}
	why := res.Error
	if errors.Is(res.Err, capability.ErrNoApprover) && !yes {
		why += ": pass --yes to approve the run, or run it at a terminal"
	}
	return exitWith(code, fmt.Errorf("recipe run: %s %s: %s at %s %s: %s", p.Name, rc.ID, res.Status, res.FailedPhase, res.FailedStep, why))
}

// askParams asks the person at the terminal for the required parameters
// not given with --param; an empty line (or the end of input) stops.
func (c *cli) askParams(rc *packs.Recipe, missing []string, values map[string]string) error {
	fmt.Fprintf(c.stderr, "recipe %s needs values not given with --param (an empty line stops):\n", rc.ID)
	for _, name := range missing {
		for _, p := range rc.Parameters {
			if p.Name != name {
				continue
			}
			hint := p.Type
			if p.Validation != nil {
				hint += ", matching " + p.Validation.String()
			}
			if p.Description != "" {
				fmt.Fprintf(c.stderr, "  %s: %s\n", p.Name, p.Description)
			}
			fmt.Fprintf(c.stderr, "%s (%s)> ", p.Name, hint)
			line, err := c.stdin.ReadString('\n')
			v := strings.TrimRight(line, "\r\n")
			if strings.TrimSpace(v) == "" {
				if err != nil {
					fmt.Fprintln(c.stderr)
				}
				return usageError("recipe run: no value for %s: pass --param %s=VALUE", name, name)
			}
			values[name] = v
		}
	}
	return nil
}

// printCall is one progress line: "step create-branch: ok (exit 0)".
func printCall(w io.Writer, c recipe.Call) {
	what := string(c.Phase) + " " + c.ID
	switch {
	case c.Skipped:
		fmt.Fprintf(w, "%s: skipped (its step did not complete)\n", what)
	case c.OK:
		fmt.Fprintf(w, "%s: ok (exit %d)\n", what, c.ExitCode)
	case c.Status == capability.StatusOK:
		fmt.Fprintf(w, "%s: failed: %s\n", what, c.Error)
	default:
		fmt.Fprintf(w, "%s: failed (%s): %s\n", what, c.Status, c.Error)
	}
}

func printResult(w io.Writer, r recipe.Result) {
	fmt.Fprintf(w, "run %s: %s %s: %s, %d steps completed", r.Run, r.Pack, r.Recipe, r.Status, r.StepsCompleted)
	if r.Status != recipe.StatusSuccess {
		fmt.Fprintf(w, "; failed at %s %s", r.FailedPhase, r.FailedStep)
		switch {
		case r.RolledBack:
			fmt.Fprint(w, "; rolled back")
		case r.RollbackError != "":
			fmt.Fprintf(w, "; rollback failed: %s", r.RollbackError)
		default:
			fmt.Fprint(w, "; nothing to roll back")
		}
	}
	fmt.Fprintln(w)
}

// recipeSummary is a recipe in packs recipe list --json.
type recipeSummary struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Version     string `json:"version,omitempty"`
	File        string `json:"file"`
	Steps       int    `json:"steps"`
}

func summarize(r *packs.Recipe) recipeSummary {
	return recipeSummary{ID: r.ID, Name: r.Name, Description: r.Description, Version: r.Version, File: r.File, Steps: len(r.Steps)}
}

// recipeDoc is a recipe in packs recipe show --json.
type recipeDoc struct {
	recipeSummary
	Triggers      []packs.RecipeTrigger `json:"triggers,omitempty"`
	Parameters    []paramDoc            `json:"parameters"`
	Preconditions []preDoc              `json:"preconditions"`
	Steps         []stepDoc             `json:"steps"`
	Verification  []stepDoc             `json:"verification"`
	Rollback      []stepDoc             `json:"rollback"`
}

type paramDoc struct {
	Name        string  `json:"name"`
	Type        string  `json:"type"`
	Required    bool    `json:"required"`
	Description string  `json:"description,omitempty"`
	Default     *string `json:"default,omitempty"`
	Validation  string  `json:"validation,omitempty"`
}

type preDoc struct {
	Check   string   `json:"check"`
	Args    []string `json:"args,omitempty"`
	Command []string `json:"command,omitempty"`
	Message string   `json:"message,omitempty"`
}

type stepDoc struct {
	ID           string   `json:"id"`
	Name         string   `json:"name,omitempty"`
	Command      []string `json:"command,omitempty"`
	Tool         string   `json:"tool,omitempty"`
	Confirmation string   `json:"confirmation"`
	RiskLevel    string   `json:"risk_level,omitempty"`
	Timeout      string   `json:"timeout,omitempty"`
	Undoes       string   `json:"undoes,omitempty"`
}

func describeRecipe(r *packs.Recipe) recipeDoc {
	d := recipeDoc{recipeSummary: summarize(r), Triggers: r.Triggers, Parameters: []paramDoc{}, Preconditions: []preDoc{}, Steps: recipeSteps(r.Steps), Verification: recipeSteps(r.Verification), Rollback: recipeSteps(r.Rollback)}
	for _, p := range r.Parameters {
		pd := paramDoc{Name: p.Name, Type: p.Type, Required: p.Required, Description: p.Description, Default: p.Default}
		if p.Validation != nil {
			pd.Validation = p.Validation.String()
		}
		d.Parameters = append(d.Parameters, pd)
	}
	for _, pc := range r.Preconditions {
		pd := preDoc{Check: pc.Check, Args: pc.Args, Message: pc.Message}
		if pc.Command != nil {
			pd.Command = pc.Command.Argv
		}
		d.Preconditions = append(d.Preconditions, pd)
	}
	return d
}

func recipeSteps(in []packs.RecipeStep) []stepDoc {
	out := []stepDoc{}
	for _, s := range in {
		sd := stepDoc{ID: s.ID, Name: s.Name, Tool: s.Tool, Confirmation: string(s.Confirmation), RiskLevel: string(s.RiskLevel), Undoes: s.Undoes}
		if s.Command != nil {
			sd.Command = s.Command.Argv
		}
		if s.Timeout > 0 {
			sd.Timeout = s.Timeout.String()
		}
		out = append(out, sd)
	}
	return out
}

func showRecipe(w io.Writer, r *packs.Recipe) {
	d := describeRecipe(r)
	fmt.Fprintf(w, "%s: %s (%s)\n", r.ID, r.Name, r.File)
	if r.Description != "" {
		fmt.Fprintf(w, "  %s\n", r.Description)
	}
	if len(d.Parameters) > 0 {
		fmt.Fprintln(w, "\nParameters:")
		for _, p := range d.Parameters {
			req := "optional"
			if p.Required {
				req = "required"
			}
			line := fmt.Sprintf("  %s (%s, %s)", p.Name, p.Type, req)
			if p.Default != nil {
				line += fmt.Sprintf(" default %q", *p.Default)
			}
			if p.Validation != "" {
				line += " matching " + p.Validation
			}
			if p.Description != "" {
				line += ": " + p.Description
			}
			fmt.Fprintln(w, line)
		}
	}
	if len(d.Preconditions) > 0 {
		fmt.Fprintln(w, "\nPreconditions:")
		for _, p := range d.Preconditions {
			what := strings.Join(p.Args, " ")
			if p.Command != nil {
				what = quoteArgv(p.Command)
			}
			fmt.Fprintf(w, "  %s %s\n", p.Check, what)
		}
	}
	for _, part := range []struct {
		title string
		steps []stepDoc
	}{{"Steps", d.Steps}, {"Verification", d.Verification}, {"Rollback (on failure, last first)", d.Rollback}} {
		if len(part.steps) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", part.title)
		for i, s := range part.steps {
			what := "tool " + s.Tool
			if s.Command != nil {
				what = quoteArgv(s.Command)
			}
			extra := []string{"confirmation " + s.Confirmation}
			if s.RiskLevel != "" {
				extra = append(extra, "risk "+s.RiskLevel)
			}
			if s.Timeout != "" {
				extra = append(extra, "timeout "+s.Timeout)
			}
			if s.Undoes != "" {
				extra = append(extra, "undoes "+s.Undoes)
			}
			fmt.Fprintf(w, "  %d. %s: %s [%s]\n", i+1, s.ID, what, strings.Join(extra, ", "))
		}
	}
}

// quoteArgv shows an argv as one line, quoting elements that need it.
func quoteArgv(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\|&;<>()$`*?[#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

func (c *cli) recipeTestCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "test PACK [--json]",
		Short: "Run a pack's recipe tests against mocked commands",
		Long: `test runs the cases of PACK's tests/recipe_test.yaml (spec 001): each runs a
recipe with its parameters, every call through the gate and the grant's
check as in a real run, but every native command is answered by the case's
mock_commands ("*" in a mock matches any run of characters) and none is
started; a command no mock answers fails with exit status 127. The pack is
granted what it requests, calls are approved, and nothing is written to the
audit log. A case passes when the run's result is its expected_result
(success, partial, failure, precondition_failed) and its error contains
expected_message.

Exit status: 0 when every case passes, 1 when one fails or the file has
errors, 2 on usage errors.`,
		Args: nargs(1, 1, "PACK"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.testRecipes(cmd.Context(), args[0], asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per case")
	return cmd
}

// recipeTestResult is one case in packs recipe test --json.
type recipeTestResult struct {
	Name   string        `json:"name"`
	Recipe string        `json:"recipe"`
	Pass   bool          `json:"pass"`
	Error  string        `json:"error,omitempty"`
	Result recipe.Result `json:"result"`
}

func (c *cli) testRecipes(ctx context.Context, packArg string, asJSON bool) error {
	p, ref, err := c.recipePack(ctx, packArg)
	if err != nil {
		return err
	}
	path, err := packs.SafeJoin(p.Dir, packs.RecipeTestFile)
	if err != nil {
		return fmt.Errorf("recipe test: %w", err)
	}
	doc, err := readCapped(path, 256<<10)
	if err != nil {
		return fmt.Errorf("recipe test: %w", err)
	}
	cases, fs := packs.ParseRecipeTests(doc, filepath.Join(packArg, packs.RecipeTestFile), p)
	for _, f := range fs {
		fmt.Fprintln(c.stderr, f)
	}
	if cases == nil && len(fs) > 0 {
		return exitWith(exitFailure, fmt.Errorf("recipe test: %s has errors", packs.RecipeTestFile))
	}
	tmp, err := os.MkdirTemp("", "packs-recipe-test-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	rt, err := runtime.New(ctx, runtime.Config{CacheDir: filepath.Join(tmp, "cache"), PoolSize: -1})
	if err != nil {
		return err
	}
	defer rt.Close(context.WithoutCancel(ctx))
	pl, err := runtime.NewPipeline(rt, runtime.PipelineConfig{Grants: recipe.TestGrants{Request: p.Request()}, Audit: &capability.MemoryRecorder{}, Home: tmp})
	if err != nil {
		return err
	}
	failed := 0
	for i, tc := range cases {
		ws := filepath.Join(tmp, "ws"+strconv.Itoa(i))
		if err := os.Mkdir(ws, 0o700); err != nil {
			return err
		}
		rc, _ := p.Recipe(tc.Recipe)
		out := recipeTestResult{Name: tc.Name, Recipe: tc.Recipe}
		args, err := rc.Bind(tc.Parameters)
		if err == nil {
			env := []string{}
			for k, v := range tc.Env {
				env = append(env, k+"="+v)
			}
			r := &recipe.Runner{Pipeline: pl, Pack: p, Ref: ref, Workspace: ws, Client: "recipe test",
				Approvers: []capability.Approver{recipeTestApprover{}}, Environ: env, Mocks: append([]packs.RecipeMock{}, tc.Mocks...)}
			if out.Result, err = r.Run(ctx, rc, args); err != nil {
				return fmt.Errorf("recipe test: %w", err)
			}
			err = recipe.CheckTest(out.Result, tc)
		}
		out.Pass = err == nil
		if err != nil {
			out.Error = err.Error()
			failed++
		}
		if asJSON {
			b, err := json.Marshal(out)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "%s\n", b)
		} else if out.Pass {
			fmt.Fprintf(c.stdout, "ok    %s\n", tc)
		} else {
			fmt.Fprintf(c.stdout, "FAIL  %s: %s\n", tc, out.Error)
		}
	}
	if failed > 0 {
		return exitWith(exitFailure, fmt.Errorf("recipe test: %d of %d cases failed", failed, len(cases)))
	}
	if !asJSON {
		fmt.Fprintf(c.stderr, "%d cases passed\n", len(cases))
	}
	return nil
}

// readCapped reads a file of at most limit bytes.
func readCapped(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = fmt.Errorf("%s is larger than %d KiB", path, limit>>10)
	}
	return b, err
}

// recipeTestApprover approves every call of a recipe test: the test is
// about the recipe, and no real command runs.
type recipeTestApprover struct{}

func (recipeTestApprover) Name() string { return "recipe test" }

func (recipeTestApprover) Approve(ctx context.Context, _ capability.Pending) (capability.Verdict, error) {
	return capability.RunOnce, ctx.Err()
}
