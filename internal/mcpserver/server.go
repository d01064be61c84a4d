// Package mcpserver serves packs to MCP clients (Claude Desktop, Claude Code,
// Cursor, VS Code, goose, ...) over stdio or Streamable HTTP, with the
// official MCP Go SDK.
//
// It is a thin adapter over internal/chat: every MCP session is one
// chat.Session, so the base tools, progressive disclosure, the gate, the
// sandbox and the audit log are exactly those of `packs chat`. What the MCP
// server adds:
//
//   - tools/list is the session's tool list; when enable_tools (or anything
//     else) changes it, the server updates its tools and the SDK sends
//     notifications/tools/list_changed;
//   - resources: every file of an attached pack as pack://<pack>/<path>,
//     and the resources and templates its resources.json declares, read
//     through read_file's gate, confinement and page limits; a client can
//     subscribe to any of them and hears when the file changes;
//   - prompts: one per pack, for explicit invocation (like "/pack-name"),
//     and the prompts its resources.json declares;
//   - approval: a client that declared elicitation asks the person through
//     elicitation/create (from protocol 2026-07-28 on, through an "input
//     required" result while the call waits, parked.go); a call of any
//     other client waits in the approval queue in packs.db
//     (internal/approve) until the person decides it with
//     packs approve or in the web app, or a timeout denies it with a
//     message that says how to approve;
//   - over HTTP: loopback by default, a Host/Origin allowlist against DNS
//     rebinding, and a bearer token required beyond loopback.
package mcpserver

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/approve"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/identity"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/runtime"
)

// ServerName is the name the server gives in initialize.
const ServerName = "packs"

// Config configures a Server.
type Config struct {
	// Chat holds the components every session uses: the same ones `packs
	// chat` uses (store, catalog, grants, runtime, audit, policy).
	Chat chat.Deps
	// Attach names the packs attached to every session.
	Attach []string
	// Prepare, when set, makes the packs ready (packs mcp installs the
	// built-in packs there) and returns the packs to attach in place of
	// Attach. It runs once, in the background: ServeStdio starts it at
	// once and answers the client's discovery and initialize meanwhile;
	// a session's chat opens when it is done. Its error fails every
	// session.
	Prepare func(ctx context.Context) (attach []string, err error)
	// Version is reported to clients in initialize.
	Version string
	// Logger receives the server's diagnostics; nil discards them. Over
	// stdio it must not write to stdout, which carries the protocol.
	Logger *slog.Logger
	// ApprovalTimeout is how long a call of a client that cannot elicit
	// waits in the approval queue for a person (packs approve, the web
	// app) before it is denied. Zero means approve.DefaultTimeout; a
	// negative value turns the queue off: such calls are denied at once
	// unless the policy approves them.
	ApprovalTimeout time.Duration
	// Tools names packs whose tools are offered from the start, without
	// enable_tools (flat mode, packs mcp --tools): each under its own name
	// when no other offered tool has it, else as <pack>__<tool>. They must
	// be among Attach. Calls go through the same gate and audit.
	Tools []string
}

// Server serves packs over MCP. One Server serves any number of sessions;
// each gets its own chat.
type Server struct {
	cfg Config
	log *slog.Logger
	// poll is how often a queued call looks for a decision; zero means the
	// queue's default. Tests shorten it.
	poll time.Duration
	// multiRoundTrip offers protocol versions newer than syncProtocol
	// (parked.go); New turns it on. Off, such a client falls back.
	multiRoundTrip bool

	prepOnce sync.Once
	prepared chan struct{} // closed when attach and prepErr are set
	attach   []string
	prepErr  error
}

// New returns a server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Chat.Logger == nil {
		cfg.Chat.Logger = cfg.Logger
	}
	return &Server{cfg: cfg, log: cfg.Logger, multiRoundTrip: true, prepared: make(chan struct{})}, nil
}

