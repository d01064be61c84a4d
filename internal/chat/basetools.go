package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/recipe"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// The base tools' definitions. Descriptions stay brief (spec 004): the
// bootstrap instructions and the packs' own docs carry the guidance.
var (
	openDocsTool = llm.Tool{
		Name:        ToolOpenDocs,
		Description: "Open a pack's instructions: returns its entry doc and the list of its other docs.\nCall this before using a pack. Pass docs to open some of the others too.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"pack_id":{"type":"string","description":"a pack_id from the Capability Packs list"},"docs":{"type":"array","items":{"type":"string"},"maxItems":5,"description":"other docs to open, as paths relative to the pack root"}},"required":["pack_id"],"additionalProperties":false}`),
	}
	readFileTool = llm.Tool{
		Name:        ToolReadFile,
		Description: "Read a file of a pack, one page at a time: text as UTF-8, binary as base64.\nWhen truncated is true, call again with offset set to next_offset.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"pack_id":{"type":"string"},"path":{"type":"string","description":"relative to the pack root, e.g. references/REFERENCE.md"},"offset":{"type":"integer","minimum":0,"description":"byte offset to start at (default 0)"},"length":{"type":"integer","minimum":1,"maximum":262144,"description":"bytes to read (default 32768)"}},"required":["pack_id","path"],"additionalProperties":false}`),
	}
	enableToolsTool = llm.Tool{
		Name:        ToolEnableTools,
		Description: "Enable a pack's own tools (from its tools.json).\nThey are offered as <pack_id>__<tool> from your next step on.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"pack_id":{"type":"string"}},"required":["pack_id"],"additionalProperties":false}`),
	}
	execTool = llm.Tool{
		Name:        ToolExec,
		Description: "Run a command a pack's docs call for, when no pack tool does it. Runs without a shell, in the chat workspace\n(or the pack root), and only if the pack holds a terminal_exec grant for the command. Returns stdout, stderr, exit_code.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"pack_id":{"type":"string"},"command":{"type":"string","description":"a program name, e.g. python3"},"args":{"type":"array","items":{"type":"string"}},"cwd_policy":{"type":"string","enum":["workspace","pack_root"],"description":"where to run (default workspace)"}},"required":["pack_id","command"],"additionalProperties":false}`),
	}
)

// BaseTools returns the definitions of open_docs, read_file and
// enable_tools, the base tools offered whatever the packs (exec_best_effort
// only comes with a pack that requests terminal_exec). The MCP server lists
// them even when no pack is served.
func BaseTools() []llm.Tool { return []llm.Tool{openDocsTool, readFileTool, enableToolsTool} }

// BaseToolNames lists the base tools. None of them can change grants,
// policy or approvals: the model never grants anything.
func BaseToolNames() []string {
	return []string{ToolOpenDocs, ToolReadFile, ToolEnableTools, ToolExec, ToolRunRecipe}
}

// decodeArgs decodes a tool's arguments strictly: unknown fields, trailing
// data and wrong types are errors that name the field.
func decodeArgs(tool string, raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%w: %s: field %q must be %s", ErrBadArguments, tool, te.Field, te.Type.String())
		}
		return fmt.Errorf("%w: %s: %s", ErrBadArguments, tool, strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: %s: the arguments hold more than one JSON object", ErrBadArguments, tool)
	}
	return nil
}

