package web

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/packs-run/packs/internal/store"
)

// queueDecider is who decided a queued call from the web app, as the audit
// log records it: the approver is "queue:web".
const queueDecider = "web"

// The approval queue (GET /v1/queue, POST /v1/queue/{id}/approve and
// /deny): calls from other processes (packs mcp serving a client that
// cannot elicit) that wait in packs.db for a person. Unlike
// /v1/invocations, which holds the calls of this server's own chats, these
// calls run elsewhere; the database is where the two processes meet.
func (s *Server) listQueue(w http.ResponseWriter, r *http.Request) {
	items, err := s.cfg.Chat.Store.WaitingCalls(r.Context(), time.Now())
	if err != nil {
		s.fail(w, err)
		return
	}
	p, _ := personOf(r)
	items = slices.DeleteFunc(items, func(q store.QueuedCall) bool { return !s.canSee(r.Context(), p, q.Chat) })
	if items == nil {
		items = []store.QueuedCall{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "total": len(items)})
}

func (s *Server) approveQueued(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Always bool `json:"always"` // allow calls of this class for the rest of the client's session
	}
	if r.ContentLength != 0 {
		if err := readJSON(w, r, &body); err != nil {
			s.fail(w, err)
			return
		}
	}
	v := store.VerdictRunOnce
	if body.Always {
		v = store.VerdictAllowChat
	}
	s.decideQueued(w, r, v)
}

func (s *Server) denyQueued(w http.ResponseWriter, r *http.Request) {
	s.decideQueued(w, r, store.VerdictDeny)
}

func (s *Server) decideQueued(w http.ResponseWriter, r *http.Request, verdict string) {
	id := r.PathValue("id")
	err := s.cfg.Chat.Store.DecideQueued(r.Context(), id, verdict, queueDecider, time.Now())
	switch {
	case errors.Is(err, store.ErrQueuedNotFound):
		s.fail(w, fmt.Errorf("%w: no queued call %s", errNotFound, id))
	case errors.Is(err, store.ErrQueuedDecided), errors.Is(err, store.ErrQueuedExpired):
		writeError(w, http.StatusConflict, codeConflict, "web: "+err.Error())
	case err != nil:
		s.fail(w, err)
	default:
		writeJSON(w, http.StatusOK, map[string]string{"id": id, "verdict": verdict, "decided_by": queueDecider})
	}
}
