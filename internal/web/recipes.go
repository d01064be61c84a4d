package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/recipe"
)

// The web app shows a recipe run (the model's run_recipe call) as one
// card: the run_recipe call's tool card holds a row per call of the run.
// Each step's own approval arrives as a pending event like any call (its
// invocation is "<run>.<phase>.<id>"), so its Run and Deny sit on its row;
// recipe_start lists the planned calls, recipe_call ends each one, and the
// rollback's rows appear as they run. A recipe that lacks a required
// parameter asks the person with a form (params), answered by POST
// /v1/invocations/{id}/parameters.

var (
	_ chat.ParamAsker    = (*webApprover)(nil)
	_ chat.RecipeWatcher = (*webApprover)(nil)
)

// questions are the parameter forms waiting for the person, by the
// run_recipe call's invocation. The zero value is ready to use.
type questions struct {
	mu   sync.Mutex
	m    map[string]chan paramAnswer
	chat map[string]string // the chat each form waits in
}

type paramAnswer struct {
	values map[string]string
	cancel bool
}

func (q *questions) add(inv, chat string) chan paramAnswer {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.m == nil {
		q.m, q.chat = map[string]chan paramAnswer{}, map[string]string{}
	}
	c := make(chan paramAnswer, 1)
	q.m[inv], q.chat[inv] = c, chat
	return c
}

// chatOf returns the chat the form of inv waits in.
func (q *questions) chatOf(inv string) (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	c, ok := q.chat[inv]
	return c, ok
}

// answer gives the question inv its answer; false when none waits.
func (q *questions) answer(inv string, a paramAnswer) bool {
	q.mu.Lock()
	c, ok := q.m[inv]
	delete(q.m, inv)
	delete(q.chat, inv)
	q.mu.Unlock()
	if ok {
		c <- a
	}
	return ok
}

// errParamsCancelled: the person cancelled the form, or the turn ended.
var errParamsCancelled = errors.New("web: the person cancelled the recipe's parameters")

// paramsJSON is the params event: a form for the missing parameters.
type paramsJSON struct {
	CallID     string           `json:"call_id,omitempty"`
	Invocation string           `json:"invocation"`
	Chat       string           `json:"chat"`
	Pack       string           `json:"pack"`
	Recipe     string           `json:"recipe"`
	Name       string           `json:"name"`
	Params     []chat.ParamInfo `json:"params"`
	Since      time.Time        `json:"since"`
}

// AskParams shows the form on the run_recipe card and waits for the
// person's values, a Cancel, or the end of the turn.
func (a *webApprover) AskParams(ctx context.Context, q chat.ParamQuestion) (map[string]string, error) {
	c := a.all.q.add(q.Invocation, q.Chat)
	a.events.publish("params", paramsJSON{CallID: a.callID(), Invocation: q.Invocation, Chat: q.Chat, Pack: q.Pack, Recipe: q.Recipe, Name: q.Name,
		Params: orEmpty(q.Params), Since: time.Now().UTC()})
	select {
	case ans := <-c:
		a.events.publish("params_done", map[string]any{"invocation": q.Invocation, "cancelled": ans.cancel})
		if ans.cancel {
			return nil, errParamsCancelled
		}
		return ans.values, nil
	case <-ctx.Done():
		a.all.q.answer(q.Invocation, paramAnswer{cancel: true})
		a.events.publish("params_done", map[string]any{"invocation": q.Invocation, "cancelled": true, "reason": "the turn ended before an answer"})
		return nil, ctx.Err()
	}
}

// RecipeStarted puts the run's planned calls on its card.
func (a *webApprover) RecipeStarted(r chat.RecipeRun) {
	a.events.publish("recipe_start", struct {
		CallID string `json:"call_id,omitempty"`
		chat.RecipeRun
	}{a.callID(), r})
}

// RecipeCall ends one row of the run's card (a rollback row is added).
func (a *webApprover) RecipeCall(run string, c recipe.Call) {
	a.events.publish("recipe_call", map[string]any{"call_id": a.callID(), "run": run, "call": c})
}

// answerParams takes the person's values for a waiting parameter form:
// {"values": {"name": "text", ...}}, or {"cancel": true}.
func (s *Server) answerParams(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Values map[string]string `json:"values"`
		Cancel bool              `json:"cancel"`
	}
	if err := readJSON(w, r, &body); err != nil {
		s.fail(w, err)
		return
	}
	if !body.Cancel && len(body.Values) == 0 {
		s.fail(w, fmt.Errorf("%w: send {\"values\": {\"NAME\": \"VALUE\", ...}} or {\"cancel\": true}", errBadRequest))
		return
	}
	inv := r.PathValue("id")
	if !s.pending.q.answer(inv, paramAnswer{values: body.Values, cancel: body.Cancel}) {
		writeError(w, http.StatusNotFound, codeNotFound, "web: no recipe run "+strings.TrimSpace(inv)+" waits for parameters: it was already answered, or its turn ended")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"invocation": inv, "cancelled": body.Cancel})
}
