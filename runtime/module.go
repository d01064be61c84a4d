package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
	"github.com/packs-run/packs/packs"
)

// fileStamp is what a module file held when it was hashed (packs.Stamp)
// and its sha256: it spares a warm call from re-reading and re-hashing
// megabytes.
type fileStamp struct {
	stamp packs.Stamp
	sha   string
}

// moduleKey names one prepared module: its bytes' hash and the ABI it is
// prepared for.
type moduleKey struct {
	sha string
	abi packs.ABI
}

// module is a wasm file prepared to run: for Extism, its Extism imports
// moved to our namespaces (hostfns.RewriteImports) and its reactor
// initializer renamed (see initExport); then inspected and, for WASI,
// compiled into the shared runtime.
type module struct {
	key    moduleKey
	name   string // path relative to the pack, for messages
	wasm   []byte // prepared bytes, until compiled (Extism: by Runtime.plugin)
	info   moduleInfo
	groups []capability.Name // host-function groups it imports (hostfns.ImportedGroups)
	// image is what its data segments write, when prepare took them out
	// (stripData); stripped says it did. An instance of a stripped module
	// starts from its image or not at all (imageFor).
	image    *dataImage
	stripped bool

	compiled wazero.CompiledModule // WASI only
}

type moduleEntry struct {
	mu sync.Mutex // held while the module is prepared
	m  *module
}

// module returns t's module, prepared and cached by content hash, after
// checking that it exports what t calls. Every error wraps ErrModule.
//
// content, when set, is what the pack held when it was checked against
// packs.lock: the module's bytes, as read to compile them, must be the
// bytes it names, or the call is refused with packs.ErrModified.
func (r *Runtime) module(ctx context.Context, p *packs.Pack, t *packs.Tool, content *packs.Content) (*module, error) {
	m, err := r.load(ctx, p, t)
	if err == nil {
		err = checkExport(m, t)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %s: %w", ErrModule, p.Name, t.Run.Wasm, err)
	}
	if content != nil {
		if err := r.sameAsLocked(p, t, m, *content); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// sameAsLocked checks that m was compiled from the bytes content names for
// t's module file.
func (r *Runtime) sameAsLocked(p *packs.Pack, t *packs.Tool, m *module, content packs.Content) error {
	path, err := r.modulePath(p, t)
	if err != nil {
		return err
	}
	dir, err := filepath.EvalSymlinks(p.Dir)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", packs.ErrModified, p.Name, err)
	}
	if want, ok := content.FileSHA(dir, path); !ok || want != m.key.sha {
		return fmt.Errorf("%w: %s: %s changed after its files were checked against packs.lock", packs.ErrModified, p.Name, t.Run.Wasm)
	}
	return nil
}

// load returns t's module, prepared and cached by content hash.
func (r *Runtime) load(ctx context.Context, p *packs.Pack, t *packs.Tool) (*module, error) {
	path, err := r.modulePath(p, t)
	if err != nil {
		return nil, err
	}
	raw, sha, err := r.readModule(p, path)
	if err != nil {
		return nil, err
	}
	key := moduleKey{sha: sha, abi: t.Run.ABI}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	e, ok := r.modules[key]
	if !ok {
		e = &moduleEntry{}
		r.modules[key] = e
	}
	r.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		if raw == nil {
			// The stamp matched but the module was never prepared under this
			// ABI (or its preparation failed): read it now.
			if raw, err = readVerified(path, sha); err != nil {
				return nil, err
			}
		}
		m, err := r.prepare(ctx, key, t.Run.Wasm, raw)
		if err != nil {
			return nil, err
		}
		e.m = m
	}
	return e.m, nil
}

// modulePath confines t's module path to the pack (packs.SafeJoin, which
// resolves symbolic links) once per pack folder and path; later calls reuse
// the resolved path. Confining it again on every call would buy nothing: a
// process that can put a link into the pack can as well replace the module,
// and what the module holds is identified anew on every call (readModule).
func (r *Runtime) modulePath(p *packs.Pack, t *packs.Tool) (string, error) {
	k := [2]string{p.Dir, t.Run.Wasm}
	r.mu.Lock()
	path, ok := r.paths[k]
	r.mu.Unlock()
	if ok {
		return path, nil
	}
	path, err := packs.SafeJoin(p.Dir, t.Run.Wasm)
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	r.paths[k] = path
	r.mu.Unlock()
	return path, nil
}

// readModule returns the sha256 of p's module file at path, and its bytes
// when it had to read them (nil when the file is unchanged since it was last
// hashed). The bytes of a module that the integrity check of this call just
// hashed (packs.ContentCache.KeepModules) are not read again.
func (r *Runtime) readModule(p *packs.Pack, path string) ([]byte, string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, "", err
	}
	stamp := packs.StampOf(fi)
	r.mu.Lock()
	old, ok := r.files[path]
	r.mu.Unlock()
	if ok && old.stamp.Same(stamp) {
		return nil, old.sha, nil
	}
	raw, sha, kept := r.keptModule(p, path, fi)
	if !kept {
		if raw, err = os.ReadFile(path); err != nil {
			return nil, "", err
		}
		sum := sha256.Sum256(raw)
		sha = hex.EncodeToString(sum[:])
	}
	if int64(len(raw)) != fi.Size() {
		// It changed while we read it: hash what we read, remember nothing.
		return raw, sha, nil
	}
	r.mu.Lock()
	r.files[path] = fileStamp{stamp: stamp, sha: sha}
	r.mu.Unlock()
	return raw, sha, nil
}

