package web

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/audit"
)

// maxAuditRows bounds one page of the audit log.
const maxAuditRows = 1000

// audit lists audit rows, newest limit (default 200) in seq order, filtered
// by pack, kind, invocation and since (RFC 3339, or a duration like 24h).
func (s *Server) audit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := audit.Filter{Pack: q.Get("pack"), Invocation: q.Get("invocation"), Kind: audit.Kind(q.Get("kind")), Limit: 200}
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
	items := []audit.Entry{}
	for e, err := range audit.Entries(r.Context(), s.cfg.App.DB, f) {
		if err != nil {
			s.fail(w, err)
			return
		}
		items = append(items, e)
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "total": len(items)})
}

// verifyAudit walks the hash chain and reports every break.
func (s *Server) verifyAudit(w http.ResponseWriter, r *http.Request) {
	rep, err := audit.Verify(r.Context(), s.cfg.App.DB)
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
	writeJSON(w, http.StatusOK, map[string]any{"ok": rep.OK(), "rows": rep.Rows, "head_seq": rep.HeadSeq, "head_hash": rep.HeadHash, "breaks": breaks})
}

// capabilityJSON is one capability in spec 003's shape.
type capabilityJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Status      string `json:"status"`
	Icon        string `json:"icon"`
	Category    string `json:"category"`
}

// capabilityInfo describes each capability a pack can ask for.
var capabilityInfo = map[capability.Name]capabilityJSON{
	capability.FilesystemRead:  {Name: "Read files", Description: "Read the listed paths, read-only. Without a grant a pack reads only its own folder.", Icon: "file-text", Category: "Filesystem"},
	capability.FilesystemWrite: {Name: "Write files", Description: "Read and write the listed paths. Without a grant a pack writes only the chat's workspace.", Icon: "file-pen", Category: "Filesystem"},
	capability.Network:         {Name: "Network", Description: "HTTP(S) requests to the listed host patterns, through the host's http_request.", Icon: "globe", Category: "Network"},
	capability.EnvRead:         {Name: "Environment", Description: "See the listed environment variables (names or patterns).", Icon: "variable", Category: "System"},
	capability.TerminalExec:    {Name: "Run commands", Description: "Run the listed native commands, never through a shell, with a timeout and a scrubbed environment.", Icon: "terminal", Category: "System"},
	capability.SecretsAccess:   {Name: "Secrets", Description: "Read the named secrets from the secret store.", Icon: "key", Category: "Secrets"},
}

func describeCapability(n capability.Name) capabilityJSON {
	c := capabilityInfo[n]
	c.ID, c.Status = string(n), "available"
	return c
}

func (s *Server) listCapabilities(w http.ResponseWriter, r *http.Request) {
	items := make([]capabilityJSON, 0, len(capability.All))
	for _, n := range capability.All {
		items = append(items, describeCapability(n))
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "total": len(items)})
}

func (s *Server) getCapability(w http.ResponseWriter, r *http.Request) {
	n, err := capability.ParseName(r.PathValue("id"))
	if err != nil {
		writeError(w, http.StatusNotFound, codeNotFound, "web: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, describeCapability(n))
}
