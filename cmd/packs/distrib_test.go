package main

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/dist"
)

// gitCmd runs git in dir with a fixed identity.
func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestAddGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	work := filepath.Join(root, "work")
	writeFiles(t, filepath.Join(work, "packs", "weather"), weatherFiles("1.0.0"))
	gitCmd(t, root, "init", "-q", work)
	gitCmd(t, work, "add", "-A")
	gitCmd(t, work, "commit", "-q", "-m", "v1")
	gitCmd(t, work, "tag", "v1")
	commit := gitCmd(t, work, "rev-parse", "HEAD")
	bare := filepath.Join(root, "repo.git")
	gitCmd(t, root, "clone", "-q", "--bare", work, bare)

	home := filepath.Join(t.TempDir(), "home")
	source := "git+file://" + filepath.ToSlash(bare) + "#v1:packs/weather"
	r := withHome(t, home, "add", source, "--yes").mustCode(t, 0)
	if !strings.Contains(r.stdout, "resolved: git:"+commit) || !strings.Contains(r.stdout, "installed weather 1.0.0") {
		t.Errorf("add output:\n%s", r.stdout)
	}
	lock, err := os.ReadFile(filepath.Join(home, "packs.lock"))
	if err != nil || !strings.Contains(string(lock), `resolved = "git:`+commit+`"`) || !strings.Contains(string(lock), `source = "`+source+`"`) {
		t.Errorf("packs.lock:\n%s", lock)
	}
	for _, tt := range []struct{ source, says string }{
		{"git+file://" + filepath.ToSlash(bare) + "#v9", `no branch, tag or commit "v9"`},
		{"git+file://" + filepath.ToSlash(bare), "no pack in the repository root"},
		{"gopher://example.com/weather", `unknown scheme "gopher"`},
	} {
		line := withHome(t, home, "add", tt.source, "--yes").mustCode(t, 1).oneLineError(t)
		if !strings.Contains(line, tt.says) || strings.Contains(line, "stat ") {
			t.Errorf("add %s: %q, want it to say %q", tt.source, line, tt.says)
		}
	}
}

func TestPackSignAdd(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed")
	}
	keys := t.TempDir()
	key := filepath.Join(keys, "alice")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, _ := os.ReadFile(key + ".pub")

	out := t.TempDir()
	a := filepath.Join(out, "a.tar.gz")
	b := filepath.Join(out, "b.tar.gz")
	ra := packsCLI(t, "pack", weatherPack(t, "1.0.0"), "--output", a, "--sign", key).mustCode(t, 0)
	rb := packsCLI(t, "pack", weatherPack(t, "1.0.0"), "--output", b).mustCode(t, 0)
	da := strings.Fields(ra.stdout)[2]
	if db := strings.Fields(rb.stdout)[2]; !strings.HasPrefix(da, "sha256:") || da != db {
		t.Fatalf("packing the same content twice: %q vs %q", ra.stdout, rb.stdout)
	}
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if string(ab) != string(bb) {
		t.Fatal("packing the same content twice gave different bytes")
	}
	if _, err := os.Stat(a + ".sig"); err != nil {
		t.Fatal(err)
	}
	packsCLI(t, "sign", b, "--key", key).mustCode(t, 0)

	home := filepath.Join(t.TempDir(), "home")
	line := withHome(t, home, "add", a, "--yes").mustCode(t, exitDenied).oneLineError(t)
	if !strings.Contains(line, "not a trusted signer") || !strings.Contains(line, "--signer") {
		t.Errorf("untrusted signer: %q", line)
	}
	r := withHome(t, home, "add", a, "--yes", "--signer", key+".pub").mustCode(t, 0)
	if !strings.Contains(r.stdout, "signed by: ssh-ed25519 ") {
		t.Errorf("add output:\n%s", r.stdout)
	}
	lock, _ := os.ReadFile(filepath.Join(home, "packs.lock"))
	if !strings.Contains(string(lock), `signer = "`+strings.Join(strings.Fields(string(pub))[:2], " ")+`"`) {
		t.Errorf("packs.lock has no signer:\n%s", lock)
	}

	// The policy trusts alice and requires signatures for local sources.
	pol := filepath.Join(t.TempDir(), "policy.toml")
	os.WriteFile(pol, []byte("[trust]\nsigners = [\""+strings.TrimSpace(string(pub))+"\"]\nrequire_signature = [\"local\"]\n"), 0o644)
	withHome(t, home, "--policy", pol, "add", b, "--yes").mustCode(t, 0)
	os.Remove(b + ".sig")
	line = withHome(t, home, "--policy", pol, "add", b, "--yes").mustCode(t, exitDenied).oneLineError(t)
	if !strings.Contains(line, "signature required") {
		t.Errorf("unsigned under require_signature: %q", line)
	}
	line = withHome(t, home, "--policy", pol, "add", weatherPack(t, "2.0.0"), "--yes").mustCode(t, exitDenied).oneLineError(t)
	if !strings.Contains(line, "a folder carries no signature") {
		t.Errorf("folder under require_signature: %q", line)
	}
}

