package secrets_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/secrets"
)

const value = "ghp_SecretStoreValue0123456789abcdef"

func TestSecretStoreSetGetListRemove(t *testing.T) {
	dir := t.TempDir()
	s := secrets.Open(dir)
	if _, err := s.Get("GITHUB_TOKEN"); !errors.Is(err, secrets.ErrNotFound) {
		t.Fatalf("Get before Set: err = %v, want ErrNotFound", err)
	}
	if err := s.Set("GITHUB_TOKEN", []byte(value)); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get("GITHUB_TOKEN")
	if err != nil || string(got) != value {
		t.Fatalf("Get = %q, %v; want the value", got, err)
	}
	list, err := s.List()
	if err != nil || len(list) != 1 || list[0].Name != "GITHUB_TOKEN" || list[0].SetAt.IsZero() {
		t.Fatalf("List = %+v, %v", list, err)
	}
	for _, f := range []string{secrets.KeyFile, secrets.StoreFile} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fi.Mode().Perm(), os.FileMode(0o600); got != want {
			t.Errorf("%s mode = %04o, want %04o", f, got, want)
		}
		b, _ := os.ReadFile(filepath.Join(dir, f))
		if bytes.Contains(b, []byte(value)) {
			t.Errorf("%s holds the value in the clear", f)
		}
	}
	if err := s.Remove("GITHUB_TOKEN"); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove("GITHUB_TOKEN"); !errors.Is(err, secrets.ErrNotFound) {
		t.Fatalf("second Remove: err = %v, want ErrNotFound", err)
	}
}

func TestSecretStoreRefuses(t *testing.T) {
	tests := []struct {
		name, secret, value string
		want                error
	}{
		{"empty name", "", "v", secrets.ErrBadName},
		{"leading digit", "1TOKEN", "v", secrets.ErrBadName},
		{"colon", "reveal:A", "v", secrets.ErrBadName},
		{"brace", "A}}", "v", secrets.ErrBadName},
		{"empty value", "A", "", secrets.ErrBadValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := secrets.Open(t.TempDir()).Set(tt.secret, []byte(tt.value)); !errors.Is(err, tt.want) {
				t.Errorf("Set(%q) = %v, want %v", tt.secret, err, tt.want)
			}
		})
	}
}

// A key open to other users is refused, and a sealed value moved under
// another name does not open: the name is bound into the ciphertext.
func TestSecretStoreTamper(t *testing.T) {
	dir := t.TempDir()
	s := secrets.Open(dir)
	if err := s.Set("A", []byte(value)); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("B", []byte("other")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, secrets.StoreFile)
	b, _ := os.ReadFile(path)
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	m := doc["secrets"].(map[string]any)
	m["B"] = m["A"]
	b, _ = json.Marshal(doc)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get("B"); !errors.Is(err, secrets.ErrBadStore) {
		t.Fatalf("Get of a moved value = %q, %v; want ErrBadStore", v, err)
	}
	if err := os.Chmod(filepath.Join(dir, secrets.KeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("A"); !errors.Is(err, secrets.ErrBadStore) {
		t.Fatalf("Get with a world-readable key: err = %v, want ErrBadStore", err)
	}
}

// TestSecretStoreMasker: the masker masks every stored value and sees a
// value set after it was made.
func TestSecretStoreMasker(t *testing.T) {
	s := secrets.Open(t.TempDir())
	m := s.Masker()
	if got := m.MaskString("a " + value); got != "a "+value {
		t.Errorf("empty store masked %q", got)
	}
	if err := s.Set("A", []byte(value)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	if got := m.MaskString("a " + value); strings.Contains(got, value) {
		t.Errorf("MaskString = %q, want the value masked", got)
	}
}
