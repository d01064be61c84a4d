package dist

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/packs"
)

// wasmHeader is the smallest valid WebAssembly module.
const wasmHeader = "\x00asm\x01\x00\x00\x00"

// packFiles are the files of a small valid pack with a manifest that asks
// for network and env_read and one wasm tool. version shows up in
// skill.toml and in docs/notes.md, so two versions differ in content.
func packFiles(name, version string) []treeFile {
	return []treeFile{
		{path: "SKILL.md", body: "---\nname: " + name + "\ndescription: Test pack " + name + ".\n---\n# " + name + "\n\nUse the echo tool.\n"},
		{path: "skill.toml", body: `[skill]
id = "test.` + name + `"
name = "` + name + `"
version = "` + version + `"
description = "test pack"
api_version = "1.0"

[capabilities]
network = ["api.example.com"]
env_read = ["LANG", "LC_*"]
`},
		{path: "tools.json", body: `[{"name": "echo", "description": "Echo the text.",
  "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
  "run": {"wasm": "bin/echo.wasm", "function": "echo"}}]`},
		{path: "bin/echo.wasm", body: wasmHeader},
		{path: "docs/notes.md", body: "notes for version " + version + "\n"},
		{path: "scripts/run.sh", body: "#!/bin/sh\necho " + version + "\n", mode: 0o755},
	}
}

// writePack writes a pack folder parent/name and returns its path.
func writePack(t testing.TB, parent, name, version string) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	writeTree(t, dir, packFiles(name, version))
	return dir
}

