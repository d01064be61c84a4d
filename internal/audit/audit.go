// Package audit is the tamper-evident audit log: one row per tool call
// (invocation) and one per capability exercise, stored in packs.db and
// hash-chained so that an edited, deleted or reordered row is detected by
// Verify. Each row also carries an HMAC of its chained hash under a key kept
// outside packs.db (audit.key, mode 0600, beside it), and each commit leaves
// a checkpoint there too, so someone who can write packs.db but cannot read
// the key can neither recompute the chain nor cut rows off its end
// unnoticed (docs/audit.md). Secrets are redacted before anything is stored.
//
// Writes are durable before Record* returns, yet batched: one writer
// goroutine gathers the appends that arrive while it commits and writes them
// in one transaction (group commit). Another goroutine moves the checkpoint
// behind it, so no append waits for a checkpoint file to be written. A Log
// is owned by whoever opened it and must be closed; Close waits for both to
// finish.
package audit

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/store"
)

// ErrClosed is returned by an append to a closed Log.
var ErrClosed = errors.New("audit: log is closed")

// Kind is the kind of an audit row.
type Kind string

const (
	KindInvocation Kind = "invocation" // one tool call, with its decision and outcome
	KindExercise   Kind = "exercise"   // one use of a capability inside a call
	KindInstall    Kind = "install"    // a pack installed or updated, with what it was granted
)

// genesis is the previous hash of the first row.
const genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// Options configure a Log. Zero fields take defaults.
type Options struct {
	Logger   *slog.Logger
	Redactor Redactor // DefaultRedactor when zero
	MaxBatch int      // most rows in one transaction; 1024 when zero
	KeyDir   string   // where audit.key and audit.checkpoint live; the directory of packs.db when empty
}

// Log appends audit rows. It implements capability.Recorder.
type Log struct {
	db       *store.DB
	conn     *sql.Conn            // the writer's own connection, its statements prepared once (again after it is lost)
	stmts    [stmtCount]*sql.Stmt // stmtLock is nil on SQLite
	rowStmt  *sql.Stmt            // checkpointRowSQL, on the pool: the checkpointer's
	key      *key
	stale    bool // the checkpoint no longer matches packs.db: said once, never overwritten (the checkpointer's)
	logger   *slog.Logger
	redact   Redactor
	maxBatch int

	reqs      chan *request
	tips      chan tip // the newest row committed, for the checkpointer; holds one
	closing   chan struct{}
	done      chan struct{} // the writer ended
	cpDone    chan struct{} // the checkpointer ended
	closeOnce sync.Once
}

var _ capability.Recorder = (*Log)(nil)

// tip is a committed row a checkpoint can name.
type tip struct {
	seq       int64
	hash, mac string
}

// checkpointEvery is how often a busy Log rewrites the checkpoint: each
// write costs a file creation and a rename, so it is not done per commit.
// The first commit after a quiet spell is checkpointed at once, and Close
// always checkpoints the last.
const checkpointEvery = 50 * time.Millisecond

// row is one row before it has a seq and hash.
type row struct {
	kind                   Kind
	at                     string
	pack, tool, invocation string
	body                   []byte
	// waitedUS and ranUS are the columns of migration 12, outside the
	// hash: copies of the body's waited_ms and ran_ms, checked against it
	// by Verify.
	waitedUS, ranUS int64
	// person and issuer name who made the call (an OIDC subject and
	// issuer; empty for the token holder), client what they used: "web",
	// "cli", "mcp:NAME". A row with any of them is chained as v2.
	person, issuer, client string
}

type request struct {
	row  row
	done chan result // buffered: the writer never blocks on it
}

type result struct {
	seq int64
	err error
}

// The writer's statements, prepared once on its connection. Its
// transactions are statements too: database/sql's Tx would prepare every
// statement again inside each one (a statement prepared on a Conn is not
// reused by a Tx on that Conn), which cost as much as the commit itself.
// The connection is the writer goroutine's alone, so nothing else can run
// between its BEGIN and its COMMIT.
const (
	stmtBegin = iota
	stmtLock
	stmtCommit
	stmtRollback
	stmtHead
	stmtInsert
	stmtSetHead
	stmtCount
)

