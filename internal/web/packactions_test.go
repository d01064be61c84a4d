package web

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/packs"
)

// TestPackDisableEnableRemove: the app disables, enables and removes a
// pack through the same App methods as packs disable, enable and remove:
// a disabled pack cannot be attached, a removed one is gone with its
// grants, and a second remove says it is not installed.
func TestPackDisableEnableRemove(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.install("terminal_exec")
	var got struct {
		Name             string
		Enabled, Changed bool
	}
	e.must(http.StatusOK, "POST", "/v1/packs/notes/disable", nil, &got)
	if got.Name != "notes" || got.Enabled || !got.Changed {
		t.Errorf("disable: got %+v", got)
	}
	var p packJSON
	e.must(http.StatusOK, "GET", "/v1/packs/notes", nil, &p)
	if !p.Disabled {
		t.Error("the pack is not disabled after POST disable")
	}
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{}, &c)
	if st := e.do("POST", "/v1/chats/"+c.ID+"/packs", map[string]any{"pack": "notes"}, nil); st < 400 {
		t.Errorf("attaching a disabled pack: got %d, want a refusal", st)
	}
	e.must(http.StatusOK, "POST", "/v1/packs/notes/disable", nil, &got)
	if got.Changed {
		t.Error("a second disable says it changed something")
	}
	e.must(http.StatusOK, "POST", "/v1/packs/notes/enable", nil, &got)
	if !got.Enabled || !got.Changed {
		t.Errorf("enable: got %+v", got)
	}
	e.must(http.StatusOK, "POST", "/v1/chats/"+c.ID+"/packs", map[string]any{"pack": "notes"}, nil)

	var removed struct {
		Name    string
		Version string
		Removed bool
	}
	e.must(http.StatusOK, "DELETE", "/v1/packs/notes", nil, &removed)
	if removed.Name != "notes" || removed.Version != "1.0.0" || !removed.Removed {
		t.Errorf("remove: got %+v", removed)
	}
	if st := e.do("GET", "/v1/packs/notes", nil, nil); st != http.StatusNotFound {
		t.Errorf("GET a removed pack: got %d, want 404", st)
	}
	if rows, err := e.app.DB.Grants(context.Background(), "notes"); err != nil || len(rows) != 0 {
		t.Errorf("a removed pack's grants: got %+v, %v; want none", rows, err)
	}
	for _, req := range [][2]string{{"DELETE", "/v1/packs/notes"}, {"POST", "/v1/packs/notes/enable"}, {"POST", "/v1/packs/notes/update"}} {
		var body any
		if req[1] == "/v1/packs/notes/update" {
			body = map[string]any{}
		}
		var eb errorBody
		if st := e.do(req[0], req[1], body, &eb); st != http.StatusNotFound || eb.Error.Code != codeNotFound {
			t.Errorf("%s %s of a pack not installed: got %d %+v, want 404", req[0], req[1], st, eb.Error)
		}
	}
}

