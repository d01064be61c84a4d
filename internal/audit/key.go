package audit

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/packs-run/packs/internal/store"
)

// The files the audit key and the newest checkpoint live in, in the key
// directory (by default the directory of packs.db: the state directory).
// Neither is ever stored in packs.db.
const (
	KeyFile        = "audit.key"
	CheckpointFile = "audit.checkpoint"
)

var (
	// ErrKeyMissing: the log was keyed, but the key file is gone. A new key
	// is never made in its place: the rows under the old one could then no
	// longer be told from forgeries.
	ErrKeyMissing = errors.New("audit: the key file is missing")
	// ErrWrongKey: the key file is not the one this log was keyed with.
	ErrWrongKey = errors.New("audit: the key file is not this log's")
	// ErrBadKey: the key file cannot be used (unreadable, malformed, or
	// readable by other users).
	ErrBadKey = errors.New("audit: the key file is unusable")
	// ErrBadCheckpoint: the checkpoint file is damaged or was altered.
	ErrBadCheckpoint = errors.New("audit: the checkpoint file is damaged or was altered")
	// ErrBroken: Export found the chain broken; the rows were written all
	// the same, and no checkpoint was recorded.
	ErrBroken = errors.New("audit: the chain is broken")
)

// key is the secret the row MACs are computed with, and the first seq it
// covers: rows before it were written before the key existed.
type key struct {
	dir    string
	secret []byte
	first  int64
	id     string
}

// keyFile is the stored form of a key.
type keyFile struct {
	Version  int    `json:"version"`
	Key      string `json:"key"`       // 32 random bytes, hex
	FirstSeq int64  `json:"first_seq"` // the first row written under this key
	Created  string `json:"created"`
}

func (k *key) path() string { return filepath.Join(k.dir, KeyFile) }

func keyID(secret []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("packs-audit-key-id-v1"))
	return hex.EncodeToString(m.Sum(nil))[:16]
}

// rowMAC is HMAC-SHA256 under the key of a version tag, the row's seq and
// its chained hash (which covers the previous row's hash and every field).
func (k *key) rowMAC(seq int64, hash string) string { return macRow(k.newMAC(), seq, hash) }

// newMAC is an HMAC-SHA256 under the key, for macRow.
func (k *key) newMAC() hash.Hash { return hmac.New(sha256.New, k.secret) }

// macRow is rowMAC computed with m (from newMAC), which it resets first:
// a verifier keeps one m for many rows.
func macRow(m hash.Hash, seq int64, hash string) string {
	m.Reset()
	var buf [binary.MaxVarintLen64]byte
	for _, f := range [][]byte{[]byte("packs-audit-mac-v1"), strconv.AppendInt(nil, seq, 10), []byte(hash)} {
		m.Write(buf[:binary.PutUvarint(buf[:], uint64(len(f)))])
		m.Write(f)
	}
	return hex.EncodeToString(m.Sum(nil))
}

// checkMACWith reports whether mac is the row MAC of seq and hash, in
// constant time, with m from newMAC.
func checkMACWith(m hash.Hash, seq int64, hash, mac string) bool {
	return hmac.Equal([]byte(macRow(m, seq, hash)), []byte(mac))
}

// readKey reads the key file in dir. A missing file is fs.ErrNotExist.
func readKey(dir string) (*key, error) { return readKeyFile(filepath.Join(dir, KeyFile)) }

// readKeyFile reads the key at path; the checkpoint is looked for beside it.
func readKeyFile(path string) (*key, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrBadKey, path, err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s is open to other users (mode %04o): it must be 0600", ErrBadKey, path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadKey, path, err)
	}
	var f keyFile
	if err := json.Unmarshal(b, &f); err != nil || f.Version != 1 || f.FirstSeq < 1 {
		return nil, fmt.Errorf("%w: %s is not a packs audit key", ErrBadKey, path)
	}
	secret, err := hex.DecodeString(f.Key)
	if err != nil || len(secret) != 32 {
		return nil, fmt.Errorf("%w: %s does not hold a 32-byte key", ErrBadKey, path)
	}
	return &key{dir: filepath.Dir(path), secret: secret, first: f.FirstSeq, id: keyID(secret)}, nil
}