func TestUpdateAsksAgainWhenWidened(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	work := filepath.Join(root, "work")
	writeFiles(t, work, weatherFiles("1.0.0"))
	gitCmd(t, root, "init", "-q", work)
	gitCmd(t, work, "add", "-A")
	gitCmd(t, work, "commit", "-q", "-m", "v1")
	bare := filepath.Join(root, "weather.git")
	gitCmd(t, root, "clone", "-q", "--bare", work, bare)
	source := "git+file://" + filepath.ToSlash(bare) + "#main"

	home := filepath.Join(t.TempDir(), "home")
	withHome(t, home, "add", source, "--grant", "network").mustCode(t, 0)
	if r := withHome(t, home, "update", "weather").mustCode(t, 0); !strings.Contains(r.stdout, "weather 1.0.0 is up to date") {
		t.Errorf("update without changes:\n%s", r.stdout)
	}
	var results []updateResult
	decodeOne(t, withHome(t, home, "update", "--json").mustCode(t, 0).stdout, &results)
	if len(results) != 1 || results[0].Name != "weather" || results[0].Status != "up_to_date" || results[0].To != "1.0.0" || results[0].Integrity == "" {
		t.Errorf("update --json without changes: %+v", results)
	}

	// v2 asks for one more host.
	v2 := weatherFiles("2.0.0")
	v2["skill.toml"] = strings.Replace(v2["skill.toml"], `network = ["api.weather.example"]`, `network = ["api.weather.example", "evil.example"]`, 1)
	writeFiles(t, work, v2)
	gitCmd(t, work, "commit", "-q", "-am", "v2")
	gitCmd(t, work, "push", "-q", bare, "main")

	lockHas := func(want string) {
		t.Helper()
		lock, _ := os.ReadFile(filepath.Join(home, "packs.lock"))
		if !strings.Contains(string(lock), want) {
			t.Errorf("packs.lock lacks %q:\n%s", want, lock)
		}
	}
	r := withHome(t, home, "update", "weather").mustCode(t, exitUsage)
	if !strings.Contains(r.stdout, "+ network: evil.example") || !strings.Contains(r.stdout, "~ skill.toml") || !strings.Contains(r.stderr, "stays installed") {
		t.Errorf("widened update without a terminal:\n%s\n%s", r.stdout, r.stderr)
	}
	lockHas(`version = "1.0.0"`)
	// The same as JSON: what the person would be shown goes to stderr.
	r = withHome(t, home, "update", "weather", "--json").mustCode(t, exitUsage)
	results = nil
	decodeOne(t, r.stdout, &results)
	if len(results) != 1 || results[0].Status != "failed" || !strings.Contains(results[0].Error, "stays installed") || results[0].To != "2.0.0" ||
		!slices.Contains(results[0].Files.Changed, "skill.toml") || !slices.Contains(results[0].Capabilities, "+ network: evil.example") || !strings.Contains(r.stderr, "+ network: evil.example") {
		t.Errorf("update --json, widened, no terminal: %+v\n%s", results, r.stderr)
	}
	lockHas(`version = "1.0.0"`)

	// A person declines: the old version stays.
	var out, errb bytes.Buffer
	c := &cli{stdin: bufio.NewReader(strings.NewReader("n\n")), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, interactive: true}
	if code := c.run(context.Background(), []string{"--home", home, "update", "weather"}); code != 0 || !strings.Contains(out.String(), "kept weather 1.0.0") {
		t.Fatalf("decline: exit %d\n%s%s", code, out.String(), errb.String())
	}
	lockHas(`version = "1.0.0"`)

	// --yes updates, and the network grant keeps only the old host.
	r = withHome(t, home, "update", "weather", "--yes").mustCode(t, 0)
	if !strings.Contains(r.stdout, "updated weather 1.0.0 → 2.0.0") || !strings.Contains(r.stdout, "new requests not granted: network") {
		t.Errorf("update --yes:\n%s", r.stdout)
	}
	lockHas(`version = "2.0.0"`)
	lockHas(`network = { granted = true, resources = ["api.weather.example"] }`)

	// v3 asks for another host; a person accepts and grants it.
	v3 := weatherFiles("3.0.0")
	v3["skill.toml"] = strings.Replace(v3["skill.toml"], `network = ["api.weather.example"]`, `network = ["api.weather.example", "evil.example", "more.example"]`, 1)
	writeFiles(t, work, v3)
	gitCmd(t, work, "commit", "-q", "-am", "v3")
	gitCmd(t, work, "push", "-q", bare, "main")
	out.Reset()
	errb.Reset()
	c = &cli{stdin: bufio.NewReader(strings.NewReader("y\ny\n")), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, interactive: true}
	if code := c.run(context.Background(), []string{"--home", home, "update", "weather"}); code != 0 {
		t.Fatalf("accept: exit %d\n%s%s", code, out.String(), errb.String())
	}
	lockHas(`version = "3.0.0"`)
	lockHas(`network = { granted = true, resources = ["api.weather.example", "more.example"] }`)
}

