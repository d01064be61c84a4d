package dist

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/packs"
)

func TestParseSource(t *testing.T) {
	hx := strings.Repeat("ab", 32)
	tests := []struct {
		in   string
		want Source
		err  error
	}{
		{in: "./weather", want: Source{Kind: SourceLocal}},
		{in: "/abs/w.tar.gz", want: Source{Kind: SourceLocal}},
		{in: "git+https://example.com/o/r.git", want: Source{Kind: SourceGit, URL: "https://example.com/o/r.git"}},
		{in: "git+https://example.com:8443/o/r#v1.0:packs/weather", want: Source{Kind: SourceGit, URL: "https://example.com:8443/o/r", Ref: "v1.0", Subdir: "packs/weather"}},
		{in: "git+file:///srv/r.git#main", want: Source{Kind: SourceGit, URL: "file:///srv/r.git", Ref: "main"}},
		{in: "git+file:///srv/r.git:a/b/", want: Source{Kind: SourceGit, URL: "file:///srv/r.git", Subdir: "a/b"}},
		{in: "https://h/x/w.tar.gz#sha256=" + hx, want: Source{Kind: SourceURL, URL: "https://h/x/w.tar.gz", Digest: "sha256:" + hx}},
		{in: "https://h/x/w.tgz", want: Source{Kind: SourceURL, URL: "https://h/x/w.tgz"}},
		{in: "ftp://h/x", err: ErrSourceInvalid},
		{in: "git+http://example.com/o/r", err: ErrSourceInvalid},
		{in: "git+http://127.0.0.1:8080/o/r", want: Source{Kind: SourceGit, URL: "http://127.0.0.1:8080/o/r"}},
		{in: "oci://reg.example/x:1", want: Source{Kind: SourceOCI, URL: "reg.example/x:1"}},
		{in: "oci://reg.example/x", err: ErrSourceInvalid},
		{in: "oci://reg.example", err: ErrSourceInvalid},
		{in: "file:///x", err: ErrSourceInvalid},
		{in: "https://h/x/w.zip#sha256=" + hx, err: ErrSourceInvalid},
		{in: "https://h/x/w.tar.gz#sha256=ABC", err: ErrSourceInvalid},
		{in: "https://h/x/w.tar.gz#md5=" + hx, err: ErrSourceInvalid},
		{in: "git+https://example.com/o/r:../../etc", err: ErrSourceInvalid},
		{in: "git+https://example.com/o/r:/etc", err: ErrSourceInvalid},
		{in: "git+https://example.com/o/r#a..b", err: ErrSourceInvalid},
		{in: "git+https://example.com/o/r#-upload-pack=x", err: ErrSourceInvalid},
		{in: "git+https://u:p@example.com/o/r", err: ErrSourceInvalid},
		{in: "git+https://example.com", err: ErrSourceInvalid},
		{in: "git+file://host/x", err: ErrSourceInvalid},
		{in: "git+https://example.com/o/r:", err: ErrSourceInvalid},
	}
	for _, tt := range tests {
		got, err := ParseSource(tt.in)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("ParseSource(%q) err = %v, want %v", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSource(%q): %v", tt.in, err)
			continue
		}
		tt.want.Raw = tt.in
		if got != tt.want {
			t.Errorf("ParseSource(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func FuzzParseSource(f *testing.F) {
	for _, s := range []string{"git+https://h/r#v1:sub", "git+file:///r.git", "https://h/x.tar.gz#sha256=00", "./x", "oci://r/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		src, err := ParseSource(s)
		if err != nil {
			return
		}
		if src.Subdir != "" && !filepath.IsLocal(filepath.FromSlash(src.Subdir)) {
			t.Fatalf("subdir %q leaves the repository", src.Subdir)
		}
		if strings.HasPrefix(src.Ref, "-") {
			t.Fatalf("ref %q looks like an option", src.Ref)
		}
	})
}

// gitRun runs git in dir with a fixed identity and dates.
func gitRun(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitFixture is a bare repository with history:
//
//	v1 (tag v1.0, annotated): weather 1.0.0 at the root, tools/ (no pack)
//	v2 (main, HEAD):          weather 2.0.0 at the root, packs/clock 1.0.0
//	branch old:               v1
type gitFixture struct {
	bare, v1, v2 string
}

func newGitFixture(t testing.TB) gitFixture {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	work := filepath.Join(root, "work")
	writeTree(t, work, packFiles("weather", "1.0.0"))
	writeTree(t, work, []treeFile{{path: "tools/README.md", body: "not a pack\n"}})
	gitRun(t, root, "init", "-q", work)
	gitRun(t, work, "add", "-A")
	gitRun(t, work, "commit", "-q", "-m", "v1")
	gitRun(t, work, "tag", "-a", "-m", "release", "v1.0")
	gitRun(t, work, "branch", "old")
	v1 := gitRun(t, work, "rev-parse", "HEAD")
	writeTree(t, work, packFiles("weather", "2.0.0"))
	writeTree(t, filepath.Join(work, "packs", "clock"), packFiles("clock", "1.0.0"))
	gitRun(t, work, "add", "-A")
	gitRun(t, work, "commit", "-q", "-m", "v2")
	v2 := gitRun(t, work, "rev-parse", "HEAD")
	bare := filepath.Join(root, "weather.git")
	gitRun(t, root, "clone", "-q", "--bare", work, bare)
	return gitFixture{bare: bare, v1: v1, v2: v2}
}

// stageSource stages and commits source, granting nothing.
func stageSource(t testing.TB, h *Home, source string, fo FetchOptions) (LockEntry, error) {
	t.Helper()
	st, err := h.StageSource(context.Background(), source, StageOptions{}, fo)
	if err != nil {
		return LockEntry{}, err
	}
	return st.Commit(context.Background(), nil)
}

func TestStageGitFile(t *testing.T) {
	fx := newGitFixture(t)
	base := "git+file://" + filepath.ToSlash(fx.bare)
	tests := []struct {
		source, name, version, commit string
	}{
		{base, "weather", "2.0.0", fx.v2},
		{base + "#main", "weather", "2.0.0", fx.v2},
		{base + "#old", "weather", "1.0.0", fx.v1},
		{base + "#v1.0", "weather", "1.0.0", fx.v1},
		{base + "#" + fx.v1[:10], "weather", "1.0.0", fx.v1},
		{base + "#" + fx.v1, "weather", "1.0.0", fx.v1},
		{base + ":packs/clock", "clock", "1.0.0", fx.v2},
		{base + "#main:packs/clock", "clock", "1.0.0", fx.v2},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			h := openTestHome(t, t.TempDir())
			e, err := stageSource(t, h, tt.source, FetchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if e.Name != tt.name || e.Version != tt.version || e.Resolved != "git:"+tt.commit || e.Source != tt.source {
				t.Errorf("got %s %s %s from %s, want %s %s git:%s from %s", e.Name, e.Version, e.Resolved, e.Source, tt.name, tt.version, tt.commit, tt.source)
			}
			if _, err := os.Stat(filepath.Join(h.PacksDir(), tt.name, ".git")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("installed pack has .git: %v", err)
			}
			if fi, err := os.Stat(filepath.Join(h.PacksDir(), tt.name, "scripts", "run.sh")); err != nil || fi.Mode()&0o100 == 0 {
				t.Errorf("scripts/run.sh lost its execute bit: %v", err)
			}
			if err := h.Verify(tt.name); err != nil {
				t.Error(err)
			}
			l, err := h.ReadLock()
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := l.Entry(tt.name); got.Resolved != e.Resolved {
				t.Errorf("lock resolved = %q, want %q", got.Resolved, e.Resolved)
			}
		})
	}
}

func TestStageGitBadInput(t *testing.T) {
	fx := newGitFixture(t)
	base := "git+file://" + filepath.ToSlash(fx.bare)
	empty := filepath.Join(t.TempDir(), "empty.git")
	gitRun(t, filepath.Dir(empty), "init", "-q", "--bare", empty)
	tests := []struct {
		source string
		err    error
		says   string
	}{
		{base + ":tools", packs.ErrInvalidPack, "no SKILL.md"},
		{base + ":nowhere", packs.ErrInvalidPack, `no folder "nowhere"`},
		{base + "#nope", ErrRefNotFound, `no branch, tag or commit "nope" (it has: main, old, v1.0)`},
		{base + "#deadbeefdead", ErrRefNotFound, "no commit deadbeefdead"},
		{"git+file://" + filepath.ToSlash(empty), packs.ErrInvalidPack, "empty repository"},
		{"git+file:///no/such/repo.git", ErrFetch, "/no/such/repo.git"},
		{"gopher://x/y", ErrSourceInvalid, "unknown scheme"},
	}
	h := openTestHome(t, t.TempDir())
	old := install(t, h, writePack(t, t.TempDir(), "weather", "0.9.0"))
	for _, tt := range tests {
		_, err := stageSource(t, h, tt.source, FetchOptions{})
		if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: err = %v, want %v saying %q", tt.source, err, tt.err, tt.says)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error is more than one line: %q", tt.source, err)
		}
	}
	if e, err := h.Entry("weather"); err != nil || !e.equal(old) {
		t.Errorf("old install changed: %+v, %v", e, err)
	}
	if err := h.Verify("weather"); err != nil {
		t.Error(err)
	}
	if left := tmpLeft(t, h); len(left) != 0 {
		t.Errorf("tmp/ left %v", left)
	}
}

