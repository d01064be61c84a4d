package hostfns

import (
	"context"
	"log/slog"
	"math"
	"unicode/utf8"

	extism "github.com/extism/go-sdk"
	"github.com/packs-run/packs/capability"
)

// MaxLogBytes caps what one call may write to its Logger. Past it, one
// warning says the guest's log was cut and the rest is dropped.
const MaxLogBytes = 64 << 10

// Extism's log levels as its get_log_level reports them.
type extismLevel int32

const (
	levelTrace extismLevel = iota
	levelDebug
	levelInfo
	levelWarn
	levelError
	levelOff extismLevel = math.MaxInt32
)

// slogLevel maps an Extism level to slog's; trace sits below debug.
func (l extismLevel) slogLevel() slog.Level {
	switch l {
	case levelTrace:
		return slog.LevelDebug - 4
	case levelDebug:
		return slog.LevelDebug
	case levelInfo:
		return slog.LevelInfo
	case levelWarn:
		return slog.LevelWarn
	}
	return slog.LevelError
}

// logAt returns the log_<level> host function: read the message block, free
// it, and write it to the call's Logger within MaxLogBytes.
func logAt(l extismLevel) extism.HostFunctionStackCallback {
	return func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
		c := mustCall(ctx)
		msg := secretsFrom(ctx).MaskString(mustRead(p, stack[0]))
		c.log(ctx, l.slogLevel(), msg)
	}
}

// log writes one guest message to the call's Logger and its Notifier (the
// person's client), each when it wants that level, cut to what is left of
// the call's budget.
func (c *Call) log(ctx context.Context, level slog.Level, msg string) {
	lg, nf := c.logger(), capability.NotifierFrom(ctx)
	toLog, toClient := lg.Enabled(ctx, level), nf != nil && nf.LogEnabled(level)
	if !toLog && !toClient {
		return
	}
	c.mu.Lock()
	msg, cut := c.spend(msg)
	c.mu.Unlock()
	attrs := []any{"pack", c.Pack, "tool", c.Tool, "invocation", c.Invocation}
	if msg != "" {
		if toLog {
			lg.Log(ctx, level, msg, append(attrs, "source", "guest")...)
		}
		if toClient {
			nf.Log(level, msg)
		}
	}
	if cut {
		lg.Warn("hostfns: guest log cut", append(attrs, "max_bytes", MaxLogBytes)...)
	}
}

// spend takes msg from the call's budget of MaxLogBytes, which its log
// lines and progress messages share, and returns what fits (on a character
// boundary); cut is true the one time the budget runs out. c.mu is held.
func (c *Call) spend(msg string) (string, bool) {
	left := MaxLogBytes - c.logged
	switch {
	case left < 0: // cut and warned already
		return "", false
	case len(msg) <= left:
		c.logged += len(msg)
		return msg, false
	}
	for left > 0 && !utf8.RuneStart(msg[left]) {
		left--
	}
	c.logged = MaxLogBytes + 1
	return msg[:left], true
}

// getLogLevel reports the lowest Extism level the call's Logger writes or
// its Notifier passes on, so PDKs skip building messages nobody reads.
func getLogLevel(ctx context.Context, _ *extism.CurrentPlugin, stack []uint64) {
	c := mustCall(ctx)
	lg, nf := c.logger(), capability.NotifierFrom(ctx)
	out := levelOff
	for l := levelError; l >= levelTrace; l-- {
		if lg.Enabled(ctx, l.slogLevel()) || nf != nil && nf.LogEnabled(l.slogLevel()) {
			out = l
		}
	}
	stack[0] = extism.EncodeI32(int32(out))
}
