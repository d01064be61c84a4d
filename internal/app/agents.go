package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/packs-run/packs/internal/store"
)

// Bounds of an agent's fields.
const (
	MaxAgentName         = 100      // runes
	MaxAgentPrompt       = 64 << 10 // bytes
	MaxAgentModel        = 200      // bytes
	MaxAgentTokens       = 1 << 20
	MaxAgentCapabilities = 64
)

var (
	// ErrInvalidAgent: a field of an agent breaks a rule; the message says
	// which and why.
	ErrInvalidAgent = errors.New("app: invalid agent")
	// ErrAgentNotFound: no agent has that id or name.
	ErrAgentNotFound = store.ErrAgentNotFound
	// ErrAgentExists: another agent has the name.
	ErrAgentExists = store.ErrAgentExists
)

// AgentChange is what creating or editing an agent sets: a nil field is
// left as it is (creating: empty).
type AgentChange struct {
	Name         *string
	SystemPrompt *string
	Model        *string
	MaxTokens    *int
	Capabilities []string // nil: unchanged; empty: none
}

// WithMaxTokens is c for a new agent under the model's configured reply
// token limit: when c leaves max tokens unset, the agent starts with that
// limit written out (what its chats send), not 0. A limit out of an
// agent's range (none configured: 0) leaves it unset, and the agent's
// chats use the limit configured when they run. packs agent create and
// the app's Agents page both create through it.
func (c AgentChange) WithMaxTokens(limit int) AgentChange {
	if c.MaxTokens == nil && limit > 0 && limit <= MaxAgentTokens {
		c.MaxTokens = &limit
	}
	return c
}

// Agent is a stored agent, with the warnings its last write produced
// (a deprecated capability). Packs, from ChatAgent, are the packs a chat
// started from it attaches, in order.
type Agent struct {
	store.AgentRow
	Warnings []string
	Packs    []string
}

// AgentJSON is an agent as the API and packs agent --json show it (spec
// 003): name, system prompt, model settings and ordered capabilities.
// Warnings name the deprecated capabilities a write kept.
type AgentJSON struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	SystemPrompt string    `json:"system_prompt"`
	Model        string    `json:"model"`
	MaxTokens    int       `json:"max_tokens"`
	Capabilities []string  `json:"capabilities"`
	Status       string    `json:"status"` // always "active"
	Created      time.Time `json:"created_at"`
	Updated      time.Time `json:"updated_at"`
	Warnings     []string  `json:"warnings,omitempty"`
}

// JSON is a's AgentJSON.
func (a Agent) JSON() AgentJSON {
	caps := a.Capabilities
	if caps == nil {
		caps = []string{}
	}
	return AgentJSON{ID: a.ID, Name: a.Name, SystemPrompt: a.SystemPrompt, Model: a.Model, MaxTokens: a.MaxTokens,
		Capabilities: caps, Status: "active", Created: a.Created, Updated: a.Updated, Warnings: a.Warnings}
}

// CreateAgent checks c and stores a new agent. A name is required.
func (a *App) CreateAgent(ctx context.Context, c AgentChange) (Agent, error) {
	if c.Name == nil {
		return Agent{}, fmt.Errorf("%w: name it: a name is required", ErrInvalidAgent)
	}
	at := time.Now().UTC()
	r := store.AgentRow{ID: newAgentID(), Capabilities: []string{}, Created: at, Updated: at}
	return a.writeAgent(ctx, r, c)
}

// UpdateAgent applies c to the agent whose id or name is ref.
func (a *App) UpdateAgent(ctx context.Context, ref string, c AgentChange) (Agent, error) {
	r, err := a.DB.Agent(ctx, ref)
	if err != nil {
		return Agent{}, err
	}
	r.Updated = time.Now().UTC()
	return a.writeAgent(ctx, r, c)
}

