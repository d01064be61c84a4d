// Package secrets is packs' secret store: named values a person sets with
// packs secret set, encrypted at rest, that a pack's tool may use only
// through a grant (docs/secrets.md).
//
// The store is two files in the state directory, apart from packs.db:
// secrets.key (32 random bytes, mode 0600) and secrets.json (mode 0600),
// which maps each name to when it was set and its value sealed with
// AES-256-GCM under that key, with the name as additional data so that a
// value moved under another name does not open. Neither packs.db nor its
// backups ever hold a value, sealed or not.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
)

// Files in the state directory.
const (
	KeyFile   = "secrets.key"
	StoreFile = "secrets.json"
)

// MaxValueBytes caps one secret's value.
const MaxValueBytes = 64 << 10

var (
	// ErrNotFound means no secret has the name.
	ErrNotFound = errors.New("secrets: no such secret")
	// ErrBadName means a name is not a valid secret name.
	ErrBadName = errors.New("secrets: invalid secret name")
	// ErrBadValue means a value is empty, too long or holds a NUL byte.
	ErrBadValue = errors.New("secrets: invalid secret value")
	// ErrBadStore means the key or the store file is unsafe or damaged.
	ErrBadStore = errors.New("secrets: unusable secret store")
)

// CheckName reports whether name may name a secret
// (capability.CheckSecretName: the same rule as in skill.toml).
func CheckName(name string) error {
	if err := capability.CheckSecretName(name); err != nil {
		return fmt.Errorf("%w: %v", ErrBadName, err)
	}
	return nil
}

// Info is what packs secret list shows: never the value.
type Info struct {
	Name  string    `json:"name"`
	SetAt time.Time `json:"set_at"`
}

// entry is one sealed value in secrets.json.
type entry struct {
	SetAt  time.Time `json:"set_at"`
	Sealed string    `json:"sealed"` // base64(nonce || AES-256-GCM ciphertext)
}

type fileDoc struct {
	Version int              `json:"version"`
	Secrets map[string]entry `json:"secrets"`
}

// Store is the secret store in one directory. Its methods are safe for
// concurrent use in one process; two processes that set at once may lose
// one of the writes (each write replaces the file whole, never half).
type Store struct {
	dir string
	mu  sync.Mutex
}

// Open returns the store in dir (the state directory). Files are created
// by the first Set.
func Open(dir string) *Store { return &Store{dir: dir} }

// Set stores value under name, replacing any value it had.
func (s *Store) Set(name string, value []byte) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if len(value) == 0 || len(value) > MaxValueBytes {
		return fmt.Errorf("%w: %s: a value is 1 to %d bytes", ErrBadValue, name, MaxValueBytes)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	aead, err := s.aead(true)
	if err != nil {
		return err
	}
	doc, err := s.read()
	if err != nil {
		return err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(value)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return fmt.Errorf("secrets: random nonce: %w", err)
	}
	sealed := aead.Seal(nonce, nonce, value, []byte(name))
	doc.Secrets[name] = entry{SetAt: time.Now().UTC().Truncate(time.Second), Sealed: base64.StdEncoding.EncodeToString(sealed)}
	return s.write(doc)
}

// Get returns the value of name; ErrNotFound when it is not set.
func (s *Store) Get(name string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	doc, err := s.read()
	if err != nil {
		return nil, err
	}
	e, ok := doc.Secrets[name]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	aead, err := s.aead(false)
	if err != nil {
		return nil, err
	}
	b, err := base64.StdEncoding.DecodeString(e.Sealed)
	if err != nil || len(b) < aead.NonceSize() {
		return nil, fmt.Errorf("%w: %s: the sealed value is damaged", ErrBadStore, name)
	}
	v, err := aead.Open(nil, b[:aead.NonceSize()], b[aead.NonceSize():], []byte(name))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: the value does not open with %s (a different key, or the file was changed)", ErrBadStore, name, KeyFile)
	}
	return v, nil
}

