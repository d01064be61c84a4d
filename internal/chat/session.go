package chat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/packs"
)

// Options open a Session.
type Options struct {
	// ID resumes the chat with this id. Empty starts a new chat.
	ID string
	// Attach adds packs to the Active Pack Set.
	Attach []string
	// Workspace is the folder a new chat works in (made when missing; it
	// should be absolute). Empty: a fresh folder under Deps.Workspaces. A
	// resumed chat keeps the workspace it was started with.
	Workspace string
	// Profile is what a new chat starts from: an agent's system prompt
	// and model settings. A resumed chat keeps the profile it was started
	// with.
	Profile Profile
	// Via names the front end that opens a new chat when it is not the
	// person's own (packs chat, the web app): ViaMCP for an MCP session.
	// A resumed chat keeps the one it was started with. In a chat opened
	// via MCP, the packs are attached by the server's configuration, not
	// by the person: attaching them is not consent (capability.Consent).
	Via string
	// OnToolsChanged is called, outside the session's lock, each time the
	// tools Tools returns have changed (a pack attached, detached, or its
	// tools enabled). The MCP server sends notifications/tools/list_changed
	// from it.
	OnToolsChanged func()
	// Owner is the person a new chat belongs to; the zero Owner is the
	// token holder (packs' single-person mode). A resumed chat keeps its
	// owner.
	Owner Owner
}

// Owner is the person a chat belongs to: an OIDC subject and issuer, both
// empty for the token holder.
type Owner struct {
	Issuer, Subject string
}

// ViaMCP is Options.Via for a chat an MCP session opened.
const ViaMCP = "mcp"

// Profile is an agent's part in a chat (spec 003): its system prompt
// follows the pack metadata in every request, and its model settings
// override the configured ones. The agent's capabilities are attached
// through Options.Attach like any pack: attaching grants nothing.
type Profile struct {
	Agent        string // the agent's id; "" for a chat without one
	SystemPrompt string
	Model        string // "" for the provider's configured model
	MaxTokens    int    // 0 for the provider's configured limit
}

// attached is one pack of the Active Pack Set. A value is never changed
// once it is in Session.active: Session.update replaces it with a changed
// copy, so it can be read without the session's lock.
type attached struct {
	pack     *packs.Pack
	ref      capability.PackRef
	mandated bool
	opened   bool // open_docs succeeded: its docs are in the conversation
	enabled  bool // enable_tools succeeded: its tools are offered
}

// PackState describes one attached pack.
type PackState struct {
	Name        string
	Description string
	HasTools    bool
	Mandated    bool
	Opened      bool
	Enabled     bool
}

// Session is one chat: its Active Pack Set, conversation and workspace. It
// is safe for concurrent use; calls run concurrently, state changes are
// serialized.
type Session struct {
	deps      Deps
	db        chatStore
	id        string
	workspace string
	profile   Profile // set when the chat is created or loaded, then fixed
	via       string  // Options.Via, set when the chat is created or loaded, then fixed
	log       *slog.Logger
	changed   func()
	memory    capability.ChatMemory
	turn      sync.Mutex // one turn at a time
	// stored is held while messages go to the store and into messages,
	// and while Refresh compares and reloads them: the two never
	// interleave.
	stored sync.Mutex

	mu       sync.Mutex
	active   map[string]*attached
	order    []string // attachment order, for a stable prompt
	messages []llm.Message
	noTools  bool
	client   string // see SetClient
	// clientName is the MCP client's name from initialize (SetClientName).
	clientName string
	owner      Owner // who the chat belongs to; every call's audit record names them
	notices    []string
	limits     llm.Limits // of the provider last used, for enable_tools
	provider   string
}

// Open starts a new chat, or resumes the one opt.ID names (ErrNotFound when
// there is none). Packs the policy mandates are attached first, then
// opt.Attach. A resumed chat's packs are loaded afresh; one that can no
// longer load is left out, with a notice.
func Open(ctx context.Context, deps Deps, opt Options) (*Session, error) {
	if err := deps.check(); err != nil {
		return nil, err
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Session{deps: deps, db: newChatStore(deps.Store), changed: opt.OnToolsChanged, active: map[string]*attached{},
		limits: DefaultLimits, provider: "the provider"}
	s.memory = chatMemory{s.db}
	if opt.ID == "" {
		s.id = newID("chat")
		s.workspace = filepath.Join(deps.Workspaces, s.id)
		if opt.Workspace != "" {
			s.workspace = opt.Workspace
		}
		if err := os.MkdirAll(s.workspace, 0o700); err != nil {
			return nil, fmt.Errorf("chat: workspace: %w", err)
		}
		s.profile, s.via, s.owner = opt.Profile, opt.Via, opt.Owner
		if err := s.db.createChat(ctx, s.id, s.workspace, s.profile, s.via, opt.Owner); err != nil {
			return nil, err
		}
	} else {
		s.id = opt.ID
		sc, err := s.db.loadChat(ctx, opt.ID)
		if err != nil {
			return nil, err
		}
		s.profile, s.via, s.clientName, s.owner = sc.profile, sc.via, sc.clientName, sc.owner
		s.workspace = sc.workspace
		ws := sc.workspace
		if err := os.MkdirAll(ws, 0o700); err != nil {
			return nil, fmt.Errorf("chat: workspace: %w", err)
		}
		if s.messages, err = s.db.loadMessages(ctx, opt.ID); err != nil {
			return nil, err
		}
		rows, err := s.db.loadPacks(ctx, opt.ID)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			p, ref, err := deps.Catalog.Pack(ctx, r.pack)
			if err != nil {
				s.notice("pack %s is left out of this chat: %v", r.pack, err)
				continue
			}
			s.active[r.pack] = &attached{pack: p, ref: ref, opened: r.opened, enabled: r.enabled && p.HasTools()}
			s.order = append(s.order, r.pack)
		}
	}
	s.log = deps.Logger.With("chat", s.id)
	if err := s.attachMandated(ctx); err != nil {
		return nil, err
	}
	if err := s.Attach(ctx, opt.Attach...); err != nil {
		return nil, err
	}
	return s, nil
}

