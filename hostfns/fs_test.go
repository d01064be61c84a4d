package hostfns

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/packs-run/packs/capability"
)

// writeFile creates dir/name with content, making parents.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFSDefaults covers the default mounts as granted/denied pairs: the
// pack root is readable and never writable, the workspace is both and is
// the working directory.
func TestFSDefaults(t *testing.T) {
	c, rec := newCall(t, capability.Request{})
	skill := filepath.Join(c.PackRoot, "SKILL.md")

	r := mustProbe(t, c, "base", op{"op": "read", "path": "/pack/SKILL.md"})
	if got, want := r.Data, "---\nname: probe\n---\n"; !r.OK || got != want {
		t.Fatalf("read /pack/SKILL.md = %+v, want data %q", r, want)
	}
	requireRecorded(t, rec, capability.FilesystemRead, skill, true)

	for _, cmd := range []op{
		{"op": "write", "path": "/pack/SKILL.md", "data": "owned"},
		{"op": "write", "path": "/pack/new.txt", "data": "x"},
		{"op": "append", "path": "/pack/SKILL.md", "data": "x"},
		{"op": "mkdir", "path": "/pack/dir"},
		{"op": "remove", "path": "/pack/SKILL.md"},
		{"op": "rename", "path": "/pack/SKILL.md", "target": "/pack/moved.md"},
	} {
		r := mustProbe(t, c, "base", cmd)
		if r.OK || !strings.Contains(strings.ToLower(r.Error), "read-only file system") {
			t.Errorf("%v on the pack root = %+v, want a read-only file system error", cmd, r)
		}
	}
	if b, err := os.ReadFile(skill); err != nil || string(b) != "---\nname: probe\n---\n" {
		t.Fatalf("pack root changed: %q, %v", b, err)
	}
	for _, p := range []string{"new.txt", "dir", "moved.md"} {
		if _, err := os.Lstat(filepath.Join(c.PackRoot, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists in the pack root after a denied write", p)
		}
	}
	requireRecorded(t, rec, capability.FilesystemWrite, skill, false)
	requireRecorded(t, rec, capability.FilesystemWrite, filepath.Join(c.PackRoot, "new.txt"), false)
	requireRecorded(t, rec, capability.FilesystemWrite, filepath.Join(c.PackRoot, "dir"), false)

	if r := mustProbe(t, c, "base", op{"op": "cwd"}); r.Data != GuestWorkspace {
		t.Fatalf("cwd = %q, want %q", r.Data, GuestWorkspace)
	}
	if r := mustProbe(t, c, "base", op{"op": "write", "path": "notes/../out.txt", "data": "hello"}); !r.OK {
		t.Fatalf("write in the workspace: %+v", r)
	}
	out := filepath.Join(c.Workspace, "out.txt")
	if b, _ := os.ReadFile(out); string(b) != "hello" {
		t.Fatalf("workspace file = %q, want hello", b)
	}
	requireRecorded(t, rec, capability.FilesystemWrite, out, true)
	for _, cmd := range []op{
		{"op": "mkdir", "path": "/workspace/d"},
		{"op": "rename", "path": "/workspace/out.txt", "target": "/workspace/d/moved.txt"},
		{"op": "append", "path": "/workspace/d/moved.txt", "data": "!"},
		{"op": "remove", "path": "/workspace/d/moved.txt"},
		{"op": "remove", "path": "/workspace/d"},
	} {
		if r := mustProbe(t, c, "base", cmd); !r.OK {
			t.Fatalf("%v in the workspace: %+v", cmd, r)
		}
	}
	requireRecorded(t, rec, capability.FilesystemWrite, filepath.Join(c.Workspace, "d", "moved.txt"), true)
}

// TestFSGrantedMounts pairs each granted mount with its denial: a path
// granted read-only is readable, not writable; a path granted for writing
// is both; the same paths without a grant are refused and recorded.
func TestFSGrantedMounts(t *testing.T) {
	data := t.TempDir()
	notes := writeFile(t, data, "ro/notes.txt", "read me")
	writeFile(t, data, "rw/keep.txt", "keep")
	ro, rw := filepath.Join(data, "ro"), filepath.Join(data, "rw")

	t.Run("granted", func(t *testing.T) {
		c, rec := newCall(t, capability.Request{FilesystemRead: []string{ro}, FilesystemWrite: []string{rw}})
		if r := mustProbe(t, c, "base", op{"op": "read", "path": notes}); !r.OK || r.Data != "read me" {
			t.Fatalf("read granted %s = %+v", notes, r)
		}
		requireRecorded(t, rec, capability.FilesystemRead, notes, true)
		if r := mustProbe(t, c, "base", op{"op": "write", "path": filepath.Join(ro, "x"), "data": "x"}); r.OK {
			t.Fatalf("write into a read-only grant succeeded")
		}
		requireRecorded(t, rec, capability.FilesystemWrite, filepath.Join(ro, "x"), false)
		out := filepath.Join(rw, "out.txt")
		if r := mustProbe(t, c, "base", op{"op": "write", "path": out, "data": "w"}); !r.OK {
			t.Fatalf("write into a granted path: %+v", r)
		}
		requireRecorded(t, rec, capability.FilesystemWrite, out, true)
		if r := mustProbe(t, c, "base", op{"op": "list", "path": rw}); !slices.Equal(r.Entries, []string{"keep.txt", "out.txt"}) {
			t.Fatalf("list %s = %v", rw, r.Entries)
		}
	})
	t.Run("denied", func(t *testing.T) {
		c, rec := newCall(t, capability.Request{})
		if r := mustProbe(t, c, "base", op{"op": "read", "path": notes}); r.OK || !strings.Contains(r.Error, "ermission denied") {
			t.Fatalf("read ungranted %s = %+v, want permission denied", notes, r)
		}
		requireRecorded(t, rec, capability.FilesystemRead, notes, false)
		out := filepath.Join(rw, "denied.txt")
		if r := mustProbe(t, c, "base", op{"op": "write", "path": out, "data": "w"}); r.OK {
			t.Fatalf("write into an ungranted path succeeded")
		}
		requireRecorded(t, rec, capability.FilesystemWrite, out, false)
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s written without a grant", out)
		}
	})
}