// served returns the packs every session attaches: Attach, or what
// Prepare returned. The first call starts Prepare (with ctx); every call
// waits for it, or for its own ctx to end.
func (s *Server) served(ctx context.Context) ([]string, error) {
	s.prepOnce.Do(func() {
		if s.cfg.Prepare == nil {
			s.attach = s.cfg.Attach
			close(s.prepared)
			return
		}
		go func() {
			defer close(s.prepared)
			s.attach, s.prepErr = s.cfg.Prepare(ctx)
		}()
	})
	select {
	case <-s.prepared:
		return s.attach, s.prepErr
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ServeStdio serves one client that speaks newline-delimited JSON-RPC on r
// and w (the MCP stdio transport) until it disconnects or ctx ends. When r
// ends, every request read before has been answered first (see drain). The
// server does not close r or w.
//
// The client is answered from its first message: discovery and initialize
// do not wait for Prepare (a client gives up on a slow discovery and
// falls back to initialize). Its chat opens meanwhile, in the background,
// so that a broken state directory ends the session with its error and the
// first tools/list (which waits for the chat) needs no list_changed.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	c := s.newConn()
	c.stdio = true
	defer c.watch.close()
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	opened := make(chan struct{})
	go func() {
		defer close(opened)
		if err := c.open(runCtx); err != nil {
			cancel(err)
		}
	}()
	d := newDrain()
	defer d.end()
	in := &drainReader{ctx: runCtx, d: d, in: bufio.NewReader(r)}
	err := c.srv.Run(runCtx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: drainWriter{d: d, w: w}})
	// The chat (and Prepare) finish before the caller closes what they
	// use; one that failed is the session's error, even when the client
	// left first.
	<-opened
	<-s.prepared
	if cause := context.Cause(runCtx); ctx.Err() == nil && cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	if err != nil && (errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || clientGone(err)) {
		return nil
	}
	return err
}

// conn is one MCP session: an SDK server whose tools, resources and prompts
// mirror one chat.Session. The chat opens before the session is served
// (stdio), when the HTTP handler starts a session on the server (so the
// servers it builds only to read protocol versions cost nothing), or at the
// latest on the session's first request after initialize.
type conn struct {
	s     *Server
	srv   *mcp.Server
	stdio bool // served by ServeStdio: discovery is answered here (discover)

	openMu sync.Mutex // serializes open; held while the chat opens
	mu     sync.Mutex // guards the fields below
	chat   *chat.Session
	client string            // the client's name from initialize, for the list of chats
	err    error             // why the chat could not open
	tools  map[string]string // names registered on srv -> the chat's names
	// logLevel is the level the client set with logging/setLevel; "" until
	// it sets one (then guests' log lines are not sent).
	logLevel logLevel

	decl      declIndex // resources.json URIs, filled once as the chat opens
	watch     *watcher  // files of subscribed resources
	watchOnce sync.Once // ties watch's end to the session's

	parked parkedCalls // calls waiting for the client's input (parked.go)

	lists listsSeen

	// person is who the session serves: the token holder on stdio and
	// with packs' token, else the OIDC person of the bearer JWT.
	person identity.Person
}

// listsSeen keeps a session's list_changed notifications to those the
// client can use: a list (tools, prompts, resources) changed after the
// client last read it. The chat opens while a stdio client is already
// connected (ServeStdio), so the tools, prompts and resources it registers
// would otherwise be announced as changes to a client that reads them
// whole a moment later.
type listsSeen struct {
	mu      sync.Mutex
	changes int            // registrations so far (any list)
	opened  int            // changes when the chat had opened: no list was read before
	seen    map[string]int // per list: changes when the client last read it
}

// open records that the chat opened: what it registered is what the
// client's first lists show.
func (l *listsSeen) open() {
	l.mu.Lock()
	l.opened = l.changes
	l.mu.Unlock()
}

// changed counts a registration.
func (l *listsSeen) changed() {
	l.mu.Lock()
	l.changes++
	l.mu.Unlock()
}

// reading returns the count a list answer reflects; read records it.
func (l *listsSeen) reading() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changes
}

func (l *listsSeen) read(list string, at int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil {
		l.seen = map[string]int{}
	}
	l.seen[list] = max(l.seen[list], at)
}

// stale reports whether list changed since the client last read it, or
// since the chat opened when it has not read it.
func (l *listsSeen) stale(list string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	at, ok := l.seen[list]
	if !ok {
		at = l.opened
	}
	return l.changes > at
}

