package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/llm"
)

// DefaultMaxSteps bounds the model requests of one turn.
const DefaultMaxSteps = 16

// Observer watches a turn as it happens. Its methods are called in order,
// from the goroutine that called Send.
type Observer interface {
	// Text receives each piece of the model's answer as it streams.
	Text(delta string)
	// ToolStart says a call is about to be put to the gate and run; stop
	// stops that call only (the turn goes on, and the model is told).
	ToolStart(call llm.ToolCall, stop context.CancelFunc)
	// ToolDone gives the call's outcome.
	ToolDone(r ToolResult)
	// Notice tells the person something about the chat.
	Notice(msg string)
}

// TurnOptions configure one turn.
type TurnOptions struct {
	// Approver decides the calls the policy leaves to a person. Nil means
	// no person is there: only the policy and the chat's "allow for this
	// chat" can approve, and every other call is denied.
	Approver capability.Approver
	Observer Observer // may be nil
	// Attach adds packs to the Active Pack Set with this message.
	Attach []string
	// MaxSteps bounds the model requests (DefaultMaxSteps when 0).
	MaxSteps int
	// NoTools treats the model as one that cannot call tools.
	NoTools bool
}

// Reply is what a turn produced.
type Reply struct {
	// Text is the model's text, from every step of the turn.
	Text string
	// Calls are the tool calls of the turn, in order.
	Calls []ToolResult
	// Steps is the number of model requests.
	Steps int
}

// Artifacts lists every artifact of the turn.
func (r Reply) Artifacts() []Artifact {
	var out []Artifact
	for _, c := range r.Calls {
		out = append(out, c.Artifacts...)
	}
	return out
}

// Send runs one turn: the person's message goes to the model with the
// metadata of the Active Pack Set and the offered tools; each tool call the
// model makes is put through Call and its result sent back, until the model
// answers without calling a tool. Every message is stored as it happens, so
// a turn that fails or is stopped leaves a conversation that goes on.
//
// A message that starts with "/<pack>" invokes that pack explicitly (spec
// 002 §6.2): the pack is attached, the prefix is stripped and the model is
// told to open the pack's docs; a model that cannot call tools gets the
// docs in the system prompt of that one request instead.
//
// One turn runs at a time per Session.
func (s *Session) Send(ctx context.Context, provider llm.Provider, text string, opt TurnOptions) (Reply, error) {
	s.turn.Lock()
	defer s.turn.Unlock()
	obs := opt.Observer
	if obs == nil {
		obs = nopObserver{}
	}
	defer func() {
		for _, n := range s.Notices() {
			obs.Notice(n)
		}
	}()
	maxSteps := opt.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	s.mu.Lock()
	s.limits, s.provider = provider.Limits(), provider.Name()
	if opt.NoTools {
		s.noTools = true
	}
	s.mu.Unlock()
	if err := s.Attach(ctx, opt.Attach...); err != nil {
		return Reply{}, err
	}
	content, explicit, err := s.explicit(ctx, text)
	if err != nil {
		return Reply{}, err
	}
	if err := s.repair(ctx); err != nil {
		return Reply{}, err
	}
	if err := s.appendMessages(ctx, llm.Message{Role: llm.RoleUser, Content: content}); err != nil {
		return Reply{}, err
	}
	var (
		reply    Reply
		texts    []string
		injected bool // the explicit pack's docs went into one request
	)
	for reply.Steps < maxSteps {
		st := s.promptState()
		st.explicit = explicit
		if explicit != "" && st.noTools && !injected {
			st.injected, injected = s.entryDoc(explicit), true
		}
		req := llm.Request{System: systemPrompt(st), Messages: s.history(), Model: s.profile.Model, MaxTokens: s.profile.MaxTokens}
		if !st.noTools {
			req.Tools = s.Tools()
			if err := checkBudget(provider.Name(), provider.Limits(), req.Tools); err != nil {
				return reply, err
			}
		}
		reply.Steps++
		resp, err := provider.Complete(ctx, req, obs.Text)
		switch {
		case errors.Is(err, llm.ErrToolsUnsupported) && !st.noTools:
			s.mu.Lock()
			s.noTools = true
			s.mu.Unlock()
			obs.Notice("the model cannot call tools: packs are used without tools; start a message with /<pack> to include a pack's docs")
			continue
		case errors.Is(err, llm.ErrTooManyTools):
			return reply, refusedBudget(provider.Name(), req.Tools, err)
		case err != nil:
			return reply, err
		}
		if err := s.appendMessages(ctx, resp.Message); err != nil {
			return reply, err
		}
		if t := strings.TrimSpace(resp.Message.Content); t != "" {
			texts = append(texts, t)
		}
		if len(resp.Message.ToolCalls) == 0 {
			reply.Text = strings.Join(texts, "\n\n")
			return reply, nil
		}
		for _, tc := range resp.Message.ToolCalls {
			r, err := s.runCall(ctx, tc, opt.Approver, obs)
			if err != nil {
				return reply, err
			}
			reply.Calls = append(reply.Calls, r)
		}
		if err := ctx.Err(); err != nil {
			return reply, err
		}
	}
	reply.Text = strings.Join(texts, "\n\n")
	obs.Notice(fmt.Sprintf("the turn stopped after %d model requests; send a message to let the model go on", maxSteps))
	return reply, nil
}

// runCall runs one tool call of the model and stores its result.
func (s *Session) runCall(ctx context.Context, tc llm.ToolCall, approver capability.Approver, obs Observer) (ToolResult, error) {
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	obs.ToolStart(tc, stop)
	r, err := s.Call(cctx, tc.Name, json.RawMessage(tc.Arguments), approver)
	if err != nil {
		return r, err
	}
	obs.ToolDone(r)
	return r, s.appendMessages(ctx, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Content: r.Content, IsError: r.IsError})
}