// TestFSGlobMount: a glob grant lets through the names that match, lists
// only those, and judges a symbolic link by the file it reaches.
func TestFSGlobMount(t *testing.T) {
	logs := t.TempDir()
	a := writeFile(t, logs, "a.log", "log a")
	secret := writeFile(t, logs, "secret.txt", "no")
	if err := os.Symlink("secret.txt", filepath.Join(logs, "sneaky.log")); err != nil {
		t.Fatal(err)
	}
	c, rec := newCall(t, capability.Request{FilesystemRead: []string{filepath.Join(logs, "*.log")}})
	if r := mustProbe(t, c, "base", op{"op": "read", "path": a}); !r.OK || r.Data != "log a" {
		t.Fatalf("read %s = %+v", a, r)
	}
	requireRecorded(t, rec, capability.FilesystemRead, a, true)
	if r := mustProbe(t, c, "base", op{"op": "read", "path": secret}); r.OK {
		t.Fatalf("read %s outside the glob succeeded", secret)
	}
	requireRecorded(t, rec, capability.FilesystemRead, secret, false)
	if r := mustProbe(t, c, "base", op{"op": "read", "path": filepath.Join(logs, "sneaky.log")}); r.OK {
		t.Fatalf("read through a link matching the glob to a file that does not succeeded: %+v", r)
	}
	requireRecorded(t, rec, capability.FilesystemRead, secret, false)
	if r := mustProbe(t, c, "base", op{"op": "list", "path": logs}); !slices.Equal(r.Entries, []string{"a.log"}) {
		t.Fatalf("list %s = %v, want only a.log (sneaky.log leads outside the glob)", logs, r.Entries)
	}
}