// gitHTTPServer serves the bare repositories under root with git
// http-backend (smart HTTP) on loopback.
func gitHTTPServer(t testing.TB, root string) *httptest.Server {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skip("git --exec-path:", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1"}, Stderr: io.Discard}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func TestStageGitHTTP(t *testing.T) {
	fx := newGitFixture(t)
	srv := gitHTTPServer(t, filepath.Dir(fx.bare))
	base := "git+" + srv.URL + "/weather.git"
	h := openTestHome(t, t.TempDir())
	for _, tt := range []struct{ source, name, commit string }{
		{base, "weather", fx.v2},
		{base + "#v1.0", "weather", fx.v1},
		{base + "#" + fx.v1[:8], "weather", fx.v1},
		{base + "#main:packs/clock", "clock", fx.v2},
	} {
		e, err := stageSource(t, h, tt.source, FetchOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tt.source, err)
		}
		if e.Name != tt.name || e.Resolved != "git:"+tt.commit {
			t.Errorf("%s: got %s at %s, want %s at %s", tt.source, e.Name, e.Resolved, tt.name, tt.commit)
		}
	}
	if _, err := stageSource(t, h, "git+"+srv.URL+"/missing.git", FetchOptions{}); !errors.Is(err, ErrFetch) {
		t.Errorf("missing repository: err = %v, want ErrFetch", err)
	}
}