// listOf names the list a method reads or a notification announces.
var listOf = map[string]string{
	"tools/list": "tools", "notifications/tools/list_changed": "tools",
	"prompts/list": "prompts", "notifications/prompts/list_changed": "prompts",
	"resources/list": "resources", "resources/templates/list": "resources", "notifications/resources/list_changed": "resources",
}

// sending drops a list_changed notification the client cannot use
// (listsSeen).
func (c *conn) sending(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if list, ok := listOf[method]; ok && strings.HasPrefix(method, "notifications/") && !c.lists.stale(list) {
			return nil, nil
		}
		return next(ctx, method, req)
	}
}

func (s *Server) newConn() *conn {
	c := &conn{s: s, tools: map[string]string{}, person: identity.TokenHolder}
	c.watch = newWatcher(s.log, c.resourceUpdated)
	c.srv = mcp.NewServer(&mcp.Implementation{Name: ServerName, Title: "packs: capability packs", Version: s.cfg.Version}, &mcp.ServerOptions{
		Instructions:              instructions,
		Logger:                    s.log,
		SupportedProtocolVersions: protocolVersions(s.multiRoundTrip),
		CompletionHandler:         c.complete,
		SubscribeHandler:          c.subscribe,
		UnsubscribeHandler:        c.unsubscribe,
		Capabilities:              capabilities(),
		// The HTTP handler asks for a session ID exactly when it starts a
		// session on this server, before the session is connected: the
		// moment to open the chat, so that registering its tools sends no
		// list_changed to a client that has not listed anything yet.
		GetSessionID: func() string {
			if err := c.open(context.Background()); err != nil {
				s.log.Error("mcpserver: session not opened", "err", err)
			}
			return rand.Text()
		},
	})
	c.srv.AddReceivingMiddleware(c.middleware)
	c.srv.AddSendingMiddleware(c.sending)
	return c
}

// capabilities are the server's, as initialize and discovery state them.
func capabilities() *mcp.ServerCapabilities {
	return &mcp.ServerCapabilities{
		Tools:     &mcp.ToolCapabilities{ListChanged: true},
		Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
		Prompts:   &mcp.PromptCapabilities{ListChanged: true},
		//lint:ignore SA1019 MCP logging stays in its deprecation window (notify.go)
		Logging:     loggingCapability(),
		Completions: &mcp.CompletionCapabilities{},
	}
}

// discover answers server/discover over stdio here, not in the SDK: the
// SDK's answer also marks the session as initialized, so a client that
// then falls back to initialize (its discovery timed out, or it chose the
// older protocol) would be refused as a duplicate. Over HTTP the SDK keeps
// no such state for discovery.
func (c *conn) discover() *mcp.DiscoverResult {
	res := &mcp.DiscoverResult{
		SupportedVersions: protocolVersions(c.s.multiRoundTrip),
		Capabilities:      capabilities(),
		Instructions:      instructions,
	}
	res.CacheScope = "public"
	return res
}

// syncProtocol is the newest protocol version whose elicitation is a
// request the server sends while a tools/call is in flight. From 2026-07-28
// on (SEP-2322) a server asks by returning "input required" and the client
// retries the whole call: parked.go serves those clients.
const syncProtocol = "2025-11-25"

// protocolVersions are the versions the server offers: the SDK's up to
// syncProtocol, or all of them with newest. Over HTTP, the SDK's stateful
// handler serves only those up to syncProtocol: a newer client falls back.
func protocolVersions(newest bool) []string {
	if newest {
		return mcp.SupportedProtocolVersions()
	}
	return slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v > syncProtocol })
}

// instructions tell the client's model how packs are used (spec 000 §5.3,
// condensed: tool descriptions stay brief and the skills carry the detail).
const instructions = `packs serves capability packs: skills with sandboxed WebAssembly tools.
Call open_docs(pack_id) before using a pack, read_file for its other files, and enable_tools(pack_id) to get its tools, which then appear as <pack_id>__<tool>.
The person approves every call; a denied call must not be repeated unchanged.`

