package llm

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

type sseEvent struct{ event, data string }

func collect(in string) ([]sseEvent, error) {
	var got []sseEvent
	err := readEvents(strings.NewReader(in), func(event string, data []byte) error {
		got = append(got, sseEvent{event, string(data)})
		return nil
	})
	return got, err
}

func TestReadEvents(t *testing.T) {
	in := ": a comment\r\n" +
		"event: message_start\r\ndata: {\"a\":1}\r\n\r\n" +
		"data: line one\ndata:line two\n\n" +
		"event: ping\n\n" + // no data: skipped
		"retry: 10\nid: 7\ndata: [DONE]" // no blank line at the end
	got, err := collect(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []sseEvent{{"message_start", `{"a":1}`}, {"", "line one\nline two"}, {"", "[DONE]"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestReadEventsTooLarge(t *testing.T) {
	in := "data: " + strings.Repeat("x", maxEventBytes+1) + "\n\n"
	if _, err := collect(in); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("got %v, want an event-too-large error", err)
	}
}

// FuzzReadEvents: any byte stream from a server is read without a panic,
// and every event's data is made of the data lines' values.
func FuzzReadEvents(f *testing.F) {
	f.Add([]byte("event: x\ndata: {}\n\n"))
	f.Add([]byte("data: [DONE]\n\n"))
	f.Add([]byte(":\n\ndata\ndata:\n\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := collect(string(in))
		if err != nil {
			return
		}
		for _, e := range got {
			for _, line := range strings.Split(e.data, "\n") {
				if !bytes.Contains(in, []byte(line)) {
					t.Fatalf("data line %q is not in the input", line)
				}
			}
		}
	})
}
