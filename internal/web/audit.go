package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/audit"
)

// maxAuditRows bounds one page of the audit log.
const maxAuditRows = 1000

// audit lists audit rows, newest limit (default 200) in seq order, filtered
// by pack, kind, invocation, person (an OIDC subject) and since (RFC 3339, or a duration like 24h).
func (s *Server) audit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := audit.Filter{Pack: q.Get("pack"), Invocation: q.Get("invocation"), Kind: audit.Kind(q.Get("kind")), Person: q.Get("person"), Limit: 200}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxAuditRows {
			writeError(w, http.StatusBadRequest, codeBadRequest, fmt.Sprintf("web: limit must be a number from 1 to %d", maxAuditRows))
			return
		}
		f.Limit = n
	}
	if v := q.Get("since"); v != "" {
		t, err := audit.ParseSince(v, time.Now())
		if err != nil {
			writeError(w, http.StatusBadRequest, codeBadRequest, "web: since: "+err.Error())
			return
		}
		f.Since = t
	}
	items := []auditRowJSON{}
	for e, err := range audit.Entries(r.Context(), s.cfg.App.DB, f) {
		if err != nil {
			s.fail(w, err)
			return
		}
		row := auditRowJSON{Entry: e}
		switch e.Kind {
		case audit.KindInvocation:
			row.Summary = callSummary(e.Body)
		case audit.KindInstall:
			row.Summary = audit.InstallSummary(e.Body)
		}
		items = append(items, row)
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "total": len(items)})
}

// verifyAudit walks the hash chain and reports every break.
func (s *Server) verifyAudit(w http.ResponseWriter, r *http.Request) {
	rep, err := audit.VerifyWithKey(r.Context(), s.cfg.App.DB, s.cfg.App.AuditKeyDir())
	if errors.Is(err, audit.ErrKeyMissing) || errors.Is(err, audit.ErrWrongKey) || errors.Is(err, audit.ErrBadKey) {
		// Not a failure of the server: the log cannot be vouched for.
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": err.Error(), "breaks": []any{}})
		return
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	type brk struct {
		Seq    int64  `json:"seq"`
		Kind   string `json:"kind"`
		Detail string `json:"detail"`
	}
	breaks := []brk{}
	for _, b := range rep.Breaks {
		breaks = append(breaks, brk{Seq: b.Seq, Kind: string(b.Kind), Detail: b.Detail})
	}
	out := map[string]any{"ok": rep.OK(), "rows": rep.Rows, "head_seq": rep.HeadSeq, "head_hash": rep.HeadHash, "breaks": breaks,
		"key_id": rep.KeyID, "first_keyed": rep.FirstKeyed, "unkeyed": rep.Unkeyed, "warnings": append([]string{}, rep.Warnings...)}
	if cp := rep.Checkpoint; cp != nil {
		out["checkpoint"] = map[string]any{"seq": cp.Seq, "at": cp.At}
	}
	writeJSON(w, http.StatusOK, out)
}

// auditRowJSON is an audit row with a one-line summary for people.
type auditRowJSON struct {
	audit.Entry
	Summary string `json:"summary"`
}

// deniedRe reads capability.DeniedError's message: "capability: CAP
// ["RESOURCE"] denied by LAYER: REASON", or "capability: denied by LAYER:
// REASON" for a whole call or pack.
var deniedRe = regexp.MustCompile(`^capability: (?:([a-z_]+)( "(?:[^"\\]|\\.)*")? )?denied by ([a-z]+): (.*)$`)

// deniedBy names what refused: "capability network "x.com" (user): not
// granted", "the policy: ...", "web" (an approver's no).
func deniedBy(reason string) (string, bool) {
	m := deniedRe.FindStringSubmatch(reason)
	if m == nil {
		return "", false
	}
	switch {
	case m[1] != "":
		return "capability " + m[1] + m[2] + " (" + m[3] + "): " + m[4], true
	case m[3] == string(capability.LayerPolicy):
		return "the policy: " + m[4], true
	}
	return m[4], true
}

// callSummary says in one line who decided an invocation and how it ended,
// blaming the right party: a call the person approved and a capability
// refused afterwards reads "approved by web; denied by capability ...",
// not "denied by web".
func callSummary(body []byte) string {
	var b struct {
		Approver   string  `json:"approver"`
		Decision   string  `json:"decision"`
		Remembered bool    `json:"remembered"`
		ByAttach   bool    `json:"by_attach"`
		Status     string  `json:"status"`
		Reason     string  `json:"reason"`
		ExitCode   int     `json:"exit_code"`
		DurationMS float64 `json:"duration_ms"`
	}
	if json.Unmarshal(body, &b) != nil {
		return "(unreadable record)"
	}
	if b.Decision != capability.RunOnce.String() && b.Decision != capability.AllowChat.String() {
		by, ok := deniedBy(b.Reason)
		switch {
		case b.Approver != "" && (by == "denied by "+b.Approver || by == ""):
			return "denied by " + b.Approver
		case b.Approver != "":
			return "denied by " + b.Approver + ": " + by
		case b.Status == string(capability.StatusDenied) && ok:
			return "denied before approval by " + by
		}
		return "refused before approval (" + b.Status + "): " + b.Reason
	}
	s := "approved by " + b.Approver
	switch {
	case b.ByAttach:
		s += " (by attaching the pack to the chat)"
	case b.Remembered:
		s += " (allowed for this chat earlier)"
	case b.Decision == capability.AllowChat.String():
		s += " (allowed for this chat)"
	default:
		s += " (run once)"
	}
	s += "; "
	if b.Status == string(capability.StatusDenied) {
		if by, ok := deniedBy(b.Reason); ok {
			return s + "denied by " + by
		}
		return s + "denied after approval: " + b.Reason
	}
	s += b.Status
	if b.ExitCode != 0 {
		s += fmt.Sprintf(", exit status %d", b.ExitCode)
	}
	if b.Status == string(capability.StatusOK) {
		return s + ", " + audit.Timing(body)
	}
	if b.Reason != "" {
		s += ": " + b.Reason
	}
	return s
}