// middleware opens the chat, if it is not open yet, before any request that
// needs it, and answers with the reason when it could not open.
func (c *conn) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if err := c.allowed(method); err != nil {
			return nil, err
		}
		switch method {
		case "logging/setLevel":
			c.setLogLevel(req)
		case "server/discover":
			if c.stdio {
				return c.discover(), nil
			}
		case "initialize", "notifications/initialized", "ping", "notifications/cancelled":
		default:
			if err := c.open(ctx); err != nil {
				return nil, withCode(err, jsonrpc.CodeInternalError)
			}
		}
		at := c.lists.reading()
		res, err := next(ctx, method, req)
		if list, ok := listOf[method]; ok && err == nil {
			c.lists.read(list, at)
		}
		if err == nil {
			c.introduced(ctx, req)
		}
		if method == "initialize" {
			return res, withCode(err, jsonrpc.CodeInvalidRequest)
		}
		return res, withCode(err, jsonrpc.CodeInternalError)
	}
}

// withCode gives err a JSON-RPC error code when it has none: the SDK
// answers an error without one with code 0, which no client can classify.
func withCode(err error, code int64) error {
	var wire *jsonrpc.Error
	if err == nil || errors.As(err, &wire) {
		return err
	}
	return &jsonrpc.Error{Code: code, Message: err.Error()}
}

// open opens the session's chat once, attaches the configured packs and
// registers tools, resources and prompts.
func (c *conn) open(ctx context.Context) error {
	c.openMu.Lock()
	defer c.openMu.Unlock()
	c.mu.Lock()
	done, err := c.chat != nil, c.err
	c.mu.Unlock()
	if done || err != nil {
		return err
	}
	// chat.Open calls syncTools as it attaches packs, so c.mu must not be
	// held here; syncTools ignores those calls until c.chat is set.
	// A pack disabled since the server started is left out of new
	// sessions (packs disable), as packs mcp leaves it out at start.
	served, err := c.s.served(ctx)
	if err != nil {
		err = fmt.Errorf("mcpserver: preparing the packs: %w", err)
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		return err
	}
	attach := slices.DeleteFunc(slices.Clone(served), func(name string) bool {
		err := c.s.cfg.Chat.Store.CheckEnabled(ctx, name)
		if errors.Is(err, store.ErrPackDisabled) {
			c.s.log.Warn("mcpserver: pack not served: it is disabled; packs enable turns it back on", "pack", name)
			return true
		}
		return false
	})
	// The packs are attached by the server's configuration, not by the
	// person: via MCP, attaching is no consent (capability.Consent).
	sess, err := chat.Open(ctx, c.s.cfg.Chat, chat.Options{Attach: attach, Via: chat.ViaMCP, OnToolsChanged: c.syncTools, Owner: c.owner()})
	if err != nil {
		err = fmt.Errorf("mcpserver: opening the session's chat: %w", err)
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		return err
	}
	for _, n := range sess.Notices() {
		c.s.log.Warn(n, "chat", sess.ID())
	}
	c.enableFlat(ctx, sess)
	c.mu.Lock()
	c.chat = sess
	c.syncToolsLocked()
	client := c.client
	c.mu.Unlock()
	if client != "" {
		c.nameChat(ctx, sess, client)
	}
	c.addPackFeatures(sess)
	c.lists.open()
	return nil
}

// introduced records the name the client gave (in initialize, or in the
// _meta of a sessionless request) on the session's chat, once, now or when
// it opens, so the web app lists the chat as "Claude Desktop, via MCP".
func (c *conn) introduced(ctx context.Context, req mcp.Request) {
	c.mu.Lock()
	known := c.client != ""
	c.mu.Unlock()
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if known || !ok {
		return
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.ClientInfo == nil {
		return
	}
	name := ip.ClientInfo.Title
	if name == "" {
		name = ip.ClientInfo.Name
	}
	if name == "" {
		return
	}
	c.mu.Lock()
	c.client = name
	sess := c.chat
	c.mu.Unlock()
	if sess != nil {
		c.nameChat(ctx, sess, name)
	}
}

// nameChat stores the client's name on its chat. A failure only leaves
// the chat listed without it.
func (c *conn) nameChat(ctx context.Context, sess *chat.Session, name string) {
	if err := sess.SetClientName(context.WithoutCancel(ctx), name); err != nil {
		c.s.log.Warn("mcpserver: the chat keeps no client name", "chat", sess.ID(), "err", err)
	}
}

// syncTools brings the registered tools in line with the chat's; the SDK
// sends notifications/tools/list_changed when they change. chat.Session
// calls it after enable_tools.
func (c *conn) syncTools() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.syncToolsLocked()
}