// keyRecord is what packs.db says about its key: its id and first seq.
type keyRecord struct {
	known bool
	id    string
	first int64
}

func readKeyRecord(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (keyRecord, error) {
	var r keyRecord
	err := q.QueryRowContext(ctx, `SELECT key_id, first_seq FROM audit_key WHERE id = 1`).Scan(&r.id, &r.first)
	switch {
	case err == nil:
		r.known = true
	case !errors.Is(err, sql.ErrNoRows):
		return r, err
	}
	return r, nil
}

// loadKey reads the key for db from dir without ever making one. It returns
// nil and no error for a log that was never keyed, ErrKeyMissing when it
// was, ErrWrongKey when the file holds another log's key.
func loadKey(ctx context.Context, db *sql.DB, dir string) (*key, error) {
	rec, err := readKeyRecord(ctx, db)
	if err != nil {
		return nil, err
	}
	k, err := readKey(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if rec.known {
			return nil, fmt.Errorf("%w: %s: this log was keyed with key %s from seq %d", ErrKeyMissing, filepath.Join(dir, KeyFile), rec.id, rec.first)
		}
		if _, err := os.Stat(filepath.Join(dir, CheckpointFile)); err == nil {
			return nil, fmt.Errorf("%w: %s: a checkpoint of a keyed log is beside it", ErrKeyMissing, filepath.Join(dir, KeyFile))
		}
		return nil, nil
	case err != nil:
		return nil, err
	case rec.known && rec.id != k.id:
		return nil, fmt.Errorf("%w: %s holds key %s, the log was keyed with key %s", ErrWrongKey, k.path(), k.id, rec.id)
	}
	return k, nil
}

// ensureKey loads the key for db from dir, making one on first use: 32
// random bytes in a new file of mode 0600, covering every row after the
// newest one. The head is read inside a write transaction, so no row can
// slip in between.
func ensureKey(ctx context.Context, sdb *store.DB, dir string) (*key, error) {
	db := sdb.SQL()
	k, err := loadKey(ctx, db, dir)
	if err != nil || k != nil {
		if err == nil {
			err = recordKey(ctx, db, k)
		}
		return k, err
	}
	tx, err := db.BeginTx(ctx, nil) // SQLite's _txlock=immediate: this takes the write lock
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if sdb.Dialect() == store.Postgres {
		if _, err := tx.ExecContext(ctx, chainLockSQL); err != nil {
			return nil, err
		}
	}
	var head int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM audit`).Scan(&head); err != nil {
		return nil, err
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	k = &key{dir: dir, secret: secret, first: head + 1, id: keyID(secret)}
	b, err := json.Marshal(keyFile{Version: 1, Key: hex.EncodeToString(secret), FirstSeq: k.first, Created: time.Now().UTC().Format(time.RFC3339)})
	if err != nil {
		return nil, err
	}
	switch err := createExclusive(k.path(), b); {
	case errors.Is(err, fs.ErrExist): // another process made it first
		tx.Rollback()
		return ensureKey(ctx, sdb, dir)
	case err != nil:
		return nil, fmt.Errorf("audit: create the key: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO audit_key(id, key_id, first_seq) VALUES(1, ?, ?)`, k.id, k.first); err != nil {
		return nil, err
	}
	return k, tx.Commit()
}

// recordKey notes the key in packs.db when it is not there yet (a packs.db
// restored from before the key was made).
func recordKey(ctx context.Context, db *sql.DB, k *key) error {
	_, err := db.ExecContext(ctx, `INSERT INTO audit_key(id, key_id, first_seq) VALUES(1, ?, ?) ON CONFLICT(id) DO NOTHING`, k.id, k.first)
	return err
}