// SetClient records who drives the chat when it is not packs chat: the MCP
// client, e.g. "mcp:claude-ai", known only once the client has introduced
// itself. Every later call's audit record carries it.
func (s *Session) SetClient(name string) {
	s.mu.Lock()
	s.client = name
	s.mu.Unlock()
}

// SetClientName records the name the MCP client gave in initialize
// (clientInfo), for the list of chats: "Claude Desktop, via MCP".
func (s *Session) SetClientName(ctx context.Context, name string) error {
	s.mu.Lock()
	s.clientName = name
	s.mu.Unlock()
	return s.db.setClientName(ctx, s.id, name)
}

// ClientName is the name the MCP client gave (SetClientName); empty for
// the person's own chats.
func (s *Session) ClientName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientName
}

// Via is the front end that opened the chat (Options.Via).
func (s *Session) Via() string { return s.via }

// consent is the chat's capability.Consent: the packs the person attached
// to it. Those the policy mandates were attached by the enterprise, and in
// a chat opened via MCP every pack was attached by the server's
// configuration: neither is the person's consent.
type consent struct{ s *Session }

func (c consent) Attached(_ context.Context, chat, pack string) (bool, error) {
	if chat != c.s.id || c.s.via != "" {
		return false, nil
	}
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	a, ok := c.s.active[pack]
	return ok && !a.mandated, nil
}

// Owner is the person the chat belongs to.
func (s *Session) Owner() Owner { return s.owner }

// ID is the chat's identifier, for resuming it.
func (s *Session) ID() string { return s.id }

// Profile is the agent settings the chat was started with.
func (s *Session) Profile() Profile { return s.profile }

// Workspace is the chat's workspace directory.
func (s *Session) Workspace() string { return s.workspace }

// Notices returns, and forgets, what the person should be told: packs left
// out of a resumed chat, a model that cannot call tools, and the like.
func (s *Session) Notices() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.notices
	s.notices = nil
	return n
}

func (s *Session) notice(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if s.log != nil {
		s.log.Warn(msg)
	}
	s.mu.Lock()
	s.notices = append(s.notices, msg)
	s.mu.Unlock()
}

// attachMandated attaches every pack the policy mandates.
func (s *Session) attachMandated(ctx context.Context) error {
	for _, name := range s.deps.Pipeline.Policy().Mandated() {
		s.mu.Lock()
		a, ok := s.active[name]
		if ok {
			a.mandated = true
		}
		s.mu.Unlock()
		if ok {
			continue
		}
		if err := s.attach(ctx, name, true); err != nil {
			if errors.Is(err, ErrNotFound) {
				s.notice("the policy mandates pack %s, but it is not installed: install it with packs add", name)
				continue
			}
			if errors.Is(err, store.ErrPackDisabled) {
				s.notice("the policy mandates pack %s, but it is disabled: enable it with packs enable %s", name, name)
				continue
			}
			return err
		}
	}
	return nil
}

// Attach adds packs to the Active Pack Set. It fails for a pack that is not
// installed (ErrNotFound), that the policy blocks (capability.ErrDenied), or
// that no longer matches its lock entry.
func (s *Session) Attach(ctx context.Context, names ...string) error {
	for _, name := range names {
		if err := s.attach(ctx, name, false); err != nil {
			return err
		}
	}
	return nil
}

func (s *Session) attach(ctx context.Context, name string, mandated bool) error {
	s.mu.Lock()
	_, ok := s.active[name]
	s.mu.Unlock()
	if ok {
		return nil
	}
	if !validPackName(name) {
		return fmt.Errorf("%w: %q is not a pack name", ErrNotFound, name)
	}
	p, ref, err := s.deps.Catalog.Pack(ctx, name)
	if err != nil {
		return err
	}
	if err := p.Attachable(); err != nil && !mandated {
		return err
	}
	if err := s.deps.Pipeline.Policy().Blocked(ref); err != nil {
		return err
	}
	before := s.toolsKey()
	s.mu.Lock()
	if _, ok := s.active[name]; !ok {
		s.active[name] = &attached{pack: p, ref: ref, mandated: mandated}
		s.order = append(s.order, name)
	}
	s.mu.Unlock()
	if err := s.db.savePack(ctx, s.id, name, false, false); err != nil {
		return err
	}
	s.fireIfChanged(before)
	return nil
}

