package web

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
)

// listReview lists the person's grants due for review under the policy's
// [review] (the Packs page shows them, each with Keep and Revoke).
func (s *Server) listReview(w http.ResponseWriter, r *http.Request) {
	due, err := s.cfg.App.Review(r.Context(), time.Now())
	if err != nil {
		s.fail(w, err)
		return
	}
	if due == nil {
		due = []app.DueGrant{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": due, "total": len(due)})
}

// keepGrant records that the person reviewed a grant and keeps it: its
// age counts from now. Revoking is DELETE /v1/packs/{name}/grants/{capability}.
func (s *Server) keepGrant(w http.ResponseWriter, r *http.Request) {
	n, err := capability.ParseName(r.PathValue("capability"))
	if err != nil {
		s.fail(w, fmt.Errorf("%w: %v", errBadRequest, err))
		return
	}
	if err := s.cfg.App.KeepGrant(r.Context(), r.PathValue("name"), n); errors.Is(err, app.ErrNothingToKeep) {
		s.fail(w, fmt.Errorf("%w: %v", errNotFound, err))
		return
	} else if err != nil {
		s.fail(w, err)
		return
	}
	s.listReview(w, r)
}
