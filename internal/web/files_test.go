package web

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type upFile struct{ name, body string }

// uploadFiles posts files (and dir, when not empty) to the chat's
// workspace and returns the status and the body.
func uploadFiles(t *testing.T, e *env, chatID, dir string, files ...upFile) (int, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if dir != "" {
		mw.WriteField("dir", dir)
	}
	for _, f := range files {
		fw, err := mw.CreateFormFile("file", f.name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(fw, f.body)
	}
	mw.Close()
	req, _ := http.NewRequest("POST", e.url+"/v1/chats/"+chatID+"/files", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+e.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

type fileList struct {
	Items []struct {
		Path string `json:"path"`
		Size int64  `json:"size_bytes"`
		MIME string `json:"mime"`
	} `json:"items"`
	Total     int  `json:"total"`
	Truncated bool `json:"truncated"`
}

// TestWorkspaceFiles: files go into a chat's workspace by upload, are
// listed and come back by download; names and folders stay inside the
// workspace; a file over the cap is refused and leaves nothing (issue 12,
// defect 5).
func TestWorkspaceFiles(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.srv.cfg.MaxWorkspaceFile = 1 << 10
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{}, &c)

	var empty fileList
	e.must(http.StatusOK, "GET", "/v1/chats/"+c.ID+"/files", nil, &empty)
	if empty.Total != 0 || empty.Items == nil {
		t.Errorf("a new workspace: got %+v", empty)
	}

	if got, body := uploadFiles(t, e, c.ID, "", upFile{"app.log", "line 1\nline 2\n"}, upFile{"../../escape.log", "x\n"}); got != http.StatusCreated {
		t.Fatalf("upload: got %d %s", got, body)
	}
	if got, body := uploadFiles(t, e, c.ID, "logs/old", upFile{"worker.log", "w\n"}); got != http.StatusCreated {
		t.Fatalf("upload into a folder: got %d %s", got, body)
	}
	var list fileList
	e.must(http.StatusOK, "GET", "/v1/chats/"+c.ID+"/files", nil, &list)
	var paths []string
	for _, f := range list.Items {
		paths = append(paths, f.Path)
	}
	if got, want := strings.Join(paths, ","), "app.log,escape.log,logs/old/worker.log"; got != want {
		t.Errorf("list: got %s, want %s", got, want)
	}
	if _, err := os.Stat(filepath.Join(e.app.Home.WorkspacesDir(), "escape.log")); err == nil {
		t.Error("a ../ file name left the workspace")
	}
	req, _ := http.NewRequest("GET", e.url+"/v1/chats/"+c.ID+"/files/logs/old/worker.log?download=1", nil)
	req.Header.Set("Authorization", "Bearer "+e.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "w\n" || !strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("download: got %q %v", b, res.Header)
	}

	// A symbolic link out of the workspace is neither followed by the
	// listing nor written through.
	outside := t.TempDir()
	var ws string
	for _, s := range e.srv.chats {
		ws = s.s.Workspace()
	}
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	refused := []struct {
		name, dir string
		file      upFile
	}{
		{"dot-dot folder", "../x", upFile{"a.log", "a"}},
		{"absolute folder", "/tmp", upFile{"a.log", "a"}},
		{"through a symbolic link", "out", upFile{"a.log", "a"}},
		{"over the size cap", "", upFile{"big.log", strings.Repeat("x", 2<<10)}},
		{"no name", "", upFile{"", "a"}},
	}
	for _, tt := range refused {
		if got, body := uploadFiles(t, e, c.ID, tt.dir, tt.file); got < 400 || got >= 500 {
			t.Errorf("%s: got %d %s, want a 4xx", tt.name, got, body)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Errorf("the upload wrote through the link: %v", ents)
	}
	e.must(http.StatusOK, "GET", "/v1/chats/"+c.ID+"/files", nil, &list)
	for _, f := range list.Items {
		if strings.HasPrefix(f.Path, "out/") || f.Path == "big.log" || strings.HasPrefix(f.Path, ".upload") {
			t.Errorf("listed %s", f.Path)
		}
	}
	if got := e.do("GET", "/v1/chats/chat_nope/files", nil, nil); got != http.StatusNotFound {
		t.Errorf("files of an unknown chat: got %d", got)
	}
}