// Detach removes a pack from the Active Pack Set; its tools are no longer
// offered. A pack the policy mandates stays (ErrMandated).
func (s *Session) Detach(ctx context.Context, name string) error {
	before := s.toolsKey()
	s.mu.Lock()
	a, ok := s.active[name]
	switch {
	case !ok:
		s.mu.Unlock()
		return fmt.Errorf("%w: pack %s is not attached", ErrNotFound, name)
	case a.mandated:
		s.mu.Unlock()
		return fmt.Errorf("%w: %s stays attached", ErrMandated, name)
	}
	delete(s.active, name)
	s.order = slices.DeleteFunc(s.order, func(n string) bool { return n == name })
	s.mu.Unlock()
	if err := s.db.deletePack(ctx, s.id, name); err != nil {
		return err
	}
	s.fireIfChanged(before)
	return nil
}

// Packs describes the Active Pack Set, in attachment order.
func (s *Session) Packs() []PackState {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]PackState, 0, len(s.order))
	for _, name := range s.order {
		a := s.active[name]
		out = append(out, PackState{Name: name, Description: a.pack.Frontmatter.Description, HasTools: a.pack.HasTools(),
			Mandated: a.mandated, Opened: a.opened, Enabled: a.enabled})
	}
	return out
}

// Pack returns an attached pack.
func (s *Session) Pack(name string) (*packs.Pack, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.active[name]
	if !ok {
		return nil, false
	}
	return a.pack, true
}

// Messages returns a copy of the conversation.
func (s *Session) Messages() []llm.Message { return slices.Clone(s.history()) }

// history returns the conversation without copying it. Messages are only
// ever appended, never changed, so the slice (its capacity capped) stays
// valid while the session goes on.
func (s *Session) history() []llm.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.messages[:len(s.messages):len(s.messages)]
}

// Tools lists the tools offered to the model: the base tools while any pack
// is attached (exec_best_effort only while one asks for terminal_exec,
// run_recipe only while one has recipes), then
// the tools of every pack whose tools are enabled.
func (s *Session) Tools() []llm.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.toolsLocked()
}

func (s *Session) toolsLocked() []llm.Tool {
	if len(s.active) == 0 {
		return nil
	}
	out := []llm.Tool{openDocsTool, readFileTool, enableToolsTool}
	for _, name := range s.order {
		if s.active[name].pack.Request().Has(capability.TerminalExec) {
			out = append(out, execTool)
			break
		}
	}
	if s.hasRecipesLocked() {
		out = append(out, runRecipeTool)
	}
	for _, name := range s.order {
		a := s.active[name]
		if !a.enabled {
			continue
		}
		for _, t := range a.pack.Tools {
			out = append(out, llm.Tool{Name: PackToolName(name, t.Name), Description: t.Description, InputSchema: t.InputSchema})
		}
	}
	return out
}

// toolsKey summarizes the offered tools, to tell when they change.
func (s *Session) toolsKey() string {
	var b strings.Builder
	for _, t := range s.Tools() {
		b.WriteString(t.Name)
		b.WriteByte(0)
	}
	return b.String()
}

func (s *Session) fireIfChanged(before string) {
	if s.changed != nil && s.toolsKey() != before {
		s.changed()
	}
}

// promptState captures what the system prompt is built from.
func (s *Session) promptState() promptState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := promptState{noTools: s.noTools}
	for _, name := range s.order {
		a := s.active[name]
		m := packMeta{ID: name, Name: a.pack.Frontmatter.Name, Description: a.pack.Frontmatter.Description, HasTools: a.pack.HasTools()}
		if a.pack.Manifest != nil {
			m.Priority = a.pack.Manifest.Knowledge.Priority
		}
		if pr, ok := s.deps.Catalog.(Prompter); ok {
			m.Prompt = pr.Prompt(a.ref)
		}
		st.packs = append(st.packs, m)
		if a.opened {
			st.opened = append(st.opened, name)
		}
		if a.enabled {
			st.enabled = append(st.enabled, name)
		}
	}
	st.agentPrompt = s.profile.SystemPrompt
	return st
}

// SystemPrompt is the system prompt the next model request carries.
func (s *Session) SystemPrompt() string { return systemPrompt(s.promptState()) }

// now is the time stamps are taken from.
func now() time.Time { return time.Now().UTC() }

// Artifacts lists the files tools created or changed in the chat's
// workspace, each path once with its latest type and size, sorted by path.
func (s *Session) Artifacts(ctx context.Context) ([]Artifact, error) {
	all, err := s.db.loadArtifacts(ctx, s.id)
	if err != nil {
		return nil, err
	}
	latest := map[string]Artifact{}
	for _, a := range all {
		latest[a.Path] = a
	}
	out := slices.Collect(maps.Values(latest))
	slices.SortFunc(out, func(a, b Artifact) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}
