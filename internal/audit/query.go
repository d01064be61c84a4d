package audit

import (
	"github.com/packs-run/packs/capability"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"time"

	"github.com/packs-run/packs/internal/store"
)

// Entry is one stored row, as read back.
type Entry struct {
	Seq        int64           `json:"seq"`
	Kind       Kind            `json:"kind"`
	At         time.Time       `json:"at"`
	Pack       string          `json:"pack"`
	Tool       string          `json:"tool"`
	Invocation string          `json:"invocation"`
	Body       json.RawMessage `json:"body"` // exactly the hashed bytes
	PrevHash   string          `json:"prev_hash"`
	Hash       string          `json:"hash"`
	MAC        string          `json:"mac,omitempty"` // HMAC of seq and hash under the audit key; empty before the log was keyed
	// WaitedUS and RanUS are an invocation's wait for the gate's decision
	// and its run, in microseconds: copies of its body's waited_ms and
	// ran_ms, which Verify holds them to.
	WaitedUS int64 `json:"waited_us,omitempty"`
	RanUS    int64 `json:"ran_us,omitempty"`
	// Person and Issuer name who made the call (an OIDC subject and its
	// issuer; empty for the token holder), Client what they used ("web",
	// "cli", "mcp:NAME"); all empty in rows written before packs recorded
	// them.
	Person string `json:"person,omitempty"`
	Issuer string `json:"issuer,omitempty"`
	Client string `json:"client,omitempty"`
}

// Filter selects entries; zero fields select everything.
type Filter struct {
	Pack       string
	Invocation string
	Since      time.Time
	Kind       Kind
	Person     string // the rows of this subject (any issuer)
	After      int64  // only rows with a seq above it
	Limit      int    // newest Limit rows when > 0, still in seq order
}

// Entries reads the rows f selects, in seq order.
func Entries(ctx context.Context, db *store.DB, f Filter) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		var where []string
		var args []any
		if f.Pack != "" {
			where, args = append(where, "pack = ?"), append(args, f.Pack)
		}
		if f.Invocation != "" {
			where, args = append(where, "invocation = ?"), append(args, f.Invocation)
		}
		if !f.Since.IsZero() {
			where, args = append(where, "at >= ?"), append(args, f.Since.UTC().Format(store.TimeFormat))
		}
		if f.Kind != "" {
			where, args = append(where, "kind = ?"), append(args, string(f.Kind))
		}
		if f.Person != "" {
			where, args = append(where, "person = ?"), append(args, f.Person)
		}
		if f.After > 0 {
			where, args = append(where, "seq > ?"), append(args, f.After)
		}
		q := `SELECT seq, kind, at, pack, tool, invocation, body, prev_hash, hash, mac, waited_us, ran_us, person, issuer, client FROM audit`
		if len(where) > 0 {
			q += " WHERE " + strings.Join(where, " AND ")
		}
		if f.Limit > 0 {
			q = `SELECT * FROM (` + q + ` ORDER BY seq DESC LIMIT ?) AS newest`
			args = append(args, f.Limit)
		}
		rows, err := db.SQL().QueryContext(ctx, q+` ORDER BY seq`, args...)
		if err != nil {
			yield(Entry{}, fmt.Errorf("audit: read: %w", err))
			return
		}
		defer rows.Close()
		for rows.Next() {
			var e Entry
			var kind, at, body string
			if err := rows.Scan(&e.Seq, &kind, &at, &e.Pack, &e.Tool, &e.Invocation, &body, &e.PrevHash, &e.Hash, &e.MAC, &e.WaitedUS, &e.RanUS, &e.Person, &e.Issuer, &e.Client); err != nil {
				yield(Entry{}, fmt.Errorf("audit: read: %w", err))
				return
			}
			e.Kind, e.Body = Kind(kind), json.RawMessage(body)
			if e.At, err = time.Parse(store.TimeFormat, at); err != nil {
				yield(Entry{}, fmt.Errorf("audit: read seq %d: %w", e.Seq, err))
				return
			}
			if !yield(e, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(Entry{}, fmt.Errorf("audit: read: %w", err))
		}
	}
}

