package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/packs"
)

// storeIndex is dist.Home's Index in packs.db: the packs table, which
// syncDB brings in line with packs.lock and marks with the lock's file
// stamp, answers for one pack's entry, and pack_checks keeps what the
// last listing found in each installed folder.
type storeIndex struct{ db *store.DB }

var _ dist.Index = storeIndex{}

// stampKey is a file stamp as packs.db keeps it.
func stampKey(s packs.Stamp) string {
	b, _ := s.MarshalText() // never fails
	return string(b)
}

func (ix storeIndex) LockEntry(lock packs.Stamp, name string) (dist.LockEntry, bool, bool, error) {
	r, found, synced, err := ix.db.SyncedPack(context.Background(), stampKey(lock), name)
	if err != nil || !found {
		return dist.LockEntry{}, false, synced, err
	}
	e, err := lockEntry(r)
	if err != nil {
		return dist.LockEntry{}, false, false, err
	}
	return e, true, true, nil
}

func (ix storeIndex) FolderChecks(ctx context.Context) (map[string]packs.FolderCheck, error) {
	rows, err := ix.db.PackChecks(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]packs.FolderCheck, len(rows))
	for name, r := range rows {
		stamps, err := parseStamps(r.Stamps)
		if err != nil {
			continue // checked again, and recorded anew
		}
		c := packs.FolderCheck{Digest: r.Digest, Stamps: stamps}
		out[name] = c
	}
	return out, nil
}

func (ix storeIndex) RecordFolderChecks(ctx context.Context, put map[string]packs.FolderCheck, drop []string) error {
	rows := make(map[string]store.PackCheck, len(put))
	for name, c := range put {
		stamps, err := json.Marshal(c.Stamps)
		if err != nil {
			return fmt.Errorf("app: record the check of %s: %w", name, err)
		}
		rows[name] = store.PackCheck{Digest: c.Digest, Stamps: stamps}
	}
	return ix.db.RecordPackChecks(ctx, rows, drop)
}

// parseStamps decodes the stamps RecordFolderChecks wrote (the JSON of a
// map of path to stamp text). An object whose strings hold no escape, as
// nearly every pack's do, is read directly: a listing of 10,000 packs reads
// 10,000 of them, and encoding/json took a tenth of its CPU time. Anything
// else goes to encoding/json, and both read the same (FuzzParseStamps).
func parseStamps(raw []byte) (map[string]packs.Stamp, error) {
	rest, ok := bytes.CutPrefix(raw, []byte("{"))
	if !ok || bytes.IndexByte(raw, '\\') >= 0 {
		return jsonStamps(raw)
	}
	out := map[string]packs.Stamp{}
	if string(rest) == "}" {
		return out, nil
	}
	for {
		key, r, ok := jsonString(rest)
		if !ok {
			return jsonStamps(raw)
		}
		if r, ok = bytes.CutPrefix(r, []byte(":")); !ok {
			return jsonStamps(raw)
		}
		val, r, ok := jsonString(r)
		if !ok {
			return jsonStamps(raw)
		}
		if _, dup := out[string(key)]; dup {
			return jsonStamps(raw)
		}
		var st packs.Stamp
		if err := st.UnmarshalText(val); err != nil {
			return nil, err
		}
		out[string(key)] = st
		if r, ok = bytes.CutPrefix(r, []byte(",")); ok {
			rest = r
			continue
		}
		if string(r) == "}" {
			return out, nil
		}
		return jsonStamps(raw)
	}
}

// jsonString cuts a JSON string without escapes off the front of b.
func jsonString(b []byte) (s, rest []byte, ok bool) {
	b, ok = bytes.CutPrefix(b, []byte(`"`))
	if !ok {
		return nil, nil, false
	}
	i := bytes.IndexByte(b, '"')
	if i < 0 || !utf8.Valid(b[:i]) || bytes.ContainsFunc(b[:i], func(r rune) bool { return r < 0x20 }) {
		return nil, nil, false
	}
	return b[:i], b[i+1:], true
}

// jsonStamps is parseStamps through encoding/json.
func jsonStamps(raw []byte) (map[string]packs.Stamp, error) {
	var out map[string]packs.Stamp
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	if out == nil {
		return nil, errors.New("app: pack check stamps: null")
	}
	return out, nil
}
