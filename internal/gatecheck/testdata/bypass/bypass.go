// Package bypass holds the ways a future change could skip the gate. The
// static walk must flag each function named bad* and none named good*.
package bypass

import (
	"context"
	"os/exec"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// Runner is chat's view of the runtime: a call through it is a sink too.
type Runner interface {
	Invoke(ctx context.Context, inv runtime.Invocation) (runtime.Result, error)
}

func badZeroApproval(ctx context.Context, rt *runtime.Runtime, p *packs.Pack, t *packs.Tool) {
	_, _ = rt.Invoke(ctx, runtime.Invocation{Pack: p, Tool: t, Approval: capability.Approval{}, ID: "i"})
}

func badNoApproval(ctx context.Context, r Runner, p *packs.Pack, t *packs.Tool) {
	_, _ = r.Invoke(ctx, runtime.Invocation{Pack: p, Tool: t, ID: "i"})
}

func badBuiltElsewhere(ctx context.Context, rt *runtime.Runtime, inv runtime.Invocation) {
	_, _ = rt.Invoke(ctx, inv)
}

func badUncheckedExec(ctx context.Context, _ capability.Approval, c *hostfns.Call) {
	_, _ = hostfns.Exec(ctx, c, []string{"sh"}, hostfns.ExecOptions{})
}

func badCheckedAfter(ctx context.Context, ap capability.Approval, c *hostfns.Call) {
	_, _ = hostfns.Exec(ctx, c, []string{"sh"}, hostfns.ExecOptions{})
	_ = ap.Covers("i")
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

func goodCheckedExec(ctx context.Context, ap capability.Approval, c *hostfns.Call) {
	if !ap.Covers("i") {
		return
	}
	_, _ = hostfns.Exec(ctx, c, []string{"sh"}, hostfns.ExecOptions{})
}

func goodForwarded(run func(capability.Approval), ap capability.Approval) {
	run(ap)
}
