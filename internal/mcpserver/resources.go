package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/packs"
)

// maxListedFiles caps how many files of one pack resources/list shows. The
// rest can still be read through the pack://{pack}/{+path} template.
const maxListedFiles = 200

// addPackFeatures registers, for every attached pack, its files as
// resources, one prompt, and what its resources.json declares: resources,
// resource templates and prompts. A declared URI or prompt name that an
// earlier pack (or the pack prompts) already took is left out, with a
// warning.
func (c *conn) addPackFeatures(sess *chat.Session) {
	defer c.lists.changed()
	var res []*mcp.Resource
	prompts := map[string]string{}
	addPrompt := func(pr *mcp.Prompt, h mcp.PromptHandler, pack string) {
		if prev, taken := prompts[pr.Name]; taken {
			c.s.log.Warn("mcpserver: prompt not offered: the name is taken", "prompt", pr.Name, "pack", pack, "taken_by", prev)
			return
		}
		prompts[pr.Name] = pack
		c.srv.AddPrompt(pr, h)
	}
	for _, st := range sess.Packs() {
		if p, ok := sess.Pack(st.Name); ok {
			addPrompt(packPrompt(p), promptHandler(p), p.Name)
		}
	}
	read := c.readResource(sess)
	uris := map[string]string{}
	c.decl.files = map[string]declaredFile{}
	for _, st := range sess.Packs() {
		p, ok := sess.Pack(st.Name)
		if !ok {
			continue
		}
		res = append(res, packResources(p)...)
		d := p.Declarations
		if d == nil {
			continue
		}
		for _, r := range d.Resources {
			// packs checks these when the pack loads; the SDK panics on a
			// URI it cannot parse, so a pack must never reach it with one.
			if _, err := url.Parse(r.URI); err != nil {
				c.s.log.Warn("mcpserver: resource not offered: bad URI", "uri", r.URI, "pack", p.Name, "err", err)
				continue
			}
			if prev, taken := uris[r.URI]; taken {
				c.s.log.Warn("mcpserver: resource not offered: another pack declares its URI", "uri", r.URI, "pack", p.Name, "taken_by", prev)
				continue
			}
			uris[r.URI] = p.Name
			c.decl.files[r.URI] = declaredFile{pack: p.Name, file: r.File, mime: r.MIMEType}
			res = append(res, &mcp.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType})
		}
		for _, t := range d.Templates {
			if _, err := uritemplate.New(t.URITemplate); err != nil {
				c.s.log.Warn("mcpserver: resource template not offered: bad URI template", "uri_template", t.URITemplate, "pack", p.Name, "err", err)
				continue
			}
			if prev, taken := uris[t.URITemplate]; taken {
				c.s.log.Warn("mcpserver: resource template not offered: another pack declares it", "uri_template", t.URITemplate, "pack", p.Name, "taken_by", prev)
				continue
			}
			uris[t.URITemplate] = p.Name
			c.decl.templates = append(c.decl.templates, declaredTemplate{pack: p.Name, t: t})
			c.srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: t.URITemplate, Name: t.Name, Title: t.Title, Description: t.Description, MIMEType: t.MIMEType}, read)
		}
		for _, pr := range d.Prompts {
			addPrompt(declaredPrompt(pr), c.declaredPromptHandler(sess, p, pr), p.Name)
		}
	}
	for _, r := range res {
		c.srv.AddResource(r, read)
	}
	c.srv.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: resourceTemplate,
		Name:        "pack-file",
		Title:       "A file of an attached pack",
		Description: "Any file inside an attached pack, by its path relative to the pack root.",
	}, read)
}

// declIndex maps the URIs the packs declare to their files. addPackFeatures
// fills it once, while the session opens, before any request is served;
// afterwards it is only read.
type declIndex struct {
	files     map[string]declaredFile
	templates []declaredTemplate
}

// declaredFile is the pack file a declared resource URI serves.
type declaredFile struct {
	pack, file, mime string
}