func TestBundleMovesBetweenHomes(t *testing.T) {
	for _, tool := range []string{"git", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " is not installed")
		}
	}
	// Home a: weather from a signed archive, clock from a git repository.
	key := filepath.Join(t.TempDir(), "alice")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	archive := filepath.Join(t.TempDir(), "weather.tar.gz")
	packsCLI(t, "pack", weatherPack(t, "1.0.0"), "--output", archive, "--sign", key).mustCode(t, 0)
	root := t.TempDir()
	work := filepath.Join(root, "clock")
	clock := map[string]string{}
	for k, v := range weatherFiles("0.5.0") {
		clock[strings.ReplaceAll(k, "weather", "clock")] = strings.ReplaceAll(v, "weather", "clock")
	}
	writeFiles(t, work, clock)
	gitCmd(t, root, "init", "-q", work)
	gitCmd(t, work, "add", "-A")
	gitCmd(t, work, "commit", "-q", "-m", "v1")
	bare := filepath.Join(root, "clock.git")
	gitCmd(t, root, "clone", "-q", "--bare", work, bare)

	a := filepath.Join(t.TempDir(), "a")
	withHome(t, a, "add", archive, "--signer", key+".pub", "--grant", "network").mustCode(t, 0)
	withHome(t, a, "add", "git+file://"+filepath.ToSlash(bare), "--grant", "env_read").mustCode(t, 0)
	bundle := filepath.Join(t.TempDir(), "packs.bundle")
	r := withHome(t, a, "bundle", "export", bundle).mustCode(t, 0)
	if !strings.Contains(r.stdout, "exported weather 1.0.0") || !strings.Contains(r.stdout, "signed") || !strings.Contains(r.stdout, "exported clock 0.5.0") {
		t.Errorf("export:\n%s", r.stdout)
	}
	// No source is reachable any more.
	os.RemoveAll(root)
	os.Remove(archive)
	os.Remove(archive + ".sig")

	b := filepath.Join(t.TempDir(), "b")
	line := withHome(t, b, "bundle", "import", bundle, "--yes").mustCode(t, exitDenied).oneLineError(t)
	if !strings.Contains(line, "not a trusted signer") {
		t.Errorf("import without trusting the signer: %q", line)
	}
	if got := listJSON(t, b); len(got) != 0 {
		t.Fatalf("a failed import installed %+v", got)
	}
	withHome(t, b, "bundle", "import", bundle, "--yes", "--signer", key+".pub", "--grants-from-bundle").mustCode(t, 0)
	lockA, _ := os.ReadFile(filepath.Join(a, "packs.lock"))
	lockB, _ := os.ReadFile(filepath.Join(b, "packs.lock"))
	strip := func(lock []byte) string {
		var keep []string
		for _, l := range strings.Split(string(lock), "\n") {
			if !strings.HasPrefix(l, "installed = ") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if strip(lockA) != strip(lockB) {
		t.Errorf("the homes differ:\n%s\nvs\n%s", lockA, lockB)
	}
	if !strings.Contains(string(lockB), `signer = "ssh-ed25519 `) || !strings.Contains(string(lockB), `resolved = "git:`) {
		t.Errorf("import lost the signer or the resolved commit:\n%s", lockB)
	}
	// The exported bundle re-exports from b and still verifies.
	again := filepath.Join(t.TempDir(), "again.bundle")
	var exported, imported bundleJSON
	decodeOne(t, withHome(t, b, "bundle", "export", again, "weather", "--json").mustCode(t, 0).stdout, &exported)
	if exported.File != again || len(exported.Packs) != 1 || exported.Packs[0].Name != "weather" || exported.Packs[0].Integrity == "" {
		t.Errorf("export --json: %+v", exported)
	}
	decodeOne(t, withHome(t, filepath.Join(t.TempDir(), "c"), "bundle", "import", again, "--yes", "--signer", key+".pub", "--json").mustCode(t, 0).stdout, &imported)
	if imported.File != again || len(imported.Packs) != 1 || imported.Packs[0].Integrity != exported.Packs[0].Integrity || len(imported.Packs[0].Granted) != 0 {
		t.Errorf("import --json (no grants from the bundle): %+v", imported)
	}
}

func TestPublishAddOCI(t *testing.T) {
	for _, tool := range []string{"docker-registry", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " is not installed")
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yml")
	os.WriteFile(config, []byte("version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: "+filepath.Join(dir, "data")+"\nhttp:\n  addr: "+addr+"\n"), 0o644)
	reg := exec.Command("docker-registry", "serve", config)
	if err := reg.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Process.Kill(); reg.Wait() })
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/v2/"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the registry did not start")
		}
	}
	key := filepath.Join(t.TempDir(), "alice")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	archive := filepath.Join(t.TempDir(), "weather.tar.gz")
	packsCLI(t, "pack", weatherPack(t, "1.0.0"), "--output", archive, "--sign", key).mustCode(t, 0)
	ref := "oci://" + addr + "/packs/weather:1.0.0"
	r := packsCLI(t, "publish", ref, archive).mustCode(t, 0)
	digest := strings.TrimSpace(strings.Split(r.stdout, "\n")[1])
	if !strings.HasPrefix(digest, "sha256:") || !strings.Contains(r.stdout, "(signed)") {
		t.Fatalf("publish:\n%s", r.stdout)
	}
	home := filepath.Join(t.TempDir(), "home")
	r = withHome(t, home, "add", "oci://"+addr+"/packs/weather@"+digest, "--yes", "--signer", key+".pub").mustCode(t, 0)
	if !strings.Contains(r.stdout, "resolved: oci:"+digest) || !strings.Contains(r.stdout, "signed by: ssh-ed25519") {
		t.Errorf("add:\n%s", r.stdout)
	}
	line := withHome(t, home, "add", "oci://"+addr+"/packs/weather:2.0.0", "--yes").mustCode(t, 1).oneLineError(t)
	if !strings.Contains(line, "not found") {
		t.Errorf("missing tag: %q", line)
	}
}

