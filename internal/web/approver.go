package web

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/packs-run/packs/capability"
)

// pendingJSON is a call waiting for the person: what a tool card shows.
type pendingJSON struct {
	Invocation   string            `json:"invocation"`
	CallID       string            `json:"call_id,omitempty"` // the model's id for the call
	Chat         string            `json:"chat"`
	Pack         string            `json:"pack,omitempty"`
	Tool         string            `json:"tool"`
	Class        string            `json:"class"`
	BaseTool     bool              `json:"base_tool"`
	Arguments    json.RawMessage   `json:"arguments"`
	Capabilities []capability.Name `json:"capabilities"`
	Touches      []string          `json:"touches"`
	// RiskLevel is what a recipe step declares it can break; empty for
	// other calls.
	RiskLevel capability.RiskLevel `json:"risk_level,omitempty"`
	// Grants say which grant allows each capability at stake, and what it
	// covers: what the call will hold if the person says Run.
	Grants []grantJSON `json:"grants"`
	Since  time.Time   `json:"since"`
}

// grantJSON is what allows one capability of a waiting call.
type grantJSON struct {
	Capability capability.Name `json:"capability"`
	Resources  []string        `json:"resources"`
	Scope      string          `json:"scope,omitempty"` // persistent, chat, once
	// By says whose decision it is, in words: "your grant (until revoked)",
	// "the defaults", "the policy".
	By string `json:"by"`
}

type waiting struct {
	info   pendingJSON
	answer chan capability.Verdict // buffered: one answer
}

// approvals holds the calls waiting for the person, across chats.
type approvals struct {
	mu sync.Mutex
	m  map[string]*waiting
	q  questions // recipe parameters waiting for the person (recipes.go)
}

func newApprovals() *approvals { return &approvals{m: map[string]*waiting{}} }

// list returns the waiting calls of chat ("" for every chat), oldest first.
func (a *approvals) list(chat string) []pendingJSON {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := []pendingJSON{}
	for _, w := range a.m {
		if chat == "" || w.info.Chat == chat {
			out = append(out, w.info)
		}
	}
	slices.SortFunc(out, func(x, y pendingJSON) int { return x.Since.Compare(y.Since) })
	return out
}

// chatOf returns the chat the call inv waits in.
func (a *approvals) chatOf(inv string) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w, ok := a.m[inv]
	if !ok {
		return "", false
	}
	return w.info.Chat, true
}

// answer gives the waiting call inv the verdict v; false when no call of
// that id waits (unknown, or already answered).
func (a *approvals) answer(inv string, v capability.Verdict) bool {
	a.mu.Lock()
	w, ok := a.m[inv]
	delete(a.m, inv)
	a.mu.Unlock()
	if ok {
		w.answer <- v
	}
	return ok
}

// webApprover is the person in the browser. Each pending call becomes a tool
// card; it waits until the person clicks Run, Deny or Always for this chat,
// or the turn ends (deny).
type webApprover struct {
	all    *approvals
	events *hub
	callID func() string // the model's id of the call being decided
	// grants explains the capabilities at stake (nil: not shown).
	grants func(ctx context.Context, pack, chat string, caps []capability.Name) []grantJSON
	// questions and chat serve the tools' questions (Ask, questions.go).
	questions *toolQuestions
	chat      string
}

func (a *webApprover) Name() string { return "web" }

