package runtime

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
)

// maxStderr caps the logs kept from one call.
const maxStderr = 64 << 10

// spec is everything an instance is built from, fixed for one pool key: the
// module, the filesystem view, the visible environment, the host-function
// groups and the memory budget. What varies per call (the tool, the
// invocation, its grant's decisions, the recorder, the time and output
// limits) is set when the instance is taken.
type spec struct {
	rt        wazero.Runtime // WASI only: the shared runtime
	mod       *module
	plugin    *extism.CompiledPlugin // Extism only
	pack      string
	tool      string // WASI only: argv[0]
	packRoot  string
	workspace string
	grant     capability.Grant // the grant the pool was made for; each call brings its own
	environ   []string
	pages     uint32
	log       *slog.Logger
	poolable  bool // an instance built ahead, with no capability, can serve its calls
}

// instance is one fresh guest, used for one call and closed.
type instance struct {
	call   *hostfns.Call
	early  *capability.MemoryRecorder // exercises tried before the call was claimed; nil when built for it
	budget *memBudget
	stdin  *bytes.Reader // WASI: the arguments
	stdout *limitWriter  // WASI: the result
	stderr *limitWriter  // logs
	mod    api.Module    // WASI
	plugin *extism.Plugin
	cost   int64 // what it holds while ready in a pool (see pool)
}

// ahead returns the Call of an instance built ahead of its call, by a pool:
// it holds no approval, so every exercise its initializer tries is denied
// and recorded into early.
func (s *spec) ahead(early *capability.MemoryRecorder) *hostfns.Call {
	return &hostfns.Call{
		Pack: s.pack, Tool: s.tool, Grant: s.grant, Recorder: early,
		PackRoot: s.packRoot, Workspace: s.workspace, Logger: s.log,
	}
}

// newInstance builds and initializes one instance of s for call. It runs
// guest code (a start section, a reactor's initializer) under call: a pool
// passes an unapproved Call (s.ahead), a call built on the spot its own,
// approved one.
func newInstance(ctx context.Context, s *spec, call *hostfns.Call, early *capability.MemoryRecorder) (*instance, error) {
	img, err := imageFor(s.mod)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrModule, s.mod.name, err)
	}
	// The module's memory is the first an instance of a WASI command
	// creates; go-sdk creates its kernel's before an Extism plugin's.
	imageAt := 0
	if s.plugin != nil {
		imageAt = 1
	}
	in := &instance{
		early:  early,
		budget: newMemBudget(s.pages, img, imageAt),
		stdin:  bytes.NewReader(nil),
		stderr: &limitWriter{limit: maxStderr},
		call:   call,
	}
	if s.mod.info.minPages > s.pages {
		return nil, fmt.Errorf("%w: %s declares %d pages of memory up front, the limit is %d: raise [limits] memory_mb", ErrMemoryLimit, s.mod.name, s.mod.info.minPages, s.pages)
	}
	fsc, err := hostfns.FS(in.call)
	if err != nil {
		return nil, err
	}
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions().
		WithFSConfig(fsc).
		WithStdin(in.stdin).
		WithStderr(in.stderr).
		WithSysWalltime().WithSysNanotime().
		WithRandSource(rand.Reader)
	env := hostfns.Environ(in.call, s.environ)
	// The workspace is the working directory. WASI has none; Go's wasip1
	// runtime takes it from PWD (else from the first preopen).
	env["PWD"] = hostfns.GuestWorkspace
	for _, k := range slices.Sorted(maps.Keys(env)) {
		cfg = cfg.WithEnv(k, env[k])
	}
	ctx = experimental.WithMemoryAllocator(hostfns.WithCall(ctx, in.call), in.budget)
	if s.plugin == nil {
		in.stdout = &limitWriter{}
		cfg = cfg.WithStdout(in.stdout).WithArgs(s.tool)
		if in.mod, err = s.rt.InstantiateModule(ctx, s.mod.compiled, cfg); err != nil {
			return nil, fmt.Errorf("%w: %s: instantiate: %w", ErrModule, s.mod.name, err)
		}
		if err := in.budget.checkImage(); err != nil {
			in.close(ctx)
			return nil, fmt.Errorf("%w: %s: %w", ErrModule, s.mod.name, err)
		}
		return in, nil
	}
	// An Extism plugin's stdout is not its result: keep it with the logs.
	cfg = cfg.WithStdout(in.stderr).WithArgs(s.pack)
	if in.plugin, err = s.plugin.Instance(ctx, extism.PluginInstanceConfig{ModuleConfig: cfg}); err != nil {
		return nil, fmt.Errorf("%w: %s: instantiate: %w", ErrModule, s.mod.name, err)
	}
	if err := in.budget.checkImage(); err != nil {
		in.close(ctx)
		return nil, fmt.Errorf("%w: %s: %w", ErrModule, s.mod.name, err)
	}
	in.plugin.Config = env
	if s.mod.info.exportsFunc(initExport) {
		initCtx, cancel := context.WithTimeoutCause(ctx, s.grant.Limits().Timeout, ErrTimeout)
		defer cancel()
		if _, _, err := in.plugin.CallWithContext(initCtx, initExport, nil); err != nil {
			in.close(ctx)
			why := ErrTrap
			switch {
			case stackLimitHit(err):
				why = ErrStackLimit
			case in.budget.exceeded():
				why = ErrMemoryLimit
			case errors.Is(context.Cause(initCtx), ErrTimeout):
				why = ErrTimeout
			}
			first, _, _ := strings.Cut(err.Error(), "\n")
			return nil, &stopError{msg: "runtime: " + s.mod.name + ": the module's initializer failed: " + first, errs: []error{why, err}}
		}
	}
	return in, nil
}