// packBytes packs the pack folder dir into memory.
func packBytes(t testing.TB, dir string) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	d, err := PackArchive(dir, &b)
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), d
}

func TestPackArchiveReproducible(t *testing.T) {
	a := writePack(t, t.TempDir(), "weather", "1.0.0")
	first, d1 := packBytes(t, a)
	time.Sleep(10 * time.Millisecond)
	again, d2 := packBytes(t, a)
	// A copy made later, with other times and another umask.
	b := writePack(t, t.TempDir(), "weather", "1.0.0")
	later := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	filepath.Walk(b, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, later, later) })
	os.Chmod(filepath.Join(b, "SKILL.md"), 0o600)
	copied, d3 := packBytes(t, b)
	if !bytes.Equal(first, again) || !bytes.Equal(first, copied) || d1 != d2 || d1 != d3 {
		t.Fatalf("packing is not reproducible: %s %s %s", d1, d2, d3)
	}
	c := writePack(t, t.TempDir(), "weather", "1.0.1")
	if _, d4 := packBytes(t, c); d4 == d1 {
		t.Error("different content packed to the same digest")
	}
	// The archive installs as the folder does.
	file := filepath.Join(t.TempDir(), "weather.tar.gz")
	os.WriteFile(file, first, 0o644)
	h := openTestHome(t, t.TempDir())
	fromArchive := install(t, h, file)
	folder, err := packs.Digest(a)
	if err != nil {
		t.Fatal(err)
	}
	if fromArchive.Integrity != folder {
		t.Errorf("installed from archive %s, folder is %s", fromArchive.Integrity, folder)
	}
}

