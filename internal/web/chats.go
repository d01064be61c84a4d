package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/runtime"
)

// chatState is one open chat: its session, its events and its running turn.
type chatState struct {
	s      *chat.Session
	events *hub

	mu     sync.Mutex
	cancel context.CancelFunc // of the running turn; nil when idle
	callID string             // the model's id of the call being decided
}

// idle reports whether no turn is running.
func (c *chatState) idle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cancel == nil
}

func (c *chatState) currentCall() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.callID
}

// chat returns the open chat id, resuming it from packs.db when this
// server has not opened it yet.
func (s *Server) chat(ctx context.Context, id string) (*chatState, error) {
	s.mu.Lock()
	cs, ok := s.chats[id]
	s.mu.Unlock()
	if ok {
		if cs.idle() {
			// Another replica on the same store may have continued it.
			if err := cs.s.Refresh(ctx); err != nil {
				return nil, err
			}
		}
		return cs, nil
	}
	if !strings.HasPrefix(id, "chat_") {
		return nil, fmt.Errorf("%w: no chat %q", chat.ErrNotFound, id)
	}
	sess, err := chat.Open(ctx, s.cfg.Chat, chat.Options{ID: id})
	if err != nil {
		return nil, err
	}
	return s.keep(sess), nil
}

func (s *Server) keep(sess *chat.Session) *chatState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cs, ok := s.chats[sess.ID()]; ok {
		return cs
	}
	cs := &chatState{s: sess, events: newHub()}
	sess.SetClient("web")
	s.chats[sess.ID()] = cs
	return cs
}

type packStateJSON struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	HasTools    bool   `json:"has_tools"`
	Mandated    bool   `json:"mandated"`
	Opened      bool   `json:"opened"`
	Enabled     bool   `json:"enabled"`
}

type messageJSON struct {
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	HTML       string         `json:"html,omitempty"` // an assistant's content rendered from Markdown
	ToolCalls  []llm.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	IsError    bool           `json:"is_error,omitempty"`
}

type chatJSON struct {
	ID string `json:"id"`
	// Title is the person's first message, or "by hand: PACK" for the
	// chat the packs page runs a pack's tools in, or "New chat".
	Title string `json:"title"`
	// Agent is the id of the agent the chat started from.
	Agent string `json:"agent,omitempty"`
	// Via is "mcp" for a session an MCP client opened, and Client the
	// name it gave in initialize.
	Via       string          `json:"via,omitempty"`
	Client    string          `json:"client,omitempty"`
	Created   time.Time       `json:"created,omitzero"`
	Updated   time.Time       `json:"updated,omitzero"`
	Packs     []packStateJSON `json:"packs"`
	Tools     []string        `json:"tools"`
	Messages  []messageJSON   `json:"messages,omitempty"`
	Artifacts []chat.Artifact `json:"artifacts,omitempty"`
	Running   bool            `json:"running"`
	// LastEvent is the seq of the chat's newest event when this was read:
	// stream the events after it (GET .../events?after=LastEvent).
	LastEvent int64 `json:"last_event"`
}

func (s *Server) describe(ctx context.Context, cs *chatState, full bool) (chatJSON, error) {
	out := chatJSON{ID: cs.s.ID(), Title: s.title(cs.s.ID(), ""), Agent: cs.s.Profile().Agent, Packs: []packStateJSON{}, Tools: []string{},
		Via: cs.s.Via(), Client: cs.s.ClientName()}
	for _, m := range cs.s.Messages() {
		if m.Role == llm.RoleUser {
			out.Title = s.title(cs.s.ID(), m.Content)
			break
		}
	}
	if out.Via == chat.ViaMCP {
		out.Title = mcpTitle(out.Client)
	}
	for _, p := range cs.s.Packs() {
		out.Packs = append(out.Packs, packStateJSON(p))
	}
	for _, t := range cs.s.Tools() {
		out.Tools = append(out.Tools, t.Name)
	}
	cs.mu.Lock()
	out.Running = cs.cancel != nil
	cs.mu.Unlock()
	out.LastEvent = cs.events.last()
	if !full {
		return out, nil
	}
	out.Messages = []messageJSON{}
	for _, m := range cs.s.Messages() {
		mj := messageJSON{Role: string(m.Role), Content: m.Content, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, IsError: m.IsError}
		if m.Role == llm.RoleAssistant && m.Content != "" {
			mj.HTML = renderMarkdown(m.Content)
		}
		out.Messages = append(out.Messages, mj)
	}
	arts, err := cs.s.Artifacts(ctx)
	if err != nil {
		return out, err
	}
	out.Artifacts = orEmpty(arts)
	return out, nil
}

