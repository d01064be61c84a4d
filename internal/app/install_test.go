package app

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/dist"
)

// key is an SSH key pair: its authorized_keys line and OpenSSH PEM.
func key(t *testing.T) (string, []byte) {
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

// archive packs dir into a .tar.gz beside a signature by priv (none when
// priv is nil) and returns the archive's path.
func archive(t *testing.T, dir string, priv []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := dist.PackArchive(dir, &buf); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), filepath.Base(dir)+".tar.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if priv != nil {
		sig, err := dist.SignArchive(bytes.NewReader(buf.Bytes()), priv)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p+".sig", sig, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// appended is writePack's pack with more skill.toml and files.
func appended(t *testing.T, manifest string, files map[string]string) string {
	t.Helper()
	dir := writePack(t, "weather", "1.0.0")
	f, err := os.OpenFile(filepath.Join(dir, "skill.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(manifest)
	f.Close()
	for rel, body := range files {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestInstallRefusals drives the installer with each reason to refuse a
// pack: each is an error that means it, and nothing is installed.
func TestInstallRefusals(t *testing.T) {
	trusted, trustedPriv := key(t)
	_, otherPriv := key(t)
	other := "windows"
	if goruntime.GOOS == "windows" {
		other = "linux"
	}
	plain := writePack(t, "weather", "1.0.0")
	grant := Granting(capability.Network)
	tests := []struct {
		name    string
		policy  string
		source  string
		signers []string
		consent Consent
		want    error
	}{
		{"blocked by name", "[packs]\nblocked = [\"weather\"]\n", plain, nil, grant, capability.ErrBlocked},
		{"unsigned folder under require_signature", "[trust]\nrequire_signature = [\"all\"]\n", plain, nil, grant, dist.ErrSignatureRequired},
		{"unsigned archive under require_signature", "[trust]\nrequire_signature = [\"local\"]\n", archive(t, plain, nil), nil, grant, dist.ErrSignatureRequired},
		{"untrusted signer", "", archive(t, plain, otherPriv), nil, grant, dist.ErrUntrustedSigner},
		{"blocked signer", "[trust]\nsigners = [\"" + trusted + "\"]\nblocked_signers = [\"" + trusted + "\"]\n", archive(t, plain, trustedPriv), nil, grant, dist.ErrSignerBlocked},
		{"signer named, archive unsigned", "", archive(t, plain, nil), []string{trusted}, grant, dist.ErrSignatureRequired},
		{"wrong platform", "", appended(t, "\n[platform]\nos = [\""+other+"\"]\n", nil), nil, grant, ErrMisfit},
		{"missing dependency", "", appended(t, "\n[dependencies]\n\"core.shell\" = \">=1.0\"\n", nil), nil, grant, ErrMisfit},
		{"exec not requested", "", appended(t, "", map[string]string{"tools.json": `[{"name": "list", "description": "List files.", "input_schema": {"type": "object"}, "run": {"exec": ["ls"]}}]`}), nil, grant, ErrExecNotRequested},
		{"nobody to consent", "", plain, nil, nil, ErrDeclined},
		{"consent refused", "", plain, nil, ConsentFunc(func(context.Context, Offer) ([]capability.UserGrant, error) { return nil, ErrDeclined }), ErrDeclined},
		{"grant beyond the request", "", plain, nil, Granting(capability.EnvRead), dist.ErrNotRequested},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol := filepath.Join(t.TempDir(), "policy.toml")
			if err := os.WriteFile(pol, []byte(tt.policy), 0o644); err != nil {
				t.Fatal(err)
			}
			a, err := Open(context.Background(), Options{Home: filepath.Join(t.TempDir(), "home"), Policy: pol})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			_, err = a.Install(context.Background(), InstallRequest{Source: tt.source, Signers: tt.signers, Consent: tt.consent, By: "test"})
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if _, err := a.Home.Entry("weather"); !errors.Is(err, dist.ErrNotInstalled) {
				t.Errorf("a refused install left weather installed (%v)", err)
			}
		})
	}
}

// TestInstallAudits: an install leaves its packs.lock entry, its packs.db
// row and grants, and an audit row naming the front end and the grants.
func TestInstallAudits(t *testing.T) {
	ctx := context.Background()
	a := open(t, filepath.Join(t.TempDir(), "home"))
	res, err := a.Install(ctx, InstallRequest{Source: writePack(t, "weather", "1.0.0"), Consent: Granting(capability.Network), By: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Entry.Capabilities[capability.Network].Granted {
		t.Errorf("lock entry %+v: network not granted", res.Entry)
	}
	rows, err := a.DB.Grants(ctx, "weather")
	if err != nil || len(rows) != 1 || rows[0].Capability != capability.Network {
		t.Errorf("packs.db grants = %+v, %v", rows, err)
	}
	var got []audit.Entry
	for e, err := range audit.Entries(ctx, a.DB, audit.Filter{Kind: audit.KindInstall}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	if len(got) != 1 || got[0].Pack != "weather" || !strings.Contains(string(got[0].Body), `"by":"test"`) || !strings.Contains(string(got[0].Body), `"granted":["network"]`) {
		t.Errorf("install rows = %+v", got)
	}
}