func openTestHome(t testing.TB, dir string) *Home {
	t.Helper()
	h, err := OpenHome(context.Background(), dir, HomeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func install(t testing.TB, h *Home, src string, grant ...capability.Name) LockEntry {
	t.Helper()
	st, err := h.Stage(context.Background(), src, StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := st.Commit(context.Background(), grant)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// tmpLeft lists what is left in the home's tmp/.
func tmpLeft(t testing.TB, h *Home) []string {
	t.Helper()
	ents, err := os.ReadDir(h.tmp())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestInstallFolder(t *testing.T) {
	src := writePack(t, t.TempDir(), "weather", "1.0.0")
	// VCS metadata is not part of a pack.
	writeTree(t, src, []treeFile{{path: ".git/HEAD", body: "ref: refs/heads/main\n"}})
	h := openTestHome(t, filepath.Join(t.TempDir(), "home"))

	st, err := h.Stage(context.Background(), src, StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Pack.Request().Names(); !slices.Equal(got, []capability.Name{capability.Network, capability.EnvRead}) {
		t.Fatalf("staged request: got %v", got)
	}
	e, err := st.Commit(context.Background(), []capability.Name{capability.Network})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(h.PacksDir(), "weather")
	want, err := packs.Digest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if e.Name != "weather" || e.Version != "1.0.0" || e.Source != "file://"+filepath.ToSlash(src) || e.Integrity != want {
		t.Errorf("entry: got %+v", e)
	}
	if got := e.Granted(); !slices.Equal(got, []capability.Name{capability.Network}) {
		t.Errorf("granted: got %v, want [network]", got)
	}
	// The lock lists every requested capability with its granted resources.
	if got := e.Capabilities[capability.EnvRead]; got.Granted || len(got.Resources) != 0 {
		t.Errorf("env_read: got %+v, want requested, not granted, no resources", got)
	}
	if got := e.Capabilities[capability.Network]; !got.Granted || !slices.Equal(got.Resources, []string{"api.example.com"}) {
		t.Errorf("network: got %+v, want granted with everything requested", got)
	}
	if st.Pack.Dir != dir {
		t.Errorf("Pack.Dir: got %s, want %s", st.Pack.Dir, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf(".git was copied: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "scripts", "run.sh")); err != nil || fi.Mode()&0o100 == 0 {
		t.Errorf("scripts/run.sh lost its execute bit: %v %v", fi, err)
	}
	if got, err := h.Entry("weather"); err != nil || !got.equal(e) {
		t.Errorf("lock entry: got %+v, %v; want %+v", got, err, e)
	}
	if err := h.Verify("weather"); err != nil {
		t.Errorf("Verify: %v", err)
	}
	if left := tmpLeft(t, h); len(left) != 0 {
		t.Errorf("tmp/ not empty: %v", left)
	}
	if _, err := st.Commit(context.Background(), nil); err == nil {
		t.Error("a second Commit of the same Staged succeeded")
	}
}

func TestInstallArchive(t *testing.T) {
	src := writePack(t, t.TempDir(), "weather", "1.0.0")
	wantDigest, err := packs.Digest(src)
	if err != nil {
		t.Fatal(err)
	}
	var entries, flat []tarEntry
	for _, f := range packFiles("weather", "1.0.0") {
		e := file("weather/"+f.path, f.body)
		if f.mode != 0 {
			e.hdr.Mode = int64(f.mode)
		}
		entries = append(entries, e)
		e.hdr.Name = f.path
		flat = append(flat, e)
	}
	for _, tt := range []struct {
		name, archive string
		data          []byte
	}{
		{"top-level folder names the pack", "download.tar.gz", tarGz(t, entries...)},
		{"archive file names the pack", "weather.tgz", tarGz(t, flat...)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := openTestHome(t, filepath.Join(t.TempDir(), "home"))
			path := filepath.Join(t.TempDir(), tt.archive)
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			e := install(t, h, path)
			// An archive of a folder installs to the same canonical content.
			if e.Name != "weather" || e.Integrity != wantDigest {
				t.Errorf("got %s %s, want weather %s", e.Name, e.Integrity, wantDigest)
			}
			if !strings.HasSuffix(e.Source, "/"+tt.archive) {
				t.Errorf("source %s does not name the archive", e.Source)
			}
			if err := h.Verify("weather"); err != nil {
				t.Error(err)
			}
			if left := tmpLeft(t, h); len(left) != 0 {
				t.Errorf("tmp/ not empty: %v", left)
			}
		})
	}
}

func TestStageRejects(t *testing.T) {
	parent := t.TempDir()
	h := openTestHome(t, filepath.Join(t.TempDir(), "home"))
	ctx := context.Background()

	bad := writePack(t, parent, "bad", "1.0.0")
	writeTree(t, bad, []treeFile{{path: "SKILL.md", body: "---\nname: bad\n---\nno description\n"}})
	_, err := h.Stage(ctx, bad, StageOptions{})
	var le *packs.LoadError
	if !errors.As(err, &le) || !errors.Is(err, packs.ErrInvalidPack) {
		t.Fatalf("invalid pack: got %v, want a *LoadError", err)
	}
	for _, f := range le.Findings {
		if !strings.HasPrefix(f.File, bad) {
			t.Errorf("finding names the staging copy, not the source: %s", f)
		}
	}

	plain := filepath.Join(parent, "notes.txt")
	os.WriteFile(plain, []byte("x"), 0o644)
	if _, err := h.Stage(ctx, plain, StageOptions{}); !errors.Is(err, ErrUnsupportedSource) {
		t.Errorf("plain file: got %v, want ErrUnsupportedSource", err)
	}
	if _, err := h.Stage(ctx, filepath.Join(parent, "missing"), StageOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing source: got %v, want ErrNotExist", err)
	}

	archive := filepath.Join(parent, "evil.tar.gz")
	os.WriteFile(archive, tarGz(t, file("p/SKILL.md", "x"), file("../evil", "x")), 0o644)
	if _, err := h.Stage(ctx, archive, StageOptions{}); !errors.Is(err, ErrArchiveUnsafe) {
		t.Errorf("unsafe archive: got %v, want ErrArchiveUnsafe", err)
	}
	badArchive := filepath.Join(parent, "bad.tgz")
	os.WriteFile(badArchive, tarGz(t, file("bad/SKILL.md", "---\nname: bad\n---\n")), 0o644)
	_, err = h.Stage(ctx, badArchive, StageOptions{})
	if !errors.As(err, &le) {
		t.Fatalf("invalid archived pack: got %v, want a *LoadError", err)
	}
	for _, f := range le.Findings {
		if !strings.HasPrefix(f.File, badArchive+"!") {
			t.Errorf("finding does not name the archive: %s", f)
		}
	}

	escape := writePack(t, parent, "escape", "1.0.0")
	os.Symlink("/etc/passwd", filepath.Join(escape, "docs", "passwd"))
	if _, err := h.Stage(ctx, escape, StageOptions{}); !errors.Is(err, packs.ErrPathEscape) {
		t.Errorf("symlink out of the pack: got %v, want ErrPathEscape", err)
	}

	good := writePack(t, parent, "good", "1.0.0")
	st, err := h.Stage(ctx, good, StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Commit(ctx, []capability.Name{capability.SecretsAccess}); !errors.Is(err, ErrNotRequested) {
		t.Errorf("grant of an unrequested capability: got %v, want ErrNotRequested", err)
	}
	st.Discard()
	st.Discard()
	if left := tmpLeft(t, h); len(left) != 0 {
		t.Errorf("tmp/ not empty after the failures: %v", left)
	}
	if l, _ := h.ReadLock(); len(l.Packs) != 0 {
		t.Errorf("something was installed: %+v", l.Packs)
	}
}

func TestUpgradeAndRemove(t *testing.T) {
	parent := t.TempDir()
	h := openTestHome(t, filepath.Join(t.TempDir(), "home"))
	ctx := context.Background()
	install(t, h, writePack(t, parent, "weather", "1.0.0"))
	install(t, h, writePack(t, parent, "other", "0.1.0"))
	v2 := writePack(t, t.TempDir(), "weather", "2.0.0")
	e := install(t, h, v2, capability.EnvRead)
	if e.Version != "2.0.0" {
		t.Fatalf("version: got %s", e.Version)
	}
	notes, _ := os.ReadFile(filepath.Join(h.PacksDir(), "weather", "docs", "notes.md"))
	if string(notes) != "notes for version 2.0.0\n" {
		t.Errorf("installed notes: %q", notes)
	}
	if err := h.Verify("weather"); err != nil {
		t.Error(err)
	}
	removed, err := h.Remove(ctx, "weather")
	if err != nil {
		t.Fatal(err)
	}
	if !removed.equal(e) {
		t.Errorf("Remove returned %+v, want %+v", removed, e)
	}
	if _, err := os.Stat(filepath.Join(h.PacksDir(), "weather")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("folder still there: %v", err)
	}
	if _, err := h.Remove(ctx, "weather"); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("second remove: got %v, want ErrNotInstalled", err)
	}
	if err := h.Verify("weather"); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Verify after remove: got %v, want ErrNotInstalled", err)
	}
	if err := h.Verify("other"); err != nil {
		t.Errorf("the other pack: %v", err)
	}
	if left := tmpLeft(t, h); len(left) != 0 {
		t.Errorf("tmp/ not empty: %v", left)
	}
}

func TestVerifyDetectsChanges(t *testing.T) {
	tests := []struct {
		name    string
		change  func(dir string) error
		missing bool
	}{
		{"edited", func(d string) error { return os.WriteFile(filepath.Join(d, "SKILL.md"), []byte("changed"), 0o644) }, false},
		{"file added", func(d string) error { return os.WriteFile(filepath.Join(d, "extra.md"), nil, 0o644) }, false},
		{"file removed", func(d string) error { return os.Remove(filepath.Join(d, "docs", "notes.md")) }, false},
		{"made executable", func(d string) error { return os.Chmod(filepath.Join(d, "SKILL.md"), 0o755) }, false},
		{"wasm swapped for a symlink", func(d string) error {
			p := filepath.Join(d, "bin", "echo.wasm")
			os.Remove(p)
			return os.Symlink("/bin/sh", p)
		}, false},
		{"folder deleted", func(d string) error { return os.RemoveAll(d) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := openTestHome(t, filepath.Join(t.TempDir(), "home"))
			install(t, h, writePack(t, t.TempDir(), "weather", "1.0.0"))
			if err := h.Verify("weather"); err != nil {
				t.Fatalf("before the change: %v", err)
			}
			if err := tt.change(filepath.Join(h.PacksDir(), "weather")); err != nil {
				t.Fatal(err)
			}
			err := h.Verify("weather")
			if !errors.Is(err, packs.ErrModified) {
				t.Fatalf("got %v, want ErrModified", err)
			}
			if got := errors.Is(err, fs.ErrNotExist); got != tt.missing {
				t.Errorf("errors.Is(err, ErrNotExist) = %v, want %v", got, tt.missing)
			}
		})
	}
}

// state is what a Home holds for pack "weather": "" (not installed) or the
// version installed, checked against the lock, the files and Verify.
func state(t *testing.T, h *Home) string {
	t.Helper()
	dir := filepath.Join(h.PacksDir(), "weather")
	e, err := h.Entry("weather")
	if errors.Is(err, ErrNotInstalled) {
		if _, serr := os.Lstat(dir); !errors.Is(serr, fs.ErrNotExist) {
			t.Fatalf("no lock entry, but the folder exists (%v)", serr)
		}
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Verify("weather"); err != nil {
		t.Fatalf("lock entry %s does not match the files: %v", e.Version, err)
	}
	notes, err := os.ReadFile(filepath.Join(dir, "docs", "notes.md"))
	if err != nil || string(notes) != "notes for version "+e.Version+"\n" {
		t.Fatalf("lock says %s, files say %q (%v)", e.Version, notes, err)
	}
	return e.Version
}

// errCrash is what the hook returns to simulate a failing step.
var errCrash = errors.New("injected failure")

// crash is the panic value that simulates the process dying at a step.
type crash string

// TestInterruptedChanges stops an install, an upgrade and a remove before
// each of their steps, either by an error (the process lives and rolls
// back at once) or by a panic that skips every error path (the process
// died; the next OpenHome recovers). Each time the state must be exactly
// the old one or exactly the new one, with nothing left in tmp/.
func TestInterruptedChanges(t *testing.T) {
	steps := []string{"journal", "aside", "rename", "lock", "cleanup"}
	ops := []struct {
		name     string
		before   string // version installed first, "" for none
		install  string // version to install, "" to remove
		noStepAt string // the step this operation never takes
	}{
		{"fresh install", "", "2.0.0", "aside"},
		{"upgrade", "1.0.0", "2.0.0", ""},
		{"remove", "1.0.0", "", "rename"},
	}
	for _, op := range ops {
		for _, step := range steps {
			if step == op.noStepAt {
				continue
			}
			for _, mode := range []string{"error", "crash"} {
				t.Run(fmt.Sprintf("%s/%s/%s", op.name, step, mode), func(t *testing.T) {
					homeDir := filepath.Join(t.TempDir(), "home")
					h := openTestHome(t, homeDir)
					if op.before != "" {
						install(t, h, writePack(t, t.TempDir(), "weather", op.before))
					}
					want := op.before
					if step == "cleanup" { // after the commit point
						want = op.install
					}
					h.hook = func(s string) error {
						if s != step {
							return nil
						}
						if mode == "crash" {
							panic(crash(s))
						}
						return errCrash
					}
					var st *Staged
					var err error
					func() {
						defer func() {
							if r := recover(); r != nil {
								if _, ok := r.(crash); !ok {
									panic(r)
								}
								err = errCrash
							}
						}()
						if op.install == "" {
							_, err = h.Remove(context.Background(), "weather")
							return
						}
						st, err = h.Stage(context.Background(), writePack(t, t.TempDir(), "weather", op.install), StageOptions{})
						if err != nil {
							t.Fatal(err)
						}
						_, err = st.Commit(context.Background(), nil)
					}()
					if mode == "error" && step != "cleanup" {
						if !errors.Is(err, errCrash) {
							t.Fatalf("got %v, want the injected failure", err)
						}
						if got := state(t, h); got != want {
							t.Fatalf("in-process rollback: got version %q, want %q", got, want)
						}
					}
					if mode == "crash" && st != nil {
						st.release() // the dead process's file locks are gone
					}
					h2 := openTestHome(t, homeDir)
					if got := state(t, h2); got != want {
						t.Fatalf("after recovery: got version %q, want %q", got, want)
					}
					if left := tmpLeft(t, h2); len(left) != 0 {
						t.Errorf("tmp/ not empty after recovery: %v", left)
					}
				})
			}
		}
	}
}

func TestOpenHomeCleansAbandonedStages(t *testing.T) {
	homeDir := filepath.Join(t.TempDir(), "home")
	h := openTestHome(t, homeDir)
	abandoned := filepath.Join(h.tmp(), stagePrefix+"dead")
	writeTree(t, abandoned, []treeFile{{path: "weather/SKILL.md", body: "x"}})
	os.WriteFile(filepath.Join(h.tmp(), ".txn.json.tmp-123"), nil, 0o600)
	live, err := h.Stage(context.Background(), writePack(t, t.TempDir(), "weather", "1.0.0"), StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h2 := openTestHome(t, homeDir)
	left := tmpLeft(t, h2)
	if len(left) != 1 || filepath.Join(h.tmp(), left[0]) != live.root {
		t.Fatalf("tmp/ holds %v, want only the live stage %s", left, live.root)
	}
	if _, err := live.Commit(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got := state(t, h2); got != "1.0.0" {
		t.Fatalf("got %q, want 1.0.0", got)
	}
}

// TestConcurrentChanges installs, upgrades and removes from many Homes (as
// separate processes would) on one state directory at once: the lock keeps
// every change whole.
func TestConcurrentChanges(t *testing.T) {
	homeDir := filepath.Join(t.TempDir(), "home")
	openTestHome(t, homeDir)
	parent := t.TempDir()
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, 3*n)
	for i := range n {
		name := fmt.Sprintf("pack-%d", i)
		v1 := writePack(t, filepath.Join(parent, "v1"), name, "1.0.0")
		v2 := writePack(t, filepath.Join(parent, "v2"), name, "2.0.0")
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			h, err := OpenHome(ctx, homeDir, HomeOptions{})
			if err != nil {
				errs <- err
				return
			}
			for _, src := range []string{v1, v2} {
				st, err := h.Stage(ctx, src, StageOptions{})
				if err == nil {
					_, err = st.Commit(ctx, nil)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			if i%2 == 0 {
				if _, err := h.Remove(ctx, name); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	h := openTestHome(t, homeDir)
	l, err := h.ReadLock()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range l.Packs {
		names = append(names, e.Name)
		if e.Version != "2.0.0" {
			t.Errorf("%s: version %s, want 2.0.0", e.Name, e.Version)
		}
		if err := h.Verify(e.Name); err != nil {
			t.Error(err)
		}
	}
	if want := []string{"pack-1", "pack-3", "pack-5", "pack-7"}; !slices.Equal(names, want) {
		t.Errorf("installed: got %v, want %v", names, want)
	}
	ents, _ := os.ReadDir(h.PacksDir())
	if len(ents) != len(names) {
		t.Errorf("packs/ holds %d folders, the lock %d", len(ents), len(names))
	}
}

func TestResolveHome(t *testing.T) {
	home := func() (string, error) { return "/home/u", nil }
	noHome := func() (string, error) { return "", errors.New("no home") }
	tests := []struct {
		name string
		flag string
		env  map[string]string
		home func() (string, error)
		want string
	}{
		{"flag wins", "/flag", map[string]string{"PACKS_HOME": "/env", "XDG_DATA_HOME": "/xdg"}, home, "/flag"},
		{"PACKS_HOME", "", map[string]string{"PACKS_HOME": "/env", "XDG_DATA_HOME": "/xdg"}, home, "/env"},
		{"XDG_DATA_HOME", "", map[string]string{"XDG_DATA_HOME": "/xdg"}, home, "/xdg/packs"},
		{"relative XDG_DATA_HOME is ignored", "", map[string]string{"XDG_DATA_HOME": "xdg"}, home, "/home/u/.local/share/packs"},
		{"default", "", nil, home, "/home/u/.local/share/packs"},
		{"no home at all", "", nil, noHome, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveHome(tt.flag, func(k string) string { return tt.env[k] }, tt.home)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("got %q, want an error", got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestOpenHomeLayout(t *testing.T) {
	homeDir := filepath.Join(t.TempDir(), "state", "packs")
	h := openTestHome(t, homeDir)
	for _, d := range []string{h.Dir(), h.PacksDir(), h.CacheDir(), h.WorkspacesDir(), h.tmp()} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v, want a folder private to its owner", d, fi.Mode())
		}
	}
	if h.DBPath() != filepath.Join(homeDir, "packs.db") || h.LockPath() != filepath.Join(homeDir, "packs.lock") {
		t.Errorf("paths: %s %s", h.DBPath(), h.LockPath())
	}
	if _, err := h.PackDir("../x"); err == nil {
		t.Error("PackDir accepted ../x")
	}
	if _, err := OpenHome(context.Background(), "relative/dir", HomeOptions{}); err == nil {
		t.Error("OpenHome accepted a relative path")
	}
	corrupt := filepath.Join(t.TempDir(), "home")
	h = openTestHome(t, corrupt)
	os.WriteFile(filepath.Join(h.tmp(), journalFile), []byte("{not json"), 0o600)
	if _, err := OpenHome(context.Background(), corrupt, HomeOptions{}); err == nil {
		t.Error("OpenHome accepted a corrupt journal")
	}
}

// BenchmarkInstall1MB stages and commits a pack of about 1 MiB in 50 files,
// replacing the installed version each time: copy, load, digest, fsync,
// swap, lockfile.
func BenchmarkInstall1MB(b *testing.B) {
	src := writePack(b, b.TempDir(), "bulk", "1.0.0")
	var files []treeFile
	for i := range 44 {
		files = append(files, treeFile{path: fmt.Sprintf("assets/part-%02d.bin", i), body: strings.Repeat(string(rune('a'+i%26)), 24<<10)})
	}
	writeTree(b, src, files)
	h := openTestHome(b, filepath.Join(b.TempDir(), "home"))
	ctx := context.Background()
	b.SetBytes(44 * 24 << 10)
	b.ResetTimer()
	for b.Loop() {
		st, err := h.Stage(ctx, src, StageOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.Commit(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}
