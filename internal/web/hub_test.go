package web

import (
	"fmt"
	"testing"
)

// TestHubSince: a subscriber gets exactly the events after the one it saw,
// also once old events were dropped, and is woken by the next publish.
func TestHubSince(t *testing.T) {
	h := newHub()
	for i := range maxEvents + 10 {
		h.publish("text", i)
	}
	tests := []struct {
		after     int64
		wantFirst int64
		wantN     int
	}{
		{0, 11, maxEvents},
		{10, 11, maxEvents},
		{11, 12, maxEvents - 1},
		{maxEvents + 9, maxEvents + 10, 1},
		{maxEvents + 10, 0, 0},
		{maxEvents + 99, 0, 0},
	}
	for _, tt := range tests {
		evs, _ := h.since(tt.after)
		got := fmt.Sprint(len(evs))
		if len(evs) > 0 {
			got += fmt.Sprint(" from ", evs[0].seq)
		}
		want := fmt.Sprint(tt.wantN)
		if tt.wantN > 0 {
			want += fmt.Sprint(" from ", tt.wantFirst)
		}
		if got != want {
			t.Errorf("since(%d): got %s, want %s", tt.after, got, want)
		}
	}
	_, wake := h.since(maxEvents + 10)
	select {
	case <-wake:
		t.Fatal("woken before a publish")
	default:
	}
	h.publish("notice", "x")
	<-wake
	if evs, _ := h.since(maxEvents + 10); len(evs) != 1 || evs[0].kind != "notice" {
		t.Errorf("after publish: got %+v", evs)
	}
}
