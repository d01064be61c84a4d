package audit

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"iter"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/packs-run/packs/internal/store"
)

// BreakKind says how the chain was broken.
type BreakKind string

const (
	Edited    BreakKind = "edited"    // a row's content no longer matches its hash, or was re-hashed
	Deleted   BreakKind = "deleted"   // rows are missing: a gap in seq, or the end cut off
	Reordered BreakKind = "reordered" // a row intact but moved to another seq
	Forged    BreakKind = "forged"    // a row's MAC does not hold: the chain was recomputed without the key
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
	Rows       int64
	HeadSeq    int64
	HeadHash   string
	KeyID      string      // the key the MACs were checked with; empty without one
	FirstKeyed int64       // the first seq under that key
	Unkeyed    int64       // rows whose MAC was not checked: written before the key, or every row without one
	Checkpoint *Checkpoint // the checkpoint the log was checked against, if any
	Breaks     []Break
	Warnings   []string // what this report cannot vouch for
}

// OK reports whether the whole chain holds.
func (r Report) OK() bool { return len(r.Breaks) == 0 }

// maxBreaks bounds a report: past it the log is plainly not trustworthy.
const maxBreaks = 100

// reorderWindow is how far from its place Verify looks for the seq a moved
// row was written with.
const reorderWindow = 1024

// Verify walks the whole chain and reports every break it finds, up to 100:
// the seq, the kind (edited, deleted, reordered, forged) and what it saw.
// It checks each row's MAC under the audit key beside packs.db and the
// checkpoint there, so a chain recomputed without the key and rows cut off
// the end are found too. It never makes a key: a log that was never keyed
// is checked as an unkeyed chain, and the report says so in Warnings. It
// reads the head first, so rows appended while it runs are checked as far
// as they are linked, and never mistaken for damage.
func Verify(ctx context.Context, db *store.DB) (Report, error) {
	dir, err := keyDir(ctx, db)
	if err != nil {
		return Report{}, err
	}
	return VerifyWithKey(ctx, db, dir)
}

// VerifyWithKey is Verify with the key and checkpoint in dir.
func VerifyWithKey(ctx context.Context, db *store.DB, dir string) (Report, error) {
	k, cp, err := keyAndCheckpoint(ctx, db, dir, false)
	if err != nil {
		return Report{}, err
	}
	h, err := readHead(ctx, db)
	if err != nil {
		return Report{}, fmt.Errorf("audit: verify: %w", err)
	}
	v := newVerifier(h, k, cp)
	if err := v.run(storedRows(ctx, db)); err != nil {
		return v.rep, fmt.Errorf("audit: verify: %w", err)
	}
	return v.finish(), nil
}

// verifyBatch is how many rows the reader hands to a hashing worker at a
// time.
const verifyBatch = 512