func (a *App) writeAgent(ctx context.Context, r store.AgentRow, c AgentChange) (Agent, error) {
	if c.Name != nil {
		r.Name = strings.TrimSpace(*c.Name)
	}
	if c.SystemPrompt != nil {
		r.SystemPrompt = *c.SystemPrompt
	}
	if c.Model != nil {
		r.Model = strings.TrimSpace(*c.Model)
	}
	if c.MaxTokens != nil {
		r.MaxTokens = *c.MaxTokens
	}
	if c.Capabilities != nil {
		r.Capabilities = c.Capabilities
	}
	if err := checkAgent(r); err != nil {
		return Agent{}, err
	}
	res, err := a.resolveCapabilities(ctx, r.Capabilities)
	if err != nil {
		return Agent{}, err
	}
	r.Capabilities = res.ids
	if err := a.DB.PutAgent(ctx, r); err != nil {
		return Agent{}, err
	}
	return Agent{AgentRow: r, Warnings: res.warnings, Packs: res.packs}, nil
}

// checkAgent checks every field but the capabilities.
func checkAgent(r store.AgentRow) error {
	switch n := utf8.RuneCountInString(r.Name); {
	case n == 0:
		return fmt.Errorf("%w: the name is empty: give the agent a name", ErrInvalidAgent)
	case n > MaxAgentName:
		return fmt.Errorf("%w: the name has %d characters; at most %d", ErrInvalidAgent, n, MaxAgentName)
	case strings.HasPrefix(r.Name, "agent_"):
		return fmt.Errorf("%w: name %q starts with \"agent_\", which agent ids start with: choose another", ErrInvalidAgent, r.Name)
	case !utf8.ValidString(r.Name) || strings.ContainsFunc(r.Name, unicode.IsControl):
		return fmt.Errorf("%w: name %q holds a control character or invalid UTF-8", ErrInvalidAgent, r.Name)
	}
	switch {
	case len(r.SystemPrompt) > MaxAgentPrompt:
		return fmt.Errorf("%w: the system prompt has %d bytes; at most %d", ErrInvalidAgent, len(r.SystemPrompt), MaxAgentPrompt)
	case !utf8.ValidString(r.SystemPrompt):
		return fmt.Errorf("%w: the system prompt is not valid UTF-8", ErrInvalidAgent)
	case len(r.Model) > MaxAgentModel || strings.ContainsFunc(r.Model, func(c rune) bool { return unicode.IsControl(c) || unicode.IsSpace(c) }) || !utf8.ValidString(r.Model):
		return fmt.Errorf("%w: model %q is not a model name (at most %d bytes, no spaces)", ErrInvalidAgent, r.Model, MaxAgentModel)
	case r.MaxTokens < 0 || r.MaxTokens > MaxAgentTokens:
		return fmt.Errorf("%w: max_tokens %d is out of range: 0 (the configured limit) to %d", ErrInvalidAgent, r.MaxTokens, MaxAgentTokens)
	}
	return nil
}

// Agent returns the agent whose id or name is ref.
func (a *App) Agent(ctx context.Context, ref string) (Agent, error) {
	r, err := a.DB.Agent(ctx, ref)
	return Agent{AgentRow: r}, err
}

// Agents lists the agents by name.
func (a *App) Agents(ctx context.Context) ([]Agent, error) {
	rows, err := a.DB.Agents(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Agent, len(rows))
	for i, r := range rows {
		out[i] = Agent{AgentRow: r}
	}
	return out, nil
}

// DeleteAgent deletes the agent whose id or name is ref. Chats started
// from it keep its prompt and model settings.
func (a *App) DeleteAgent(ctx context.Context, ref string) (Agent, error) {
	r, err := a.DB.Agent(ctx, ref)
	if err != nil {
		return Agent{}, err
	}
	return Agent{AgentRow: r}, a.DB.DeleteAgent(ctx, r.ID)
}

// ChatAgent returns the agent a new chat starts from, checking that its
// capabilities can still be attached: one removed or become coming_soon
// since the agent was written is an error that names it.
func (a *App) ChatAgent(ctx context.Context, ref string) (Agent, error) {
	ag, err := a.Agent(ctx, ref)
	if err != nil {
		return Agent{}, err
	}
	res, err := a.resolveCapabilities(ctx, ag.Capabilities)
	if err != nil {
		return Agent{}, fmt.Errorf("agent %s: %w", ag.Name, err)
	}
	ag.Warnings, ag.Packs = res.warnings, res.packs
	return ag, nil
}

func newAgentID() string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return "agent_" + hex.EncodeToString(b[:])
}