// TestPackActionsApplyPolicy: the policy refuses the app what it refuses
// the CLI. A pack it mandates cannot be disabled; an update to content it
// blocks is refused and the installed version stays; a blocked pack is not
// even previewed for install.
func TestPackActionsApplyPolicy(t *testing.T) {
	src := notesVariant(t, "SKILL.md", func(s string) string { return s })
	next := notesVariant(t, "SKILL.md", func(s string) string { return s + "\nVersion two.\n" })
	digest, err := packs.Digest(next)
	if err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(t.TempDir(), "policy.toml")
	body := "[packs]\nmandated = [\"notes\"]\nblocked = [\"other\"]\nblocked_digests = [\"" + digest + "\"]\n"
	if err := os.WriteFile(policy, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{policy: policy})
	var installed packJSON
	e.must(http.StatusCreated, "POST", "/v1/packs", map[string]any{"source": src, "grant": []string{"terminal_exec"}}, &installed)

	var eb errorBody
	if st := e.do("POST", "/v1/packs/notes/disable", nil, &eb); st != http.StatusForbidden || eb.Error.Code != codeDenied || !strings.Contains(eb.Error.Message, "mandates") {
		t.Errorf("disable a mandated pack: got %d %+v, want 403 denied", st, eb.Error)
	}
	var p packJSON
	e.must(http.StatusOK, "GET", "/v1/packs/notes", nil, &p)
	if p.Disabled {
		t.Error("the policy's refusal disabled the pack anyway")
	}

	if err := os.WriteFile(filepath.Join(src, "SKILL.md"), mustRead(t, filepath.Join(next, "SKILL.md")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, preview := range []bool{true, false} {
		eb = errorBody{}
		if st := e.do("POST", "/v1/packs/notes/update", map[string]any{"preview": preview}, &eb); st != http.StatusForbidden || eb.Error.Code != codeDenied {
			t.Errorf("update (preview %v) to blocked content: got %d %+v, want 403 denied", preview, st, eb.Error)
		}
	}
	e.must(http.StatusOK, "GET", "/v1/packs/notes", nil, &p)
	if p.Integrity != installed.Integrity {
		t.Errorf("a refused update changed the pack: %s, was %s", p.Integrity, installed.Integrity)
	}

	eb = errorBody{}
	if st := e.do("POST", "/v1/packs", map[string]any{"source": other(t, "other"), "preview": true}, &eb); st != http.StatusForbidden || eb.Error.Code != codeDenied {
		t.Errorf("preview a blocked pack: got %d %+v, want 403 denied", st, eb.Error)
	}
}

// renamePack renames the pack in dir (a copy of notes) to name.
func renamePack(t *testing.T, dir, name string) {
	t.Helper()
	p := filepath.Join(dir, "SKILL.md")
	b := strings.Replace(string(mustRead(t, p)), "name: notes", "name: "+name, 1)
	if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInstallPreview: the consent dialog's preview says what the pack asks
// for and installs nothing, for a path and for an upload; the install that
// follows is bound to the content reviewed: other content is refused (409)
// and nothing is installed.
func TestInstallPreview(t *testing.T) {
	e := newEnv(t, envOptions{})
	src := notesVariant(t, "SKILL.md", func(s string) string { return s })
	var offer offerJSON
	e.must(http.StatusOK, "POST", "/v1/packs", map[string]any{"source": src, "preview": true, "grant": []string{"all"}}, &offer)
	if offer.Name != "notes" || offer.Version != "1.0.0" || !strings.HasPrefix(offer.Integrity, "sha256:") || len(offer.Tools) != 5 ||
		len(offer.Capabilities) != 1 || offer.Capabilities[0].Capability != "terminal_exec" || strings.Join(offer.Capabilities[0].Requested, ",") != "sh" {
		t.Errorf("the offer: got %+v", offer)
	}
	code, raw := uploadForm(t, e, map[string]string{"preview": "true"}, tarPack(t, src, "notes"))
	if code != http.StatusOK || !strings.Contains(string(raw), offer.Integrity) {
		t.Errorf("the upload's preview: got %d %s, want 200 with %s", code, raw, offer.Integrity)
	}
	var list struct{ Total int }
	e.must(http.StatusOK, "GET", "/v1/packs", nil, &list)
	if list.Total != 0 {
		t.Fatalf("a preview installed %d packs", list.Total)
	}

	// The folder changes between the dialog and the person's yes.
	if err := os.WriteFile(filepath.Join(src, "SKILL.md"), append(mustRead(t, filepath.Join(src, "SKILL.md")), "\nChanged.\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	var eb errorBody
	if st := e.do("POST", "/v1/packs", map[string]any{"source": src, "grant": []string{"all"}, "integrity": offer.Integrity}, &eb); st != http.StatusConflict || eb.Error.Code != codeConflict {
		t.Errorf("install of content other than reviewed: got %d %+v, want 409", st, eb.Error)
	}
	e.must(http.StatusOK, "GET", "/v1/packs", nil, &list)
	if list.Total != 0 {
		t.Fatalf("content other than reviewed was installed")
	}
	e.must(http.StatusOK, "POST", "/v1/packs", map[string]any{"source": src, "preview": true}, &offer)
	var p packJSON
	e.must(http.StatusCreated, "POST", "/v1/packs", map[string]any{"source": src, "grant": []string{"terminal_exec"}, "integrity": offer.Integrity}, &p)
	if p.Integrity != offer.Integrity || !p.Capabilities[0].Granted {
		t.Errorf("installed: got %+v, want %s with terminal_exec granted", p, offer.Integrity)
	}
	for _, bad := range []string{"", "notes", "relative/dir"} {
		if st := e.do("POST", "/v1/packs", map[string]any{"source": bad}, nil); st != http.StatusBadRequest {
			t.Errorf("source %q: got %d, want 400", bad, st)
		}
	}
}

// uploadForm posts a multipart install form: fields and the archive.
func uploadForm(t *testing.T, e *env, fields map[string]string, archive []byte) (int, []byte) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	fw, err := mw.CreateFormFile("archive", "notes.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(archive)
	mw.Close()
	req, _ := http.NewRequest("POST", e.url+"/v1/packs", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+e.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// TestUpdateFromApp: an update that asks for more shows the diff and the
// grants that carry over, changes nothing on preview, and grants of the new
// requests only what the person ticked; a capability it does not newly ask
// for cannot be granted through it.
func TestUpdateFromApp(t *testing.T) {
	e := newEnv(t, envOptions{})
	src := notesVariant(t, "SKILL.md", func(s string) string { return s })
	e.must(http.StatusCreated, "POST", "/v1/packs", map[string]any{"source": src, "grant": []string{"terminal_exec"}}, nil)
	var res struct {
		Status string
		Offer  *offerJSON
		Pack   *packJSON
	}
	e.must(http.StatusOK, "POST", "/v1/packs/notes/update", map[string]any{"preview": true}, &res)
	if res.Status != "up_to_date" {
		t.Errorf("an unchanged source: got %q, want up_to_date", res.Status)
	}
	toml := filepath.Join(src, "skill.toml")
	next := strings.Replace(strings.Replace(string(mustRead(t, toml)), "version = \"1.0.0\"", "version = \"1.1.0\"", 1),
		"[capabilities]\n", "[capabilities]\nnetwork = [\"api.example.com\"]\nenv_read = [\"LANG\"]\n", 1)
	if err := os.WriteFile(toml, []byte(next), 0o644); err != nil {
		t.Fatal(err)
	}
	e.must(http.StatusOK, "POST", "/v1/packs/notes/update", map[string]any{"preview": true}, &res)
	o := res.Offer
	if res.Status != "available" || o == nil || o.From != "1.0.0" || o.Version != "1.1.0" || strings.Join(o.Carried, ",") != "terminal_exec" ||
		!strings.Contains(strings.Join(o.Changes, "\n"), "+ network: api.example.com") {
		t.Fatalf("the update's offer: got %s %+v", res.Status, o)
	}
	var p packJSON
	e.must(http.StatusOK, "GET", "/v1/packs/notes", nil, &p)
	if p.Version != "1.0.0" {
		t.Fatalf("a preview updated the pack to %s", p.Version)
	}
	var eb errorBody
	if st := e.do("POST", "/v1/packs/notes/update", map[string]any{"integrity": o.Integrity, "grant": []string{"terminal_exec"}}, &eb); st != http.StatusBadRequest {
		t.Errorf("granting through an update what it does not newly ask for: got %d %+v, want 400", st, eb.Error)
	}
	if st := e.do("POST", "/v1/packs/notes/update", map[string]any{"integrity": "sha256:" + strings.Repeat("0", 64)}, &eb); st != http.StatusConflict {
		t.Errorf("an update to content other than reviewed: got %d %+v, want 409", st, eb.Error)
	}
	e.must(http.StatusOK, "POST", "/v1/packs/notes/update", map[string]any{"integrity": o.Integrity, "grant": []string{"network"}}, &res)
	if res.Status != "updated" || res.Pack == nil || res.Pack.Version != "1.1.0" {
		t.Fatalf("update: got %s %+v", res.Status, res.Pack)
	}
	granted := map[string]bool{}
	for _, c := range res.Pack.Capabilities {
		granted[string(c.Capability)] = c.Granted
	}
	if !granted["terminal_exec"] || !granted["network"] || granted["env_read"] {
		t.Errorf("grants after the update: got %v, want terminal_exec and network, not env_read", granted)
	}
}

// TestPackDetailsPaths: a pack's details show the paths it holds as real
// paths: a path in the workspace, as the pack wrote it ("./data") when no
// chat is named, and in the named chat's own workspace; a path in the
// person's home, expanded. Never a made-up workspace. Its docs come
// rendered.
func TestPackDetailsPaths(t *testing.T) {
	e := newEnv(t, envOptions{})
	dir := notesVariant(t, "skill.toml", func(s string) string {
		return strings.Replace(s, "[capabilities]\n", "[capabilities]\nfilesystem_read = [\"./data\"]\n", 1)
	})
	e.must(http.StatusCreated, "POST", "/v1/packs", map[string]any{"source": dir, "grant": []string{"all"}}, nil)
	read := func(p packJSON) capJSON {
		for _, c := range p.Capabilities {
			if c.Capability == "filesystem_read" {
				return c
			}
		}
		t.Fatalf("no filesystem_read in %+v", p.Capabilities)
		return capJSON{}
	}
	var p packJSON
	e.must(http.StatusOK, "GET", "/v1/packs/notes", nil, &p)
	if c := read(p); strings.Join(c.Effective, ",") != "./data" || strings.Join(c.GrantedResources, ",") != "./data" {
		t.Errorf("outside a chat: got effective %v, granted %v; want ./data", c.Effective, c.GrantedResources)
	}
	if p.Docs == nil || p.Docs.File != "SKILL.md" || !strings.Contains(p.Docs.HTML, "<h1") {
		t.Errorf("the docs: got %+v", p.Docs)
	}
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{}, &c)
	e.must(http.StatusOK, "GET", "/v1/packs/notes?chat="+c.ID, nil, &p)
	e.srv.mu.Lock()
	ws := e.srv.chats[c.ID].s.Workspace()
	e.srv.mu.Unlock()
	if got := read(p); strings.Join(got.Effective, ",") != filepath.Join(ws, "data") {
		t.Errorf("in chat %s: got %v, want %s", c.ID, got.Effective, filepath.Join(ws, "data"))
	}
	if st := e.do("GET", "/v1/packs/notes?chat=chat_nosuch", nil, nil); st != http.StatusNotFound {
		t.Errorf("an unknown chat: got %d, want 404", st)
	}
}

// TestInstallFromURL: the app installs from a URL as packs add does (a git
// repository here), preview first, then bound to the reviewed content; the
// lock records the resolved commit.
func TestInstallFromURL(t *testing.T) {
	url, commit := gitSource(t, notesPack)
	e := newEnv(t, envOptions{})
	var offer offerJSON
	e.must(http.StatusOK, "POST", "/v1/packs", map[string]any{"source": url, "preview": true}, &offer)
	if offer.Name != "notes" || len(offer.Capabilities) != 1 {
		t.Fatalf("the offer of %s: got %+v", url, offer)
	}
	var p packJSON
	e.must(http.StatusCreated, "POST", "/v1/packs", map[string]any{"source": url, "integrity": offer.Integrity, "grant": []string{"terminal_exec"}}, &p)
	entry, err := e.app.Home.Entry("notes")
	if err != nil {
		t.Fatal(err)
	}
	if p.Integrity != offer.Integrity || !strings.Contains(entry.Resolved, commit) {
		t.Errorf("installed from %s: integrity %s (reviewed %s), resolved %q (commit %s)", url, p.Integrity, offer.Integrity, entry.Resolved, commit)
	}
}

// gitSource commits a copy of the pack folder dir to a bare git
// repository and returns its git+file:// URL (branch main) and the
// commit. It skips the test without git.
func gitSource(t *testing.T, dir string) (url, commit string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	work := filepath.Join(root, "work")
	if err := os.CopyFS(work, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git(root, "init", "-q", work)
	git(work, "add", "-A")
	git(work, "commit", "-q", "-m", "v1")
	commit = git(work, "rev-parse", "HEAD")
	bare := filepath.Join(root, filepath.Base(dir)+".git")
	git(root, "clone", "-q", "--bare", work, bare)
	return "git+file://" + filepath.ToSlash(bare) + "#main", commit
}