// WriteJSONL writes one JSON object per entry and line. The body is the
// stored bytes, so an export can be re-verified outside packs.
func WriteJSONL(w io.Writer, entries iter.Seq2[Entry, error]) error {
	enc := json.NewEncoder(w)
	for e, err := range entries {
		if err != nil {
			return err
		}
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("audit: export: %w", err)
		}
	}
	return nil
}

// WriteText writes one human-readable line per entry.
func WriteText(w io.Writer, entries iter.Seq2[Entry, error]) error {
	for e, err := range entries {
		if err != nil {
			return err
		}
		by := ""
		if e.Person != "" {
			by = "  (by " + e.Person + " via " + e.Client + ")"
		}
		if _, err := fmt.Fprintf(w, "%6d  %s  %-10s  %s  %s%s\n", e.Seq, e.At.Format(time.RFC3339), e.Kind, subject(e), summary(e), by); err != nil {
			return fmt.Errorf("audit: print: %w", err)
		}
	}
	return nil
}

func subject(e Entry) string {
	switch {
	case e.Pack == "":
		return e.Tool
	case e.Tool == "":
		return e.Pack
	}
	return e.Pack + "/" + e.Tool
}

func summary(e Entry) string {
	switch e.Kind {
	case KindExercise:
		var b exerciseBody
		if json.Unmarshal(e.Body, &b) != nil {
			return "(unreadable body)"
		}
		if b.Allowed {
			return fmt.Sprintf("%s %s allowed", b.Capability, b.Resource)
		}
		return fmt.Sprintf("%s %s DENIED by %s: %s", b.Capability, b.Resource, b.Layer, b.Reason)
	case KindInvocation:
		var b invocationBody
		if json.Unmarshal(e.Body, &b) != nil {
			return "(unreadable body)"
		}
		return callSummary(b)
	case KindInstall:
		return InstallSummary(e.Body)
	}
	return string(e.Body)
}

// callSummary says how a call ended, blaming the right party: a call the
// gate refused names who said no; a call that was approved and then refused
// (a capability, the pack's integrity) says both; an exit status is shown
// only for a tool that ran and said one.
func callSummary(b invocationBody) string {
	var s string
	switch {
	case b.Decision == capability.Deny.String() && b.Approver != "":
		s = "denied by " + b.Approver + " at the gate"
	case b.Decision == capability.Deny.String():
		s = "refused before anyone approved it"
	default:
		s = fmt.Sprintf("approved by %s (%s)", orNone(b.Approver), b.Decision)
		if b.Remembered {
			s += ", allowed for this chat earlier"
		}
		if b.ByAttach {
			s += ", by attaching the pack to the chat"
		}
		switch b.Status {
		case StatusOK:
			s += ", ok"
		case StatusDenied:
			s += ", then denied"
		default:
			s += ", " + string(b.Status)
		}
	}
	if b.ExitCode != 0 && (b.Status == StatusToolError || b.Status == StatusLimit) {
		s += fmt.Sprintf(", the tool exited %d", b.ExitCode)
	}
	s += ", " + timing(b)
	if b.Reason != "" {
		s += ": " + b.Reason
	}
	return s
}

// timing says where a call's time went (capability.DescribeTiming), or
// how long the whole call took for rows written before the wait and the
// run were kept.
func timing(b invocationBody) string {
	if b.WaitedMS == 0 && b.RanMS == 0 {
		return capability.DescribeDuration(durationMS(b.DurationMS))
	}
	return capability.DescribeTiming(durationMS(b.WaitedMS), durationMS(b.RanMS))
}

// Timing is timing for a stored invocation body: what packs audit and the
// web app's audit page say of where the call's time went.
func Timing(body json.RawMessage) string {
	var b invocationBody
	if json.Unmarshal(body, &b) != nil {
		return ""
	}
	return timing(b)
}

func durationMS(ms float64) time.Duration { return time.Duration(micros(ms)) * time.Microsecond }

func orNone(s string) string {
	if s == "" {
		return "nobody"
	}
	return s
}

// ErrBadSince is returned by ParseSince for a value it cannot read.
var ErrBadSince = errors.New("audit: bad --since value")

// ParseSince reads a --since value: an RFC 3339 time, a date (2006-01-02),
// or a duration back from now ("24h", "90m").
func ParseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, time.Local); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%w %q: write a time (2025-01-02T15:04:05Z), a date (2025-01-02) or a duration (24h)", ErrBadSince, s)
}
