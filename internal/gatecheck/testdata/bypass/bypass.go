// Package bypass holds the ways a future change could skip the gate. The
// static walk must flag each function named bad* and none named good*.
package bypass

import (
	"context"
	"os/exec"

	extism "github.com/extism/go-sdk"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// Runner is a view of an execution layer that takes a runtime.Invocation:
// a call through it is a sink too.
type Runner interface {
	Invoke(ctx context.Context, inv runtime.Invocation) (runtime.Result, error)
}

func badZeroApproval(ctx context.Context, r Runner, p *packs.Pack, t *packs.Tool) {
	_, _ = r.Invoke(ctx, runtime.Invocation{Pack: p, Tool: t, Approval: capability.Approval{}, ID: "i"})
}

func badNoApproval(ctx context.Context, r Runner, p *packs.Pack, t *packs.Tool) {
	_, _ = r.Invoke(ctx, runtime.Invocation{Pack: p, Tool: t, ID: "i"})
}

func badBuiltElsewhere(ctx context.Context, r Runner, inv runtime.Invocation) {
	_, _ = r.Invoke(ctx, inv)
}

func badUncheckedGuest(_ capability.Approval, pl *extism.Plugin) {
	_, _, _ = pl.Call("run", nil)
}

func badCheckedAfter(ap capability.Approval, pl *extism.Plugin) {
	_, _, _ = pl.Call("run", nil)
	_ = ap.Covers(capability.Call{Invocation: "i"})
}

func badShell(ctx context.Context) {
	_ = exec.CommandContext(ctx, "sh", "-c", "touch x").Run()
}

func badForwarded(run func(capability.Approval), aps []capability.Approval) {
	run(aps[0])
}

func goodDecided(ctx context.Context, g *capability.Gate, r Runner, p *packs.Pack, t *packs.Tool) {
	ap, err := g.Decide(ctx, capability.Pending{Invocation: "i"})
	if err != nil {
		return
	}
	_, _ = r.Invoke(ctx, runtime.Invocation{Pack: p, Tool: t, Approval: ap, ID: "i"})
}

func goodCheckedGuest(ap capability.Approval, pl *extism.Plugin) {
	if ap.Covers(capability.Call{Invocation: "i"}) != nil {
		return
	}
	_, _, _ = pl.Call("run", nil)
}

func goodForwarded(run func(capability.Approval), ap capability.Approval) {
	run(ap)
}

// A front end that stages a pack and commits it itself skips the
// installer: the policy, trust, the machine's fit and consent.
func badCommitStaged(ctx context.Context, h *dist.Home, dir string) {
	st, err := h.Stage(ctx, dir, dist.StageOptions{})
	if err != nil {
		return
	}
	_, _ = st.CommitGrants(ctx, nil)
}

func badCommitValue(st *dist.Staged) {
	commit := st.Commit
	_ = commit
}
