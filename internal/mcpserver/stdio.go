package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"syscall"
)

// maxCountedLine is the longest input line drainReader parses to count
// requests: the SDK's own limit on one frame. A longer line is passed on
// uncounted, and the SDK refuses it.
const maxCountedLine = 16 << 20

// drain holds back the end of a stdio client's input until every request
// read before it has been answered. The SDK's connection cancels the calls
// in flight as soon as its reader reports io.EOF, so a client that writes
// its requests and closes stdin at once (a script, `... | packs mcp`) would
// lose every answer not yet written. drain counts the requests (JSON-RPC
// messages with a method and an id) that pass through the reader and the
// responses that pass through the writer, and returns io.EOF only when they
// match, when the server has sent the client a request of its own that the
// closed input can no longer answer (elicitation), or when the session ends.
type drain struct {
	mu        sync.Mutex
	changed   chan struct{} // closed and replaced whenever a count changes
	requests  int           // calls read from the client
	answered  int           // responses written to the client
	asked     int           // calls written to the client (e.g. elicitation)
	responses int           // responses read from the client
	done      chan struct{} // closed when the session ends
}

func newDrain() *drain {
	return &drain{changed: make(chan struct{}), done: make(chan struct{})}
}

// update changes the counts under the lock and wakes a waiting reader.
func (d *drain) update(f func()) {
	d.mu.Lock()
	f()
	close(d.changed)
	d.changed = make(chan struct{})
	d.mu.Unlock()
}

// wait blocks until every request read has been answered, a request the
// server sent is left unanswered, ctx ends, or the session ends.
func (d *drain) wait(ctx context.Context) {
	for {
		d.mu.Lock()
		settled := d.answered >= d.requests || d.asked > d.responses
		changed := d.changed
		d.mu.Unlock()
		if settled {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		case <-d.done:
			return
		}
	}
}

// end releases a reader waiting at the end of input.
func (d *drain) end() { close(d.done) }

// rpcShape is the part of a JSON-RPC message that says what it is.
type rpcShape struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// classify counts the calls (method and id) and responses (id, no method)
// in one line: a message or a batch of them.
func classify(line []byte) (calls, responses int) {
	line = bytes.TrimSpace(line)
	var msgs []rpcShape
	if len(line) > 0 && line[0] == '[' {
		if json.Unmarshal(line, &msgs) != nil {
			return 0, 0
		}
	} else {
		var m rpcShape
		if json.Unmarshal(line, &m) != nil {
			return 0, 0
		}
		msgs = []rpcShape{m}
	}
	for _, m := range msgs {
		hasID := len(m.ID) > 0 && string(m.ID) != "null"
		switch {
		case m.Method != "" && hasID:
			calls++
		case m.Method == "" && hasID:
			responses++
		}
	}
	return calls, responses
}

// drainReader is the client's input as the SDK reads it: whole lines, each
// counted before it is handed on, and io.EOF only once drain allows it.
type drainReader struct {
	ctx  context.Context
	d    *drain
	in   *bufio.Reader
	line []byte // the rest of the current line, not yet read by the SDK
	err  error  // the input's error, returned once the line is used up
}

func (r *drainReader) Read(p []byte) (int, error) {
	if len(r.line) == 0 && r.err == nil {
		r.line, r.err = r.readLine()
	}
	if len(r.line) > 0 {
		n := copy(p, r.line)
		r.line = r.line[n:]
		return n, nil
	}
	if errors.Is(r.err, io.EOF) {
		r.d.wait(r.ctx)
	}
	return 0, r.err
}

// readLine reads one line (up to maxCountedLine bytes) and counts what it
// holds.
func (r *drainReader) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.in.ReadSlice('\n')
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) && len(line) < maxCountedLine {
			continue
		}
		if !errors.Is(err, bufio.ErrBufferFull) && len(line) <= maxCountedLine {
			if calls, responses := classify(line); calls > 0 || responses > 0 {
				r.d.update(func() { r.d.requests += calls; r.d.responses += responses })
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			err = nil // an over-long line: pass it on uncounted
		}
		return line, err
	}
}

// drainWriter is the client's output: each message the SDK writes (one per
// Write) is counted.
type drainWriter struct {
	d *drain
	w io.Writer
}

func (w drainWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err == nil {
		if calls, responses := classify(p); calls > 0 || responses > 0 {
			w.d.update(func() { w.d.asked += calls; w.d.answered += responses })
		}
	}
	return n, err
}

func (drainWriter) Close() error { return nil }

// clientGone reports whether err is a write to an output the client has
// closed: it left. (A 2026-07-28 client leaves with a subscriptions/listen
// request open, whose answer comes after it closed its end.)
func clientGone(err error) bool {
	return errors.Is(err, io.ErrClosedPipe) || errors.Is(err, syscall.EPIPE)
}