func (c *conn) syncToolsLocked() {
	if c.chat == nil {
		return
	}
	in := c.chat.Tools()
	if len(in) == 0 {
		// No pack is served: the base tools are listed all the same (spec
		// 000), and open_docs says how to install a pack.
		in = chat.BaseTools()
	}
	names := c.s.flatNames(in)
	tools, problems := offered(in)
	for _, err := range problems {
		c.s.log.Error("mcpserver: tool not offered", "err", err)
	}
	want := map[string]string{}
	metas := map[string]packMeta{}
	for _, tool := range tools {
		chatName := tool.Name
		tool.Name = names[chatName]
		if have, ok := c.tools[tool.Name]; !ok || have != chatName {
			c.decorate(tool, chatName, metas)
			if err := addTool(c.srv, tool, c.callHandler(chatName, tool.OutputSchema != nil)); err != nil {
				c.s.log.Error("mcpserver: tool not offered", "err", err)
				continue
			}
		}
		want[tool.Name] = chatName
	}
	var gone []string
	for name := range c.tools {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		c.srv.RemoveTools(gone...)
	}
	c.tools = want
	c.lists.changed()
}

// addTool registers tool on srv. The SDK panics on a tool it refuses (an
// input schema whose x-mcp-header annotations it rejects, among others),
// and a pack's tools.json is not the server's to trust: a refusal is an
// error wrapping ErrSchema, the tool is not registered (the SDK checks
// before it changes anything), and the session goes on.
func addTool(srv *mcp.Server, tool *mcp.Tool, h mcp.ToolHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s: the MCP SDK refuses it: %v", ErrSchema, tool.Name, r)
		}
	}()
	srv.AddTool(tool, h)
	return nil
}

// Why a tool is not offered. Check them with errors.Is.
var (
	// ErrSchema: the tool's input schema is not one MCP can carry: not an
	// object schema, or one the MCP SDK refuses.
	ErrSchema = errors.New("mcpserver: tool input schema is not one MCP can carry")
	// ErrCollision: another tool already has the name.
	ErrCollision = errors.New("mcpserver: tool name collision")
)

// offered turns the chat's tools into MCP tools, in order. A tool whose name
// an earlier one took, or whose schema MCP cannot carry, is left out, with
// the reason among problems. (Pack names hold no "__", so "<pack>__<tool>"
// cannot collide with another pack's tools or with a base tool; the check
// keeps a future source of names from shadowing a tool silently.)
func offered(in []llm.Tool) (tools []*mcp.Tool, problems []error) {
	seen := map[string]bool{}
	for _, t := range in {
		if seen[t.Name] {
			problems = append(problems, fmt.Errorf("%w: %s is offered twice; the second is left out", ErrCollision, t.Name))
			continue
		}
		tool, err := mcpTool(t)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		seen[t.Name] = true
		tools = append(tools, tool)
	}
	return tools, problems
}

// mcpTool turns a chat tool into an MCP tool. MCP requires an input schema
// of type "object"; a schema that names no type gets it added (every tool
// takes a JSON object of arguments), one that names another type is refused.
func mcpTool(t llm.Tool) (*mcp.Tool, error) {
	schema := map[string]any{}
	if len(t.InputSchema) > 0 {
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrSchema, err)
		}
	}
	switch typ := schema["type"]; typ {
	case nil:
		schema["type"] = "object"
	case "object":
	default:
		return nil, fmt.Errorf("%w: %s has type %v", ErrSchema, t.Name, typ)
	}
	return &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: schema}, nil
}

