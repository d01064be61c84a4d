package web

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/packs-run/packs/internal/dist"
)

// testKey is an SSH key pair: its authorized_keys line and OpenSSH PEM.
func testKey(t *testing.T) (string, []byte) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp))), pem.EncodeToMemory(block)
}

// notesVariant copies the notes pack and edits one of its files.
func notesVariant(t *testing.T, file string, edit func(string) string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "notes")
	if err := os.CopyFS(dir, os.DirFS(notesPack)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, file)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(edit(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// signedNotes packs the notes pack into an archive beside its signature
// by priv, and returns the archive's path.
func signedNotes(t *testing.T, priv []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := dist.PackArchive(notesPack, &buf); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "notes.tar.gz")
	if err := os.WriteFile(archive, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sig, err := dist.SignArchive(bytes.NewReader(buf.Bytes()), priv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(archive+".sig", sig, 0o644); err != nil {
		t.Fatal(err)
	}
	return archive
}

// TestInstallAppliesPolicy: POST /v1/packs installs through the same
// installer as packs add, so the policy holds there too: each refusal, for
// a folder path and for an upload where one can carry the reason, answers
// with its status and installs nothing.
func TestInstallAppliesPolicy(t *testing.T) {
	trusted, trustedPriv := testKey(t)
	_, otherPriv := testKey(t)
	same := func(s string) string { return s }
	otherOS := "windows"
	if goruntime.GOOS == "windows" {
		otherOS = "linux"
	}
	tests := []struct {
		name   string
		policy string
		path   string // a folder or archive on this machine
		upload bool   // also upload path's folder as an archive
		grant  []string
		status int
		code   string
	}{
		{"blocked", "[packs]\nblocked = [\"notes\"]\n", notesPack, true, nil, http.StatusForbidden, codeDenied},
		{"unsigned under require_signature", "[trust]\nrequire_signature = [\"all\"]\n", notesPack, true, nil, http.StatusForbidden, codeDenied},
		{"untrusted signer", "", signedNotes(t, otherPriv), false, nil, http.StatusForbidden, codeDenied},
		{"blocked signer", "[trust]\nsigners = [\"" + trusted + "\"]\nblocked_signers = [\"" + trusted + "\"]\n", signedNotes(t, trustedPriv), false, nil, http.StatusForbidden, codeDenied},
		{"wrong platform", "", notesVariant(t, "skill.toml", func(s string) string { return s + "\n[platform]\nos = [\"" + otherOS + "\"]\n" }), true, nil, http.StatusUnprocessableEntity, codeInvalidPack},
		{"missing dependency", "", notesVariant(t, "skill.toml", func(s string) string { return s + "\n[dependencies]\n\"core.shell\" = \">=1.0\"\n" }), true, nil, http.StatusUnprocessableEntity, codeInvalidPack},
		{"refused consent", "", notesVariant(t, "skill.toml", same), true, []string{"network"}, http.StatusBadRequest, codeBadRequest},
		{"exec not requested", "", notesVariant(t, "tools.json", func(s string) string {
			return strings.Replace(s, "[", `[{"name": "list", "description": "List files.", "input_schema": {"type": "object"}, "run": {"exec": ["ls"]}},`, 1)
		}), true, nil, http.StatusUnprocessableEntity, codeInvalidPack},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			policy := filepath.Join(t.TempDir(), "policy.toml")
			if err := os.WriteFile(policy, []byte(tt.policy), 0o644); err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, envOptions{policy: policy})
			var eb errorBody
			if got := e.do("POST", "/v1/packs", map[string]any{"path": tt.path, "grant": tt.grant}, &eb); got != tt.status || eb.Error.Code != tt.code {
				t.Errorf("path: got %d %+v, want %d %s", got, eb.Error, tt.status, tt.code)
			}
			if tt.upload {
				if got, body := upload(t, e, "notes.tar.gz", tarPack(t, tt.path, "notes"), strings.Join(tt.grant, ",")); got != tt.status {
					t.Errorf("upload: got %d %s, want %d", got, body, tt.status)
				}
			}
			var list struct{ Total int }
			e.must(http.StatusOK, "GET", "/v1/packs", nil, &list)
			if list.Total != 0 {
				t.Errorf("a refused install left %d packs installed", list.Total)
			}
		})
	}
}