// declaredTemplate is a resource template of a pack's resources.json.
type declaredTemplate struct {
	pack string
	t    *packs.ResourceTemplate
}

// resolve maps a resource URI to the pack file it names: pack://<pack>/<path>,
// a URI one of the packs declares, or one that a declared template matches.
// The file is only named here; reading it goes through the gate and
// read_file's confinement.
func (c *conn) resolve(sess *chat.Session, uri string) (declaredFile, error) {
	if strings.HasPrefix(uri, uriScheme) {
		u, err := parsePackURI(uri)
		if err != nil {
			return declaredFile{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		if _, ok := sess.Pack(u.Pack); !ok {
			return declaredFile{}, mcp.ResourceNotFoundError(uri)
		}
		return declaredFile{pack: u.Pack, file: u.Path}, nil
	}
	if len(uri) > maxURILen {
		return declaredFile{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%v: longer than %d bytes", ErrBadURI, maxURILen)}
	}
	if d, ok := c.decl.files[uri]; ok {
		return d, nil
	}
	for _, dt := range c.decl.templates {
		file, ok, err := dt.t.Match(uri)
		if err != nil {
			return declaredFile{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("mcpserver: %s: %v", trimForError(uri), err)}
		}
		if ok {
			return declaredFile{pack: dt.pack, file: file, mime: dt.t.MIMEType}, nil
		}
	}
	return declaredFile{}, mcp.ResourceNotFoundError(uri)
}

// packFile is one regular file of a pack.
type packFile struct {
	rel  string // slash-separated, relative to the pack root
	size int64
}

// packFiles lists a pack's regular files, sorted, skipping hidden entries
// and never following a symlink; at most maxListedFiles.
func packFiles(p *packs.Pack) []packFile {
	var out []packFile
	_ = filepath.WalkDir(p.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable folder is skipped, not fatal
		}
		if path != p.Dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if len(out) == maxListedFiles {
			return filepath.SkipAll
		}
		rel, err := filepath.Rel(p.Dir, path)
		if err != nil {
			return nil
		}
		f := packFile{rel: filepath.ToSlash(rel)}
		if info, err := d.Info(); err == nil {
			f.size = info.Size()
		}
		out = append(out, f)
		return nil
	})
	return out
}

// packResources describes a pack's files as resources.
func packResources(p *packs.Pack) []*mcp.Resource {
	var out []*mcp.Resource
	for _, f := range packFiles(p) {
		r := &mcp.Resource{URI: packURI{Pack: p.Name, Path: f.rel}.String(), Name: p.Name + "/" + f.rel, Size: f.size}
		if f.rel == p.EntryDoc {
			r.Title = p.Name + ": entry doc"
			r.Description = p.Frontmatter.Description
			r.MIMEType = "text/markdown"
		}
		out = append(out, r)
	}
	return out
}

// readResource reads the pack file a resource URI names (pack://, a URI a
// pack declares, or one a declared template matches) as the read_file tool
// does, through the session's Call: the same gate (the client is asked through elicitation,
// else only the policy can approve: an explicit auto_approve of read_file),
// the same audit row, the same confinement (no absolute path, no "..", no
// symlink out of the pack) and the same page limit. A file longer than one
// page is cut; _meta says so and where the rest starts.
func (c *conn) readResource(sess *chat.Session) mcp.ResourceHandler {
	return c.readRoundTrips(func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		target, err := c.resolve(sess, uri)
		if err != nil {
			return nil, err
		}
		page, err := c.gatedRead(ctx, sess, req.Session, uri, target.pack, target.file)
		if err != nil {
			return nil, err
		}
		rc := &mcp.ResourceContents{URI: uri, MIMEType: page.MIME}
		if target.mime != "" {
			rc.MIMEType = target.mime
		}
		if page.Encoding == chat.EncodingBase64 {
			if rc.Blob, err = base64.StdEncoding.DecodeString(page.Content); err != nil {
				return nil, fmt.Errorf("mcpserver: reading %s: %w", uri, err)
			}
		} else {
			rc.Text = page.Content
		}
		if page.Truncated {
			rc.Meta = mcp.Meta{"truncated": true, "size": page.Size, "next_offset": *page.NextOffset,
				"hint": "the file is longer than one page; read the rest with the read_file tool"}
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{rc}}, nil
	})
}