// callHandler runs one tools/call through the chat: arguments checked, the
// gate, the run and the audit record. A tool with an output schema also
// returns its result object as structured content.
func (c *conn) callHandler(name string, hasOutputSchema bool) mcp.ToolHandler {
	return c.roundTrips(func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c.mu.Lock()
		sess := c.chat
		c.mu.Unlock()
		args := req.Params.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		client := clientName(req.Session)
		// The client introduced itself in initialize, after the chat opened.
		sess.SetClient("mcp:" + client)
		approver, absent, waiter := c.approverFor(req.Session, client)
		approver = c.parked.approverIn(ctx, approver)
		// What the guest logs and reports reaches this client (docs/mcp.md).
		n := &clientNotifier{ctx: ctx, ss: req.Session, logger: req.Params.Name}
		c.mu.Lock()
		n.level = requestLogLevel(req.ProtocolVersion(), req.Params.Meta, c.logLevel)
		c.mu.Unlock()
		if token := req.Params.GetProgressToken(); token != nil {
			n.prog = &progressSender{ss: req.Session, token: token}
		}
		if waiter != nil && n.prog != nil {
			stop := make(chan struct{})
			defer close(stop)
			waiter.OnQueued(func(q store.QueuedCall) {
				go c.s.waitProgress(ctx, n.prog, q, stop)
			})
		}
		res, err := sess.Call(capability.WithNotifier(ctx, n), name, args, approver)
		if err != nil {
			// The call could not be audited: report it as a protocol
			// error, never as a result the model might trust.
			return nil, err
		}
		text := res.Content
		if !res.Decision.Approved {
			text = c.s.explainDenial(text, client, res.Name, absent, waiter)
		}
		if res.ErrorKind == chat.ErrKindNotFound {
			text = withInstallHint(text, sess, args)
		}
		out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: res.IsError}
		if len(res.Blocks) > 0 {
			out.Content = contentOf(res.Blocks)
		}
		if hasOutputSchema && !res.IsError {
			out.StructuredContent = structured(res.Content)
		}
		return out, nil
	})
}

// contentOf is a tool's content blocks as MCP content: each block as it
// is, the runtime having checked its type, data and URI.
func contentOf(blocks []runtime.Block) []mcp.Content {
	out := make([]mcp.Content, 0, len(blocks))
	for _, b := range blocks {
		switch b.Type {
		case runtime.BlockText:
			out = append(out, &mcp.TextContent{Text: b.Text})
		case runtime.BlockImage:
			out = append(out, &mcp.ImageContent{Data: b.Data, MIMEType: b.MIMEType})
		case runtime.BlockAudio:
			out = append(out, &mcp.AudioContent{Data: b.Data, MIMEType: b.MIMEType})
		case runtime.BlockResource:
			out = append(out, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: b.URI, MIMEType: b.MIMEType, Text: b.Text, Blob: b.Data}})
		}
	}
	return out
}

// approverFor is who approves a call of ss: the person through elicitation
// when the client can ask them; else the approval queue, where the call
// waits for the person to decide it elsewhere (waiter); else, with the
// queue off, absent, which defers (only the policy can approve) and
// remembers that it was asked.
func (c *conn) approverFor(ss *mcp.ServerSession, client string) (capability.Approver, *absentPerson, *approve.Waiter) {
	if canElicit(ss) {
		return elicitApprover{ss: ss, client: client}, nil, nil
	}
	if c.s.cfg.ApprovalTimeout >= 0 && c.s.cfg.Chat.Store != nil {
		w := approve.New(c.s.cfg.Chat.Store, approve.Options{
			Client: "mcp:" + client, Timeout: c.s.approvalTimeout(), Poll: c.s.poll,
			OnQueued: func(q store.QueuedCall) {
				c.s.log.Warn("packs mcp: a call waits for your approval: run packs approve "+q.ID+" (or packs approve to list), or open the web app (packs serve)",
					"call", q.Class, "client", q.Client, "id", q.ID, "timeout", c.s.approvalTimeout())
			},
		}).Waiter()
		return w, nil, w
	}
	absent := &absentPerson{client: client}
	return absent, absent, nil
}