// title names a chat in the list: "by hand: PACK" for a pack's by-hand
// chat, else the person's first message (cut to a line), else "New chat".
func (s *Server) title(id, first string) string {
	if p := s.byHand.packOf(s.cfg.App.Home.Dir(), id); p != "" {
		return "by hand: " + p
	}
	if first = strings.Join(strings.Fields(first), " "); first != "" {
		if r := []rune(first); len(r) > 80 {
			first = string(r[:79]) + "…"
		}
		return first
	}
	return "New chat"
}

// mcpTitle names a chat an MCP session opened: "Claude Desktop, via MCP".
func mcpTitle(client string) string {
	if client == "" {
		client = "An MCP client"
	}
	return client + ", via MCP"
}

// listable returns whether a pack a chat enabled is shown in the list of
// chats: not one that is coming soon (it has nothing to offer yet), each
// pack looked at once per list.
func (s *Server) listable(ctx context.Context) func(name string) bool {
	seen := map[string]bool{}
	return func(name string) bool {
		ok, done := seen[name]
		if !done {
			p, _, err := s.cfg.Chat.Catalog.Pack(ctx, name)
			ok = err != nil || p.Attachable() == nil
			seen[name] = ok
		}
		return ok
	}
}

// maxChatList bounds the chats GET /v1/chats lists.
const maxChatList = 500

// listChats lists the stored chats, the most recently active first, with
// their titles and times.
func (s *Server) listChats(w http.ResponseWriter, r *http.Request) {
	var mine *chat.Owner
	if p, _ := personOf(r); !p.Roles.Has(admin) {
		o := owner(p)
		mine = &o
	}
	list, err := chat.List(r.Context(), s.cfg.App.DB, maxChatList, mine)
	if err != nil {
		s.fail(w, err)
		return
	}
	items := make([]chatJSON, 0, len(list))
	shown := s.listable(r.Context())
	for _, c := range list {
		item := chatJSON{ID: c.ID, Title: s.title(c.ID, c.FirstMessage), Created: c.Created, Updated: c.Updated, Packs: []packStateJSON{}, Tools: []string{},
			Via: c.Via, Client: c.ClientName}
		if c.Via == chat.ViaMCP {
			item.Title = mcpTitle(c.ClientName)
		}
		for _, name := range c.Enabled {
			if shown(name) {
				item.Packs = append(item.Packs, packStateJSON{Name: name, Enabled: true})
			}
		}
		s.mu.Lock()
		cs, open := s.chats[c.ID]
		s.mu.Unlock()
		if open {
			cs.mu.Lock()
			item.Running = cs.cancel != nil
			cs.mu.Unlock()
		}
		items = append(items, item)
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "total": len(items)})
}