func TestStageURL(t *testing.T) {
	archive, digest := packBytes(t, writePack(t, t.TempDir(), "weather", "1.0.0"))
	pin := strings.TrimPrefix(digest, "sha256:")
	bomb := gzipBomb(t, 32<<20)
	mux := http.NewServeMux()
	mux.HandleFunc("/weather.tar.gz", func(w http.ResponseWriter, r *http.Request) { w.Write(archive) })
	mux.HandleFunc("/bomb.tar.gz", func(w http.ResponseWriter, r *http.Request) { w.Write(bomb) })
	mux.HandleFunc("/big.tar.gz", func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte{0}, 2<<20))
	})
	mux.HandleFunc("/fail.tar.gz", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) })
	mux.HandleFunc("/cut.tar.gz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		w.Write(archive[:len(archive)/2])
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	bombSum := sha256Hex(bomb)
	bigSum := sha256Hex(bytes.Repeat([]byte{0}, 2<<20))

	h := openTestHome(t, t.TempDir())
	e, err := stageSource(t, h, srv.URL+"/weather.tar.gz#sha256="+pin, FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Name != "weather" || e.Resolved != digest {
		t.Errorf("got %s resolved %s, want weather resolved %s", e.Name, e.Resolved, digest)
	}
	old, _ := h.Entry("weather")
	other := strings.Repeat("0", 64)
	tests := []struct {
		source string
		fo     FetchOptions
		err    error
		says   string
	}{
		{srv.URL + "/weather.tar.gz#sha256=" + other, FetchOptions{}, ErrDigestMismatch, "the URL pins sha256:" + other},
		{srv.URL + "/weather.tar.gz", FetchOptions{}, ErrUnpinned, "no #sha256="},
		{srv.URL + "/missing.tar.gz#sha256=" + pin, FetchOptions{}, ErrFetch, "404 Not Found"},
		{srv.URL + "/fail.tar.gz#sha256=" + pin, FetchOptions{}, ErrFetch, "500 Internal Server Error"},
		{srv.URL + "/cut.tar.gz#sha256=" + pin, FetchOptions{}, ErrFetch, "broke off"},
		{srv.URL + "/bomb.tar.gz#sha256=" + bombSum, FetchOptions{}, ErrArchiveTooLarge, ""},
		{srv.URL + "/big.tar.gz#sha256=" + bigSum, FetchOptions{MaxDownloadBytes: 1 << 20}, ErrArchiveTooLarge, "over 1048576"},
	}
	for _, tt := range tests {
		_, err := stageSource(t, h, tt.source, tt.fo)
		if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: err = %v, want %v saying %q", tt.source, err, tt.err, tt.says)
		}
	}
	if got, err := h.Entry("weather"); err != nil || !got.equal(old) {
		t.Errorf("old install changed: %+v %v", got, err)
	}
	// Unpinned is allowed when asked for, and then records the digest.
	e, err = stageSource(t, h, srv.URL+"/weather.tar.gz", FetchOptions{AllowUnpinned: true})
	if err != nil || e.Resolved != digest {
		t.Errorf("unpinned: %+v, %v", e, err)
	}
	if left := tmpLeft(t, h); len(left) != 0 {
		t.Errorf("tmp/ left %v", left)
	}
}

// gzipBomb is a small .tar.gz holding one file of n zero bytes.
func gzipBomb(t testing.TB, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: "bomb/zeros", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(n)}); err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for range n / len(zeros) {
		tw.Write(zeros)
	}
	tw.Close()
	zw.Close()
	return b.Bytes()
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestLockResolvedSigner(t *testing.T) {
	l := &Lockfile{}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	l.put(LockEntry{Name: "old", Source: "file:///x", Integrity: "sha256:" + strings.Repeat("0", 64), Installed: at})
	l.put(LockEntry{Name: "new", Source: "git+file:///r.git#v1", Integrity: "sha256:" + strings.Repeat("1", 64), Installed: at,
		Resolved: "git:" + strings.Repeat("a", 40), Signer: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG"})
	data := l.Marshal()
	if strings.Count(string(data), "resolved = ") != 1 || strings.Count(string(data), "signer = ") != 1 {
		t.Errorf("an entry without resolved or signer must not write them:\n%s", data)
	}
	got, err := ParseLock("packs.lock", data)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range l.Packs {
		if e, ok := got.Entry(want.Name); !ok || !e.equal(want) {
			t.Errorf("round trip: got %+v, want %+v", e, want)
		}
	}
}