// run steps v through rows in order. Reading the rows and checking them
// overlap: one goroutine reads batches of rows, workers compute each row's
// hash and MAC (every row on its own, from its own fields), and v.step
// takes the batches in seq order with the answers, so what it checks and
// reports is what a row-by-row walk would.
func (v *verifier) run(rows iter.Seq2[chained, error]) error {
	type batch struct {
		rows []chained
		done chan struct{}
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	work := make(chan *batch, 2*workers)
	order := make(chan *batch, 4*workers)
	var readErr error
	go func() {
		defer close(order)
		defer close(work)
		b := &batch{rows: make([]chained, 0, verifyBatch), done: make(chan struct{})}
		send := func() {
			order <- b
			work <- b
		}
		for c, err := range rows {
			if err != nil {
				readErr = err
				break
			}
			b.rows = append(b.rows, c)
			if len(b.rows) == verifyBatch {
				send()
				b = &batch{rows: make([]chained, 0, verifyBatch), done: make(chan struct{})}
			}
		}
		send()
	}()
	for range workers {
		go func() {
			var m hash.Hash
			if v.k != nil {
				m = v.k.newMAC()
			}
			for b := range work {
				for i := range b.rows {
					b.rows[i].check(v.k, m)
				}
				close(b.done)
			}
		}()
	}
	for b := range order {
		<-b.done
		for _, c := range b.rows {
			v.step(c)
		}
	}
	return readErr
}

// keyAndCheckpoint loads the key of db from dir (making it when create is
// set) and the checkpoint beside it.
func keyAndCheckpoint(ctx context.Context, db *store.DB, dir string, create bool) (*key, *Checkpoint, error) {
	load := func(ctx context.Context, db *store.DB, dir string) (*key, error) { return loadKey(ctx, db.SQL(), dir) }
	if create {
		load = ensureKey
	}
	k, err := load(ctx, db, dir)
	if err != nil || k == nil {
		return nil, nil, err
	}
	cp, err := readCheckpoint(k)
	return k, cp, err
}

func readHead(ctx context.Context, db *store.DB) (head, error) {
	h := head{checked: true}
	err := db.SQL().QueryRowContext(ctx, `SELECT seq, hash FROM audit_head WHERE id = 1`).Scan(&h.seq, &h.hash)
	switch {
	case err == nil:
		h.known = true
	case !errors.Is(err, sql.ErrNoRows):
		return h, err
	}
	return h, nil
}

// storedRows reads every row of packs.db in seq order.
func storedRows(ctx context.Context, db *store.DB) iter.Seq2[chained, error] {
	return func(yield func(chained, error) bool) {
		rs, err := db.SQL().QueryContext(ctx, `SELECT seq, kind, at, pack, tool, invocation, body, prev_hash, hash, mac, waited_us, ran_us, person, issuer, client FROM audit ORDER BY seq`)
		if err != nil {
			yield(chained{}, err)
			return
		}
		defer rs.Close()
		for rs.Next() {
			var c chained
			var kind, body string
			if err := rs.Scan(&c.seq, &kind, &c.r.at, &c.r.pack, &c.r.tool, &c.r.invocation, &body, &c.prev, &c.hash, &c.mac, &c.r.waitedUS, &c.r.ranUS, &c.r.person, &c.r.issuer, &c.r.client); err != nil {
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
}

// VerifyJSONL checks an export written by WriteJSONL or Export (or packs
// audit --json) without packs.db and without the key: every line must
// re-hash to its hash and link to the line before. Anyone can recompute
// that, so the report warns that the MACs were not checked; VerifyExport
// checks them. An export of a filtered selection has gaps by design; verify
// a full export. Without the head, rows cut off the end of an export cannot
// be detected.
func VerifyJSONL(r io.Reader) (Report, error) {
	return verifyJSONL(r, nil, nil)
}

// VerifyExport checks a full export like VerifyJSONL, and also each row's
// MAC under the key file at keyPath, and the row named by the checkpoint
// beside it, if there is one.
func VerifyExport(r io.Reader, keyPath string) (Report, error) {
	k, err := readKeyFile(keyPath)
	if errors.Is(err, fs.ErrNotExist) {
		return Report{}, fmt.Errorf("%w: %s", ErrKeyMissing, keyPath)
	}
	if err != nil {
		return Report{}, err
	}
	cp, err := readCheckpoint(k)
	if err != nil {
		return Report{}, err
	}
	return verifyJSONL(r, k, cp)
}

func verifyJSONL(r io.Reader, k *key, cp *Checkpoint) (Report, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	line := 0
	v := newVerifier(head{}, k, cp)
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return v.rep, fmt.Errorf("audit: verify export: line %d: %w", line, err)
		}
		v.step(chained{seq: e.Seq, prev: e.PrevHash, hash: e.Hash, mac: e.MAC, r: e.row()})
	}
	if err := sc.Err(); err != nil {
		return v.rep, fmt.Errorf("audit: verify export: line %d: %w", line+1, err)
	}
	return v.finish(), nil
}

// chained is one row with its place in the chain, as stored.
type chained struct {
	seq             int64
	r               row
	prev, hash, mac string

	// checked says hashOK and macOK hold the answers of check.
	checked bool
	// hashOK: the row re-hashes to hash. macOK: mac is the row MAC of seq
	// and hash under the key.
	hashOK, macOK bool
}

// check computes whether c re-hashes to its hash and whether its MAC holds
// under k (false without a key, before the key's first row or without a
// MAC), with m from k.newMAC (nil: a new one).
func (c *chained) check(k *key, m hash.Hash) {
	c.hashOK = rowHash(c.prev, c.seq, c.r) == c.hash
	if k != nil && m == nil {
		m = k.newMAC()
	}
	c.macOK = k != nil && c.seq >= k.first && c.mac != "" && checkMACWith(m, c.seq, c.hash, c.mac)
	c.checked = true
}

// row is the entry as the chain hashes it (person, issuer and client
// hashed in v2 rows), with its timing columns.
func (e Entry) row() row {
	return row{kind: e.Kind, at: stamp(e.At), pack: e.Pack, tool: e.Tool, invocation: e.Invocation, body: e.Body,
		waitedUS: e.WaitedUS, ranUS: e.RanUS, person: e.Person, issuer: e.Issuer, client: e.Client}
}

// timingAgrees reports whether r's timing columns, which the hash does not
// cover, are its body's waited_ms and ran_ms (0 when it has none).
func (r row) timingAgrees() bool {
	var b struct {
		WaitedMS float64 `json:"waited_ms"`
		RanMS    float64 `json:"ran_ms"`
	}
	if r.kind == KindInvocation && json.Unmarshal(r.body, &b) != nil {
		return r.waitedUS == 0 && r.ranUS == 0
	}
	return micros(b.WaitedMS) == r.waitedUS && micros(b.RanMS) == r.ranUS
}

// head is the newest seq and hash recorded at commit. An export has none:
// checked is false.
type head struct {
	checked, known bool
	seq            int64
	hash           string
}

// verifier walks rows in seq order and notes where the chain breaks: the
// links and content hashes, each row's MAC under the key (when there is
// one), the head and the checkpoint.
type verifier struct {
	rep        Report
	h          head
	k          *key
	cp         *Checkpoint
	breaks     []Break
	expectSeq  int64
	expectPrev string
	flagged    int64 // the last seq reported as edited or reordered
	headSeen   bool
	cpSeen     bool
}

func newVerifier(h head, k *key, cp *Checkpoint) *verifier {
	v := &verifier{rep: Report{HeadSeq: h.seq, HeadHash: h.hash, Checkpoint: cp}, h: h, k: k, cp: cp, expectSeq: 1, expectPrev: genesis}
	if k != nil {
		v.rep.KeyID, v.rep.FirstKeyed = k.id, k.first
	}
	return v
}

func (v *verifier) add(seq int64, kind BreakKind, format string, args ...any) {
	if len(v.breaks) < 4*maxBreaks {
		v.breaks = append(v.breaks, Break{Seq: seq, Kind: kind, Detail: fmt.Sprintf(format, args...)})
	}
}

func (v *verifier) step(c chained) {
	if !c.checked {
		c.check(v.k, nil)
	}
	seq, prev, hash := c.seq, c.prev, c.hash
	v.rep.Rows++
	gap := seq != v.expectSeq
	if gap {
		v.add(v.expectSeq, Deleted, "rows %d to %d are missing", v.expectSeq, seq-1)
	}
	switch {
	case !c.hashOK:
		if orig, ok := movedFrom(prev, seq, c.r, hash); ok {
			v.add(seq, Reordered, "the row here was written as seq %d", orig)
		} else {
			v.add(seq, Edited, "its content no longer matches its hash")
		}
		v.flagged = seq
	case !c.r.timingAgrees():
		v.add(seq, Edited, "its waited_us or ran_us column disagrees with its body")
		v.flagged = seq
	case prev != v.expectPrev && !gap && v.flagged != seq-1:
		v.add(seq-1, Edited, "row %d does not match the hash row %d recorded for it: it was changed and re-hashed, or replaced", seq-1, seq)
		v.flagged = seq - 1
	}
	switch {
	case v.k == nil || seq < v.k.first:
		v.rep.Unkeyed++
	case c.mac == "":
		v.add(seq, Forged, "it has no MAC, though the log is keyed from seq %d: it was written without the audit key", v.k.first)
	case !c.macOK:
		v.add(seq, Forged, "its MAC does not match: the row was rewritten by someone without the audit key (rows deleted or changed, and the chain recomputed)")
	}
	if v.cp != nil && seq == v.cp.Seq {
		v.cpSeen = true
		if hash != v.cp.Hash || c.mac != v.cp.MAC {
			v.add(seq, Forged, "the row differs from the one the checkpoint of %s vouches for: the log was cut back and rewritten", v.cp.At.Format(time.RFC3339))
		}
	}
	if v.h.known && seq == v.h.seq {
		v.headSeen = true
		if hash != v.h.hash {
			v.add(seq, Edited, "the newest row's hash differs from the one recorded at commit")
		}
	}
	v.expectSeq, v.expectPrev = seq+1, hash
}

// finish checks the end of the log against the head and the checkpoint and
// returns the report: at most one break per seq (a broken link or a moved
// row over a MAC that no longer holds there), in seq order.
func (v *verifier) finish() Report {
	last := v.expectSeq - 1
	switch {
	case v.h.checked && !v.h.known && v.rep.Rows > 0:
		v.add(last, Deleted, "the head record is missing")
	case v.h.known && !v.headSeen && v.h.seq > last:
		v.add(v.expectSeq, Deleted, "rows %d to %d are missing at the end (the head records seq %d)", v.expectSeq, v.h.seq, v.h.seq)
	}
	if v.cp != nil && !v.cpSeen && v.cp.Seq > last {
		if v.h.checked {
			v.add(v.expectSeq, Deleted, "rows %d to %d are missing at the end (the checkpoint of %s records seq %d)", v.expectSeq, v.cp.Seq, v.cp.At.Format(time.RFC3339), v.cp.Seq)
		} else {
			v.rep.Warnings = append(v.rep.Warnings, fmt.Sprintf("the export ends at seq %d, before the checkpoint at seq %d: it is older than the log, or was cut short", last, v.cp.Seq))
		}
	}
	slices.SortStableFunc(v.breaks, func(a, b Break) int { return cmp.Compare(a.Seq, b.Seq) })
	for i, b := range v.breaks {
		if len(v.rep.Breaks) == maxBreaks {
			break
		}
		if n := len(v.rep.Breaks); n > 0 && v.rep.Breaks[n-1].Seq == b.Seq {
			if v.rep.Breaks[n-1].Kind == Forged && b.Kind != Forged {
				v.rep.Breaks[n-1] = b
			}
			continue
		}
		v.rep.Breaks = append(v.rep.Breaks, v.breaks[i])
	}
	v.warn(last)
	return v.rep
}

// warn notes what the report cannot vouch for.
func (v *verifier) warn(last int64) {
	switch {
	case v.rep.Rows == 0:
	case v.k == nil && v.h.checked:
		v.rep.Warnings = append(v.rep.Warnings, "the log has no audit key yet, so its chain is unkeyed: anyone who could write packs.db could have rewritten it undetected (packs makes the key on its next write)")
	case v.k == nil:
		v.rep.Warnings = append(v.rep.Warnings, "no audit key was given, so only the links were checked: anyone could have recomputed this chain")
	case v.k.first > 1 && v.rep.Unkeyed > 0:
		v.rep.Warnings = append(v.rep.Warnings, fmt.Sprintf("rows 1 to %d were written before the audit key existed: a change to them since then is detected, one made before is not", v.k.first-1))
	}
	if v.k != nil && v.cp == nil && last >= v.k.first {
		v.rep.Warnings = append(v.rep.Warnings, fmt.Sprintf("there is no checkpoint (%s): rows cut off the end would not be detected", filepath.Join(v.k.dir, CheckpointFile)))
	}
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
	return rowHash(e.PrevHash, e.Seq, e.row())
}
