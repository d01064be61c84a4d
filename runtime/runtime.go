// Package runtime runs a pack's tools: WebAssembly modules in wazero, through
// either of two ABIs, and native commands as the fallback.
//
//   - Extism plugins ({"wasm": ..., "function": ...}) run through
//     extism/go-sdk: the tool's JSON arguments are the plugin input, its output
//     is the JSON result, and an error it sets is the tool's error.
//   - WASI commands ({"wasm": ..., "abi": "wasi"}) get the JSON arguments on
//     stdin, write the JSON result to stdout and logs to stderr, and exit 0 for
//     success.
//   - exec tools ({"exec": [...]}) run a granted native command through
//     hostfns.Exec, with "{{param}}" placeholders filled from the input.
//
// A Runtime owns one on-disk compilation cache shared by everything it
// compiles, one wazero runtime for WASI commands, one compiled Extism plugin
// per module and set of host-function groups, and a pool of pre-initialized
// instances. Every invocation gets a fresh instance, used once and closed:
// nothing a guest does survives its call. Every invocation must carry the
// gate's capability.Approval; without it nothing runs.
package runtime

// The test guests in testdata/ are checked in as .wat and .wasm; this
// rebuilds the .wasm files (needs wat2wasm, from wabt).
//go:generate sh testdata/wat2wasm.sh

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tetratelabs/wazero"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
	"github.com/packs-run/packs/packs"
)

// DefaultPoolSize is the most ready instances a Runtime keeps per pool key
// when Config.PoolSize is zero.
const DefaultPoolSize = 2

// DefaultPoolMemory is how much memory of their own the ready instances of
// all pools may hold together when Config.PoolMemory is zero.
const DefaultPoolMemory = 256 << 20

// Config configures a Runtime. The zero Config is valid: no disk cache, a
// logger that discards, DefaultPoolSize.
type Config struct {
	// CacheDir holds compiled modules across processes (the state
	// directory's cache/). Empty keeps them in memory only.
	CacheDir string
	// Logger receives the runtime's and the guests' logs. Nil discards.
	Logger *slog.Logger
	// PoolSize is the most pre-initialized instances kept ready for each
	// module, grant and workspace: a pool keeps one, and one more each time
	// a call finds none ready, up to PoolSize. 0 means DefaultPoolSize, a
	// negative value disables the pool (every call instantiates on the
	// spot).
	PoolSize int
	// PoolMemory bounds, in bytes, the memory of their own that the ready
	// instances of all pools hold together (pages shared by the instances
	// of one module count once, with the module); the least recently used
	// pools are closed to make room. 0 means DefaultPoolMemory.
	PoolMemory int64
	// Recorder receives what guest code tried outside any call: the
	// initializer of an instance a pool built ahead of its call holds no
	// capability, and each exercise it tries is recorded here as a denial.
	// Nil keeps them in memory (a capability.MemoryRecorder).
	Recorder capability.Recorder
	// Content checks installed packs' files against packs.lock at every
	// call. A caller that checked the pack already (packs run, before it
	// loads it) passes its cache, so that files unchanged since are not
	// hashed again and a module it kept (packs.ContentCache.KeepModules) is
	// not read again. Nil: the Runtime's own.
	Content *packs.ContentCache
}

// Runtime runs tools. It is safe for concurrent use; Close releases it.
type Runtime struct {
	log      *slog.Logger
	recorder capability.Recorder // see Config.Recorder
	cache    wazero.CompilationCache
	rtConfig wazero.RuntimeConfig
	cacheDir string         // Config.CacheDir, absolute; "" for none
	wasi     wazero.Runtime // every WASI command, in one runtime
	poolSize int
	poolMem  int64                             // Config.PoolMemory
	provides map[packs.ABI]map[importName]bool // what each ABI's instances may import

	// ctx lives until Close: the pools' refill goroutines (counted in wg)
	// and the calls in flight (counted in calls) end with it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	calls  sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	paths   map[[2]string]string       // pack folder and module path → confined path
	files   map[string]fileStamp       // confined path → what it held when last hashed
	modules map[moduleKey]*moduleEntry // prepared, inspected, compiled modules
	plugins map[moduleKey]*pluginEntry // compiled Extism plugins
	pools   map[poolKey]*pool
	tick    uint64 // pool use counter, for LRU eviction
	pooled  int64  // memory held by the pools' ready instances (pool.bytes summed)

	content *packs.ContentCache // installed packs' files, checked at every call
}

