package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// reviewer is a custom approver: it sees each call as the person would,
// and refuses any whose arguments mention "prod".
type reviewer struct{}

func (reviewer) Name() string { return "reviewer" }
func (reviewer) Approve(_ context.Context, p capability.Pending) (capability.Verdict, error) {
	fmt.Printf("asked: %s__%s %s\n", p.Pack, p.Tool, p.Arguments)
	if strings.Contains(string(p.Arguments), "prod") {
		return capability.Deny, nil
	}
	return capability.RunOnce, nil
}

// An embedder decides who approves calls by passing its own Approver; the
// pipeline asks it before anything runs, and a denial is an outcome with
// its audit record, not an error.
func ExamplePipeline_Call_approver() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "packs-example-")
	defer os.RemoveAll(tmp)
	p, err := packs.Load(writeEchoPack(tmp), packs.LoadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	rt, _ := runtime.New(ctx, runtime.Config{})
	defer rt.Close(ctx)
	audit := &capability.MemoryRecorder{}
	pl, _ := runtime.NewPipeline(rt, runtime.PipelineConfig{Grants: noGrants{}, Audit: audit})
	workspace := filepath.Join(tmp, "workspace")
	os.Mkdir(workspace, 0o700)
	for _, args := range []string{`{"env":"staging"}`, `{"env":"prod"}`} {
		o, err := pl.Call(ctx, runtime.Request{
			Pack: p, Ref: capability.PackRef{Name: p.Name}, Tool: "echo",
			Arguments: json.RawMessage(args), Workspace: workspace,
			Approvers: []capability.Approver{reviewer{}},
		})
		if err != nil {
			fmt.Println("not audited:", err)
			return
		}
		fmt.Println("status:", o.Status)
	}
	for _, r := range audit.Calls() {
		fmt.Println("audit:", r.Tool, r.Status, r.Approver, r.Verdict)
	}
	// Output:
	// asked: echo__echo {"env":"staging"}
	// status: ok
	// asked: echo__echo {"env":"prod"}
	// status: denied
	// audit: echo ok reviewer run_once
	// audit: echo denied reviewer deny
}