// explicit handles "/<pack> ..." at the start of a message. It returns the
// message to send and the pack invoked ("" for none). A name that is not an
// installed pack leaves the message as ordinary text.
func (s *Session) explicit(ctx context.Context, text string) (string, string, error) {
	name, rest, ok := ParseInvocation(text)
	if !ok {
		return text, "", nil
	}
	if err := s.attach(ctx, name, false); err != nil {
		if errors.Is(err, ErrNotFound) {
			return text, "", nil
		}
		return "", "", err
	}
	if rest == "" {
		rest = "Use the " + name + " pack."
	}
	return rest, name, nil
}

// entryDoc reads an attached pack's entry doc body for the no-tools
// fallback, or says why it cannot.
func (s *Session) entryDoc(name string) string {
	p, ok := s.Pack(name)
	if !ok {
		return "(the pack is not attached)"
	}
	// The pack's [knowledge] max_context_tokens caps this as it caps
	// open_docs.
	body, _, err := docReader(p)(p.EntryDoc, p.Body)
	if err != nil {
		return "(the pack's docs cannot be read: " + err.Error() + ")"
	}
	return strings.TrimSpace(body)
}

// appendMessages stores messages at the end of the conversation. They are
// stored even when ctx is cancelled, so a stopped turn leaves a whole
// conversation.
func (s *Session) appendMessages(ctx context.Context, msgs ...llm.Message) error {
	s.stored.Lock()
	defer s.stored.Unlock()
	s.mu.Lock()
	seq := len(s.messages)
	s.mu.Unlock()
	if err := s.db.appendMessages(context.WithoutCancel(ctx), s.id, seq, msgs...); err != nil {
		return err
	}
	s.mu.Lock()
	s.messages = append(s.messages, msgs...)
	s.mu.Unlock()
	return nil
}

// Refresh brings the session in line with the store, where another
// process sharing it (a replica of packs serve on one PostgreSQL) may have
// continued the chat since this session loaded or wrote it: it reloads
// the conversation when messages were added, and takes in the packs
// attached, opened or enabled there. Call it between turns. A session
// that missed the messages would number its next one as one already
// stored, and that write would fail. A pack detached elsewhere stays
// attached here until the session is opened again.
func (s *Session) Refresh(ctx context.Context) error {
	if err := s.refreshMessages(ctx); err != nil {
		return err
	}
	return s.refreshPacks(ctx)
}

func (s *Session) refreshMessages(ctx context.Context) error {
	s.stored.Lock()
	defer s.stored.Unlock()
	n, err := s.db.countMessages(ctx, s.id)
	if err != nil {
		return err
	}
	s.mu.Lock()
	have := len(s.messages)
	s.mu.Unlock()
	if n == have {
		return nil
	}
	msgs, err := s.db.loadMessages(ctx, s.id)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.messages = msgs
	s.mu.Unlock()
	return nil
}

// refreshPacks attaches the packs the store lists for the chat that the
// session lacks, and turns on the opened and enabled marks the store has;
// marks only ever turn on, as the store's do.
func (s *Session) refreshPacks(ctx context.Context) error {
	rows, err := s.db.loadPacks(ctx, s.id)
	if err != nil {
		return err
	}
	before := s.toolsKey()
	for _, r := range rows {
		s.mu.Lock()
		_, ok := s.active[r.pack]
		s.mu.Unlock()
		if ok {
			s.update(r.pack, func(a *attached) {
				a.opened = a.opened || r.opened
				a.enabled = a.enabled || r.enabled && a.pack.HasTools()
			})
			continue
		}
		p, ref, err := s.deps.Catalog.Pack(ctx, r.pack)
		if err != nil {
			// Not installed here, or no longer loads: Open said so once
			// already; every refresh would say it again.
			s.log.Debug("chat: a pack of the stored chat is left out", "pack", r.pack, "err", err)
			continue
		}
		s.mu.Lock()
		if _, ok := s.active[r.pack]; !ok {
			s.active[r.pack] = &attached{pack: p, ref: ref, opened: r.opened, enabled: r.enabled && p.HasTools()}
			s.order = append(s.order, r.pack)
		}
		s.mu.Unlock()
	}
	s.fireIfChanged(before)
	return nil
}

// repair answers tool calls that a crash or a stopped turn left without a
// result: providers refuse a conversation with a dangling call.
func (s *Session) repair(ctx context.Context) error {
	msgs := s.history()
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 || len(msgs[last].ToolCalls) == 0 {
		return nil
	}
	answered := map[string]bool{}
	for _, m := range msgs[last+1:] {
		if m.Role == llm.RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	var fill []llm.Message
	for _, tc := range msgs[last].ToolCalls {
		if !answered[tc.ID] {
			fill = append(fill, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, IsError: true,
				Content: errorContent(ErrKindStopped, errors.New("the call was interrupted before it returned"), nil)})
		}
	}
	if len(fill) == 0 {
		return nil
	}
	return s.appendMessages(ctx, fill...)
}

// refusedBudget explains a provider's refusal of the tool list: which
// packs to detach. It wraps both ErrToolBudget and the provider's error.
func refusedBudget(provider string, tools []llm.Tool, cause error) error {
	e := measure(provider, tools)
	e.Refused = true
	return fmt.Errorf("%w (%w)", e, cause)
}

type nopObserver struct{}

func (nopObserver) Text(string)                                {}
func (nopObserver) ToolStart(llm.ToolCall, context.CancelFunc) {}
func (nopObserver) ToolDone(ToolResult)                        {}
func (nopObserver) Notice(string)                              {}