// createExclusive writes b to a new file at path with mode 0600, durably,
// failing with fs.ErrExist if path exists: the file appears whole or not at
// all.
func createExclusive(path string, b []byte) error {
	tmp, err := writeTemp(filepath.Dir(path), b, true)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fs.ErrExist
		}
		return err
	}
	return syncDir(filepath.Dir(path))
}

// writeTemp writes b to a new temporary file of mode 0600 in dir and
// returns its path.
func writeTemp(dir string, b []byte, durable bool) (string, error) {
	f, err := os.CreateTemp(dir, ".audit-*.tmp")
	if err != nil {
		return "", err
	}
	name := f.Name()
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && runtime.GOOS != "windows" {
		return err
	}
	return nil
}

// Checkpoint is the newest row packs vouches for, kept outside packs.db
// (the key directory's audit.checkpoint) and authenticated with the key:
// rows cut off after it, or rewritten up to it, are detected by Verify.
type Checkpoint struct {
	KeyID string    `json:"key_id"`
	Seq   int64     `json:"seq"`
	Hash  string    `json:"hash"`
	MAC   string    `json:"mac"`
	At    time.Time `json:"at"`
	By    string    `json:"by"`  // "append" or "export"
	Sig   string    `json:"sig"` // HMAC of the fields above under the key
}

func (k *key) sign(c Checkpoint) string {
	m := hmac.New(sha256.New, k.secret)
	fmt.Fprintf(m, "packs-audit-checkpoint-v1\x00%s\x00%d\x00%s\x00%s\x00%s\x00%s", c.KeyID, c.Seq, c.Hash, c.MAC, c.At.UTC().Format(store.TimeFormat), c.By)
	return hex.EncodeToString(m.Sum(nil))
}

// readCheckpoint reads the checkpoint beside k; none is nil and no error.
func readCheckpoint(k *key) (*Checkpoint, error) {
	path := filepath.Join(k.dir, CheckpointFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadCheckpoint, path, err)
	}
	var c Checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadCheckpoint, path, err)
	}
	if c.KeyID != k.id {
		return nil, fmt.Errorf("%w: %s holds key %s, the checkpoint %s was made with key %s", ErrWrongKey, k.path(), k.id, path, c.KeyID)
	}
	if !hmac.Equal([]byte(k.sign(c)), []byte(c.Sig)) {
		return nil, fmt.Errorf("%w: %s does not verify under the key", ErrBadCheckpoint, path)
	}
	return &c, nil
}

// writeCheckpoint replaces the checkpoint beside k with one at seq. The
// rename is atomic; durable is false on the append path, where a
// checkpoint lost to a power cut only widens the window it covers.
func writeCheckpoint(k *key, seq int64, hash, mac, by string, durable bool) (Checkpoint, error) {
	c := Checkpoint{KeyID: k.id, Seq: seq, Hash: hash, MAC: mac, At: time.Now().UTC(), By: by}
	c.Sig = k.sign(c)
	b, err := json.Marshal(c)
	if err != nil {
		return c, err
	}
	tmp, err := writeTemp(k.dir, append(b, '\n'), durable)
	if err != nil {
		return c, fmt.Errorf("audit: checkpoint: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(k.dir, CheckpointFile)); err != nil {
		os.Remove(tmp)
		return c, fmt.Errorf("audit: checkpoint: %w", err)
	}
	if durable {
		return c, syncDir(k.dir)
	}
	return c, nil
}

// keyDir is where the key of db lives: the directory of packs.db.
func keyDir(ctx context.Context, db *store.DB) (string, error) {
	if db.Dialect() != store.SQLite {
		return "", errors.New("audit: a PostgreSQL store is not a file beside which the key could live: set a key directory")
	}
	var file string
	if err := db.SQL().QueryRowContext(ctx, `SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file); err != nil {
		return "", fmt.Errorf("audit: locate packs.db: %w", err)
	}
	if file == "" {
		return "", errors.New("audit: packs.db is not a file, so there is no directory for the key: set a key directory")
	}
	return filepath.Dir(file), nil
}
