package mcpserver

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// declaredPrompt describes a prompt of a pack's resources.json.
func declaredPrompt(pr *packs.Prompt) *mcp.Prompt {
	out := &mcp.Prompt{Name: pr.Name, Title: pr.Title, Description: pr.Description}
	for _, a := range pr.Arguments {
		out.Arguments = append(out.Arguments, &mcp.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
	}
	return out
}

// declaredPromptHandler fills in a declared prompt: {{argument}}
// placeholders take the request's arguments; images, audio and embedded
// resources are files of the pack, each read through read_file's gate,
// confinement (no "..", no symlink out of the pack) and audit, as
// resources/read reads them, and limited to one page: a prompt is not a
// way around the gate. An embedded resource must be one the pack declares,
// also when an argument names it.
func (c *conn) declaredPromptHandler(sess *chat.Session, p *packs.Pack, pr *packs.Prompt) mcp.PromptHandler {
	return c.promptRoundTrips(func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		args := req.Params.Arguments
		for _, a := range pr.Arguments {
			if a.Required && strings.TrimSpace(args[a.Name]) == "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("mcpserver: prompt %s: argument %q is required", pr.Name, a.Name)}
			}
		}
		res := &mcp.GetPromptResult{Description: pr.Description}
		for _, m := range pr.Messages {
			var content mcp.Content
			switch {
			case m.Text != "":
				content = &mcp.TextContent{Text: packs.Fill(m.Text, args)}
			case m.Image != "" || m.Audio != "":
				file := m.Image + m.Audio
				data, _, err := c.readWhole(ctx, sess, req.Session, p, file)
				if err != nil {
					return nil, fmt.Errorf("mcpserver: prompt %s: %w", pr.Name, err)
				}
				if m.Image != "" {
					content = &mcp.ImageContent{Data: data, MIMEType: m.MIMEType}
				} else {
					content = &mcp.AudioContent{Data: data, MIMEType: m.MIMEType}
				}
			default:
				uri := packs.Fill(m.Resource, args)
				r, ok := p.Declarations.Resource(uri)
				if !ok {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("mcpserver: prompt %s: %q is not a resource of pack %s", pr.Name, trimForError(uri), p.Name)}
				}
				data, text, err := c.readWhole(ctx, sess, req.Session, p, r.File)
				if err != nil {
					return nil, fmt.Errorf("mcpserver: prompt %s: %w", pr.Name, err)
				}
				rc := &mcp.ResourceContents{URI: uri, MIMEType: r.MIMEType}
				if text {
					rc.Text = string(data)
				} else {
					rc.Blob = data
				}
				content = &mcp.EmbeddedResource{Resource: rc}
			}
			res.Messages = append(res.Messages, &mcp.PromptMessage{Role: mcp.Role(m.Role), Content: content})
		}
		return res, nil
	})
}

// ErrTooLarge: a file a prompt carries whole is longer than one page.
var ErrTooLarge = errors.New("mcpserver: file too large for a prompt")

// readWhole reads, through the gate, a pack file that must fit in one
// page, and says whether it is text.
func (c *conn) readWhole(ctx context.Context, sess *chat.Session, ss *mcp.ServerSession, p *packs.Pack, rel string) ([]byte, bool, error) {
	page, err := c.gatedRead(ctx, sess, ss, "pack://"+p.Name+"/"+rel, p.Name, rel)
	if err != nil {
		return nil, false, err
	}
	if page.Truncated {
		return nil, false, fmt.Errorf("%w: %s is %d bytes, over %d", ErrTooLarge, rel, page.Size, chat.MaxReadLength)
	}
	if page.Encoding == chat.EncodingBase64 {
		b, err := base64.StdEncoding.DecodeString(page.Content)
		return b, false, err
	}
	return []byte(page.Content), true, nil
}