// gatedRead reads the first page of file in pack as the read_file base tool
// does, through the gate and into the audit log: the one way a resource's
// content leaves a pack (resources/read, and a prompt that carries one).
// uri names what the client asked for, in errors.
func (c *conn) gatedRead(ctx context.Context, sess *chat.Session, ss *mcp.ServerSession, uri, pack, file string) (chat.FilePage, error) {
	args, err := json.Marshal(map[string]any{"pack_id": pack, "path": file})
	if err != nil {
		return chat.FilePage{}, err
	}
	client := clientName(ss)
	sess.SetClient("mcp:" + client)
	approver, absent, waiter := c.approverFor(ss, client)
	approver = c.parked.approverIn(ctx, approver)
	res, err := sess.Call(ctx, chat.ToolReadFile, args, approver)
	if err != nil {
		return chat.FilePage{}, err // not audited: a protocol error, never content
	}
	if res.IsError {
		switch res.ErrorKind {
		case chat.ErrKindNotFound:
			return chat.FilePage{}, mcp.ResourceNotFoundError(uri)
		case chat.ErrKindPath, chat.ErrKindArguments:
			return chat.FilePage{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("mcpserver: %s: %s", uri, res.Content)}
		}
		msg := res.Content
		if !res.Decision.Approved {
			msg = c.s.explainDenial(msg, client, chat.ToolReadFile, absent, waiter)
		}
		return chat.FilePage{}, fmt.Errorf("mcpserver: reading %s: %s", uri, msg)
	}
	var page chat.FilePage
	if err := json.Unmarshal([]byte(res.Content), &page); err != nil {
		return chat.FilePage{}, fmt.Errorf("mcpserver: reading %s: %w", uri, err)
	}
	return page, nil
}

// maxCompletions is the most values one completion/complete returns (the
// protocol's cap).
const maxCompletions = 100

// complete suggests the variables of the pack://{pack}/{+path} template:
// attached pack names, then the files of the pack already chosen. Other
// references get no suggestions.
func (c *conn) complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	res := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	p := req.Params
	c.mu.Lock()
	sess := c.chat
	c.mu.Unlock()
	if sess == nil || p.Ref == nil || p.Ref.Type != "ref/resource" {
		return res, nil
	}
	var candidates []string
	if p.Ref.URI != resourceTemplate {
		for _, dt := range c.decl.templates {
			if dt.t.URITemplate == p.Ref.URI && len(dt.t.Vars) == 1 && dt.t.Vars[0] == p.Argument.Name {
				if pk, ok := sess.Pack(dt.pack); ok {
					candidates = dt.t.Values(pk.Dir)
				}
			}
		}
		return filterCompletions(res, candidates, p.Argument.Value), nil
	}
	switch p.Argument.Name {
	case "pack":
		for _, st := range sess.Packs() {
			candidates = append(candidates, st.Name)
		}
	case "path":
		if p.Context == nil {
			return res, nil
		}
		pk, ok := sess.Pack(p.Context.Arguments["pack"])
		if !ok {
			return res, nil
		}
		for _, f := range packFiles(pk) {
			candidates = append(candidates, f.rel)
		}
	}
	return filterCompletions(res, candidates, p.Argument.Value), nil
}

// filterCompletions puts into res the candidates that start with prefix,
// at most maxCompletions of them.
func filterCompletions(res *mcp.CompleteResult, candidates []string, prefix string) *mcp.CompleteResult {
	for _, v := range candidates {
		if strings.HasPrefix(v, prefix) {
			res.Completion.Values = append(res.Completion.Values, v)
		}
	}
	res.Completion.Total = len(res.Completion.Values)
	if len(res.Completion.Values) > maxCompletions {
		res.Completion.Values, res.Completion.HasMore = res.Completion.Values[:maxCompletions], true
	}
	return res
}