// Lookup is Get for the runtime (runtime.SecretSource): a name that is not
// set is found == false, not an error.
func (s *Store) Lookup(name string) ([]byte, bool, error) {
	v, err := s.Get(name)
	if errors.Is(err, ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

// List returns every secret's name and when it was set, by name.
func (s *Store) List() ([]Info, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	doc, err := s.read()
	if err != nil {
		return nil, err
	}
	out := make([]Info, 0, len(doc.Secrets))
	for n, e := range doc.Secrets {
		out = append(out, Info{Name: n, SetAt: e.SetAt})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Remove deletes name; ErrNotFound when it is not set.
func (s *Store) Remove(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	doc, err := s.read()
	if err != nil {
		return err
	}
	if _, ok := doc.Secrets[name]; !ok {
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	delete(doc.Secrets, name)
	return s.write(doc)
}

// aead returns the cipher under the key file, creating the key when create
// is set and there is none.
func (s *Store) aead(create bool) (cipher.AEAD, error) {
	path := filepath.Join(s.dir, KeyFile)
	key, err := readPrivate(path)
	if errors.Is(err, fs.ErrNotExist) && create {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("secrets: random key: %w", err)
		}
		if err := writeFile(s.dir, KeyFile, key, true); err != nil {
			return nil, fmt.Errorf("secrets: writing %s: %w", path, err)
		}
		// Another process may have made one first: use what is on disk.
		key, err = readPrivate(path)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s is missing", ErrBadStore, path)
		}
		return nil, err
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("%w: %s does not hold a 32-byte key", ErrBadStore, path)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadStore, err)
	}
	return cipher.NewGCM(block)
}

// read loads secrets.json; a missing file is an empty store.
func (s *Store) read() (*fileDoc, error) {
	path := filepath.Join(s.dir, StoreFile)
	b, err := readPrivate(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &fileDoc{Version: 1, Secrets: map[string]entry{}}, nil
	}
	if err != nil {
		return nil, err
	}
	var doc fileDoc
	if err := json.Unmarshal(b, &doc); err != nil || doc.Version != 1 {
		return nil, fmt.Errorf("%w: %s is not a packs secret store", ErrBadStore, path)
	}
	if doc.Secrets == nil {
		doc.Secrets = map[string]entry{}
	}
	return &doc, nil
}

func (s *Store) write(doc *fileDoc) error {
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(s.dir, StoreFile, b, false); err != nil {
		return fmt.Errorf("secrets: writing %s: %w", filepath.Join(s.dir, StoreFile), err)
	}
	return nil
}

// readPrivate reads a file that must be a regular file open to its owner
// only.
func readPrivate(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", ErrBadStore, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrBadStore, path)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s is open to other users (mode %04o): it must be 0600", ErrBadStore, path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadStore, err)
	}
	return b, nil
}

// writeFile replaces dir/name with b, mode 0600, durably: the file is
// written whole to a temporary file first. With exclusive, an existing
// file is kept (fs.ErrExist is not an error: the caller reads it back).
func writeFile(dir, name string, b []byte, exclusive bool) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".secrets-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	dst := filepath.Join(dir, name)
	if exclusive {
		if err := os.Link(tmp, dst); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	} else if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Masker masks the values of every secret in the store, for the audit
// log's redaction (audit.Redactor.Known): values no grant names are masked
// too. It re-reads the store when the file changed, checking at most once
// a second; a store it cannot read masks what it last read.
type Masker struct {
	s       *Store
	mu      sync.Mutex
	checked time.Time
	stamp   string
	sec     *hostfns.Secrets
}

// Masker returns a Masker over s.
func (s *Store) Masker() *Masker { return &Masker{s: s} }

// MaskString returns v with every stored value replaced by hostfns.Masked.
func (m *Masker) MaskString(v string) string {
	return m.current().MaskString(v)
}

func (m *Masker) current() *hostfns.Secrets {
	m.mu.Lock()
	defer m.mu.Unlock()
	if time.Since(m.checked) < time.Second && m.sec != nil {
		return m.sec
	}
	m.checked = time.Now()
	fi, err := os.Stat(filepath.Join(m.s.dir, StoreFile))
	if err != nil {
		return m.sec
	}
	stamp := fi.ModTime().String() + "/" + strconv.FormatInt(fi.Size(), 10)
	if stamp == m.stamp && m.sec != nil {
		return m.sec
	}
	list, err := m.s.List()
	if err != nil {
		return m.sec
	}
	vals := make(map[string][]byte, len(list))
	for _, i := range list {
		if v, err := m.s.Get(i.Name); err == nil {
			vals[i.Name] = v
		}
	}
	m.sec, m.stamp = hostfns.NewSecrets(vals), stamp
	return m.sec
}