func (a *webApprover) Approve(ctx context.Context, p capability.Pending) (capability.Verdict, error) {
	w := &waiting{answer: make(chan capability.Verdict, 1), info: pendingJSON{
		Invocation: p.Invocation, CallID: a.callID(), Chat: p.Chat, Pack: p.Pack, Tool: p.Tool, Class: p.Class(), BaseTool: p.BaseTool,
		Arguments: p.Arguments, Capabilities: orEmpty(p.Capabilities), Touches: orEmpty(p.Touches), Grants: []grantJSON{}, Since: time.Now().UTC(),
		RiskLevel: p.RiskLevel,
	}}
	if a.grants != nil && p.Pack != "" && len(p.Capabilities) > 0 {
		w.info.Grants = orEmpty(a.grants(ctx, p.Pack, p.Chat, p.Capabilities))
	}
	a.all.mu.Lock()
	a.all.m[p.Invocation] = w
	a.all.mu.Unlock()
	a.events.publish("pending", w.info)
	select {
	case v := <-w.answer:
		a.events.publish("decided", map[string]any{"invocation": p.Invocation, "verdict": v.String()})
		return v, nil
	case <-ctx.Done():
		a.all.answer(p.Invocation, capability.Deny) // forget it; the buffered answer is dropped
		a.events.publish("decided", map[string]any{"invocation": p.Invocation, "verdict": capability.Deny.String(), "reason": "the turn ended before an answer"})
		return capability.Deny, nil
	}
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// byHand approves exactly the one call a person asked for on the packs page:
// the click that sent the request is the approval.
type byHand struct{ class string }

func (b byHand) Name() string { return "web:by-hand" }

func (b byHand) Approve(_ context.Context, p capability.Pending) (capability.Verdict, error) {
	if p.Class() != b.class {
		return capability.Deny, capability.ErrDefer
	}
	return capability.RunOnce, nil
}

func (s *Server) listPending(w http.ResponseWriter, r *http.Request) {
	p, _ := personOf(r)
	items := slices.DeleteFunc(s.pending.list(r.URL.Query().Get("chat")), func(c pendingJSON) bool { return !s.canSee(r.Context(), p, c.Chat) })
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "total": len(items)})
}

func (s *Server) approve(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Always bool `json:"always"` // allow calls of this class for the rest of the chat
	}
	if r.ContentLength != 0 {
		if err := readJSON(w, r, &body); err != nil {
			s.fail(w, err)
			return
		}
	}
	v := capability.RunOnce
	if body.Always {
		v = capability.AllowChat
	}
	s.decide(w, r.PathValue("id"), v)
}

func (s *Server) deny(w http.ResponseWriter, r *http.Request) {
	s.decide(w, r.PathValue("id"), capability.Deny)
}

func (s *Server) decide(w http.ResponseWriter, inv string, v capability.Verdict) {
	if !s.pending.answer(inv, v) {
		writeError(w, http.StatusNotFound, codeNotFound, "web: no call "+strings.TrimSpace(inv)+" waits for approval: it was already decided, or its turn ended")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"invocation": inv, "verdict": v.String()})
}

// grantsAtStake says, for each capability a waiting call of pack holds,
// which grant allows it and what it covers, from the same layers a call
// resolves (capability.Explain over the policy and the person's grants in
// this chat). It shows nothing it cannot work out: the card still lists
// the capabilities and what they touch.
func (s *Server) grantsAtStake(ctx context.Context, pack, chatID string, caps []capability.Name) []grantJSON {
	ip, err := s.cfg.App.Pack(ctx, pack)
	if err != nil || ip.Pack == nil {
		return nil
	}
	user, err := s.cfg.App.DB.PeekGrants(ctx, pack, chatID, s.cfg.App.Grants().Lapse())
	if err != nil {
		return nil
	}
	ws, err := s.workspaceOf(ctx, chatID)
	if err != nil {
		return nil
	}
	rep, err := capability.Explain(ip.Entry.Ref(), ip.Pack.Request(), user, s.cfg.Chat.Pipeline.Policy(), ws.env)
	if err != nil {
		return nil
	}
	var out []grantJSON
	for _, n := range caps {
		g := grantJSON{Capability: n, Resources: []string{}, By: "the defaults every pack has"}
		for _, c := range rep.Capabilities {
			if c.Capability != n {
				continue
			}
			g.Resources = ws.show(c.Effective)
			g.Scope = string(c.Scope)
			switch {
			case c.Err != nil:
				g.By = "nothing: not granted (" + c.Err.Error() + ")"
			case c.User.Allowed && c.Scope == capability.ScopeChat:
				g.By = "your grant for this chat"
			case c.User.Allowed && c.Scope == capability.ScopeOnce:
				g.By = "your one-time grant"
			case c.User.Allowed:
				g.By = "your grant, kept until you revoke it"
			default:
				g.By = "the policy"
			}
		}
		out = append(out, g)
	}
	return out
}