// explainDenial adds to a denial how the person can approve the call, when
// nobody could be asked: the queued call timed out, or (queue off) the
// policy had no answer. A person's own "deny" gets no hint.
func (s *Server) explainDenial(text, client, class string, absent *absentPerson, waiter *approve.Waiter) string {
	switch {
	case waiter != nil && waiter.TimedOut():
		return withTimeoutHint(text, client, class, s.approvalTimeout())
	case absent != nil && absent.asked:
		return withDenyHint(text, client, class)
	}
	return text
}

// progressEvery is how often a queued call reports that it still waits.
const progressEvery = 10 * time.Second

// waitProgress tells a client that sent a progress token that its call
// waits for approval, and how the person gives it, until stop: at once,
// then every progressEvery (a client may keep a call alive on progress).
func (s *Server) waitProgress(ctx context.Context, p *progressSender, q store.QueuedCall, stop <-chan struct{}) {
	msg := fmt.Sprintf("waiting for your approval of %s: run packs approve %s in a terminal, or use the web app (packs serve)", q.Class, q.ID)
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		if err := p.waiting(ctx, msg); err != nil {
			return
		}
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// approvalTimeout is how long a queued call waits.
func (s *Server) approvalTimeout() time.Duration {
	if s.cfg.ApprovalTimeout > 0 {
		return s.cfg.ApprovalTimeout
	}
	return approve.DefaultTimeout
}

// withTimeoutHint tells the model that a queued call was denied because
// nobody decided it in time, and how the person can approve the next one.
func withTimeoutHint(content, client, class string, timeout time.Duration) string {
	hint := fmt.Sprintf("Nobody approved this call within %s, so it did not run. MCP client %q cannot ask the person (it does not support elicitation), "+
		"so each call waits for them to approve it elsewhere: in a terminal with `packs approve` (it lists the waiting calls; `packs approve ID` approves one), "+
		"or in the web app (`packs serve`, same state directory). Tell the person, and repeat the call once they are ready to approve it. "+
		"To run %s without asking, list it in the policy's [approval] auto_approve (e.g. auto_approve = [%q]).", timeout, client, class, class)
	return withHint(content, hint)
}

// withDenyHint adds to a denial the ways a person can approve the call
// when their client cannot ask them and the policy had no answer.
func withDenyHint(content, client, class string) string {
	hint := fmt.Sprintf("MCP client %q cannot ask you to approve calls (it does not support elicitation), so only the enterprise policy can approve them. "+
		"To approve %s, list it in the policy's [approval] auto_approve (e.g. auto_approve = [%q]) and pass the policy with --policy FILE or PACKS_POLICY; "+
		"to grant a capability the pack needs, run: packs grant PACK CAPABILITY. Or use a client that supports elicitation.", client, class, class)
	return withHint(content, hint)
}

// withInstallHint adds to a base tool's "not found" how to install a pack,
// when the pack it names is not served at all.
func withInstallHint(content string, sess *chat.Session, args json.RawMessage) string {
	var a struct {
		PackID string `json:"pack_id"`
	}
	if json.Unmarshal(args, &a) != nil || a.PackID == "" {
		return content
	}
	if _, ok := sess.Pack(a.PackID); ok {
		return content
	}
	hint := fmt.Sprintf("No pack %q is served. To install one, run in a terminal: packs add SOURCE (a pack folder, a .tar.gz or a git URL), "+
		"then restart this MCP server (reconnect the client); packs list shows the installed packs.", a.PackID)
	return withHintKey(content, "install", hint)
}

// withHint adds hint to a denial as its error's "approve" field, or as a
// line of its own when the denial is not the usual JSON.
func withHint(content, hint string) string { return withHintKey(content, "approve", hint) }

// withHintKey adds hint to an error result as its error's key field, or as
// a line of its own when the result is not the usual JSON.
func withHintKey(content, key, hint string) string {
	var v map[string]any
	if err := json.Unmarshal([]byte(content), &v); err == nil {
		if e, ok := v["error"].(map[string]any); ok {
			e[key] = hint
			if b, err := json.Marshal(v); err == nil {
				return string(b)
			}
		}
	}
	return strings.TrimSpace(content + "\n" + hint)
}
