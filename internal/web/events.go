package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// maxEvents bounds the events a chat keeps for late subscribers.
const maxEvents = 4096

// heartbeat keeps idle event streams open through proxies.
const heartbeat = 15 * time.Second

type event struct {
	seq  int64
	kind string
	data []byte
}

// hub is one chat's event log: every subscriber sees every event, in order,
// and one that (re)connects with Last-Event-ID misses nothing still kept.
type hub struct {
	mu     sync.Mutex
	events []event
	next   int64         // seq of the next event
	wake   chan struct{} // closed at each publish
}

func newHub() *hub { return &hub{next: 1, wake: make(chan struct{})} }

func (h *hub) publish(kind string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, event{seq: h.next, kind: kind, data: data})
	h.next++
	if len(h.events) > maxEvents {
		h.events = h.events[len(h.events)-maxEvents:]
	}
	close(h.wake)
	h.wake = make(chan struct{})
}

// last is the seq of the newest event (0 before the first): a page that
// drew the chat from GET /v1/chats/{id} streams the events after it, so
// nothing it drew arrives twice.
func (h *hub) last() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.next - 1
}

// since returns the events after seq, and a channel closed at the next
// publish.
func (h *hub) since(seq int64) ([]event, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// Seqs are consecutive, so the first event after seq is found by
	// arithmetic, not a scan.
	i := 0
	if len(h.events) > 0 {
		i = int(max(0, min(seq-h.events[0].seq+1, int64(len(h.events)))))
	}
	return h.events[i:len(h.events):len(h.events)], h.wake
}

// events streams a chat's events as server-sent events: text, tool_start,
// pending, decided, tool_done, notice, turn_done, turn_error (and a recipe
// run's recipe_start, recipe_call, params, params_done: recipes.go).
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	cs, err := s.chat(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, codeInternal, "web: streaming is not supported by this connection")
		return
	}
	var after int64
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = r.URL.Query().Get("after")
	}
	if last != "" {
		if after, err = strconv.ParseInt(last, 10, 64); err != nil || after < 0 {
			writeError(w, http.StatusBadRequest, codeBadRequest, "web: Last-Event-ID (or after) must be an event number")
			return
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		evs, wake := cs.events.since(after)
		for _, e := range evs {
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.seq, e.kind, e.data)
			after = e.seq
		}
		fl.Flush()
		select {
		case <-wake:
		case <-tick.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case <-r.Context().Done():
			return
		}
	}
}