// keptModule returns the bytes and sha256 of the module at path as p's
// integrity check hashed them, when it kept them and the file (fi) has not
// changed since.
func (r *Runtime) keptModule(p *packs.Pack, path string, fi os.FileInfo) ([]byte, string, bool) {
	dir, err := filepath.EvalSymlinks(p.Dir)
	if err != nil {
		return nil, "", false
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return nil, "", false
	}
	raw, sha, st, ok := r.content.TakeModule(p.Dir, filepath.ToSlash(rel))
	if !ok || st != packs.StampOf(fi) || int64(len(raw)) != fi.Size() {
		return nil, "", false
	}
	return raw, sha, true
}

// readVerified reads path and checks that it still hashes to sha.
func readVerified(path, sha string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw)
	if hex.EncodeToString(sum[:]) != sha {
		return nil, errors.New("the file changed while it was being loaded: try again")
	}
	return raw, nil
}

// prepare rewrites, inspects and (for WASI) compiles raw. The first thing
// that reads raw is wasmbin.Parse (through RewriteImports or inspect): the
// guard against counts that would make wazero over-allocate sees every
// module before wazero does, whatever its ABI.
//
// The prepared bytes are kept on disk (prepared.go): a later process reads
// them instead of preparing the module again; wasmbin.Parse (inspect) still
// reads them before wazero does.
func (r *Runtime) prepare(ctx context.Context, key moduleKey, name string, raw []byte) (*module, error) {
	wasm, kept := r.readPrepared(key)
	if !kept {
		var err error
		if wasm, err = prepareBytes(key.abi, raw); err != nil {
			return nil, err
		}
		r.writePrepared(key, wasm)
	}
	wasm = stripData(wasm, key.sha)
	info, err := inspect(wasm)
	if err != nil {
		return nil, err
	}
	if err := r.checkImports(info, key.abi); err != nil {
		return nil, err
	}
	groups, err := hostfns.ImportedGroups(wasm)
	if err != nil {
		return nil, err
	}
	m := &module{key: key, name: name, wasm: wasm, info: info, groups: groups, image: imageOf(wasm), stripped: hasNoData(wasm)}
	if key.abi == packs.ABIWASI {
		if m.compiled, err = r.wasi.CompileModule(ctx, wasm); err != nil {
			return nil, fmt.Errorf("compile: %w", err)
		}
		m.wasm = nil // compiled; the bytes are no longer needed
	}
	return m, nil
}

// prepareBytes rewrites raw for abi: Extism imports moved and the reactor
// initializer renamed, then the resource limits added.
func prepareBytes(abi packs.ABI, raw []byte) ([]byte, error) {
	wasm := raw
	var err error
	if abi == packs.ABIExtism {
		if wasm, err = hostfns.RewriteImports(wasm); err != nil {
			return nil, err
		}
		if wasm, err = renameExport(wasm, reactorInit, initExport); err != nil {
			return nil, err
		}
	}
	return limitResources(wasm)
}

// checkExport checks that the module has what t calls.
func checkExport(m *module, t *packs.Tool) error {
	want := t.Run.Function
	if t.Run.ABI == packs.ABIWASI {
		want = "_start"
	}
	if m.info.exportsFunc(want) {
		return nil
	}
	if t.Run.ABI == packs.ABIWASI {
		return errors.New("a WASI command exports _start, and this module does not (is it a reactor or an Extism plugin?)")
	}
	exports := slices.DeleteFunc(slices.Clone(m.info.exports), func(s string) bool { return strings.HasPrefix(s, "_") })
	return fmt.Errorf("tool %s calls the export %q, but the module exports only %q: fix run.function in tools.json", t.Name, want, exports)
}

// instantiateWASI adds WASI preview 1 to rt.
func instantiateWASI(ctx context.Context, rt wazero.Runtime) error {
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return fmt.Errorf("runtime: wasi: %w", err)
	}
	return nil
}

type pluginEntry struct {
	mu     sync.Mutex
	plugin *extism.CompiledPlugin
}

// plugin returns m's compiled Extism plugin, compiling it (from the cache)
// on first use. It holds the host functions of exactly the groups m imports
// (m.groups): a call reaches it only after hostfns.Require has checked that
// its grant holds every one of them, so one compiled plugin per module
// serves every grant.
func (r *Runtime) plugin(ctx context.Context, m *module) (*extism.CompiledPlugin, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	e, ok := r.plugins[m.key]
	if !ok {
		e = &pluginEntry{}
		r.plugins[m.key] = e
	}
	r.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.plugin == nil {
		cp, err := r.newCompiledPlugin(ctx, m)
		if err != nil {
			return nil, err
		}
		e.plugin = cp
		// Compiled: wazero holds what it needs of the module, and the
		// prepared bytes (megabytes for a Go guest) are no longer needed.
		// Only this entry, under e.mu, compiles from them.
		m.wasm = nil
	}
	return e.plugin, nil
}

// newCompiledPlugin compiles m with go-sdk. go-sdk gives each compiled
// plugin its own wazero runtime; ours all share the compilation cache, so
// compiled code is shared too.
func (r *Runtime) newCompiledPlugin(ctx context.Context, m *module) (*extism.CompiledPlugin, error) {
	// No Hash for go-sdk to check: the bytes were hashed as read (m.key),
	// and prepared in memory since.
	manifest := extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: m.wasm, Name: "main"}}}
	cp, err := extism.NewCompiledPlugin(ctx, manifest, extism.PluginConfig{
		RuntimeConfig: r.rtConfig,
		EnableWasi:    true,
	}, hostfns.ExtismFunctions(m.groups))
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	return cp, nil
}