// lookup returns the attached pack id names.
func (s *Session) lookup(tool, id string) (*attached, error) {
	if id == "" {
		return nil, fmt.Errorf("%w: %s: pack_id is required", ErrBadArguments, tool)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.active[id]
	if !ok {
		return nil, fmt.Errorf("%w: pack %q is not attached to this chat; attached: %s", ErrNotFound, id, strings.Join(s.order, ", "))
	}
	return a, nil
}

// docRef is one doc in open_docs's result.
type docRef struct {
	Path      string `json:"path"`
	Content   string `json:"content,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	Error     string `json:"error,omitempty"`
}

func (s *Session) prepareOpenDocs(raw json.RawMessage) (*prepared, error) {
	var args struct {
		PackID string   `json:"pack_id"`
		Docs   []string `json:"docs"`
	}
	if err := decodeArgs(ToolOpenDocs, raw, &args); err != nil {
		return nil, err
	}
	if len(args.Docs) > 5 {
		return nil, fmt.Errorf("%w: open_docs: at most 5 docs at a time", ErrBadArguments)
	}
	a, err := s.lookup(ToolOpenDocs, args.PackID)
	if err != nil {
		return nil, err
	}
	run := func(ctx context.Context, _ runtime.Granted) (json.RawMessage, int, error) {
		read := docReader(a.pack)
		body, truncated, err := read(a.pack.EntryDoc, a.pack.Body)
		if err != nil {
			return nil, 0, err
		}
		out := struct {
			PackID         string   `json:"pack_id"`
			EntryDoc       docRef   `json:"entry_doc"`
			AdditionalDocs []docRef `json:"additional_docs,omitempty"`
			OtherDocs      []string `json:"other_docs,omitempty"`
			Recipes        string   `json:"recipes,omitempty"` // recipe.Describe: what run_recipe can run
		}{PackID: a.pack.Name, EntryDoc: docRef{Path: a.pack.EntryDoc, Content: strings.TrimLeft(body, "\n"), Truncated: truncated}, Recipes: recipe.Describe(a.pack)}
		for _, d := range args.Docs {
			content, truncated, err := read(d, 0)
			ref := docRef{Path: path.Clean(d), Content: content, Truncated: truncated}
			if err != nil {
				ref.Error = err.Error()
			}
			out.AdditionalDocs = append(out.AdditionalDocs, ref)
		}
		for _, d := range listDocs(a.pack) {
			if !containsClean(args.Docs, d) {
				out.OtherDocs = append(out.OtherDocs, d)
			}
		}
		if err := s.mark(ctx, a, true, false); err != nil {
			return nil, 0, err
		}
		b, err := json.Marshal(out)
		return b, 0, err
	}
	return &prepared{req: readsPack(a, ToolOpenDocs, []capability.Name{capability.FilesystemRead},
		append([]string{a.pack.Name + "/" + a.pack.EntryDoc}, prefixAll(a.pack.Name+"/", args.Docs)...), run)}, nil
}

// docReader reads the docs of one open_docs call: each up to MaxDocBytes
// and, when the pack's skill.toml sets [knowledge] max_context_tokens, all
// together up to that many tokens (EstimateTokens' four bytes each). A
// doc cut short says how to read the rest.
func docReader(p *packs.Pack) func(rel string, offset int64) (string, bool, error) {
	tokens := 0
	if p.Manifest != nil {
		tokens = p.Manifest.Knowledge.MaxContextTokens
	}
	if tokens <= 0 {
		return func(rel string, offset int64) (string, bool, error) { return readDoc(p, rel, offset) }
	}
	left := int64(tokens) * bytesPerToken
	capped := fmt.Sprintf("the pack caps open_docs at %d tokens (max_context_tokens in skill.toml)", tokens)
	return func(rel string, offset int64) (string, bool, error) {
		if left >= MaxDocBytes {
			content, truncated, err := readDoc(p, rel, offset)
			left -= int64(len(content))
			return content, truncated, err
		}
		content, truncated, err := readDocLimit(p, rel, offset, left, capped)
		left = max(0, left-int64(len(content)))
		return content, truncated, err
	}
}

func prefixAll(prefix string, l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = prefix + s
	}
	return out
}

func containsClean(l []string, p string) bool {
	for _, s := range l {
		if path.Clean(s) == p {
			return true
		}
	}
	return false
}

func (s *Session) prepareReadFile(raw json.RawMessage) (*prepared, error) {
	var args struct {
		PackID string `json:"pack_id"`
		Path   string `json:"path"`
		Offset int64  `json:"offset"`
		Length int64  `json:"length"`
	}
	if err := decodeArgs(ToolReadFile, raw, &args); err != nil {
		return nil, err
	}
	if args.Path == "" {
		return nil, fmt.Errorf("%w: read_file: path is required", ErrBadArguments)
	}
	if args.Offset < 0 || args.Length < 0 || args.Length > MaxReadLength {
		return nil, fmt.Errorf("%w: read_file: offset must be ≥ 0 and length between 1 and %d", ErrBadArguments, MaxReadLength)
	}
	a, err := s.lookup(ToolReadFile, args.PackID)
	if err != nil {
		return nil, err
	}
	// A path that leaves the pack is refused before the person is asked;
	// ReadPackFile checks it again when it opens the file.
	if _, err := packs.SafeJoin(a.pack.Dir, args.Path); err != nil {
		return nil, err
	}
	run := func(context.Context, runtime.Granted) (json.RawMessage, int, error) {
		page, err := ReadPackFile(a.pack, args.Path, args.Offset, args.Length)
		if err != nil {
			return nil, 0, err
		}
		b, err := json.Marshal(page)
		return b, 0, err
	}
	return &prepared{req: readsPack(a, ToolReadFile, []capability.Name{capability.FilesystemRead}, []string{a.pack.Name + "/" + args.Path}, run)}, nil
}

func (s *Session) prepareEnableTools(raw json.RawMessage) (*prepared, error) {
	var args struct {
		PackID string `json:"pack_id"`
	}
	if err := decodeArgs(ToolEnableTools, raw, &args); err != nil {
		return nil, err
	}
	a, err := s.lookup(ToolEnableTools, args.PackID)
	if err != nil {
		return nil, err
	}
	run := func(ctx context.Context, _ runtime.Granted) (json.RawMessage, int, error) {
		// Load the pack again: tools.json is validated as it is now, and the
		// installed files are checked against the lock once more.
		fresh, ref, err := s.deps.Catalog.Pack(ctx, a.pack.Name)
		if err != nil {
			return nil, 0, err
		}
		if !fresh.HasTools() {
			return nil, 0, fmt.Errorf("%w: pack %s has no tools.json: follow its docs, and use exec_best_effort where they say to run a command", ErrNotFound, fresh.Name)
		}
		if err := s.fitsBudget(fresh); err != nil {
			return nil, 0, err
		}
		type toolInfo struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		}
		out := struct {
			Enabled bool       `json:"enabled"`
			PackID  string     `json:"pack_id"`
			Tools   []toolInfo `json:"tools"`
		}{Enabled: true, PackID: fresh.Name}
		for _, t := range fresh.Tools {
			out.Tools = append(out.Tools, toolInfo{Name: PackToolName(fresh.Name, t.Name), Description: t.Description})
		}
		before := s.toolsKey()
		s.update(fresh.Name, func(n *attached) { n.pack, n.ref = fresh, ref })
		if err := s.mark(ctx, a, false, true); err != nil {
			return nil, 0, err
		}
		s.fireIfChanged(before)
		b, err := json.Marshal(out)
		return b, 0, err
	}
	return &prepared{req: readsPack(a, ToolEnableTools, nil, []string{a.pack.Name + "/tools.json"}, run)}, nil
}

// mark records that a pack's docs were opened or its tools enabled.
func (s *Session) mark(ctx context.Context, a *attached, opened, enabled bool) error {
	s.update(a.pack.Name, func(n *attached) {
		n.opened = n.opened || opened
		n.enabled = n.enabled || enabled
	})
	return s.db.savePack(context.WithoutCancel(ctx), s.id, a.pack.Name, opened, enabled)
}

// update changes the attached pack name. An attached value is never
// changed in place: a changed copy replaces it, so a call that looked one
// up (and reads it without the lock) sees it whole, as it was.
func (s *Session) update(name string, change func(*attached)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.active[name]
	if !ok {
		return
	}
	n := *cur
	change(&n)
	s.active[name] = &n
}

func (s *Session) prepareExec(raw json.RawMessage) (*prepared, error) {
	var args struct {
		PackID    string   `json:"pack_id"`
		Command   string   `json:"command"`
		Args      []string `json:"args"`
		CwdPolicy string   `json:"cwd_policy"`
	}
	if err := decodeArgs(ToolExec, raw, &args); err != nil {
		return nil, err
	}
	switch {
	case args.Command == "":
		return nil, fmt.Errorf("%w: exec_best_effort: command is required", ErrBadArguments)
	case args.CwdPolicy != "" && args.CwdPolicy != "workspace" && args.CwdPolicy != "pack_root":
		return nil, fmt.Errorf("%w: exec_best_effort: cwd_policy is workspace or pack_root", ErrBadArguments)
	}
	a, err := s.lookup(ToolExec, args.PackID)
	if err != nil {
		return nil, err
	}
	dir := s.workspace
	if args.CwdPolicy == "pack_root" {
		dir = a.pack.Dir
	}
	argv := append([]string{args.Command}, args.Args...)
	run := func(ctx context.Context, g runtime.Granted) (json.RawMessage, int, error) {
		// The Call carries the gate's approval: hostfns.Exec starts nothing
		// without one that holds for this invocation and grant.
		// The workspace stays the chat's, writable; the pack root, when it
		// is the working directory, stays read-only.
		call := g.HostCall(a.pack, ToolExec, s.workspace)
		call.Logger = s.log
		r, err := hostfns.Exec(ctx, call, argv, hostfns.ExecOptions{Dir: dir})
		out, merr := json.Marshal(struct {
			OK        bool   `json:"ok"`
			ExitCode  int    `json:"exit_code"`
			Stdout    string `json:"stdout"`
			Stderr    string `json:"stderr"`
			Truncated bool   `json:"truncated,omitempty"`
		}{OK: err == nil && r.Status() == 0, ExitCode: r.ExitCode, Stdout: string(bytes.ToValidUTF8(r.Stdout, []byte("\uFFFD"))),
			Stderr: string(bytes.ToValidUTF8(r.Stderr, []byte("\uFFFD"))), Truncated: r.Truncated})
		if merr != nil {
			return nil, r.Status(), merr
		}
		return out, r.Status(), err
	}
	req := builtin(a, ToolExec, []capability.Name{capability.TerminalExec},
		[]string{"command " + strings.Join(argv, " "), "cwd " + cwdName(args.CwdPolicy)}, run)
	req.Builtin.Granted = true
	// A command the grant does not cover is refused (and recorded) before
	// the person is asked to approve what could not run.
	req.Builtin.Check = func(g capability.Grant) []capability.Decision {
		return []capability.Decision{g.Command(args.Command)}
	}
	return &prepared{writes: true, req: req}, nil
}

func cwdName(policy string) string {
	if policy == "" {
		return "workspace"
	}
	return policy
}
