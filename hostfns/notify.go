package hostfns

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	extism "github.com/extism/go-sdk"
	"github.com/packs-run/packs/capability"
)

// ProgressNamespace holds the progress host function (docs/abi.md §4.7).
const ProgressNamespace = "packs:host/progress"

// MaxProgressNotes is how many progress reports one call may make; past it
// they are dropped and one warning says so.
const MaxProgressNotes = 1024

// progressHost is the progress host function: request is a block holding
// {"progress": N, "total": T, "message": "..."}. progress is required, at
// least 0 and greater than the call's last report; total, when given, is
// above 0 and at least progress; no other key. A malformed report
// traps (ErrInvalidRequest). The message is masked of secrets and counts
// against MaxLogBytes with the call's log lines.
func progressHost(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
	c := mustCall(ctx)
	pr, err := parseProgress(mustReadBytes(p, stack[0]))
	if err != nil {
		panic(err)
	}
	pr.Message = secretsFrom(ctx).MaskString(pr.Message)
	if err := c.progress(ctx, pr); err != nil {
		panic(err)
	}
}

// parseProgress reads one progress report.
func parseProgress(b []byte) (capability.Progress, error) {
	var r struct {
		Progress *float64 `json:"progress"`
		Total    *float64 `json:"total"`
		Message  string   `json:"message"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return capability.Progress{}, fmt.Errorf("%w: progress: %v: send {\"progress\": N, \"total\": T, \"message\": \"...\"}", ErrInvalidRequest, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return capability.Progress{}, fmt.Errorf("%w: progress: extra data after the JSON object", ErrInvalidRequest)
	}
	// JSON has no NaN or infinity, and encoding/json refuses a number
	// out of float64's range, so every value here is finite.
	switch {
	case r.Progress == nil:
		return capability.Progress{}, fmt.Errorf("%w: progress: \"progress\" is missing", ErrInvalidRequest)
	case *r.Progress < 0:
		return capability.Progress{}, fmt.Errorf("%w: progress: \"progress\" must be a number of at least 0", ErrInvalidRequest)
	case r.Total != nil && (*r.Total < *r.Progress || *r.Total == 0):
		return capability.Progress{}, fmt.Errorf("%w: progress: \"total\" must be a number above 0 and at least \"progress\"", ErrInvalidRequest)
	}
	out := capability.Progress{Progress: *r.Progress, Message: r.Message}
	if r.Total != nil {
		out.Total = *r.Total
	}
	return out, nil
}

// progress passes one report on to the call's Notifier, if any, after
// checking that it grows, within MaxProgressNotes and the log budget.
func (c *Call) progress(ctx context.Context, p capability.Progress) error {
	c.mu.Lock()
	if c.progressed > 0 && p.Progress <= c.lastProgress {
		last := c.lastProgress
		c.mu.Unlock()
		return fmt.Errorf("%w: progress: %v is not greater than the last report, %v: progress only grows", ErrInvalidRequest, p.Progress, last)
	}
	c.lastProgress = p.Progress
	c.progressed++
	n := c.progressed
	var cut bool
	if n <= MaxProgressNotes {
		p.Message, cut = c.spend(p.Message)
	}
	c.mu.Unlock()
	attrs := []any{"pack", c.Pack, "tool", c.Tool, "invocation", c.Invocation}
	if cut {
		c.logger().Warn("hostfns: guest log cut", append(attrs, "max_bytes", MaxLogBytes)...)
	}
	switch nf := capability.NotifierFrom(ctx); {
	case n == MaxProgressNotes+1:
		c.logger().Warn("hostfns: guest progress reports dropped", append(attrs, "max_reports", MaxProgressNotes)...)
	case n <= MaxProgressNotes && nf != nil:
		nf.Progress(p)
	}
	return nil
}
