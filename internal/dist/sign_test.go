package dist

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sshKey makes a key pair with ssh-keygen and returns the private key path
// and the public key line.
func sshKey(t testing.TB, dir, name, typ string) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed")
	}
	key := filepath.Join(dir, name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", typ, "-N", "", "-C", name+"@example.com", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return key, strings.TrimSpace(string(pub))
}

// signedArchive packs a weather pack into dir/weather.tar.gz.
func signedArchive(t testing.TB, dir, version string) (string, []byte) {
	t.Helper()
	data, _ := packBytes(t, writePack(t, t.TempDir(), "weather", version))
	file := filepath.Join(dir, "weather.tar.gz")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return file, data
}

func signWith(t testing.TB, key string, data []byte) []byte {
	t.Helper()
	pem, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := SignArchive(bytes.NewReader(data), pem)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

func TestSignatureInteropWithSSHKeygen(t *testing.T) {
	dir := t.TempDir()
	file, data := signedArchive(t, dir, "1.0.0")
	for _, typ := range []string{"ed25519", "rsa", "ecdsa"} {
		t.Run(typ, func(t *testing.T) {
			key, pub := sshKey(t, t.TempDir(), "alice", typ)
			allowed := filepath.Join(t.TempDir(), "allowed_signers")
			os.WriteFile(allowed, []byte("alice@example.com "+pub+"\n"), 0o644)
			// ours → ssh-keygen
			sigFile := filepath.Join(t.TempDir(), "ours.sig")
			os.WriteFile(sigFile, signWith(t, key, data), 0o644)
			cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", allowed, "-I", "alice@example.com", "-n", "packs", "-s", sigFile)
			cmd.Stdin = bytes.NewReader(data)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("ssh-keygen -Y verify refuses our signature: %v\n%s", err, out)
			}
			// ssh-keygen → ours
			if out, err := exec.Command("ssh-keygen", "-Y", "sign", "-n", "packs", "-f", key, file).CombinedOutput(); err != nil {
				t.Fatalf("ssh-keygen -Y sign: %v\n%s", err, out)
			}
			theirs, err := os.ReadFile(file + ".sig")
			if err != nil {
				t.Fatal(err)
			}
			os.Remove(file + ".sig")
			signer, err := Trust{Signers: []string{pub}}.VerifyArchive(bytes.NewReader(data), theirs)
			if want, _ := NormalizeKey(pub); err != nil || signer != want {
				t.Fatalf("VerifyArchive(ssh-keygen's signature) = %q, %v; want %q", signer, err, want)
			}
		})
	}
}

func TestVerifyArchiveRejects(t *testing.T) {
	dir := t.TempDir()
	file, data := signedArchive(t, dir, "1.0.0")
	key, pub := sshKey(t, dir, "alice", "ed25519")
	_, mallory := sshKey(t, dir, "mallory", "ed25519")
	good := signWith(t, key, data)
	if out, err := exec.Command("ssh-keygen", "-Y", "sign", "-n", "file", "-f", key, file).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	otherNS, _ := os.ReadFile(file + ".sig")
	tampered := bytes.Clone(data)
	tampered[len(tampered)/2] ^= 1
	tests := []struct {
		name  string
		trust Trust
		data  []byte
		sig   []byte
		err   error
	}{
		{"tampered archive", Trust{Signers: []string{pub}}, tampered, good, ErrSignature},
		{"other namespace", Trust{Signers: []string{pub}}, data, otherNS, ErrSignature},
		{"garbage", Trust{Signers: []string{pub}}, data, []byte("-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n"), ErrSignature},
		{"empty", Trust{Signers: []string{pub}}, data, []byte{}, ErrSignature},
		{"untrusted", Trust{Signers: []string{mallory}}, data, good, ErrUntrustedSigner},
		{"no signers", Trust{}, data, good, ErrUntrustedSigner},
		{"blocked", Trust{Signers: []string{pub}, Blocked: []string{pub}}, data, good, ErrSignerBlocked},
	}
	for _, tt := range tests {
		_, err := tt.trust.VerifyArchive(bytes.NewReader(tt.data), tt.sig)
		if !errors.Is(err, tt.err) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.err)
		}
	}
}

func TestStageSigned(t *testing.T) {
	dir := t.TempDir()
	file, data := signedArchive(t, dir, "1.0.0")
	key, pub := sshKey(t, t.TempDir(), "alice", "ed25519")
	_, mallory := sshKey(t, t.TempDir(), "mallory", "ed25519")
	sig := signWith(t, key, data)
	unsignedDir := t.TempDir()
	unsigned, _ := signedArchive(t, unsignedDir, "1.0.0")
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	pin := "#sha256=" + sha256Hex(data)
	alice, _ := NormalizeKey(pub)

	h := openTestHome(t, t.TempDir())
	old := install(t, h, writePack(t, t.TempDir(), "weather", "0.9.0"))
	os.WriteFile(file+SignatureExt, []byte("not a signature"), 0o644)
	bad := []struct {
		name, source string
		trust        Trust
		err          error
	}{
		{"bad local signature", file, Trust{Signers: []string{pub}}, ErrSignature},
		{"bad URL signature", srv.URL + "/weather.tar.gz" + pin, Trust{Signers: []string{pub}}, ErrSignature},
		{"unsigned, required", unsigned, Trust{Signers: []string{pub}, Require: true}, ErrSignatureRequired},
		{"folder, required", writePack(t, t.TempDir(), "weather", "1.0.0"), Trust{Require: true}, ErrSignatureRequired},
		{"git, required", "git+file:///nowhere.git", Trust{Require: true}, ErrSignatureRequired},
	}
	for _, tt := range bad {
		if _, err := stageSource(t, h, tt.source, FetchOptions{Trust: tt.trust}); !errors.Is(err, tt.err) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.err)
		}
	}
	os.WriteFile(file+SignatureExt, sig, 0o644)
	for _, tt := range bad[:2] {
		if _, err := stageSource(t, h, tt.source, FetchOptions{Trust: Trust{Signers: []string{mallory}}}); !errors.Is(err, ErrUntrustedSigner) {
			t.Errorf("%s by an untrusted key: err = %v, want ErrUntrustedSigner", tt.name, err)
		}
	}
	if e, err := h.Entry("weather"); err != nil || !e.equal(old) {
		t.Fatalf("old install changed: %+v %v", e, err)
	}
	for _, source := range []string{file, srv.URL + "/weather.tar.gz" + pin} {
		e, err := stageSource(t, h, source, FetchOptions{Trust: Trust{Signers: []string{pub}, Require: true}})
		if err != nil {
			t.Fatalf("%s: %v", source, err)
		}
		if e.Signer != alice || e.Version != "1.0.0" {
			t.Errorf("%s: signer %q version %s, want %q 1.0.0", source, e.Signer, e.Version, alice)
		}
		l, _ := h.ReadLock()
		if got, _ := l.Entry("weather"); got.Signer != alice {
			t.Errorf("%s: lock signer %q, want %q", source, got.Signer, alice)
		}
	}
}