// New returns a Runtime. It creates cfg.CacheDir (0700) when set.
func New(ctx context.Context, cfg Config) (*Runtime, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var (
		cache    wazero.CompilationCache
		cacheDir string
	)
	if cfg.CacheDir != "" {
		dir, err := filepath.Abs(cfg.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("runtime: cache directory %q: %w", cfg.CacheDir, err)
		}
		if cache, err = wazero.NewCompilationCacheWithDir(dir); err != nil {
			return nil, fmt.Errorf("runtime: cache directory %q: %w: check its permissions or pass another --home", cfg.CacheDir, err)
		}
		cacheDir = dir
	} else {
		cache = wazero.NewCompilationCache()
	}
	// Every runtime shares the cache (and so the compiled code) and must
	// therefore compile alike: CloseOnContextDone is part of the cache key.
	rc := wazero.NewRuntimeConfig().WithCompilationCache(cache).WithCloseOnContextDone(true)
	poolSize := cfg.PoolSize
	if poolSize == 0 {
		poolSize = DefaultPoolSize
	}
	poolMem := cfg.PoolMemory
	if poolMem <= 0 {
		poolMem = DefaultPoolMemory
	}
	rec := cfg.Recorder
	if rec == nil {
		rec = &capability.MemoryRecorder{}
	}
	r := &Runtime{
		recorder: rec,
		log:      log,
		cache:    cache,
		rtConfig: rc,
		cacheDir: cacheDir,
		poolSize: poolSize,
		poolMem:  poolMem,
		paths:    map[[2]string]string{},
		files:    map[string]fileStamp{},
		modules:  map[moduleKey]*moduleEntry{},
		plugins:  map[moduleKey]*pluginEntry{},
		pools:    map[poolKey]*pool{},
		content:  cfg.Content,
	}
	if r.content == nil {
		r.content = &packs.ContentCache{}
	}
	r.wasi = wazero.NewRuntimeWithConfig(ctx, rc)
	if err := instantiateWASI(ctx, r.wasi); err != nil {
		r.wasi.Close(ctx)
		cache.Close(ctx)
		return nil, err
	}
	r.provides = r.providedImports()
	r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	return r, nil
}

// Close stops the calls still running (they fail with ErrClosed) and waits
// for them, stops the pools' background work, and closes every ready
// instance, compiled module and plugin, and the cache. Close is idempotent;
// it must not be called from inside a call.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	pools := r.pools
	r.pools = map[poolKey]*pool{}
	r.mu.Unlock()

	// Guests are stopped before anything they use is closed: a linear
	// memory is unmapped when its module closes (see memBudget).
	r.cancel()
	r.calls.Wait()
	for _, p := range pools {
		p.close(ctx)
	}
	r.wg.Wait()

	var errs []error
	r.mu.Lock()
	for _, e := range r.plugins {
		if e.plugin != nil {
			errs = append(errs, e.plugin.Close(ctx))
		}
	}
	r.plugins = map[moduleKey]*pluginEntry{}
	r.modules = map[moduleKey]*moduleEntry{}
	r.mu.Unlock()
	errs = append(errs, r.wasi.Close(ctx), r.cache.Close(ctx))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("runtime: close: %w", err)
	}
	return nil
}