// TestFSAttacks are the filesystem attacks: each ends in a denial, is
// recorded, and leaves the host as it was.
func TestFSAttacks(t *testing.T) {
	outside := t.TempDir()
	loot := writeFile(t, outside, "loot.txt", "loot")
	cases := []struct {
		name  string
		setup func(t *testing.T, c *Call)
		cmd   op
		// resource is the host path the denial is recorded for
		resource func(c *Call) string
		write    bool
	}{
		{name: "read /etc/passwd", cmd: op{"op": "read", "path": "/etc/passwd"},
			resource: func(*Call) string { return "/etc/passwd" }},
		{name: "read through .. from the workspace", cmd: op{"op": "read", "path": "/workspace/../../../../etc/passwd"},
			resource: func(*Call) string { return "/etc/passwd" }},
		{name: "read through .. relative to the working directory", cmd: op{"op": "read", "path": "../../../../../etc/passwd"},
			resource: func(*Call) string { return "/etc/passwd" }},
		{name: "read through a symlink to /etc/passwd",
			setup:    func(t *testing.T, c *Call) { symlink(t, "/etc/passwd", c.Workspace, "passwd") },
			cmd:      op{"op": "read", "path": "/workspace/passwd"},
			resource: func(c *Call) string { return filepath.Join(c.Workspace, "passwd") }},
		{name: "read through a relative symlink climbing out",
			setup:    func(t *testing.T, c *Call) { symlink(t, "../../../../../../../../etc/passwd", c.Workspace, "up") },
			cmd:      op{"op": "read", "path": "up"},
			resource: func(c *Call) string { return filepath.Join(c.Workspace, "up") }},
		{name: "read through a symlink to a directory outside",
			setup:    func(t *testing.T, c *Call) { symlink(t, outside, c.Workspace, "out") },
			cmd:      op{"op": "read", "path": "/workspace/out/loot.txt"},
			resource: func(c *Call) string { return filepath.Join(c.Workspace, "out", "loot.txt") }},
		{name: "list a directory outside through a symlink",
			setup:    func(t *testing.T, c *Call) { symlink(t, outside, c.Workspace, "out") },
			cmd:      op{"op": "list", "path": "/workspace/out"},
			resource: func(c *Call) string { return filepath.Join(c.Workspace, "out") }},
		{name: "write through a symlink to a directory outside", write: true,
			setup:    func(t *testing.T, c *Call) { symlink(t, outside, c.Workspace, "out") },
			cmd:      op{"op": "write", "path": "/workspace/out/planted.txt", "data": "x"},
			resource: func(c *Call) string { return filepath.Join(c.Workspace, "out", "planted.txt") }},
		{name: "overwrite a file outside through a symlink", write: true,
			setup:    func(t *testing.T, c *Call) { symlink(t, loot, c.Workspace, "loot") },
			cmd:      op{"op": "write", "path": "/workspace/loot", "data": "pwned"},
			resource: func(c *Call) string { return filepath.Join(c.Workspace, "loot") }},
		{name: "read through a symlink in the pack root",
			setup:    func(t *testing.T, c *Call) { symlink(t, "/etc/passwd", c.PackRoot, "passwd") },
			cmd:      op{"op": "read", "path": "/pack/passwd"},
			resource: func(c *Call) string { return filepath.Join(c.PackRoot, "passwd") }},
		{name: "write to the pack root", write: true, cmd: op{"op": "write", "path": "/pack/SKILL.md", "data": "x"},
			resource: func(c *Call) string { return filepath.Join(c.PackRoot, "SKILL.md") }},
		{name: "create a symlink to /etc", write: true, cmd: op{"op": "symlink", "path": "/workspace/etc", "target": "/etc"},
			resource: func(c *Call) string { return filepath.Join(c.Workspace, "etc") }},
		{name: "write outside every mount", write: true, cmd: op{"op": "write", "path": "/tmp/planted", "data": "x"},
			resource: func(*Call) string { return "/tmp/planted" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, rec := newCall(t, capability.Request{})
			if tc.setup != nil {
				tc.setup(t, c)
			}
			r := mustProbe(t, c, "base", tc.cmd)
			if r.OK || strings.Contains(r.Data, "root:") || r.Data == "loot" || len(r.Entries) > 0 {
				t.Fatalf("%v = %+v, want a refusal", tc.cmd, r)
			}
			n := capability.FilesystemRead
			if tc.write {
				n = capability.FilesystemWrite
			}
			requireRecorded(t, rec, n, tc.resource(c), false)
			if b, err := os.ReadFile(loot); err != nil || string(b) != "loot" {
				t.Fatalf("file outside changed: %q, %v", b, err)
			}
			if _, err := os.Lstat(filepath.Join(outside, "planted.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("file planted outside")
			}
		})
	}
}

func symlink(t *testing.T, target, dir, name string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// TestFSDirect drives the experimentalsys.FS directly with names wazero
// itself would refuse, as a second wall.
func TestFSDirect(t *testing.T) {
	c, rec := newCall(t, capability.Request{})
	mounts, err := mountsFor(c)
	if err != nil {
		t.Fatal(err)
	}
	ws := mounts[0]
	if ws.guest != GuestWorkspace || mounts[1].guest != GuestPack || mounts[len(mounts)-1].guest != "/" {
		t.Fatalf("mount order = %v, want workspace first, pack second, / last", mounts)
	}
	for _, name := range []string{"../../../etc/passwd", "a/../../x"} {
		if _, errno := ws.OpenFile(name, experimentalsys.O_RDONLY, 0); errno != experimentalsys.EPERM {
			t.Errorf("OpenFile(%q) = %v, want EPERM", name, errno)
		}
	}
	if got := len(rec.denials()); got != 2 {
		t.Fatalf("%d denials recorded, want 2:\n%s", got, dump(rec.all()))
	}
	if errno := ws.Symlink("/etc/passwd", "p"); errno != experimentalsys.EPERM {
		t.Fatalf("Symlink = %v, want EPERM", errno)
	}
	if errno := ws.Link("a", "b"); errno != experimentalsys.EPERM {
		t.Fatalf("Link = %v, want EPERM", errno)
	}
	if errno := ws.Rmdir("."); errno != experimentalsys.EPERM {
		t.Fatalf("Rmdir of the mount point = %v, want EPERM", errno)
	}
	// The mount point opens without a decision: wazero opens every preopen.
	f, errno := mounts[len(mounts)-1].OpenFile(".", experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		t.Fatalf("open / = %v", errno)
	}
	if ents, errno := f.Readdir(-1); errno != 0 || len(ents) != 0 {
		t.Fatalf("readdir / = %v, %v; want empty", ents, errno)
	}
}

// TestFSRecorderFailure: an exercise that cannot be recorded does not
// happen.
func TestFSRecorderFailure(t *testing.T) {
	c, rec := newCall(t, capability.Request{})
	rec.fail = errors.New("disk full")
	r := mustProbe(t, c, "base", op{"op": "write", "path": "/workspace/x", "data": "x"})
	if r.OK {
		t.Fatal("write succeeded without a record")
	}
	if _, err := os.Stat(filepath.Join(c.Workspace, "x")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("file created without a record")
	}
	if r := mustProbe(t, c, "base", op{"op": "read", "path": "/pack/SKILL.md"}); r.OK {
		t.Fatal("read succeeded without a record")
	}
}

func TestFSRefusesBadCalls(t *testing.T) {
	c, _ := newCall(t, capability.Request{})
	c.Recorder = nil
	if _, err := FS(c); !errors.Is(err, ErrNoRecorder) {
		t.Fatalf("FS without a recorder: %v, want ErrNoRecorder", err)
	}
	c, _ = newCall(t, capability.Request{})
	c.PackRoot = "relative/path"
	if _, err := FS(c); err == nil {
		t.Fatal("FS with a relative pack root succeeded")
	}
	c, _ = newCall(t, capability.Request{})
	c.Workspace = filepath.Join(t.TempDir(), "missing")
	if _, err := FS(c); err == nil {
		t.Fatal("FS with a missing workspace succeeded")
	}
}

// TestFSGlobSymlinkWrites: in a glob mount, nothing is created, truncated,
// appended to, renamed or removed through a symbolic link, in the last
// element or in a directory on the way; the granted writes still work. The
// link may lead to a file the glob does not match (the attack) or to one it
// does (still refused: the file opened must be the one named).
func TestFSGlobSymlinkWrites(t *testing.T) {
	cases := []struct {
		name string
		cmd  op
		// the host files that must be unchanged ("" content: must not exist)
		keep map[string]string
		ok   bool
	}{
		{name: "truncate through a link", cmd: op{"op": "write", "path": "a.txt", "data": "owned"},
			keep: map[string]string{"victim.conf": "keep"}},
		{name: "append through a link", cmd: op{"op": "append", "path": "a.txt", "data": "owned"},
			keep: map[string]string{"victim.conf": "keep"}},
		{name: "create through a dangling link", cmd: op{"op": "write", "path": "dangling.txt", "data": "x"},
			keep: map[string]string{"created.conf": ""}},
		{name: "truncate through a link chain", cmd: op{"op": "write", "path": "chain.txt", "data": "owned"},
			keep: map[string]string{"victim.conf": "keep", "b.txt": "b"}},
		{name: "truncate through a link to a matching file", cmd: op{"op": "write", "path": "tob.txt", "data": "owned"},
			keep: map[string]string{"b.txt": "b"}},
		{name: "create through a link to a directory", cmd: op{"op": "write", "path": "pub1/new.txt", "data": "x"},
			keep: map[string]string{"secret/new.txt": ""}},
		{name: "truncate through a link to a directory", cmd: op{"op": "write", "path": "pub1/x.txt", "data": "owned"},
			keep: map[string]string{"secret/x.txt": "secret"}},
		{name: "unlink through a link to a directory", cmd: op{"op": "remove", "path": "pub1/x.txt"},
			keep: map[string]string{"secret/x.txt": "secret"}},
		{name: "rename from under a link to a directory", cmd: op{"op": "rename", "path": "pub1/x.txt", "target": "pub2/moved.txt"},
			keep: map[string]string{"secret/x.txt": "secret", "pub2/moved.txt": ""}},
		{name: "rename into a link to a directory", cmd: op{"op": "rename", "path": "pub2/a.txt", "target": "pub1/planted.txt"},
			keep: map[string]string{"pub2/a.txt": "a", "secret/planted.txt": ""}},
		{name: "granted: write a matching file", cmd: op{"op": "write", "path": "b.txt", "data": "new"}, ok: true,
			keep: map[string]string{"victim.conf": "keep"}},
		{name: "granted: create a matching file", cmd: op{"op": "write", "path": "pub2/new.txt", "data": "new"}, ok: true},
		{name: "granted: append to a matching file", cmd: op{"op": "append", "path": "pub2/a.txt", "data": "!"}, ok: true},
		{name: "granted: rename between matching names", cmd: op{"op": "rename", "path": "pub2/a.txt", "target": "pub2/c.txt"}, ok: true},
		{name: "granted: remove a matching file", cmd: op{"op": "remove", "path": "pub2/a.txt"}, ok: true},
		{name: "granted: remove the link itself", cmd: op{"op": "remove", "path": "a.txt"}, ok: true,
			keep: map[string]string{"victim.conf": "keep"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "victim.conf", "keep")
			writeFile(t, dir, "b.txt", "b")
			writeFile(t, dir, "secret/x.txt", "secret")
			writeFile(t, dir, "pub2/a.txt", "a")
			symlink(t, "victim.conf", dir, "a.txt")
			symlink(t, "created.conf", dir, "dangling.txt")
			symlink(t, "a.txt", dir, "chain.txt")
			symlink(t, "b.txt", dir, "tob.txt")
			symlink(t, "secret", dir, "pub1")
			c, rec := newCall(t, capability.Request{FilesystemWrite: []string{
				filepath.Join(dir, "*.txt"), filepath.Join(dir, "pub*", "*.txt")}})
			cmd := maps.Clone(tc.cmd)
			for _, k := range []string{"path", "target"} {
				if s, ok := cmd[k].(string); ok {
					cmd[k] = filepath.Join(dir, s)
				}
			}
			r := mustProbe(t, c, "base", cmd)
			if r.OK != tc.ok {
				t.Fatalf("%v = %+v, want ok=%v\n%s", cmd, r, tc.ok, dump(rec.all()))
			}
			for name, want := range tc.keep {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if want == "" {
					if !errors.Is(err, os.ErrNotExist) {
						t.Errorf("%s exists after %v (%q, %v)", name, cmd, b, err)
					}
					continue
				}
				if got := string(b); err != nil || got != want {
					t.Errorf("%s = %q, %v after %v; want %q", name, got, err, cmd, want)
				}
			}
			if !tc.ok {
				if got := len(rec.denials()); got == 0 {
					t.Fatalf("no denial recorded for %v:\n%s", cmd, dump(rec.all()))
				}
				if fi, err := os.Lstat(filepath.Join(dir, "a.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Errorf("a.txt is no longer a link after %v", cmd)
				}
			}
		})
	}
}

// TestFSGrantedFileLink: a single granted file that is a symbolic link is
// not written through.
func TestFSGrantedFileLink(t *testing.T) {
	dir := t.TempDir()
	victim := writeFile(t, dir, "victim.conf", "keep")
	symlink(t, "victim.conf", dir, "notes.txt")
	c, rec := newCall(t, capability.Request{FilesystemWrite: []string{filepath.Join(dir, "notes.txt")}})
	if r := mustProbe(t, c, "base", op{"op": "write", "path": filepath.Join(dir, "notes.txt"), "data": "owned"}); r.OK {
		t.Fatalf("write through the granted link succeeded")
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "keep" {
		t.Fatalf("victim.conf = %q, %v; want keep", b, err)
	}
	if len(rec.denials()) == 0 {
		t.Fatalf("no denial recorded:\n%s", dump(rec.all()))
	}
}

// TestFSGlobSymlinkMetadata drives Chmod and Utimens on a glob mount
// directly (the probe has no such op): neither follows a link.
func TestFSGlobSymlinkMetadata(t *testing.T) {
	dir := t.TempDir()
	victim := writeFile(t, dir, "victim.conf", "keep")
	writeFile(t, dir, "b.txt", "b")
	symlink(t, "victim.conf", dir, "a.txt")
	old := time.Unix(1_000_000, 0)
	if err := os.Chtimes(victim, old, old); err != nil {
		t.Fatal(err)
	}
	c, rec := newCall(t, capability.Request{FilesystemWrite: []string{filepath.Join(dir, "*.txt")}})
	mounts, err := mountsFor(c)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(mounts, func(m *mount) bool { return m.host == dir })
	if i < 0 || !mounts[i].glob {
		t.Fatalf("no glob mount for %s in %v", dir, mounts)
	}
	m := mounts[i]
	if errno := m.Chmod("a.txt", 0o777); errno == 0 {
		t.Errorf("Chmod through a link succeeded")
	}
	now := time.Now().UnixNano()
	if errno := m.Utimens("a.txt", now, now); errno == 0 {
		t.Errorf("Utimens through a link succeeded")
	}
	fi, err := os.Stat(victim)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fi.Mode().Perm(), os.FileMode(0o644); got != want {
		t.Errorf("victim mode = %v, want %v", got, want)
	}
	if !fi.ModTime().Equal(old) {
		t.Errorf("victim mtime = %v, want %v", fi.ModTime(), old)
	}
	if got := len(rec.denials()); got != 2 {
		t.Errorf("%d denials recorded, want 2:\n%s", got, dump(rec.all()))
	}
	if errno := m.Chmod("b.txt", 0o600); errno != 0 {
		t.Errorf("Chmod of a matching file = %v", errno)
	}
	if fi, err := os.Stat(filepath.Join(dir, "b.txt")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("b.txt mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if errno := m.Utimens("b.txt", old.UnixNano(), old.UnixNano()); errno != 0 {
		t.Errorf("Utimens of a matching file = %v", errno)
	}
}
