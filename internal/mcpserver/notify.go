// MCP's logging (logging/setLevel, notifications/message, the _meta log
// level) is deprecated by SEP-2577 as of protocol 2026-07-28 but stays in
// the deprecation window, and clients of every protocol before it use it to
// see what a guest logs. This file is the only one that touches the SDK's
// logging API; the rest of the package knows a logLevel (RATIONALE.md, "Why
// does packs still send MCP log notifications?").
//
//lint:file-ignore SA1019 MCP logging is deprecated (SEP-2577) but still in its window; see the comment above
package mcpserver

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/packs-run/packs/capability"
)

// logLevel is an MCP logging level as this package keeps it; "" is none.
type logLevel = mcp.LoggingLevel

// loggingCapability is what the server states of logging in initialize.
func loggingCapability() *mcp.LoggingCapabilities { return &mcp.LoggingCapabilities{} }

// mcpLevels are MCP's logging levels, lowest first (RFC 5424's, reversed).
var mcpLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// mcpLevel is the MCP level of a guest's log level: trace and debug are
// debug; info, warn and error are themselves.
func mcpLevel(l slog.Level) mcp.LoggingLevel {
	switch {
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warning"
	}
	return "error"
}

// setLogLevel remembers the level the client asked for with
// logging/setLevel; the SDK keeps its own copy to filter what is sent, this
// one tells guests which levels to bother writing (get_log_level).
func (c *conn) setLogLevel(req mcp.Request) {
	if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && p != nil && slices.Contains(mcpLevels, p.Level) {
		c.mu.Lock()
		c.logLevel = p.Level
		c.mu.Unlock()
	}
}

// clientNotifier tells one tools/call's client what its guest logs (as
// notifications/message, at and above the level the client set; nothing
// before it sets one) and reports (as notifications/progress, when the
// request carries a progress token). It is the call's capability.Notifier.
type clientNotifier struct {
	ctx    context.Context
	ss     *mcp.ServerSession
	logger string           // the tool, as the client knows it
	level  mcp.LoggingLevel // the client's level when the call began; "" for none
	prog   *progressSender  // nil without a progress token
}

func (n *clientNotifier) LogEnabled(l slog.Level) bool {
	return n.level != "" && slices.Index(mcpLevels, mcpLevel(l)) >= slices.Index(mcpLevels, n.level)
}

func (n *clientNotifier) Log(l slog.Level, msg string) {
	// A client that went away is no reason to stop the call.
	_ = n.ss.Log(n.ctx, &mcp.LoggingMessageParams{Level: mcpLevel(l), Logger: n.logger, Data: msg})
}

func (n *clientNotifier) Progress(p capability.Progress) {
	if n.prog != nil {
		n.prog.guest(n.ctx, p)
	}
}

// progressSender sends one request's progress notifications, from the
// approval queue while the call waits and then from the guest, so that
// the client sees the value grow as MCP requires: the guest's values are
// sent after what the queue sent (offset).
type progressSender struct {
	ss    *mcp.ServerSession
	token any

	mu     sync.Mutex
	sent   bool    // a notification was sent
	last   float64 // the last value sent
	offset float64 // added to the guest's values
	ran    bool    // the guest has reported
}

// waiting reports that the call still waits for approval.
func (p *progressSender) waiting(ctx context.Context, msg string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ran {
		return nil
	}
	p.last++
	p.sent = true
	return p.ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: p.last, Message: msg})
}

// guest passes on one of the guest's reports (hostfns checked that they
// grow).
func (p *progressSender) guest(ctx context.Context, r capability.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.ran {
		p.ran, p.offset = true, p.last
	}
	params := &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: p.offset + r.Progress, Message: r.Message}
	if r.Total > 0 {
		params.Total = p.offset + r.Total
	}
	if p.sent && params.Progress <= p.last {
		return // the queue's last value, reached by a guest that starts at 0
	}
	p.sent, p.last = true, params.Progress
	_ = p.ss.NotifyProgress(ctx, params)
}

// requestLogLevel is the log level a request of a protocol newer than
// syncProtocol names in its _meta (those protocols have no
// logging/setLevel, and the SDK sends a request's log lines at and above
// that level only), or else session, the level set with logging/setLevel.
func requestLogLevel(version string, meta mcp.Meta, session mcp.LoggingLevel) mcp.LoggingLevel {
	if version <= syncProtocol {
		return session
	}
	if l, ok := meta[mcp.MetaKeyLogLevel].(string); ok && slices.Contains(mcpLevels, mcp.LoggingLevel(l)) {
		return mcp.LoggingLevel(l)
	}
	return ""
}