func TestUpdateKeepsSignedPacksSigned(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed")
	}
	key := filepath.Join(t.TempDir(), "alice")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	archive := filepath.Join(t.TempDir(), "weather.tar.gz")
	packsCLI(t, "pack", weatherPack(t, "1.0.0"), "--output", archive, "--sign", key).mustCode(t, 0)
	home := filepath.Join(t.TempDir(), "home")
	withHome(t, home, "add", archive, "--yes", "--signer", key+".pub").mustCode(t, 0)

	// The archive is replaced by an unsigned new version.
	packsCLI(t, "pack", weatherPack(t, "2.0.0"), "--output", archive).mustCode(t, 0)
	os.Remove(archive + ".sig")
	line := withHome(t, home, "update", "weather", "--yes").mustCode(t, exitDenied).oneLineError(t)
	if !strings.Contains(line, "signature required") || !strings.Contains(line, "weather 1.0.0 stays installed") {
		t.Errorf("unsigned update: %q", line)
	}
	// Signed by the same key, it updates without --signer.
	packsCLI(t, "sign", archive, "--key", key).mustCode(t, 0)
	if r := withHome(t, home, "update", "weather", "--yes").mustCode(t, 0); !strings.Contains(r.stdout, "updated weather 1.0.0 → 2.0.0") {
		t.Errorf("signed update:\n%s", r.stdout)
	}
}

