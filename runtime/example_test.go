package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// person approves every call put to it, as a person clicking Run would.
type person struct{}

func (person) Name() string { return "person" }
func (person) Approve(context.Context, capability.Pending) (capability.Verdict, error) {
	return capability.RunOnce, nil
}

// writeEchoPack writes, in dir, a pack: SKILL.md, tools.json, and a WASI
// command that echoes its input. It returns the pack's folder.
func writeEchoPack(dir string) string {
	src := filepath.Join(dir, "echo")
	os.MkdirAll(filepath.Join(src, "bin"), 0o755)
	os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: echo\ndescription: Echoes its input back. Use it to try packs.\n---\n# echo\n"), 0o644)
	os.WriteFile(filepath.Join(src, "tools.json"), []byte(`[{"name": "echo", "description": "Returns its input.",
		"input_schema": {"type": "object"}, "run": {"wasm": "bin/echo.wasm", "abi": "wasi"}}]`), 0o644)
	wasm, _ := os.ReadFile("testdata/wasi_echo.wasm")
	os.WriteFile(filepath.Join(src, "bin", "echo.wasm"), wasm, 0o644)
	return src
}

// noGrants is a person who granted nothing beyond a pack's defaults.
type noGrants struct{}

func (noGrants) PeekGrants(context.Context, capability.PackRef, string) ([]capability.UserGrant, error) {
	return nil, nil
}
func (noGrants) TakeGrants(context.Context, capability.PackRef, string) ([]capability.UserGrant, error) {
	return nil, nil
}

// Example embeds packs: load a pack folder and pin its digest, then run
// one of its tools through the pipeline, which asks the approver, checks
// the pack's files against the pinned digest, runs the WebAssembly tool in
// a fresh instance and writes the audit record.
func Example() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "packs-example-")
	defer os.RemoveAll(tmp)

	dir := writeEchoPack(tmp)

	// Load it (every finding is an error here) and pin what it holds.
	p, err := packs.Load(dir, packs.LoadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	digest, err := packs.Digest(dir)
	if err != nil {
		fmt.Println(err)
		return
	}

	// Run one call. The approval the gate gives binds this exact call.
	rt, err := runtime.New(ctx, runtime.Config{CacheDir: filepath.Join(tmp, "cache")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close(ctx)
	audit := &capability.MemoryRecorder{}
	pl, err := runtime.NewPipeline(rt, runtime.PipelineConfig{Grants: noGrants{}, Audit: audit})
	if err != nil {
		fmt.Println(err)
		return
	}
	workspace := filepath.Join(tmp, "workspace")
	os.Mkdir(workspace, 0o700)
	o, err := pl.Call(ctx, runtime.Request{
		Pack: p, Ref: capability.PackRef{Name: p.Name, Digest: digest}, Tool: "echo",
		Arguments: json.RawMessage(`{"greeting": "hello"}`), Workspace: workspace,
		Approvers: []capability.Approver{person{}},
	})
	if err != nil {
		fmt.Println("not audited:", err)
		return
	}
	fmt.Println("result:", string(o.Output), "error:", o.Err)

	// The audit record of the call.
	for _, r := range audit.Calls() {
		fmt.Println("audit:", r.Pack, r.Tool, r.Status, "approved by", r.Approver, r.Verdict)
	}
	// Output:
	// result: {"greeting": "hello"} error: <nil>
	// audit: echo echo ok approved by person run_once
}

// ExamplePipeline_Call_modified shows that a pack whose files changed
// after its digest was pinned does not run: the pipeline checks them at
// every call.
func ExamplePipeline_Call_modified() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "packs-example-")
	defer os.RemoveAll(tmp)
	dir := writeEchoPack(tmp)
	p, _ := packs.Load(dir, packs.LoadOptions{})
	digest, _ := packs.Digest(dir)

	// Someone swaps the module after the digest was pinned.
	tampered, _ := os.ReadFile("testdata/wasi_files.wasm")
	os.WriteFile(filepath.Join(dir, "bin", "echo.wasm"), tampered, 0o644)

	rt, _ := runtime.New(ctx, runtime.Config{})
	defer rt.Close(ctx)
	pl, _ := runtime.NewPipeline(rt, runtime.PipelineConfig{Grants: noGrants{}, Audit: &capability.MemoryRecorder{}})
	workspace := filepath.Join(tmp, "workspace")
	os.Mkdir(workspace, 0o700)
	o, _ := pl.Call(ctx, runtime.Request{
		Pack: p, Ref: capability.PackRef{Name: p.Name, Digest: digest}, Tool: "echo",
		Workspace: workspace, Approvers: []capability.Approver{person{}},
	})
	fmt.Println(o.Status, errors.Is(o.Err, packs.ErrModified))
	// Output:
	// denied true
}