// createChat starts a chat, or resumes one by id.
func (s *Server) createChat(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ID     string   `json:"id"`
		Attach []string `json:"attach"`
		// Agent starts the chat from an agent (id or name): its prompt and
		// model settings, its capabilities attached before Attach.
		Agent string `json:"agent"`
	}
	if r.ContentLength != 0 {
		if err := readJSON(w, r, &body); err != nil {
			s.fail(w, err)
			return
		}
	}
	var cs *chatState
	var warnings []string
	p, _ := personOf(r)
	switch {
	case body.ID != "" && !s.canSee(r.Context(), p, body.ID):
		s.fail(w, fmt.Errorf("%w: no chat %q of yours", chat.ErrNotFound, body.ID))
		return
	case body.ID != "" && body.Agent != "":
		s.fail(w, fmt.Errorf("%w: a resumed chat keeps the agent it started from: send either id or agent", errBadRequest))
		return
	case body.Agent != "":
		ag, err := s.cfg.App.ChatAgent(r.Context(), body.Agent)
		if err != nil {
			s.fail(w, err)
			return
		}
		warnings = ag.Warnings
		prof := chat.Profile{Agent: ag.ID, SystemPrompt: ag.SystemPrompt, Model: ag.Model, MaxTokens: ag.MaxTokens}
		sess, err := chat.Open(r.Context(), s.cfg.Chat, chat.Options{Profile: prof, Attach: append(slices.Clone(ag.Packs), body.Attach...), Owner: owner(p)})
		if err != nil {
			s.fail(w, err)
			return
		}
		cs = s.keep(sess)
	case body.ID != "":
		var err error
		if cs, err = s.chat(r.Context(), body.ID); err == nil {
			err = cs.s.Attach(r.Context(), body.Attach...)
		}
		if err != nil {
			s.fail(w, err)
			return
		}
	default:
		sess, err := chat.Open(r.Context(), s.cfg.Chat, chat.Options{Attach: body.Attach, Owner: owner(p)})
		if err != nil {
			s.fail(w, err)
			return
		}
		cs = s.keep(sess)
	}
	for _, n := range append(warnings, cs.s.Notices()...) {
		cs.events.publish("notice", map[string]string{"message": n})
	}
	out, err := s.describe(r.Context(), cs, true)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) getChat(w http.ResponseWriter, r *http.Request) {
	cs, err := s.chat(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	out, err := s.describe(r.Context(), cs, true)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) attach(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Pack string `json:"pack"`
	}
	cs, err := s.chat(r.Context(), r.PathValue("id"))
	if err == nil {
		err = readJSON(w, r, &body)
	}
	if err == nil && body.Pack == "" {
		err = fmt.Errorf("%w: name the pack to attach: {\"pack\": \"NAME\"}", errBadRequest)
	}
	if err == nil {
		err = cs.s.Attach(r.Context(), body.Pack)
	}
	s.answerChat(w, r, cs, err)
}

func (s *Server) detach(w http.ResponseWriter, r *http.Request) {
	cs, err := s.chat(r.Context(), r.PathValue("id"))
	if err == nil {
		err = cs.s.Detach(r.Context(), r.PathValue("pack"))
	}
	s.answerChat(w, r, cs, err)
}

func (s *Server) answerChat(w http.ResponseWriter, r *http.Request, cs *chatState, err error) {
	if err != nil {
		s.fail(w, err)
		return
	}
	out, err := s.describe(r.Context(), cs, false)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// send starts a turn with the person's message. The reply streams on the
// chat's events; the response says only that the turn started.
func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Text   string   `json:"text"`
		Attach []string `json:"attach"`
	}
	cs, err := s.chat(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	if err := readJSON(w, r, &body); err != nil {
		s.fail(w, err)
		return
	}
	if strings.TrimSpace(body.Text) == "" {
		s.fail(w, fmt.Errorf("%w: the message is empty: send {\"text\": \"...\"}", errBadRequest))
		return
	}
	model := s.currentModel()
	if model.Provider == nil {
		writeError(w, http.StatusConflict, codeNoModel, "web: no model is configured: set one on the Settings page (PUT /v1/settings/model). "+s.cfg.HowToConfigure)
		return
	}
	s.mu.Lock()
	base := s.base
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(base)
	cs.mu.Lock()
	if cs.cancel != nil {
		cs.mu.Unlock()
		cancel()
		s.fail(w, errBusy)
		return
	}
	cs.cancel = cancel
	cs.mu.Unlock()
	s.turns.Add(1)
	go func() {
		defer s.turns.Done()
		defer func() {
			cs.mu.Lock()
			cs.cancel, cs.callID = nil, ""
			cs.mu.Unlock()
			cancel()
		}()
		ap := &webApprover{all: s.pending, events: cs.events, callID: cs.currentCall, grants: s.grantsAtStake, questions: s.questions, chat: cs.s.ID()}
		reply, err := cs.s.Send(ctx, model.Provider, body.Text, chat.TurnOptions{Approver: ap, Observer: observer{cs}, Attach: body.Attach, NoTools: model.NoTools})
		if err != nil {
			cs.events.publish("turn_error", map[string]string{"error": err.Error(), "kind": turnErrorKind(err)})
			return
		}
		cs.events.publish("turn_done", map[string]any{"text": reply.Text, "html": renderMarkdown(reply.Text), "steps": reply.Steps, "calls": len(reply.Calls)})
	}()
	writeJSON(w, http.StatusAccepted, map[string]any{"chat": cs.s.ID(), "running": true})
}

