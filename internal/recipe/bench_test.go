package recipe

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
	"github.com/packs-run/packs/runtime"
)

// BenchmarkRecipeStep is a one-step recipe run (git --version) against its
// peer, the same command as one pipeline call (what exec_best_effort
// makes): the difference is what a run adds around a step (binding,
// expansion, the expectation, the result).
func BenchmarkRecipeStep(b *testing.B) {
	if !onSafePath("git") {
		b.Skip("git is not installed")
	}
	dir := writePack(b, "bench", []string{"git"}, map[string]string{"r": "id: r\nname: R\nsteps:\n  - id: s\n    command: git --version\n    expect:\n      output_contains: git version\n"})
	f := setup(b, dir, execGrant, "")
	yes := &person{name: "p", verdict: capability.RunOnce}
	b.Run("recipe", func(b *testing.B) {
		r := f.runner(yes)
		rc, _ := f.pack.Recipe("r")
		for b.Loop() {
			res, err := r.Run(context.Background(), rc, json.RawMessage(`{}`))
			if err != nil || res.Status != StatusSuccess {
				b.Fatal(res, err)
			}
		}
	})
	b.Run("pipeline-call", func(b *testing.B) {
		argv := []string{"git", "--version"}
		for b.Loop() {
			bt := &runtime.Builtin{Name: "bench__exec", Capabilities: []capability.Name{capability.TerminalExec}, Granted: true,
				Check: func(g capability.Grant) []capability.Decision { return []capability.Decision{g.Command(argv[0])} }}
			bt.Run = func(ctx context.Context, g runtime.Granted) (json.RawMessage, int, error) {
				res, err := hostfns.Exec(ctx, g.HostCall(f.pack, bt.Name, f.ws), argv, hostfns.ExecOptions{})
				return json.RawMessage(`{}`), res.ExitCode, err
			}
			o, err := f.pl.Call(context.Background(), runtime.Request{Pack: f.pack, Ref: capability.PackRef{Name: f.pack.Name}, Workspace: f.ws, Builtin: bt,
				Arguments: json.RawMessage(`{"argv":["git","--version"]}`), Approvers: []capability.Approver{yes}})
			if err != nil || o.Err != nil {
				b.Fatal(err, o.Err)
			}
		}
	})
}