func TestAddByName(t *testing.T) {
	var archive bytes.Buffer
	digest, err := dist.PackArchive(weatherPack(t, "1.0.0"), &archive)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/weather.tar.gz" {
			http.NotFound(w, r)
			return
		}
		w.Write(archive.Bytes())
	}))
	defer srv.Close()
	index := filepath.Join(t.TempDir(), "index.toml")
	source := srv.URL + "/weather.tar.gz#sha256=" + strings.TrimPrefix(digest, "sha256:")
	// The index lists the weather archive under a second name too: a pack
	// installed by name must carry that name.
	os.WriteFile(index, []byte("version = 1\n[packs]\nweather = \""+source+"\"\nsunny = \""+source+"\"\n"), 0o644)

	t.Chdir(t.TempDir()) // no folder named weather here
	home := filepath.Join(t.TempDir(), "home")
	r := withHome(t, home, "add", "weather", "--index", index, "--yes").mustCode(t, 0)
	if !strings.Contains(r.stderr, "weather: "+source+" (from the index ") || !strings.Contains(r.stdout, "installed weather 1.0.0") {
		t.Errorf("add by name:\n%s\n%s", r.stdout, r.stderr)
	}
	if got := listJSON(t, home); len(got) != 1 || got[0].Source != source {
		t.Errorf("installed %+v, want source %s", got, source)
	}
	withHome(t, home, "add", "sunny", "--index", index, "--yes").mustCode(t, exitDenied).oneLineError(t)
	if got := listJSON(t, home); len(got) != 1 || got[0].Name != "weather" {
		t.Errorf("after add sunny: installed %+v, want weather alone", got)
	}
	line := withHome(t, home, "add", "clock", "--index", index, "--yes").mustCode(t, 1).oneLineError(t)
	if !strings.Contains(line, `does not list "clock"`) {
		t.Errorf("unlisted name: %q", line)
	}
	t.Setenv("PACKS_INDEX", "")
	line = withHome(t, home, "add", "clock", "--yes").mustCode(t, exitUsage).oneLineError(t)
	if !strings.Contains(line, "no pack index") || strings.Contains(line, "stat ") {
		t.Errorf("no index: %q", line)
	}
}
