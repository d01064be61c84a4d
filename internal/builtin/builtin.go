// Package builtin holds packs' built-in packs: spec 003's capabilities
// (current-time, web-fetch, session-file-system, stateless-todo-list,
// test-math, test-weather, noop) as real packs, embedded in the binary and
// installed into a home like any other pack (Ensure), through the same
// stage, validate and commit path as packs add. Once installed they are
// ordinary packs: the same grants, gate, audit and integrity check at every
// call. Nothing here runs a tool.
//
// Each pack folder is packs/<name> (SKILL.md, skill.toml, tools.json and,
// for some, prompt.md: the system-prompt addition a chat shows while the
// pack is attached). The WebAssembly comes from guest/ (its own Go module),
// built by go generate (build.sh) into wasm/ and committed, gzipped, since
// embedding needs it at compile time: builtins.wasm serves every pack that
// needs no network, web-fetch.wasm the web-fetch pack (it imports
// http_request, so only a pack that asks for network may load it). A pack's
// tools.json names its module as bin/<module>.wasm; Write puts it there,
// decompressed. The install checks the pack it wrote against digests.go, and
// every call against packs.lock, so the compression is out of integrity's way.
package builtin

//go:generate sh build.sh
//go:generate go run ./gen

import (
	"compress/gzip"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

//go:embed packs wasm/builtins.wasm.gz wasm/web-fetch.wasm.gz wasm/GOVERSION
var content embed.FS

// SourcePrefix starts the packs.lock source of a built-in pack:
// "builtin:current-time".
const SourcePrefix = "builtin:"

// Source is the packs.lock source of the built-in pack name.
func Source(name string) string { return SourcePrefix + name }

// IsSource reports whether a packs.lock source names a built-in pack.
func IsSource(src string) bool { return strings.HasPrefix(src, SourcePrefix) }

// PromptFile is the file of a pack folder that holds its system-prompt
// addition.
const PromptFile = "prompt.md"

// modules maps each pack with tools to the module in wasm/ it runs.
var modules = map[string]string{
	"current-time":        "builtins.wasm",
	"session-file-system": "builtins.wasm",
	"stateless-todo-list": "builtins.wasm",
	"test-math":           "builtins.wasm",
	"test-weather":        "builtins.wasm",
	"web-fetch":           "web-fetch.wasm",
}

// ErrUnknown: no built-in pack has that name.
var ErrUnknown = errors.New("builtin: no built-in pack of that name")

// Names lists the built-in packs, sorted.
func Names() []string {
	des, _ := fs.ReadDir(content, "packs")
	out := make([]string, 0, len(des))
	for _, de := range des {
		out = append(out, de.Name())
	}
	slices.Sort(out)
	return out
}

// Is reports whether name is a built-in pack.
func Is(name string) bool {
	_, err := fs.Stat(content, path.Join("packs", name, "SKILL.md"))
	return err == nil && name != "" && !strings.ContainsAny(name, "/.")
}

// Write writes the built-in pack name as a pack folder dir/name and returns
// that folder: the files of packs/<name>, and its module at bin/.
func Write(name, dir string) (string, error) { return write(embedded{}, name, dir) }

// embedded is the embedded files, with each module decompressed once per
// process: five packs share builtins.wasm, and decompressing it takes about
// 35 ms (BenchmarkModule).
type embedded struct{}

func (embedded) Open(name string) (fs.File, error) { return content.Open(name) }

var unpacked = map[string]func() ([]byte, error){
	"builtins.wasm":  sync.OnceValues(func() ([]byte, error) { return readModule(content, "builtins.wasm") }),
	"web-fetch.wasm": sync.OnceValues(func() ([]byte, error) { return readModule(content, "web-fetch.wasm") }),
}

// write is Write over fsys, which holds packs/ and wasm/ (the embedded
// files, or the source tree for the generator).
func write(fsys fs.FS, name, dir string) (string, error) {
	if !Is(name) {
		return "", fmt.Errorf("%w: %q", ErrUnknown, name)
	}
	out := filepath.Join(dir, name)
	src := path.Join("packs", name)
	err := fs.WalkDir(fsys, src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := strings.CutPrefix(p, src)
		target := filepath.Join(out, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err == nil {
		if m, ok := modules[name]; ok {
			err = copyModule(fsys, m, filepath.Join(out, "bin"))
		}
	}
	if err != nil {
		return "", fmt.Errorf("builtin: writing %s: %w", name, err)
	}
	return out, nil
}

// maxModule bounds a decompressed module.
const maxModule = 64 << 20

func copyModule(fsys fs.FS, module, binDir string) error {
	read := func() ([]byte, error) { return readModule(fsys, module) }
	if _, ok := fsys.(embedded); ok && unpacked[module] != nil {
		read = unpacked[module]
	}
	b, err := read()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(binDir, module), b, 0o644)
}

// readModule returns the module wasm/<module>, stored gzipped as
// wasm/<module>.gz.
func readModule(fsys fs.FS, module string) ([]byte, error) {
	f, err := fsys.Open(path.Join("wasm", module+".gz"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return gunzip(f, module)
}

// gunzip decompresses the gzipped module read from r.
func gunzip(r io.Reader, module string) ([]byte, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", module, err)
	}
	b, err := io.ReadAll(io.LimitReader(zr, maxModule+1))
	if err == nil && len(b) > maxModule {
		err = fmt.Errorf("larger than %d bytes", maxModule)
	}
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", module, err)
	}
	return b, nil
}

// Prompt returns the system-prompt addition of the built-in pack name, ""
// when it has none.
func Prompt(name string) string {
	if !Is(name) {
		return ""
	}
	b, err := fs.ReadFile(content, path.Join("packs", name, PromptFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Digest returns the packs.lock integrity that the built-in pack name has
// once written (go generate computes it; a test checks it), and whether
// name is a built-in.
func Digest(name string) (string, bool) {
	d, ok := digests[name]
	return d, ok
}

// GoVersion is the Go toolchain that built the committed modules.
func GoVersion() string {
	b, _ := fs.ReadFile(content, "wasm/GOVERSION")
	return strings.TrimSpace(string(b))
}