// Precompile compiles every wasm module of p into the compilation cache, so
// that a tool's first call, even in a new process, loads machine code instead
// of compiling (about 70 ms instead of 1.7 s for a 3.5 MB Go plugin). Each
// module is hashed (sha256) as read and compiled from exactly those bytes;
// compiled code is found by that hash, never by path. Call it at install. It
// also checks each tool's imports and export; every error wraps ErrModule.
// Check does the same work and reports findings instead.
func (r *Runtime) Precompile(ctx context.Context, p *packs.Pack) error {
	var errs []error
	for _, t := range p.Tools {
		if _, err := r.check(ctx, p, t); err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: %s: %w", ErrModule, p.Name, t.Run.Wasm, err))
		}
	}
	return errors.Join(errs...)
}

// Invocation is one approved tool call, as the pipeline hands it to the
// runtime.
type Invocation struct {
	Pack     *packs.Pack
	Tool     *packs.Tool
	Input    json.RawMessage     // the tool's validated arguments; empty means {}
	Grant    capability.Grant    // the pack's effective grant for this call
	Approval capability.Approval // the gate's decision; must cover exactly this call
	ID       string              // the invocation id the gate approved
	// Integrity is the pack's digest from packs.lock, which the approval
	// binds: the pack's files are checked against it before the call, and
	// the module bytes compiled must be the bytes it names. Empty for a pack
	// run from a folder.
	Integrity string
	// Workspace is the chat's workspace, an existing absolute directory:
	// /workspace in the guest, the working directory of a native command.
	Workspace string
	Recorder  capability.Recorder // receives every capability exercise
}

// Result is what a call produced. On a tool error (ErrToolFailed) and on a
// limit error the partial Result comes back too: the exit status, the
// stderr and the duration.
type Result struct {
	Output    json.RawMessage // the tool's JSON result
	Stderr    []byte          // the guest's logs (capped)
	ExitCode  int
	Duration  time.Duration // from taking the instance to the end of the call
	Truncated bool          // Stderr (or a native command's output) was cut at the limit
}

// invoke runs one tool call whose arguments the pipeline validated. It
// refuses (ErrNotApproved) unless inv.Approval covers exactly this call
// (invocation, pack, tool, arguments, grant, integrity), checks the pack's
// files against inv.Integrity (packs.ErrModified) and the input size
// (ErrInputLimit), then runs the tool in a fresh instance under the grant's
// limits: ErrTimeout, ErrMemoryLimit, ErrOutputLimit, ErrTrap, or a
// *ToolError (ErrToolFailed) when the tool itself fails. A missing grant
// wraps capability.ErrDenied.
func (r *Runtime) invoke(ctx context.Context, inv Invocation) (Result, error) {
	if err := covers(inv); err != nil {
		// Recorded so that a caller that skipped the gate shows in the
		// audit log; a failed record cannot make the call run.
		if inv.Recorder != nil && inv.Pack != nil && inv.Tool != nil {
			_ = inv.Recorder.RecordExercise(capability.Exercise{Pack: inv.Pack.Name, Tool: inv.Tool.Name, Invocation: inv.ID,
				Layer: capability.LayerGate, Reason: err.Error(), Time: time.Now().UTC()})
		}
		return Result{}, err
	}
	if err := checkInvocation(inv); err != nil {
		return Result{}, err
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return Result{}, ErrClosed
	}
	r.calls.Add(1)
	r.mu.Unlock()
	defer r.calls.Done()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(r.ctx, func() { cancel(ErrClosed) })()

	lim := inv.Grant.Limits()
	if int64(len(inv.Input)) > lim.InputBytes {
		return Result{}, fmt.Errorf("%w: %d bytes of arguments, the limit is %d", ErrInputLimit, len(inv.Input), lim.InputBytes)
	}
	var content *packs.Content
	if inv.Integrity != "" {
		end := stage(ctx, SpanIntegrity)
		c, err := r.content.Verify(inv.Pack.Name, inv.Pack.Dir, inv.Integrity)
		if end(err); err != nil {
			return Result{}, err
		}
		content = &c
	}
	input := []byte(inv.Input)
	if len(bytes.TrimSpace(input)) == 0 {
		input = []byte("{}")
	}
	log := r.log.With("pack", inv.Pack.Name, "tool", inv.Tool.Name, "invocation", inv.ID)
	var (
		res Result
		err error
	)
	end := stage(ctx, SpanInvoke)
	defer func() { end(err) }()
	switch inv.Tool.Run.ABI {
	case packs.ABIExec:
		res, err = r.runExec(ctx, inv, input, lim, log)
	case packs.ABIExtism, packs.ABIWASI:
		res, err = r.runWasm(ctx, inv, content, input, lim, log)
	default:
		err = fmt.Errorf("%w: tool %s has unknown ABI %q", ErrModule, inv.Tool.Name, inv.Tool.Run.ABI)
	}
	log.Debug("tool call", "duration", res.Duration, "exit", res.ExitCode, "err", err)
	return res, err
}

