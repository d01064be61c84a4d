package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/packs"
)

// promptArg is the one argument of a pack's prompt: what the person wants.
const promptArg = "request"

// packPrompt is the prompt that invokes a pack explicitly, as "/pack-name
// ..." does in packs chat (spec 002 §6.2).
func packPrompt(p *packs.Pack) *mcp.Prompt {
	return &mcp.Prompt{
		Name:        p.Name,
		Title:       "Use the " + p.Name + " pack",
		Description: p.Frontmatter.Description,
		Arguments: []*mcp.PromptArgument{{
			Name:        promptArg,
			Description: "What you want done with this pack.",
		}},
	}
}

// promptHandler returns the pack's instructions (its entry doc's body, as an
// embedded pack:// resource) followed by the person's request. Like an
// explicit invocation in packs chat, the docs come in the person's own turn:
// nothing runs, so the gate is not involved.
func promptHandler(p *packs.Pack) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		page, err := chat.ReadPackFile(p, p.EntryDoc, p.Body, chat.MaxReadLength)
		if err != nil {
			return nil, fmt.Errorf("mcpserver: prompt %s: reading %s: %w", p.Name, p.EntryDoc, err)
		}
		body := page.Content
		if page.Truncated {
			body += fmt.Sprintf("\n\n[truncated: read the rest with read_file(%q, %q, offset=%d)]", p.Name, p.EntryDoc, *page.NextOffset)
		}
		ask := strings.TrimSpace(req.Params.Arguments[promptArg])
		text := fmt.Sprintf("Use the %s pack; its instructions are above.", p.Name)
		if ask != "" {
			text = fmt.Sprintf("Use the %s pack (its instructions are above) for this: %s", p.Name, ask)
		}
		if p.HasTools() {
			text += fmt.Sprintf("\nIts tools appear as %s after enable_tools(%q).", chat.PackToolName(p.Name, "<tool>"), p.Name)
		}
		return &mcp.GetPromptResult{
			Description: p.Frontmatter.Description,
			Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
					URI: packURI{Pack: p.Name, Path: p.EntryDoc}.String(), MIMEType: "text/markdown", Text: body,
				}}},
				{Role: "user", Content: &mcp.TextContent{Text: text}},
			},
		}, nil
	}
}