// statements is the writer's SQL on dialect d. Every appender, in this
// process or another, takes the chain's lock before it reads the head, so
// the chain stays one: on SQLite, BEGIN IMMEDIATE takes the database's
// write lock; on PostgreSQL, whose writers do not exclude one another, a
// transaction-level advisory lock (chainLockSQL), taken by its own
// statement so that the head is read after it is held (READ COMMITTED
// reads as of each statement's start).
func statements(d store.Dialect) [stmtCount]string {
	s := [stmtCount]string{
		stmtBegin:    `BEGIN IMMEDIATE`,
		stmtCommit:   `COMMIT`,
		stmtRollback: `ROLLBACK`,
		stmtHead:     `SELECT seq, hash FROM audit_head WHERE id = 1`,
		stmtInsert:   `INSERT INTO audit(seq, kind, at, pack, tool, invocation, body, prev_hash, hash, mac, waited_us, ran_us, person, issuer, client) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		stmtSetHead:  `INSERT INTO audit_head(id, seq, hash) VALUES(1, ?, ?) ON CONFLICT(id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash`,
	}
	if d == store.Postgres {
		s[stmtBegin], s[stmtLock] = `BEGIN`, chainLockSQL
	}
	return s
}

// chainLockSQL takes the audit chain's lock on PostgreSQL until the end of
// the transaction. Its key spells "packs_au".
const chainLockSQL = `SELECT pg_advisory_xact_lock(7017561498573283701)`

// checkpointRowSQL reads the row a checkpoint names. The checkpointer runs
// it on a connection of the pool, never between the writer's BEGIN and
// COMMIT on the writer's own.
const checkpointRowSQL = `SELECT hash, mac FROM audit WHERE seq = ?`

// Open starts a Log on db: it takes one connection for its writer
// goroutine, until Close. It loads the audit key from opt.KeyDir, making
// it on first use; a log that was keyed but whose key file is missing or
// foreign fails with ErrKeyMissing or ErrWrongKey, and nothing is written.
func Open(ctx context.Context, db *store.DB, opt Options) (*Log, error) {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Redactor == (Redactor{}) {
		opt.Redactor = DefaultRedactor()
	}
	if opt.MaxBatch <= 0 {
		opt.MaxBatch = 1024
	}
	if opt.KeyDir == "" {
		dir, err := keyDir(ctx, db)
		if err != nil {
			return nil, err
		}
		opt.KeyDir = dir
	}
	k, err := ensureKey(ctx, db, opt.KeyDir)
	if err != nil {
		return nil, fmt.Errorf("audit: open: %w", err)
	}
	l := &Log{
		db: db, key: k, logger: opt.Logger, redact: opt.Redactor, maxBatch: opt.MaxBatch,
		reqs: make(chan *request), tips: make(chan tip, 1), closing: make(chan struct{}), done: make(chan struct{}), cpDone: make(chan struct{}),
	}
	if err := l.connect(ctx); err != nil {
		return nil, fmt.Errorf("audit: open: %w", err)
	}
	if l.rowStmt, err = db.SQL().PrepareContext(ctx, checkpointRowSQL); err != nil {
		l.closeConn()
		return nil, fmt.Errorf("audit: open: %w", err)
	}
	go l.write()
	go l.checkpoints()
	return l, nil
}

// connect takes the writer's connection from the pool and prepares its
// statements on it.
func (l *Log) connect(ctx context.Context) error {
	conn, err := l.db.SQL().Conn(ctx)
	if err != nil {
		return err
	}
	l.conn = conn
	for i, q := range statements(l.db.Dialect()) {
		if q == "" {
			continue
		}
		if l.stmts[i], err = conn.PrepareContext(ctx, q); err != nil {
			l.closeWriter()
			return err
		}
	}
	return nil
}

// reconnect replaces the writer's connection when it no longer answers:
// a PostgreSQL server that restarted, failed over or ended the session.
// It reports whether it replaced it. Only the writer goroutine calls it.
func (l *Log) reconnect() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if l.conn != nil && l.conn.PingContext(ctx) == nil {
		return false
	}
	l.closeWriter()
	if err := l.connect(ctx); err != nil {
		l.logger.Error("audit: reconnect failed", "err", err)
		return false
	}
	l.logger.Warn("audit: the writer's connection was lost; appending on a new one")
	return true
}

// closeWriter closes the writer's statements and connection.
func (l *Log) closeWriter() error {
	var errs []error
	for i, st := range l.stmts {
		if st != nil {
			errs = append(errs, st.Close())
			l.stmts[i] = nil
		}
	}
	if l.conn != nil {
		errs = append(errs, l.conn.Close())
		l.conn = nil
	}
	return errors.Join(errs...)
}

func (l *Log) closeConn() error {
	var errs []error
	if l.rowStmt != nil {
		errs = append(errs, l.rowStmt.Close())
	}
	return errors.Join(append(errs, l.closeWriter())...)
}

// Close stops the writer after the batch in flight is committed. Appends
// after Close fail with ErrClosed. Close is safe to call more than once.
func (l *Log) Close() error {
	var err error
	l.closeOnce.Do(func() {
		close(l.closing)
		<-l.cpDone
		err = l.closeConn()
	})
	<-l.cpDone
	return err
}

// append hands r to the writer and waits until it is durable.
func (l *Log) append(ctx context.Context, r row) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("audit: %w", err)
	}
	req := &request{row: r, done: make(chan result, 1)}
	select {
	case l.reqs <- req:
	case <-l.closing:
		return 0, ErrClosed
	case <-ctx.Done():
		return 0, fmt.Errorf("audit: %w", ctx.Err())
	}
	res := <-req.done
	return res.seq, res.err
}

// write is the writer goroutine: it takes one request, gathers every other
// request already waiting (up to maxBatch), commits them in one transaction,
// answers each and hands the newest row to the checkpointer.
func (l *Log) write() {
	defer close(l.done)
	batch := make([]*request, 0, l.maxBatch)
	for {
		select {
		case r := <-l.reqs:
			batch = append(batch[:0], r)
		case <-l.closing:
			return
		}
	gather:
		for len(batch) < l.maxBatch {
			select {
			case r := <-l.reqs:
				batch = append(batch, r)
			default:
				break gather
			}
		}
		seq, last, inDoubt, err := l.commit(batch)
		if err != nil && l.reconnect() && !inDoubt {
			// The connection was lost before COMMIT was sent: the server
			// rolled the batch back, so it is written again, once.
			seq, last, _, err = l.commit(batch)
		}
		if err != nil {
			l.logger.Error("audit: commit failed", "rows", len(batch), "err", err)
			err = fmt.Errorf("audit: append: %w", err)
		}
		for i, r := range batch {
			if err != nil {
				r.done <- result{err: err}
				continue
			}
			r.done <- result{seq: seq + int64(i)}
		}
		if err == nil {
			l.offer(last)
		}
	}
}

// offer hands t to the checkpointer, in place of any row it has not taken
// yet: only the newest matters. Only the writer sends.
func (l *Log) offer(t tip) {
	for {
		select {
		case l.tips <- t:
			return
		default:
		}
		select {
		case <-l.tips:
		default:
		}
	}
}

// checkpoints is the checkpointer goroutine: it moves the checkpoint to
// the newest row the writer committed, at most once per checkpointEvery,
// and to the last one once the writer has ended.
func (l *Log) checkpoints() {
	defer close(l.cpDone)
	for {
		select {
		case t := <-l.tips:
			l.checkpoint(t)
			select {
			case <-time.After(checkpointEvery):
			case <-l.done:
			}
		case <-l.done:
			select {
			case t := <-l.tips:
				l.checkpoint(t)
			default:
			}
			return
		}
	}
}

// commit writes batch as one transaction and returns the first row's seq
// and the last row. It reads the head inside the write transaction, so two
// processes sharing packs.db still build one chain.
//
// inDoubt is set when COMMIT itself failed: the batch may have been
// written, so it must not be written again. Before COMMIT, a failure
// leaves nothing written.
func (l *Log) commit(batch []*request) (seq0 int64, last tip, inDoubt bool, err error) {
	ctx := context.Background()
	if l.conn == nil {
		return 0, tip{}, false, errors.New("no connection to the store")
	}
	if _, err := l.stmts[stmtBegin].ExecContext(ctx); err != nil {
		return 0, tip{}, false, err
	}
	defer func() {
		if err != nil {
			// The transaction may still be open: end it, keeping nothing.
			l.stmts[stmtRollback].ExecContext(ctx)
		}
	}()
	if l.stmts[stmtLock] != nil {
		if _, err := l.stmts[stmtLock].ExecContext(ctx); err != nil {
			return 0, tip{}, false, err
		}
	}
	seq, prev := int64(0), genesis
	err = l.stmts[stmtHead].QueryRowContext(ctx).Scan(&seq, &prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, tip{}, false, err
	}
	first := seq + 1
	var mac string
	for _, r := range batch {
		seq++
		h := rowHash(prev, seq, r.row)
		mac = l.key.rowMAC(seq, h)
		if _, err := l.stmts[stmtInsert].ExecContext(ctx, seq, string(r.row.kind), r.row.at, r.row.pack, r.row.tool, r.row.invocation, string(r.row.body), prev, h, mac, r.row.waitedUS, r.row.ranUS, r.row.person, r.row.issuer, r.row.client); err != nil {
			return 0, tip{}, false, err
		}
		prev = h
	}
	if _, err := l.stmts[stmtSetHead].ExecContext(ctx, seq, prev); err != nil {
		return 0, tip{}, false, err
	}
	if _, err := l.stmts[stmtCommit].ExecContext(ctx); err != nil {
		return 0, tip{}, true, err
	}
	return first, tip{seq: seq, hash: prev, mac: mac}, false, nil
}

// checkpoint moves the checkpoint to p, a row this Log committed, unless
// another process's checkpoint is already past it. It moves only if
// packs.db still holds the row the old checkpoint names, unchanged: a log
// cut back behind its checkpoint keeps the evidence for Verify, and the
// writer says so once. The row it names is the one this Log wrote, never
// the head as packs.db now says, which someone may have repointed.
func (l *Log) checkpoint(p tip) {
	if l.stale {
		return
	}
	cp, err := readCheckpoint(l.key)
	if err == nil && cp != nil {
		if cp.Seq >= p.seq {
			return
		}
		var hash, mac string
		err = l.rowStmt.QueryRowContext(context.Background(), cp.Seq).Scan(&hash, &mac)
		switch {
		case err == nil && hash == cp.Hash && mac == cp.MAC:
		case err == nil || errors.Is(err, sql.ErrNoRows):
			err = fmt.Errorf("packs.db no longer holds row %d as the checkpoint of %s records it", cp.Seq, cp.At.Format(time.RFC3339))
		default:
			l.logger.Error("audit: checkpoint not written", "seq", p.seq, "err", err)
			return
		}
	}
	if err != nil {
		l.stale = true
		l.logger.Error("audit: the log was changed outside packs; the checkpoint is kept as evidence and no longer advances", "err", err)
		return
	}
	if _, err := writeCheckpoint(l.key, p.seq, p.hash, p.mac, "append", false); err != nil {
		l.logger.Error("audit: checkpoint not written", "seq", p.seq, "err", err)
	}
}

// rowHash is sha256 over a version tag, the previous hash and every field of
// the row, each length-prefixed so no two different rows encode alike. A
// row that names no person and no client (every row written before
// migration 13) is hashed as packs-audit-v1 was; one that does, as
// packs-audit-v2, which covers them too. Blanking them in a v2 row changes
// the tag, so the hash no longer matches.
func rowHash(prev string, seq int64, r row) string {
	h := sha256.New()
	var buf [binary.MaxVarintLen64]byte
	field := func(s []byte) {
		h.Write(buf[:binary.PutUvarint(buf[:], uint64(len(s)))])
		h.Write(s)
	}
	v2 := r.person != "" || r.issuer != "" || r.client != ""
	if v2 {
		field([]byte("packs-audit-v2"))
	} else {
		field([]byte("packs-audit-v1"))
	}
	field([]byte(prev))
	field(strconv.AppendInt(nil, seq, 10))
	field([]byte(r.kind))
	field([]byte(r.at))
	field([]byte(r.pack))
	field([]byte(r.tool))
	field([]byte(r.invocation))
	field(r.body)
	if v2 {
		field([]byte(r.person))
		field([]byte(r.issuer))
		field([]byte(r.client))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func stamp(t time.Time) string {
	if t.IsZero() {
		t = time.Now()
	}
	return t.UTC().Format(store.TimeFormat)
}

// exerciseBody is the stored form of a capability exercise.
type exerciseBody struct {
	Capability capability.Name  `json:"capability"`
	Resource   string           `json:"resource"`
	Allowed    bool             `json:"allowed"`
	Layer      capability.Layer `json:"layer,omitempty"`
	Reason     string           `json:"reason"`
}

// RecordExercise appends one capability exercise and returns once it is
// durable. It implements capability.Recorder.
func (l *Log) RecordExercise(e capability.Exercise) error {
	body, err := json.Marshal(exerciseBody{
		Capability: e.Capability, Resource: l.redact.Text(e.Resource), Allowed: e.Allowed,
		Layer: e.Layer, Reason: l.redact.Text(e.Reason),
	})
	if err != nil {
		return fmt.Errorf("audit: exercise: %w", err)
	}
	_, err = l.append(context.Background(), row{kind: KindExercise, at: stamp(e.Time), pack: e.Pack, tool: e.Tool, invocation: e.Invocation, body: body,
		person: e.Person, issuer: e.Issuer, client: clientOf(l.redact.Text(e.Client))})
	return err
}

// Status is how a call ended.
type Status = capability.Status

// The outcomes, as capability names them (one list, shared with the
// pipeline that decides them).
const (
	StatusOK           = capability.StatusOK
	StatusToolError    = capability.StatusToolError
	StatusDenied       = capability.StatusDenied
	StatusInvalidInput = capability.StatusInvalidInput
	StatusLimit        = capability.StatusLimit
	StatusError        = capability.StatusError
)

// Artifact is a file a call created or changed in the workspace.
type Artifact struct {
	Path string `json:"path"`
	MIME string `json:"mime,omitempty"`
	Size int64  `json:"size"`
}

// Invocation is one tool call as the caller saw it end. Arguments are stored
// redacted; Arguments and Output are hashed as given and Output is never
// stored.
type Invocation struct {
	ID, Chat, Pack, Tool string
	Client               string // the MCP client that made the call; empty for packs chat and packs run
	Person, Issuer       string // the OIDC subject and issuer who made it; empty for the token holder
	Arguments            json.RawMessage
	Output               []byte
	Approver             string
	Verdict              capability.Verdict
	Remembered           bool   // approved by the chat's "allow for this chat"
	ByAttach             bool   // approved by the person's attaching the pack (capability.Consent)
	Reason               string // why it was denied or failed
	Started, Finished    time.Time
	Waited, Ran          time.Duration // the gate's wait for a decision; the approved call's run
	ExitCode             int
	Status               Status
	Artifacts            []Artifact
}

// Approved fills the decision fields from the gate's approval.
func (inv *Invocation) Approved(a capability.Approval) {
	inv.Approver, inv.Verdict, inv.Remembered, inv.ByAttach = a.Approver(), a.Verdict(), a.Remembered(), a.ByAttach()
}

// Denied fills the decision fields from a denial; a denial by the gate
// names the approver who said no.
func (inv *Invocation) Denied(err error) {
	inv.Verdict, inv.Status = capability.Deny, StatusDenied
	if err == nil {
		return
	}
	inv.Reason = err.Error()
	var de *capability.DeniedError
	if errors.As(err, &de) && de.Approver != "" {
		inv.Approver = de.Approver
	}
}

// invocationBody is the stored form of an invocation.
type invocationBody struct {
	Chat         string          `json:"chat,omitempty"`
	Client       string          `json:"client,omitempty"`
	Arguments    json.RawMessage `json:"arguments"`
	InputSHA256  string          `json:"input_sha256"`
	OutputSHA256 string          `json:"output_sha256,omitempty"`
	Approver     string          `json:"approver"`
	Decision     string          `json:"decision"`
	Remembered   bool            `json:"remembered,omitempty"`
	ByAttach     bool            `json:"by_attach,omitempty"` // the person's attaching the pack approved it
	Reason       string          `json:"reason,omitempty"`
	Started      string          `json:"started"`
	Finished     string          `json:"finished"`
	DurationMS   float64         `json:"duration_ms"`
	WaitedMS     float64         `json:"waited_ms,omitempty"` // the gate's wait for a decision
	RanMS        float64         `json:"ran_ms,omitempty"`    // the approved call's run
	ExitCode     int             `json:"exit_code"`
	Status       Status          `json:"status"`
	Artifacts    []Artifact      `json:"artifacts,omitempty"`
}

// RecordInvocation appends one finished (or denied) call and returns its
// seq once it is durable: call it before the result goes back to the model.
func (l *Log) RecordInvocation(ctx context.Context, inv Invocation) (int64, error) {
	if inv.Finished.IsZero() {
		inv.Finished = time.Now()
	}
	if inv.Started.IsZero() {
		inv.Started = inv.Finished
	}
	if inv.Status == "" {
		inv.Status = StatusOK
	}
	b := invocationBody{
		Chat: inv.Chat, Client: l.redact.Text(inv.Client), Arguments: l.redact.JSON(inv.Arguments), InputSHA256: digest(inv.Arguments),
		Approver: inv.Approver, Decision: inv.Verdict.String(), Remembered: inv.Remembered, ByAttach: inv.ByAttach,
		Reason: l.redact.Text(inv.Reason), Started: stamp(inv.Started), Finished: stamp(inv.Finished),
		DurationMS: millis(inv.Finished.Sub(inv.Started).Microseconds()),
		WaitedMS:   millis(inv.Waited.Microseconds()), RanMS: millis(inv.Ran.Microseconds()),
		ExitCode: inv.ExitCode, Status: inv.Status,
	}
	if inv.Output != nil {
		b.OutputSHA256 = digest(inv.Output)
	}
	for _, a := range inv.Artifacts {
		a.Path = l.redact.Text(a.Path)
		b.Artifacts = append(b.Artifacts, a)
	}
	body, err := json.Marshal(b)
	if err != nil {
		return 0, fmt.Errorf("audit: invocation %s: %w", inv.ID, err)
	}
	return l.append(ctx, row{kind: KindInvocation, at: b.Finished, pack: inv.Pack, tool: inv.Tool, invocation: inv.ID, body: body,
		waitedUS: inv.Waited.Microseconds(), ranUS: inv.Ran.Microseconds(),
		person: inv.Person, issuer: inv.Issuer, client: clientOf(b.Client)})
}

// clientOf is the client a row records: the front end's name, "cli" for
// packs chat and packs run, which name none.
func clientOf(c string) string {
	if c == "" {
		return "cli"
	}
	return c
}

// millis is us microseconds in milliseconds, as the body stores them.
func millis(us int64) float64 { return float64(us) / 1000 }

// micros is ms milliseconds of a body back in whole microseconds.
func micros(ms float64) int64 { return int64(math.Round(ms * 1000)) }

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
