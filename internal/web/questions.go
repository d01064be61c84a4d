package web

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/packs-run/packs/capability"
)

// questionJSON is a tool's question waiting for the person (ask_person):
// what a question card shows.
type questionJSON struct {
	ID         string             `json:"id"`
	Invocation string             `json:"invocation"`
	CallID     string             `json:"call_id,omitempty"`
	Chat       string             `json:"chat"`
	Pack       string             `json:"pack"`
	Tool       string             `json:"tool"`
	Message    string             `json:"message"`
	Fields     []capability.Field `json:"fields"`
	Since      time.Time          `json:"since"`
}

type askedQuestion struct {
	info   questionJSON
	answer chan capability.Answer // buffered: one answer
}

// toolQuestions holds the tools' questions waiting for the person, across
// chats.
type toolQuestions struct {
	mu   sync.Mutex
	m    map[string]*askedQuestion
	next atomic.Uint64
}

func newToolQuestions() *toolQuestions { return &toolQuestions{m: map[string]*askedQuestion{}} }

// chatOf returns the chat question id waits in.
func (qs *toolQuestions) chatOf(id string) (string, bool) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	w, ok := qs.m[id]
	if !ok {
		return "", false
	}
	return w.info.Chat, true
}

// answer gives question id the answer a; false when none of that id waits.
func (qs *toolQuestions) answer(id string, a capability.Answer) bool {
	qs.mu.Lock()
	w, ok := qs.m[id]
	delete(qs.m, id)
	qs.mu.Unlock()
	if ok {
		w.answer <- a
	}
	return ok
}

// Ask shows a tool's question as a card in the chat and waits for the
// person's answer; the turn's end (or the question's timeout) cancels it.
// The host checks the answer against the question's schema.
func (a *webApprover) Ask(ctx context.Context, q capability.Question) (capability.Answer, error) {
	id := "q" + strconv.FormatUint(a.questions.next.Add(1), 10) + "_" + q.Invocation
	w := &askedQuestion{answer: make(chan capability.Answer, 1), info: questionJSON{
		ID: id, Invocation: q.Invocation, CallID: a.callID(), Chat: a.chat, Pack: q.Pack, Tool: q.Tool,
		Message: q.Message, Fields: orEmpty(q.Fields()), Since: time.Now().UTC(),
	}}
	a.questions.mu.Lock()
	a.questions.m[id] = w
	a.questions.mu.Unlock()
	a.events.publish("question", w.info)
	select {
	case ans := <-w.answer:
		a.events.publish("answered", map[string]string{"id": id, "action": ans.Action})
		return ans, nil
	case <-ctx.Done():
		a.questions.answer(id, capability.Answer{}) // forget it; the buffered answer is dropped
		a.events.publish("answered", map[string]string{"id": id, "action": capability.ActionCancel, "reason": "no answer in time"})
		return capability.Answer{Action: capability.ActionCancel}, nil
	}
}

// answerQuestion is POST /v1/questions/{id}/answer: {"action": "accept",
// "content": {...}}, {"action": "decline"} or {"action": "cancel"}.
func (s *Server) answerQuestion(w http.ResponseWriter, r *http.Request) {
	var body capability.Answer
	if err := readJSON(w, r, &body); err != nil {
		s.fail(w, err)
		return
	}
	switch {
	case body.Action != capability.ActionAccept && body.Action != capability.ActionDecline && body.Action != capability.ActionCancel:
		writeError(w, http.StatusBadRequest, codeBadRequest, `web: action must be "accept", "decline" or "cancel"`)
		return
	case body.Action != capability.ActionAccept && body.Content != nil:
		writeError(w, http.StatusBadRequest, codeBadRequest, "web: only an accepted answer has content")
		return
	case body.Action == capability.ActionAccept && body.Content == nil:
		body.Content = map[string]any{}
	}
	id := r.PathValue("id")
	if !s.questions.answer(id, body) {
		writeError(w, http.StatusNotFound, codeNotFound, "web: no question "+strings.TrimSpace(id)+" waits for an answer: it was already answered, or its turn ended")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": id, "action": body.Action})
}
