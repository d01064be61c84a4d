package hostfns

import (
	"context"
	"log/slog"
	"math"
	"unicode/utf8"

	extism "github.com/extism/go-sdk"
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

// log writes one guest message, cut to what is left of the call's budget.
func (c *Call) log(ctx context.Context, level slog.Level, msg string) {
	lg := c.logger()
	if !lg.Enabled(ctx, level) {
		return
	}
	c.mu.Lock()
	left := MaxLogBytes - c.logged
	if left < 0 { // cut and warned already
		c.mu.Unlock()
		return
	}
	cut := len(msg) > left
	if cut {
		for left > 0 && !utf8.RuneStart(msg[left]) {
			left--
		}
		msg = msg[:left]
		c.logged = MaxLogBytes + 1
	} else {
		c.logged += len(msg)
	}
	c.mu.Unlock()
	attrs := []any{"pack", c.Pack, "tool", c.Tool, "invocation", c.Invocation}
	if msg != "" {
		lg.Log(ctx, level, msg, append(attrs, "source", "guest")...)
	}
	if cut {
		lg.Warn("hostfns: guest log cut", append(attrs, "max_bytes", MaxLogBytes)...)
	}
}

// getLogLevel reports the lowest Extism level the call's Logger writes, so
// PDKs skip building messages nobody reads.
func getLogLevel(ctx context.Context, _ *extism.CurrentPlugin, stack []uint64) {
	c := mustCall(ctx)
	lg := c.logger()
	out := levelOff
	for l := levelError; l >= levelTrace; l-- {
		if lg.Enabled(ctx, l.slogLevel()) {
			out = l
		}
	}
	stack[0] = extism.EncodeI32(int32(out))
}
