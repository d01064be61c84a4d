package runtime

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
)

// The peers of the benchmarks: the same module run without packs, the way
// the systems packs is compared with run it. A benchmark's sub-benchmark
// "packs" is measured against its siblings named "peer=NAME" in the same
// run (internal/tools/benchtable prints the ratio).
//
//   - peer=extism-reused: plain extism/go-sdk, one instance kept for every
//     call (what a long-lived plugin host does: fast, nothing isolated).
//   - peer=extism-fresh: plain extism/go-sdk, a new instance per call.
//   - peer=wazero-fresh: raw wazero, a new instance of a WASI command per
//     call (a command's _start runs once, so it cannot be reused).
//
// Each peer compiles the unprepared module bytes, through the same on-disk
// compilation cache the harness uses.

// peer runs one guest's trivial tool. A peer is used by one goroutine.
type peer interface {
	call(ctx context.Context, input []byte) error
	close(ctx context.Context)
}

// peerKinds names the peers that can run a guest of abi ("" for Extism,
// "wasi" for a WASI command).
func peerKinds(wasi bool) []string {
	if wasi {
		return []string{"wazero-fresh"}
	}
	return []string{"extism-reused", "extism-fresh"}
}

// peerFactory compiles src once and returns a constructor of peers of kind.
func peerFactory(tb testing.TB, kind, src, fn string) func() peer {
	tb.Helper()
	return peerFactoryIn(tb, sharedCache, kind, src, fn)
}

// peerFactoryIn is peerFactory with the compilation cache in cacheDir.
func peerFactoryIn(tb testing.TB, cacheDir, kind, src, fn string) func() peer {
	tb.Helper()
	ctx := context.Background()
	wasm, err := os.ReadFile(src)
	if err != nil {
		tb.Fatal(err)
	}
	cache, err := wazero.NewCompilationCacheWithDir(cacheDir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cache.Close(ctx) })
	rc := wazero.NewRuntimeConfig().WithCompilationCache(cache).WithCloseOnContextDone(true)
	switch kind {
	case "wazero-fresh":
		rt := wazero.NewRuntimeWithConfig(ctx, rc)
		tb.Cleanup(func() { rt.Close(ctx) })
		if err := instantiateWASI(ctx, rt); err != nil {
			tb.Fatal(err)
		}
		compiled, err := rt.CompileModule(ctx, wasm)
		if err != nil {
			tb.Fatal(err)
		}
		return func() peer { return &wazeroPeer{rt: rt, compiled: compiled} }
	case "extism-reused", "extism-fresh":
		manifest := extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm, Name: "main"}}}
		cp, err := extism.NewCompiledPlugin(ctx, manifest, extism.PluginConfig{RuntimeConfig: rc, EnableWasi: true}, nil)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { cp.Close(ctx) })
		return func() peer { return &extismPeer{cp: cp, fn: fn, reuse: kind == "extism-reused"} }
	}
	tb.Fatalf("no peer %q", kind)
	return nil
}

// extismPeer calls fn on one kept instance (reuse) or on a new instance
// per call.
type extismPeer struct {
	cp    *extism.CompiledPlugin
	fn    string
	reuse bool
	kept  *extism.Plugin
}

func (p *extismPeer) call(ctx context.Context, input []byte) error {
	in := p.kept
	if in == nil {
		var err error
		if in, err = p.cp.Instance(ctx, extism.PluginInstanceConfig{ModuleConfig: wazero.NewModuleConfig().WithSysWalltime().WithSysNanotime()}); err != nil {
			return err
		}
		if p.reuse {
			p.kept = in
		} else {
			defer in.Close(ctx)
		}
	}
	rc, out, err := in.CallWithContext(ctx, p.fn, input)
	if err == nil && (rc != 0 || len(out) == 0) {
		err = fmt.Errorf("%s returned %d with %d bytes", p.fn, rc, len(out))
	}
	return err
}

func (p *extismPeer) close(ctx context.Context) {
	if p.kept != nil {
		p.kept.Close(ctx)
	}
}

// wazeroPeer instantiates a WASI command per call, input on stdin.
type wazeroPeer struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
}

func (p *wazeroPeer) call(ctx context.Context, input []byte) error {
	var out bytes.Buffer
	cfg := wazero.NewModuleConfig().WithName("").WithArgs("echo").WithStdin(bytes.NewReader(input)).WithStdout(&out).
		WithSysWalltime().WithSysNanotime()
	m, err := p.rt.InstantiateModule(ctx, p.compiled, cfg)
	if err != nil {
		return err
	}
	m.Close(ctx)
	if out.Len() == 0 {
		return fmt.Errorf("no output")
	}
	return nil
}

func (p *wazeroPeer) close(context.Context) {}
