package mcpserver

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/packs"
)

// baseMeta are the titles and annotations of the base tools.
var baseMeta = map[string]struct {
	title string
	ann   mcp.ToolAnnotations
}{
	chat.ToolOpenDocs:    {"Open a pack's docs", mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}},
	chat.ToolReadFile:    {"Read a pack's file", mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}},
	chat.ToolEnableTools: {"Enable a pack's tools", mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}},
	chat.ToolExec:        {"Run a command natively (best effort)", mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(true)}},
}

func ptr[T any](v T) *T { return &v }

// packMeta is what the tools of one pack are listed with: the pack, whose
// tools carry what tools.json declares (title, output_schema, idempotent),
// and the annotations its grant gives.
type packMeta struct {
	pack *packs.Pack
	ann  mcp.ToolAnnotations
}

// metaFor derives the annotations of p's tools from the grant its calls
// would run with in sess: read-only without filesystem write, terminal exec
// or network; destructive with filesystem write or terminal exec;
// open-world with network. When the grant cannot be resolved the
// annotations are derived from what the pack requests, which holds at
// least as much.
func (s *Server) metaFor(ctx context.Context, sess *chat.Session, p *packs.Pack) packMeta {
	m := packMeta{pack: p}
	has := func(n capability.Name) bool { return p.Request().Has(n) }
	if g, err := s.grantFor(ctx, sess, p); err == nil {
		has = g.Has
	}
	m.ann = annotationsFor(has)
	return m
}

// annotationsFor derives a pack tool's hints from what its grant holds.
func annotationsFor(has func(capability.Name) bool) mcp.ToolAnnotations {
	writes := has(capability.FilesystemWrite) || has(capability.TerminalExec)
	return mcp.ToolAnnotations{
		ReadOnlyHint:    !writes && !has(capability.Network),
		DestructiveHint: ptr(writes),
		OpenWorldHint:   ptr(has(capability.Network)),
	}
}

// grantFor resolves the grant the pack's calls in sess would hold now.
func (s *Server) grantFor(ctx context.Context, sess *chat.Session, p *packs.Pack) (capability.Grant, error) {
	// The pipeline's own grant source: what the calls will hold, lapsed
	// grants (the policy's [review] lapse) included.
	ref := capability.PackRef{Name: p.Name}
	user, err := s.cfg.Chat.Pipeline.Grants().PeekGrants(ctx, ref, sess.ID())
	if err != nil {
		return capability.Grant{}, err
	}
	return capability.Resolve(ref, p.Request(), user, s.cfg.Chat.Pipeline.Policy(), s.cfg.Chat.Pipeline.Env(sess.Workspace()))
}

// decorate gives tool (named chatName in the chat) its title, annotations
// and output schema. metas caches each pack's packMeta for one sync.
func (c *conn) decorate(tool *mcp.Tool, chatName string, metas map[string]packMeta) {
	if b, ok := baseMeta[chatName]; ok {
		ann := b.ann
		tool.Title, tool.Annotations = b.title, &ann
		return
	}
	pack, name, ok := strings.Cut(chatName, "__")
	if !ok {
		return
	}
	m, ok := metas[pack]
	if !ok {
		p, found := c.chat.Pack(pack)
		if !found {
			return
		}
		m = c.s.metaFor(context.Background(), c.chat, p)
		metas[pack] = m
	}
	d, ok := m.pack.Tool(name)
	if !ok {
		return
	}
	ann := m.ann
	ann.IdempotentHint = d.Idempotent
	ann.Title = d.Title
	tool.Title, tool.Annotations = d.Title, &ann
	if len(d.OutputSchema) > 0 {
		// packs.Load compiled it and checked that it describes an object;
		// the runtime checks every result against it.
		tool.OutputSchema = d.OutputSchema
	}
}

// structured is the structured content of a result of a tool with an
// output schema: the tool's result object, or nil.
func structured(content string) any {
	var v struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal([]byte(content), &v) != nil || len(v.Result) == 0 || v.Result[0] != '{' {
		return nil
	}
	return v.Result
}
