package mcpserver

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/llm"
)

// flatApproverName is who approves the enable_tools calls of flat mode:
// the person, by naming the packs in packs mcp --tools.
const flatApproverName = "packs-mcp-tools"

// flatApprover approves enable_tools for exactly the packs named in
// Config.Tools, and defers anything else. The gate asks the policy first,
// so never_approve = ["enable_tools"] still keeps a pack's tools off.
type flatApprover struct{ packs []string }

func (flatApprover) Name() string { return flatApproverName }

func (a flatApprover) Approve(_ context.Context, p capability.Pending) (capability.Verdict, error) {
	if p.Tool == chat.ToolEnableTools && p.BaseTool {
		for _, name := range a.packs {
			if p.Pack == name {
				return capability.RunOnce, nil
			}
		}
	}
	return capability.Deny, capability.ErrDefer
}

// enableFlat enables the tools of the packs named in Config.Tools when a
// session opens, through the one call path (gate, audit), as if the model
// had called enable_tools for each. A pack whose tools cannot be enabled
// is reported and left out.
func (c *conn) enableFlat(ctx context.Context, sess *chat.Session) {
	if len(c.s.cfg.Tools) == 0 {
		return
	}
	sess.SetClient("mcp:" + flatApproverName)
	ap := flatApprover{packs: c.s.cfg.Tools}
	for _, name := range c.s.cfg.Tools {
		args, _ := json.Marshal(map[string]string{"pack_id": name})
		res, err := sess.Call(ctx, chat.ToolEnableTools, args, ap)
		switch {
		case err != nil:
			c.s.log.Error("mcpserver: --tools: enabling a pack's tools", "pack", name, "err", err)
		case res.IsError:
			c.s.log.Warn("mcpserver: --tools: the pack's tools are not offered", "pack", name, "reason", res.Content)
		}
	}
}

// flatNames maps the name each tool is offered under to its name in the
// chat. In flat mode a tool of a --tools pack is offered under its own
// name when no other offered tool (base tools included) has it; otherwise,
// and in progressive mode, under the chat's <pack>__<tool>.
func (s *Server) flatNames(tools []llm.Tool) map[string]string {
	names := make(map[string]string, len(tools))
	bare := map[string]int{}
	short := func(name string) (string, bool) {
		pack, tool, ok := strings.Cut(name, "__")
		if !ok {
			return "", false
		}
		for _, p := range s.cfg.Tools {
			if p == pack {
				return tool, true
			}
		}
		return "", false
	}
	for _, t := range tools {
		if n, ok := short(t.Name); ok {
			bare[n]++
		} else {
			bare[t.Name]++
		}
	}
	for _, t := range tools {
		if n, ok := short(t.Name); ok && bare[n] == 1 {
			names[t.Name] = n
		} else {
			names[t.Name] = t.Name
		}
	}
	return names
}