// covers checks that inv's approval is for exactly inv.
func covers(inv Invocation) error {
	c := capability.Call{Invocation: inv.ID, Args: capability.ArgsDigest(inv.Input), Grant: inv.Grant.Digest(), Integrity: inv.Integrity}
	if inv.Pack != nil {
		c.Pack = inv.Pack.Name
	}
	if inv.Tool != nil {
		c.Tool = inv.Tool.Name
	}
	if err := inv.Approval.Covers(c); err != nil {
		return &stopError{msg: ErrNotApproved.Error() + ": " + err.Error(), errs: []error{ErrNotApproved, err}}
	}
	return nil
}

// checkInvocation rejects an invocation that is not well formed.
func checkInvocation(inv Invocation) error {
	switch {
	case inv.Pack == nil || inv.Tool == nil:
		return errors.New("runtime: invocation without a pack or tool")
	case inv.Recorder == nil:
		return fmt.Errorf("runtime: invocation %s has no recorder: every capability exercise must be recorded", inv.ID)
	case inv.Grant.Pack() != inv.Pack.Name:
		return fmt.Errorf("runtime: the grant is for pack %q, not %q: %w", inv.Grant.Pack(), inv.Pack.Name, capability.ErrDenied)
	case !filepath.IsAbs(inv.Workspace):
		return fmt.Errorf("runtime: workspace %q must be an absolute directory", inv.Workspace)
	}
	if t, ok := inv.Pack.Tool(inv.Tool.Name); !ok || t != inv.Tool {
		return fmt.Errorf("runtime: tool %q is not one of pack %s's tools", inv.Tool.Name, inv.Pack.Name)
	}
	return nil
}

// jsonResult turns what a tool wrote into its JSON result. Empty output is
// null; output that is not one JSON value becomes a JSON string, so the
// model still sees it (a tool that prints plain text is common enough).
func jsonResult(out []byte) json.RawMessage {
	trimmed := bytes.TrimSpace(out)
	switch {
	case len(trimmed) == 0:
		return json.RawMessage("null")
	case json.Valid(trimmed):
		return json.RawMessage(bytes.Clone(trimmed))
	}
	s := string(out)
	if !utf8.ValidString(s) {
		s = string(bytes.ToValidUTF8(out, []byte("\uFFFD")))
	}
	b, _ := json.Marshal(s) // a valid UTF-8 string always marshals
	return b
}

// callContext bounds one call: it ends at the timeout (cause ErrTimeout) or
// when stop is called with a cause (ErrOutputLimit).
func callContext(ctx context.Context, lim capability.Limits, call *hostfns.Call) (context.Context, context.CancelCauseFunc, context.CancelFunc) {
	ctx, stop := context.WithCancelCause(hostfns.WithCall(ctx, call))
	ctx, cancel := context.WithTimeoutCause(ctx, lim.Timeout, ErrTimeout)
	return ctx, stop, cancel
}