// tried reports whether guest code of an instance built ahead of its call
// tried to exercise a capability (every such try was denied).
func (in *instance) tried() bool {
	return in.early != nil && len(in.early.Exercises()) > 0
}

// claim hands an instance built ahead of its call to one invocation: from
// here on every exercise is recorded under its id, through its recorder,
// and decided by its grant and approval.
func (in *instance) claim(inv Invocation, log *slog.Logger) {
	c := in.call
	c.Tool, c.Invocation, c.Grant, c.Approval, c.Recorder, c.Logger = inv.Tool.Name, inv.ID, inv.Grant, inv.Approval, inv.Recorder, log
}

// callFor is the Call of inv, approved, for an instance built for it.
func callFor(s *spec, inv Invocation, log *slog.Logger) *hostfns.Call {
	return &hostfns.Call{
		Pack: inv.Pack.Name, Tool: inv.Tool.Name, Invocation: inv.ID, Grant: inv.Grant, Approval: inv.Approval,
		Recorder: inv.Recorder, PackRoot: s.packRoot, Workspace: s.workspace, Logger: log,
	}
}

// close releases the instance. Errors are of no interest: the instance is
// discarded either way.
func (in *instance) close(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	if in.plugin != nil {
		in.plugin.Close(ctx)
	}
	if in.mod != nil {
		in.mod.Close(ctx)
	}
}

// limitWriter keeps at most limit bytes. Past the limit it either stops the
// call (stop set: a result that is too large is an error) or drops the rest
// (stop nil: logs are cut, and Truncated says so).
type limitWriter struct {
	buf   bytes.Buffer
	limit int64
	stop  func()
	over  bool
}

var errOutputFull = errors.New("runtime: output limit reached")

// Write implements io.Writer.
func (w *limitWriter) Write(p []byte) (int, error) {
	room := w.limit - int64(w.buf.Len())
	if int64(len(p)) <= room {
		return w.buf.Write(p)
	}
	w.over = true
	if room > 0 {
		w.buf.Write(p[:room])
	}
	if w.stop != nil {
		w.stop()
		return 0, errOutputFull
	}
	return len(p), nil
}

var _ io.Writer = (*limitWriter)(nil)
