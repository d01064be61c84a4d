package chat

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/packs"
)

// DefaultLimits bound the tool list when no provider has said otherwise
// (the MCP server, or before the first model call): OpenAI's 128 tools.
var DefaultLimits = llm.Limits{MaxTools: 128, MaxToolBytes: 256 << 10}

// PackTools is how much of the tool list one pack takes.
type PackTools struct {
	Pack  string
	Tools int
	Bytes int
}

// BudgetError says the tool list is too large for the provider and which
// packs hold the tools, largest first, so the person knows what to detach.
type BudgetError struct {
	Provider        string
	Tools, MaxTools int
	Bytes, MaxBytes int
	Packs           []PackTools
	// Refused says the provider itself refused the list, whatever our
	// limits said.
	Refused bool
}

func (e *BudgetError) Error() string {
	var b strings.Builder
	switch {
	case e.Refused:
		fmt.Fprintf(&b, "chat: %s refused the list of %d tools as too large", e.Provider, e.Tools)
	case e.Tools > e.MaxTools:
		fmt.Fprintf(&b, "chat: %d tools are more than %s accepts (%d)", e.Tools, e.Provider, e.MaxTools)
	default:
		fmt.Fprintf(&b, "chat: the tool definitions take %d bytes, more than the %d allowed for %s", e.Bytes, e.MaxBytes, e.Provider)
	}
	b.WriteString(": detach packs or leave their tools disabled")
	for i, p := range e.Packs {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%d tools)", p.Pack, p.Tools)
	}
	return b.String()
}

// Unwrap returns ErrToolBudget.
func (e *BudgetError) Unwrap() error { return ErrToolBudget }

// toolBytes is what one definition costs in the request.
func toolBytes(t llm.Tool) int { return len(t.Name) + len(t.Description) + len(t.InputSchema) }

// checkBudget returns a *BudgetError when tools do not fit lim.
func checkBudget(provider string, lim llm.Limits, tools []llm.Tool) error {
	e := measure(provider, tools)
	if e.Tools <= lim.MaxTools && e.Bytes <= lim.MaxToolBytes {
		return nil
	}
	e.MaxTools, e.MaxBytes = lim.MaxTools, lim.MaxToolBytes
	return e
}

// measure counts the tools and their bytes, per pack.
func measure(provider string, tools []llm.Tool) *BudgetError {
	total := 0
	byPack := map[string]*PackTools{}
	for _, t := range tools {
		n := toolBytes(t)
		total += n
		if pack, _, ok := strings.Cut(t.Name, packToolSep); ok {
			pt := byPack[pack]
			if pt == nil {
				pt = &PackTools{Pack: pack}
				byPack[pack] = pt
			}
			pt.Tools++
			pt.Bytes += n
		}
	}
	e := &BudgetError{Provider: provider, Tools: len(tools), Bytes: total}
	for _, pt := range byPack {
		e.Packs = append(e.Packs, *pt)
	}
	slices.SortFunc(e.Packs, func(a, b PackTools) int {
		return cmp.Or(cmp.Compare(b.Tools, a.Tools), cmp.Compare(a.Pack, b.Pack))
	})
	return e
}

// fitsBudget checks that enabling p's tools keeps the tool list within the
// limits of the last provider used.
func (s *Session) fitsBudget(p *packs.Pack) error {
	s.mu.Lock()
	tools := s.toolsLocked()
	lim, provider := s.limits, s.provider
	s.mu.Unlock()
	tools = slices.DeleteFunc(tools, func(t llm.Tool) bool { return strings.HasPrefix(t.Name, p.Name+packToolSep) })
	for _, t := range p.Tools {
		tools = append(tools, llm.Tool{Name: PackToolName(p.Name, t.Name), Description: t.Description, InputSchema: t.InputSchema})
	}
	return checkBudget(provider, lim, tools)
}
