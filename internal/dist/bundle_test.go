package dist

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bundleEntries reads a bundle into name → content, in order.
func bundleEntries(t testing.TB, data []byte) ([]string, map[string][]byte) {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(data))
	var names []string
	out := map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names, out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		names = append(names, hdr.Name)
		out[hdr.Name] = b
	}
}

func writeBundle(t testing.TB, names []string, files map[string][]byte) string {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, n := range names {
		tw.WriteHeader(&tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(files[n]))})
		tw.Write(files[n])
	}
	tw.Close()
	p := filepath.Join(t.TempDir(), "x.bundle")
	os.WriteFile(p, b.Bytes(), 0o644)
	return p
}

func TestStageBundleRejectsTampering(t *testing.T) {
	dir := t.TempDir()
	file, data := signedArchive(t, dir, "1.0.0")
	key, pub := sshKey(t, t.TempDir(), "alice", "ed25519")
	os.WriteFile(file+SignatureExt, signWith(t, key, data), 0o644)
	trust := Trust{Signers: []string{pub}}
	a := openTestHome(t, t.TempDir())
	if _, err := stageSource(t, a, file, FetchOptions{Trust: trust}); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := a.ExportBundle(context.Background(), &b, nil); err != nil {
		t.Fatal(err)
	}
	names, files := bundleEntries(t, b.Bytes())
	if want := []string{"bundle.toml", "packs.lock", "packs/weather.tar.gz", "packs/weather.tar.gz.sig"}; strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("bundle holds %v, want %v", names, want)
	}
	if !bytes.Equal(files["packs/weather.tar.gz"], data) {
		t.Error("the bundle does not carry the signed archive itself")
	}
	mutate := func(f func(names []string, files map[string][]byte) []string) string {
		c := map[string][]byte{}
		for k, v := range files {
			c[k] = bytes.Clone(v)
		}
		return writeBundle(t, f(append([]string(nil), names...), c), c)
	}
	otherArchive, _ := packBytes(t, writePack(t, t.TempDir(), "weather", "6.6.6"))
	tests := []struct {
		name string
		file string
		err  error
	}{
		{"archive swapped", mutate(func(n []string, f map[string][]byte) []string {
			f["packs/weather.tar.gz"] = otherArchive
			return n
		}), ErrDigestMismatch},
		{"archive and digest swapped", mutate(func(n []string, f map[string][]byte) []string {
			f["bundle.toml"] = []byte(strings.Replace(string(f["bundle.toml"]), sha256Hex(data), sha256Hex(otherArchive), 1))
			f["packs/weather.tar.gz"] = otherArchive
			return n
		}), ErrSignature},
		{"signature stripped", mutate(func(n []string, f map[string][]byte) []string {
			return n[:3]
		}), ErrSignatureRequired},
		{"integrity changed", mutate(func(n []string, f map[string][]byte) []string {
			l := string(f["packs.lock"])
			i := strings.Index(l, "integrity = \"sha256:") + len("integrity = \"sha256:")
			f["packs.lock"] = []byte(l[:i] + strings.Repeat("0", 64) + l[i+64:])
			return n
		}), ErrDigestMismatch},
		{"extra entry", mutate(func(n []string, f map[string][]byte) []string {
			f["../evil"] = []byte("x")
			return append(n, "../evil")
		}), ErrBundleInvalid},
		{"no manifest", mutate(func(n []string, f map[string][]byte) []string {
			return n[1:]
		}), ErrBundleInvalid},
	}
	h := openTestHome(t, t.TempDir())
	for _, tt := range tests {
		_, err := h.StageBundle(context.Background(), tt.file, StageOptions{}, trust)
		if !errors.Is(err, tt.err) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.err)
		}
	}
	if left := tmpLeft(t, h); len(left) != 0 {
		t.Errorf("tmp/ left %v", left)
	}
	if l, _ := h.ReadLock(); len(l.Packs) != 0 {
		t.Errorf("a rejected bundle installed %v", l.Packs)
	}
}

func FuzzReadBundle(f *testing.F) {
	f.Add([]byte{})
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range []struct{ name, body string }{
		{"bundle.toml", "version = 1\n[[packs]]\nname = \"w\"\narchive = \"sha256:" + strings.Repeat("0", 64) + "\"\n"},
		{"packs.lock", "version = 1\n"},
		{"packs/w.tar.gz", "x"},
	} {
		tw.WriteHeader(&tar.Header{Name: e.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(e.body))})
		tw.Write([]byte(e.body))
	}
	tw.Close()
	f.Add(b.Bytes())
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(dir, "b")
		os.WriteFile(file, data, 0o600)
		out := filepath.Join(dir, "out")
		os.RemoveAll(out)
		os.Mkdir(out, 0o700)
		readBundle(file, out, ArchiveLimits{MaxBytes: 1 << 20})
		ents, _ := os.ReadDir(out)
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".tar.gz") && !strings.HasSuffix(e.Name(), ".tar.gz.sig") {
				t.Fatalf("wrote %q", e.Name())
			}
		}
	})
}
