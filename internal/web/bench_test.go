package web

import (
	"net/http"
	"testing"
)

// BenchmarkCallByHand is one pack tool call through the HTTP API: request,
// argument check, gate, a fresh wasm instance, audit, response.
func BenchmarkCallByHand(b *testing.B) {
	e := newEnv(b, envOptions{noModel: true})
	e.install()
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"notes"}}, &c)
	e.must(http.StatusOK, "POST", "/v1/chats/"+c.ID+"/calls", map[string]any{"name": "enable_tools", "arguments": map[string]string{"pack_id": "notes"}}, nil)
	body := map[string]any{"name": "notes__echo", "arguments": map[string]string{"text": "hi"}}
	b.ResetTimer()
	for b.Loop() {
		var r toolResultJSON
		e.must(http.StatusOK, "POST", "/v1/chats/"+c.ID+"/calls", body, &r)
		if r.IsError {
			b.Fatalf("echo failed: %s", r.Content)
		}
	}
}

// BenchmarkEventFanout publishes one event and has 8 subscribers read it.
func BenchmarkEventFanout(b *testing.B) {
	h := newHub()
	seen := make([]int64, 8)
	delta := map[string]string{"delta": "a streamed piece of text"}
	for b.Loop() {
		h.publish("text", delta)
		for i := range seen {
			evs, _ := h.since(seen[i])
			seen[i] = evs[len(evs)-1].seq
		}
	}
}
