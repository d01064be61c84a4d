package audit

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/packs-run/packs/internal/store"
)

// BreakKind says how the chain was broken.
type BreakKind string

const (
	Edited    BreakKind = "edited"    // a row's content no longer matches its hash, or was re-hashed
	Deleted   BreakKind = "deleted"   // rows are missing: a gap in seq, or the end cut off
	Reordered BreakKind = "reordered" // a row intact but moved to another seq
)

// Break is one place where the chain does not hold.
type Break struct {
	Seq    int64
	Kind   BreakKind
	Detail string
}

func (b Break) String() string { return fmt.Sprintf("seq %d: %s: %s", b.Seq, b.Kind, b.Detail) }

// Report is the outcome of Verify.
type Report struct {
	Rows     int64
	HeadSeq  int64
	HeadHash string
	Breaks   []Break
}

// OK reports whether the whole chain holds.
func (r Report) OK() bool { return len(r.Breaks) == 0 }

// maxBreaks bounds a report: past it the log is plainly not trustworthy.
const maxBreaks = 100

// reorderWindow is how far from its place Verify looks for the seq a moved
// row was written with.
const reorderWindow = 1024

// Verify walks the whole chain and reports every break it finds, up to 100:
// the seq, the kind (edited, deleted, reordered) and what it saw. It reads
// the head first, so rows appended while it runs are checked as far as they
// are linked, and never mistaken for damage.
func Verify(ctx context.Context, db *store.DB) (Report, error) {
	var h head
	err := db.SQL().QueryRowContext(ctx, `SELECT seq, hash FROM audit_head WHERE id = 1`).Scan(&h.seq, &h.hash)
	h.checked = true
	switch {
	case err == nil:
		h.known = true
	case !errors.Is(err, sql.ErrNoRows):
		return Report{}, fmt.Errorf("audit: verify: %w", err)
	}
	rows := func(yield func(chained, error) bool) {
		rs, err := db.SQL().QueryContext(ctx, `SELECT seq, kind, at, pack, tool, invocation, body, prev_hash, hash FROM audit ORDER BY seq`)
		if err != nil {
			yield(chained{}, err)
			return
		}
		defer rs.Close()
		for rs.Next() {
			var c chained
			var kind, body string
			if err := rs.Scan(&c.seq, &kind, &c.r.at, &c.r.pack, &c.r.tool, &c.r.invocation, &body, &c.prev, &c.hash); err != nil {
				yield(chained{}, err)
				return
			}
			c.r.kind, c.r.body = Kind(kind), []byte(body)
			if !yield(c, nil) {
				return
			}
		}
		if err := rs.Err(); err != nil {
			yield(chained{}, err)
		}
	}
	rep, err := verify(rows, h)
	if err != nil {
		return rep, fmt.Errorf("audit: verify: %w", err)
	}
	return rep, nil
}

// VerifyJSONL checks an export written by WriteJSONL (or packs audit
// --json) without packs.db: every line must re-hash to its hash and link to
// the line before. An export of a filtered selection has gaps by design;
// verify a full export. Without the head, rows cut off the end of an export
// cannot be detected.
func VerifyJSONL(r io.Reader) (Report, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	line := 0
	rows := func(yield func(chained, error) bool) {
		for sc.Scan() {
			line++
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			var e Entry
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				yield(chained{}, fmt.Errorf("line %d: %w", line, err))
				return
			}
			c := chained{seq: e.Seq, prev: e.PrevHash, hash: e.Hash,
				r: row{kind: e.Kind, at: stamp(e.At), pack: e.Pack, tool: e.Tool, invocation: e.Invocation, body: e.Body}}
			if !yield(c, nil) {
				return
			}
		}
		if err := sc.Err(); err != nil {
			yield(chained{}, fmt.Errorf("line %d: %w", line+1, err))
		}
	}
	rep, err := verify(rows, head{})
	if err != nil {
		return rep, fmt.Errorf("audit: verify export: %w", err)
	}
	return rep, nil
}

// chained is one row with its place in the chain, as stored.
type chained struct {
	seq        int64
	r          row
	prev, hash string
}

// head is the newest seq and hash recorded at commit. An export has none:
// checked is false.
type head struct {
	checked, known bool
	seq            int64
	hash           string
}

// verify walks rows in seq order and reports where the chain breaks.
func verify(rows iter.Seq2[chained, error], h head) (Report, error) {
	rep := Report{HeadSeq: h.seq, HeadHash: h.hash}
	add := func(seq int64, kind BreakKind, format string, args ...any) {
		if len(rep.Breaks) < maxBreaks {
			rep.Breaks = append(rep.Breaks, Break{Seq: seq, Kind: kind, Detail: fmt.Sprintf(format, args...)})
		}
	}
	expectSeq, expectPrev := int64(1), genesis
	flagged := int64(0) // the last seq reported as edited or reordered
	headSeen := false
	for c, err := range rows {
		if err != nil {
			return rep, err
		}
		seq, prev, hash := c.seq, c.prev, c.hash
		rep.Rows++
		gap := seq != expectSeq
		if gap {
			add(expectSeq, Deleted, "rows %d to %d are missing", expectSeq, seq-1)
		}
		switch {
		case rowHash(prev, seq, c.r) != hash:
			if orig, ok := movedFrom(prev, seq, c.r, hash); ok {
				add(seq, Reordered, "the row here was written as seq %d", orig)
			} else {
				add(seq, Edited, "its content no longer matches its hash")
			}
			flagged = seq
		case prev != expectPrev && !gap && flagged != seq-1:
			add(seq-1, Edited, "row %d does not match the hash row %d recorded for it: it was changed and re-hashed, or replaced", seq-1, seq)
			flagged = seq - 1
		}
		if h.known && seq == h.seq {
			headSeen = true
			if hash != h.hash {
				add(seq, Edited, "the newest row's hash differs from the one recorded at commit")
			}
		}
		expectSeq, expectPrev = seq+1, hash
	}
	switch {
	case h.checked && !h.known && rep.Rows > 0:
		add(expectSeq-1, Deleted, "the head record is missing")
	case h.known && !headSeen && h.seq >= expectSeq:
		add(expectSeq, Deleted, "rows %d to %d are missing at the end (the head records seq %d)", expectSeq, h.seq, h.seq)
	}
	return rep, nil
}

// movedFrom looks near seq for the seq a row was hashed with: a row whose
// content is intact but which now sits at another place.
func movedFrom(prev string, seq int64, r row, hash string) (int64, bool) {
	for d := int64(1); d <= reorderWindow; d++ {
		for _, s := range []int64{seq - d, seq + d} {
			if s > 0 && rowHash(prev, s, r) == hash {
				return s, true
			}
		}
	}
	return 0, false
}

// HashEntry recomputes the hash an entry was stored with from its fields, so
// a JSONL export can be checked without packs.db: each line's hash must
// equal HashEntry of the line, and its prev_hash the hash of the line before.
func HashEntry(e Entry) string {
	return rowHash(e.PrevHash, e.Seq, row{kind: e.Kind, at: stamp(e.At), pack: e.Pack, tool: e.Tool, invocation: e.Invocation, body: e.Body})
}