func turnErrorKind(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "stopped"
	case errors.Is(err, chat.ErrToolBudget):
		return "too_many_tools"
	}
	return "model_error"
}

// stop ends the running turn: a call waiting for approval is denied, a
// running tool is stopped.
func (s *Server) stop(w http.ResponseWriter, r *http.Request) {
	cs, err := s.chat(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	cs.mu.Lock()
	cancel := cs.cancel
	cs.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	writeJSON(w, http.StatusOK, map[string]bool{"stopped": cancel != nil})
}

// observer forwards a turn to the chat's events.
type observer struct{ cs *chatState }

func (o observer) Text(delta string) { o.cs.events.publish("text", map[string]string{"delta": delta}) }

func (o observer) ToolStart(c llm.ToolCall, _ context.CancelFunc) {
	o.cs.mu.Lock()
	o.cs.callID = c.ID
	o.cs.mu.Unlock()
	o.cs.events.publish("tool_start", map[string]any{"call_id": c.ID, "name": c.Name, "arguments": rawArgs(c.Arguments)})
}

func (o observer) ToolDone(r chat.ToolResult) {
	o.cs.events.publish("tool_done", resultJSON(o.cs.currentCall(), r))
}

func (o observer) Notice(msg string) {
	o.cs.events.publish("notice", map[string]string{"message": msg})
}

// rawArgs is the model's arguments as JSON, or as a JSON string when they
// are not valid JSON.
func rawArgs(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

type toolResultJSON struct {
	CallID     string          `json:"call_id,omitempty"`
	Invocation string          `json:"invocation"`
	Name       string          `json:"name"`
	Pack       string          `json:"pack,omitempty"`
	Arguments  json.RawMessage `json:"arguments"`
	Approved   bool            `json:"approved"`
	Approver   string          `json:"approver,omitempty"`
	Verdict    string          `json:"verdict"`
	Remembered bool            `json:"remembered"`
	ByAttach   bool            `json:"by_attach,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	Content    string          `json:"content"`
	Blocks     []runtime.Block `json:"blocks,omitempty"`
	IsError    bool            `json:"is_error"`
	ErrorKind  string          `json:"error_kind,omitempty"`
	Artifacts  []chat.Artifact `json:"artifacts"`
	DurationMS int64           `json:"duration_ms"`
	WaitedMS   float64         `json:"waited_ms"`
	RanMS      float64         `json:"ran_ms"`
	// Timing says where the call's time went: "waited 12 s for you, ran
	// 41 ms" (capability.DescribeTiming).
	Timing string `json:"timing"`
}

func resultJSON(callID string, r chat.ToolResult) toolResultJSON {
	return toolResultJSON{CallID: callID, Invocation: r.Invocation, Name: r.Name, Pack: r.Pack, Arguments: r.Arguments,
		Approved: r.Decision.Approved, Approver: r.Decision.Approver, Verdict: r.Decision.Verdict.String(), Remembered: r.Decision.Remembered,
		ByAttach: r.Decision.ByAttach, Reason: r.Decision.Reason, Content: r.Content, Blocks: r.Blocks, IsError: r.IsError, ErrorKind: r.ErrorKind,
		Artifacts: orEmpty(r.Artifacts), DurationMS: r.Duration.Milliseconds(), WaitedMS: millis(r.Waited), RanMS: millis(r.RunTime),
		Timing: capability.DescribeTiming(r.Waited, r.RunTime)}
}

// millis is d in milliseconds, to the microsecond.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// callByHand runs one tool the person named, with the arguments they gave:
// the request is their approval of that call only.
func (s *Server) callByHand(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	cs, err := s.chat(r.Context(), r.PathValue("id"))
	if err == nil {
		err = readJSON(w, r, &body)
	}
	if err == nil && body.Name == "" {
		err = fmt.Errorf("%w: name the tool: {\"name\": \"pack__tool\", \"arguments\": {...}}", errBadRequest)
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	res, err := cs.s.Call(r.Context(), body.Name, body.Arguments, byHand{class: body.Name})
	if err != nil {
		s.fail(w, err)
		return
	}
	out := resultJSON("", res)
	cs.events.publish("tool_done", out)
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) listArtifacts(w http.ResponseWriter, r *http.Request) {
	cs, err := s.chat(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	arts, err := cs.s.Artifacts(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": orEmpty(arts), "total": len(arts)})
}

// file serves one file of the chat's workspace, confined to it (os.Root:
// no "..", no symlink out). It is served in a sandbox (its own opaque
// origin, no script), so a tool's HTML cannot act as the app. Like every
// read a client can trigger, it is a call through the pipeline: the policy
// may refuse it, the person who asked (with the token) approves it, and it
// leaves an audit row.
func (s *Server) file(w http.ResponseWriter, r *http.Request) {
	cs, err := s.chat(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	rel := r.PathValue("path")
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		writeError(w, http.StatusBadRequest, codeBadRequest, "web: the file path must be relative to the chat's workspace, without ..")
		return
	}
	args, err := json.Marshal(map[string]string{"path": rel})
	if err != nil {
		s.fail(w, err)
		return
	}
	serve := func(context.Context, runtime.Granted) (json.RawMessage, int, error) {
		root, err := os.OpenRoot(cs.s.Workspace())
		if err != nil {
			return nil, 0, err
		}
		defer root.Close()
		f, err := root.Open(filepath.FromSlash(rel))
		if err != nil {
			return nil, 0, fmt.Errorf("%w: no file %s in the chat's workspace", chat.ErrNotFound, rel)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return nil, 0, fmt.Errorf("%w: %s is not a file in the chat's workspace", chat.ErrNotFound, rel)
		}
		h := w.Header()
		h.Set("Content-Security-Policy", "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'")
		h.Set("X-Content-Type-Options", "nosniff")
		if ct := mime.TypeByExtension(path.Ext(rel)); ct == "" {
			h.Set("Content-Type", "application/octet-stream")
		}
		if r.URL.Query().Get("download") != "" {
			h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(rel)}))
		}
		http.ServeContent(w, r, path.Base(rel), fi.ModTime(), f)
		out, _ := json.Marshal(map[string]any{"path": rel, "size": fi.Size()})
		return out, 0, nil
	}
	o, err := s.cfg.Chat.Pipeline.Call(r.Context(), runtime.Request{
		Chat: cs.s.ID(), Client: "web", Arguments: args, Workspace: cs.s.Workspace(),
		Builtin: &runtime.Builtin{Name: "read_workspace_file", Capabilities: []capability.Name{capability.FilesystemRead},
			Touches: []string{"workspace " + rel}, Run: serve},
		Approvers: []capability.Approver{personAsked{}},
	})
	switch {
	case err != nil:
		s.fail(w, err)
	case errors.Is(o.Err, chat.ErrNotFound):
		writeError(w, http.StatusNotFound, codeNotFound, "web: "+strings.TrimPrefix(o.Err.Error(), chat.ErrNotFound.Error()+": "))
	case o.Err != nil:
		s.fail(w, o.Err)
	}
}

// personAsked approves the one call that the person made in the web app
// with the token: reading a file of their own chat. The enterprise policy
// is asked first and can still refuse it.
type personAsked struct{}

func (personAsked) Name() string { return "web:person" }

func (personAsked) Approve(context.Context, capability.Pending) (capability.Verdict, error) {
	return capability.RunOnce, nil
}
