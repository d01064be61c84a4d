package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/packs"
)

// Error codes of the API's error body.
const (
	codeBadRequest   = "bad_request"
	codeNotFound     = "not_found"
	codeForbidden    = "forbidden"
	codeUnauthorized = "unauthorized"
	codeDenied       = "denied"
	codeConflict     = "conflict"
	codeNoModel      = "no_model"
	codeInvalidPack  = "invalid_pack"
	codeInternal     = "internal"
	codeTooLarge     = "too_large"
)

// apiError is the body of every error response.
type apiError struct {
	Code     string          `json:"code"`
	Message  string          `json:"message"`
	Status   int             `json:"status"`
	Findings []packs.Finding `json:"findings,omitempty"`
	Details  map[string]any  `json:"details,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]apiError{"error": {Code: code, Message: msg, Status: status}})
}

// fail maps err to a status and code by what it means.
func (s *Server) fail(w http.ResponseWriter, err error) {
	var le *packs.LoadError
	switch {
	case errors.As(err, &le):
		writeJSON(w, http.StatusUnprocessableEntity, map[string]apiError{"error": {Code: codeInvalidPack, Status: http.StatusUnprocessableEntity,
			Message: "web: the pack has errors: fix them (packs validate shows them) and install it again", Findings: le.Findings}})
	case errors.Is(err, app.ErrMisfit), errors.Is(err, app.ErrExecNotRequested):
		// The pack cannot be installed as it is: the reason names the rule.
		writeError(w, http.StatusUnprocessableEntity, codeInvalidPack, err.Error())
	case errors.Is(err, dist.ErrSignatureRequired), errors.Is(err, dist.ErrUntrustedSigner), errors.Is(err, dist.ErrSignerBlocked),
		errors.Is(err, dist.ErrSignature), errors.Is(err, app.ErrDeclined):
		writeError(w, http.StatusForbidden, codeDenied, err.Error())
	case errors.Is(err, errBadRequest), errors.Is(err, dist.ErrUnsupportedSource), errors.Is(err, fs.ErrNotExist), errors.Is(err, capability.ErrBadSpec),
		errors.Is(err, dist.ErrNotRequested),
		errors.Is(err, app.ErrInvalidAgent), errors.Is(err, app.ErrUnknownCapability):
		writeError(w, http.StatusBadRequest, codeBadRequest, err.Error())
	case errors.Is(err, errTooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, codeTooLarge, err.Error())
	case errors.Is(err, chat.ErrNotFound), errors.Is(err, dist.ErrNotInstalled), errors.Is(err, errNotFound), errors.Is(err, app.ErrAgentNotFound):
		writeError(w, http.StatusNotFound, codeNotFound, err.Error())
	case errors.Is(err, capability.ErrDenied):
		writeError(w, http.StatusForbidden, codeDenied, err.Error())
	case errors.Is(err, chat.ErrMandated), errors.Is(err, errBusy), errors.Is(err, chat.ErrToolBudget), errors.Is(err, packs.ErrModified),
		errors.Is(err, app.ErrAgentExists), errors.Is(err, packs.ErrComingSoon), errors.Is(err, errChanged), errors.Is(err, errBuiltIn), errors.Is(err, app.ErrOtherPack):
		writeError(w, http.StatusConflict, codeConflict, err.Error())
	default:
		s.log.Error("web: request failed", "err", err)
		writeError(w, http.StatusInternalServerError, codeInternal, err.Error())
	}
}

var (
	errBadRequest = errors.New("web: bad request")
	errNotFound   = errors.New("web: not found")
	errBusy       = errors.New("web: a turn is already running in this chat")
	errTooLarge   = errors.New("web: too large")
	errBuiltIn    = errors.New("web: a built-in pack")
)

// maxJSONBody bounds a JSON request body.
const maxJSONBody = 1 << 20

// readJSON decodes r's JSON body into v; unknown fields are refused so a
// typo is not silently ignored.
func readJSON(w http.ResponseWriter, r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return fmt.Errorf("%w: send Content-Type: application/json, not %q", errBadRequest, ct)
		}
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxJSONBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: the body is empty: send a JSON object", errBadRequest)
		}
		return fmt.Errorf("%w: the body is not the JSON this endpoint takes: %v", errBadRequest, err)
	}
	return nil
}
