package packs

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
	"golang.org/x/mod/semver"
)

// Manifest is a pack's skill.toml (spec 001): who it is and what it asks for.
// Every key it holds acts: a key of spec 001 that packs does not act on is
// refused at load (rule manifest-unsupported), never silently accepted.
type Manifest struct {
	ID, Name, Version, Description string
	Authors                        []string
	License                        string
	// Repository, Documentation, Homepage and Keywords describe the pack
	// to people (packs info); they change nothing at run time.
	Repository, Documentation, Homepage string
	Keywords                            []string
	// APIVersion is the manifest format the pack is written for; a pack
	// that needs a newer one than APIVersion does not load.
	APIVersion   string
	Capabilities capability.Request
	// DefaultConfirmation is [recipes].default_confirmation: the
	// confirmation level of a recipe step that sets none ("" for prompt).
	DefaultConfirmation string
	Knowledge           Knowledge
	Provides            Provides
	Platform            Platform
	Dependencies        []Dependency
	// Category and Icon are [skill].category and [skill].icon: how a front
	// end groups and draws the pack (spec 003); both may be empty.
	Category, Icon string
	// Status is [skill].status: StatusAvailable unless the pack says
	// otherwise.
	Status Status

	file string // the display name of skill.toml, for findings at add
	doc  []byte // its text, to place those findings
}

// Status is a pack's availability (spec 003's CapabilityStatus).
type Status string

// The statuses [skill].status accepts.
const (
	StatusAvailable  Status = "available"
	StatusComingSoon Status = "coming_soon"
	StatusDeprecated Status = "deprecated"
)

// validStatus reports whether s is one of the statuses [skill].status accepts.
func validStatus(s Status) bool {
	return s == StatusAvailable || s == StatusComingSoon || s == StatusDeprecated
}

// Knowledge is [knowledge]: how a chat shows the pack to the model.
type Knowledge struct {
	// Priority orders the chat's metadata block: higher first, ties in
	// attachment order.
	Priority int
	// MaxContextTokens caps what open_docs returns for the pack (0: the
	// chat's own cap); the rest stays readable through read_file.
	MaxContextTokens int
}

// Provides is [provides]: what the pack says it ships, checked against
// what it does ship. Nil means not declared.
type Provides struct {
	Knowledge, Recipes, Executable *bool
}

// Platform is [platform]: where the pack can work. OS and Arch hold Go's
// names (GOOS, GOARCH); empty means any.
type Platform struct {
	OS, Arch      []string
	RequiredTools []string // programs that must be installed (CheckHost)
	OptionalTools []string // programs the pack uses when present
}

// Dependency is one entry of [dependencies]: another pack, by its skill.toml
// id or its name, with a version constraint.
type Dependency struct {
	Pack       string
	Constraint string // as written; "" or "*" for any version
	Optional   bool
	cons       constraint
	path       []string // the key's TOML path, for findings
}

// APIVersion is the newest manifest format this build reads. A manifest's
// api_version with the same major and a minor up to this one loads.
const APIVersion = "1.0"

const (
	manifestFile     = "skill.toml"
	maxManifestBytes = 256 << 10
	// maxMemoryPages is the wasm32 ceiling: 4 GiB in 64 KiB pages.
	maxMemoryPages = 65536
)

// The shadow structs mirror spec 001 key by key so that strict decoding
// rejects anything else. The keys of spec 001 that packs does not act on
// are decoded as any, only to be found and refused (unsupportedKeys).
type manifestDoc struct {
	Skill        skillTable        `toml:"skill"`
	Provides     providesTable     `toml:"provides"`
	Knowledge    knowledgeTable    `toml:"knowledge"`
	Recipes      recipesTable      `toml:"recipes"`
	Executable   any               `toml:"executable"`
	Capabilities capabilitiesTable `toml:"capabilities"`
	Limits       limitsTable       `toml:"limits"`
	Dependencies map[string]any    `toml:"dependencies"`
	Suggestions  any               `toml:"suggestions"`
	Features     any               `toml:"features"`
	Platform     platformTable     `toml:"platform"`
	Secrets      secretsTable      `toml:"secrets"`
}

// secretsTable is [secrets]: [[secrets.inject]] binds a requested secret
// to the requests of one host (docs/secrets.md).
type secretsTable struct {
	Inject []injectTable `toml:"inject"`
}

type injectTable struct {
	Name   string `toml:"name"`
	Host   string `toml:"host"`
	Header string `toml:"header"`
	Query  string `toml:"query"`
	Value  string `toml:"value"`
}

type skillTable struct {
	ID             string   `toml:"id"`
	Name           string   `toml:"name"`
	Version        string   `toml:"version"`
	Description    string   `toml:"description"`
	Authors        []string `toml:"authors"`
	License        string   `toml:"license"`
	Repository     string   `toml:"repository"`
	Documentation  string   `toml:"documentation"`
	Homepage       string   `toml:"homepage"`
	Keywords       []string `toml:"keywords"`
	APIVersion     string   `toml:"api_version"`
	MinCaroVersion any      `toml:"min_caro_version"`
	Category       string   `toml:"category"`
	Icon           string   `toml:"icon"`
	Status         string   `toml:"status"`
}

type providesTable struct {
	Knowledge  *bool `toml:"knowledge"`
	Recipes    *bool `toml:"recipes"`
	Executable *bool `toml:"executable"`
}

type knowledgeTable struct {
	Topics           any    `toml:"topics"`
	Priority         *int64 `toml:"priority"`
	MaxContextTokens *int64 `toml:"max_context_tokens"`
}

type recipesTable struct {
	Files               any    `toml:"files"`
	DefaultConfirmation string `toml:"default_confirmation"`
}

type capabilitiesTable struct {
	TerminalExec    *execTable `toml:"terminal_exec"`
	FilesystemRead  []string   `toml:"filesystem_read"`
	FilesystemWrite []string   `toml:"filesystem_write"`
	Network         []string   `toml:"network"`
	EnvRead         []string   `toml:"env_read"`
	SecretsAccess   any        `toml:"secrets_access"` // false, or a list of secret names and {name, reveal} tables
	AskPerson       bool       `toml:"ask_person"`     // the tools may ask the person questions
}

type execTable struct {
	Allowed  *bool    `toml:"allowed"`
	Commands []string `toml:"commands"`
	Blocked  []string `toml:"blocked"`
}

type limitsTable struct {
	MemoryMB    *int64  `toml:"memory_mb"`
	MemoryPages *int64  `toml:"memory_pages"`
	TimeoutMS   *int64  `toml:"timeout_ms"`
	Timeout     *string `toml:"timeout"`
	OutputBytes *int64  `toml:"output_bytes"`
	InputBytes  *int64  `toml:"input_bytes"`
}

type platformTable struct {
	OS            []string `toml:"os"`
	Arch          []string `toml:"arch"`
	RequiredTools []string `toml:"required_tools"`
	OptionalTools []string `toml:"optional_tools"`
}

// manifestParser turns one skill.toml into a Manifest and findings.
type manifestParser struct {
	doc  []byte
	file string // display name for findings
	dir  string // absolute pack root, for [executable].module; "" skips file checks
	rep  *reporter
}

// parseManifest decodes skill.toml strictly and checks every capability
// pattern, so nothing downstream can fail on one. It returns nil when the
// document cannot be decoded at all.
func parseManifest(doc []byte, file, dir string, rep *reporter) *Manifest {
	p := &manifestParser{doc: doc, file: file, dir: dir, rep: rep}
	var md manifestDoc
	err := decodeTOML(doc, &md)
	var strict *toml.StrictMissingError
	var de *toml.DecodeError
	switch {
	case err == nil:
	case errors.As(err, &strict):
		for _, e := range strict.Errors {
			line, _ := e.Position()
			key := e.Key()
			name := ""
			if len(key) > 0 {
				name = key[len(key)-1]
			}
			rep.errorf(file, line, "toml-unknown-key", "%q is not a spec 001 manifest key: fix its spelling or remove it", name)
		}
	case errors.As(err, &de):
		line, _ := de.Position()
		if msg, ok := typeMismatch(de); ok {
			rep.errorf(file, line, "toml-type", "%s: %s", strings.Join(de.Key(), "."), msg)
		} else {
			rep.errorf(file, line, "toml-syntax", "%s: fix the TOML syntax", strings.TrimPrefix(de.Error(), "toml: "))
		}
		return nil
	default:
		rep.errorf(file, 0, "toml-syntax", "%s: fix the TOML syntax", strings.TrimPrefix(err.Error(), "toml: "))
		return nil
	}

	m := &Manifest{
		ID: md.Skill.ID, Name: md.Skill.Name, Version: md.Skill.Version, Description: md.Skill.Description,
		Authors: md.Skill.Authors, License: md.Skill.License, APIVersion: md.Skill.APIVersion,
		Repository: md.Skill.Repository, Documentation: md.Skill.Documentation, Homepage: md.Skill.Homepage,
		Keywords: md.Skill.Keywords, file: file, doc: doc,
		Category: md.Skill.Category, Icon: md.Skill.Icon, Status: StatusAvailable,
	}
	if st := Status(md.Skill.Status); st != "" {
		if validStatus(st) {
			m.Status = st
		} else {
			p.errorf([]string{"skill", "status"}, -1, "manifest-status", "status %q is not available, coming_soon or deprecated", md.Skill.Status)
		}
	}
	p.unsupported(md)
	if m.Version != "" {
		if err := checkSemver(m.Version); err != nil {
			p.errorf([]string{"skill", "version"}, -1, "manifest-version", "version %q %v: write MAJOR.MINOR.PATCH, as in \"1.2.0\"", m.Version, err)
		}
	}
	if m.APIVersion != "" {
		if err := checkAPI(m.APIVersion); err != nil {
			p.errorf([]string{"skill", "api_version"}, -1, "api-version", "api_version %q %v", m.APIVersion, err)
		}
	}
	if dc := md.Recipes.DefaultConfirmation; dc != "" {
		if validConfirmation(dc) {
			m.DefaultConfirmation = dc
		} else {
			p.errorf([]string{"recipes", "default_confirmation"}, -1, "recipe-confirmation", "default_confirmation %q is not auto, prompt or always", dc)
		}
	}
	m.Provides = Provides{Knowledge: md.Provides.Knowledge, Recipes: md.Provides.Recipes, Executable: md.Provides.Executable}
	if k := md.Provides.Knowledge; k != nil && !*k {
		p.errorf([]string{"provides", "knowledge"}, -1, "provides-mismatch", "knowledge = false, but every pack's entry doc is knowledge the model reads: remove the key")
	}
	m.Knowledge = p.knowledge(md.Knowledge)
	m.Platform = p.platform(md.Platform, md.Capabilities.TerminalExec)
	m.Dependencies = p.dependencies(md.Dependencies)
	m.Capabilities = p.request(md.Capabilities)
	m.Capabilities.SecretsInject = p.inject(md.Secrets.Inject, m.Capabilities)
	m.Capabilities.Limits = p.limits(md.Limits)
	// Parsed once here, not at every call's grant; a pattern that does not
	// parse was reported above, and resolving then reports it again.
	if c, err := m.Capabilities.Compile(); err == nil {
		m.Capabilities = c
	}
	return m
}

// decodeTOML decodes strictly. go-toml reads untrusted input here, so a
// panic inside it becomes an error.
func decodeTOML(doc []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("toml: the parser failed on this input: %v", r)
		}
	}()
	return toml.NewDecoder(bytes.NewReader(doc)).DisallowUnknownFields().Decode(v)
}

func (p *manifestParser) errorf(path []string, index int, rule, format string, args ...any) {
	p.rep.errorf(p.file, p.line(path, index), rule, format, args...)
}

// capList is one list of capability entries in [capabilities].
type capList struct {
	name capability.Name
	key  string // dotted key under [capabilities]
	in   []string
	out  *[]string
}

// request converts the [capabilities] table and validates every entry on
// its own, so each bad pattern gets its own finding at its own line.
func (p *manifestParser) request(c capabilitiesTable) capability.Request {
	r := capability.Request{AskPerson: c.AskPerson}
	lists := []capList{
		{capability.FilesystemRead, "filesystem_read", c.FilesystemRead, &r.FilesystemRead},
		{capability.FilesystemWrite, "filesystem_write", c.FilesystemWrite, &r.FilesystemWrite},
		{capability.Network, "network", c.Network, &r.Network},
		{capability.EnvRead, "env_read", c.EnvRead, &r.EnvRead},
	}
	if te := c.TerminalExec; te != nil {
		allowed := te.Allowed == nil || *te.Allowed
		if allowed && len(te.Commands) == 0 {
			p.errorf([]string{"capabilities", "terminal_exec"}, -1, "capability-invalid",
				"terminal_exec allows no command: list the programs in commands = [...] (an empty list does not mean every command here)")
		}
		if allowed {
			lists = append(lists, capList{capability.TerminalExec, "terminal_exec.commands", te.Commands, &r.TerminalExec.Commands})
		}
		lists = append(lists, capList{capability.TerminalExec, "terminal_exec.blocked", te.Blocked, &r.TerminalExec.Blocked})
		for _, cmd := range te.Commands {
			if i := slices.Index(te.Blocked, cmd); allowed && i >= 0 {
				p.errorf([]string{"capabilities", "terminal_exec", "blocked"}, i, "capability-invalid",
					"%q is both allowed and blocked: remove it from one list", cmd)
			}
		}
	}
	if secrets, ok := p.secrets(c.SecretsAccess); ok {
		lists = append(lists, capList{capability.SecretsAccess, "secrets_access", secrets, &r.SecretsAccess})
	}
	for _, l := range lists {
		path := append([]string{"capabilities"}, strings.Split(l.key, ".")...)
		for i, s := range l.in {
			if err := validateOne(l.name, l.key, s); err != nil {
				reason := err.Error()
				var pe *capability.PatternError
				if errors.As(err, &pe) {
					reason = pe.Reason
				}
				p.errorf(path, i, "capability-pattern", "%s entry %q: %s", l.key, s, reason)
				continue
			}
			*l.out = append(*l.out, s)
		}
	}
	return r
}

// validateOne checks a single capability entry through capability.Request,
// which owns the pattern rules.
func validateOne(n capability.Name, key, s string) error {
	var r capability.Request
	switch {
	case key == "terminal_exec.blocked":
		r.TerminalExec.Blocked = []string{s}
	case n == capability.TerminalExec:
		r.TerminalExec.Commands = []string{s}
	case n == capability.FilesystemRead:
		r.FilesystemRead = []string{s}
	case n == capability.FilesystemWrite:
		r.FilesystemWrite = []string{s}
	case n == capability.Network:
		r.Network = []string{s}
	case n == capability.EnvRead:
		r.EnvRead = []string{s}
	case n == capability.SecretsAccess:
		r.SecretsAccess = []string{s}
	}
	return r.Validate()
}

// secrets reads secrets_access: false (or absent) asks for nothing, a list
// names the secrets. true is refused: a pack must say which secrets. An
// entry is a name, or a table { name = "X", reveal = true } asking for the
// value itself, which becomes "reveal:X".
func (p *manifestParser) secrets(v any) ([]string, bool) {
	path := []string{"capabilities", "secrets_access"}
	switch v := v.(type) {
	case nil:
		return nil, false
	case bool:
		if v {
			p.errorf(path, -1, "capability-invalid", "secrets_access = true names no secret: list them, as in secrets_access = [\"GITHUB_TOKEN\"]")
		}
		return nil, false
	case []any:
		out := make([]string, 0, len(v))
		for i, item := range v {
			s, ok := p.secretEntry(path, i, item)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	p.errorf(path, -1, "toml-type", "secrets_access is false or a list of secret names, not a TOML %s", tomlKind(v))
	return nil, false
}

// secretEntry reads one secrets_access entry: a name, or a table with a
// name and reveal, and nothing else.
func (p *manifestParser) secretEntry(path []string, i int, item any) (string, bool) {
	switch item := item.(type) {
	case string:
		return item, true
	case map[string]any:
		name, ok := item["name"].(string)
		if !ok {
			p.errorf(path, i, "toml-type", "a secrets_access table needs name = \"SECRET\" (a string)")
			return "", false
		}
		reveal := false
		for k, v := range item {
			switch k {
			case "name":
			case "reveal":
				if reveal, ok = v.(bool); !ok {
					p.errorf(path, i, "toml-type", "secrets_access %s: reveal is a boolean", name)
					return "", false
				}
			default:
				p.errorf(path, i, "toml-unknown-key", "secrets_access %s: %q is not a key here (name, reveal)", name, k)
				return "", false
			}
		}
		if reveal {
			return capability.RevealPrefix + name, true
		}
		return name, true
	}
	p.errorf(path, i, "toml-type", "secrets_access entries are secret names (strings) or { name, reveal } tables, not a TOML %s", tomlKind(item))
	return "", false
}

// inject converts [[secrets.inject]], checking each binding on its own
// against the request (capability.SecretInjection): a requested secret, a
// host within the network request, one header or query parameter, one
// placeholder.
func (p *manifestParser) inject(list []injectTable, r capability.Request) []capability.SecretInjection {
	var out []capability.SecretInjection
	for i, t := range list {
		in := capability.SecretInjection{Name: t.Name, Host: t.Host, Header: t.Header, Query: t.Query, Value: t.Value}
		one := capability.Request{Network: r.Network, SecretsAccess: r.SecretsAccess, SecretsInject: []capability.SecretInjection{in}}
		if err := one.Validate(); err != nil {
			reason := err.Error()
			var ie *capability.InjectionError
			if errors.As(err, &ie) {
				reason = ie.Reason
			}
			p.rep.errorf(p.file, arrayTableLine(p.doc, []string{"secrets", "inject"}, i), "secrets-inject", "[[secrets.inject]] %d (%s): %s", i+1, t.Name, reason)
			continue
		}
		out = append(out, in)
	}
	return out
}

// arrayTableLine is the line of the index-th [[path]] header, or of the
// closest key when the array is written inline.
func arrayTableLine(doc []byte, path []string, index int) (line int) {
	defer func() {
		if recover() != nil {
			line = 0
		}
	}()
	var ps unstable.Parser
	ps.Reset(doc)
	n := 0
	for ps.NextExpression() {
		e := ps.Expression()
		if e.Kind == unstable.ArrayTable && slices.Equal(keyOf(e), path) {
			if n == index {
				return lineAt(doc, e.Key())
			}
			n++
		}
	}
	return tomlLine(doc, path, index)
}

// limits converts [limits]. Zero fields mean the runtime's defaults.
func (p *manifestParser) limits(t limitsTable) capability.Limits {
	var l capability.Limits
	key := func(k string) []string { return []string{"limits", k} }
	switch {
	case t.MemoryMB != nil && t.MemoryPages != nil:
		p.errorf(key("memory_pages"), -1, "limits", "memory_mb and memory_pages are both set: keep one")
	case t.MemoryMB != nil:
		if *t.MemoryMB < 1 || *t.MemoryMB > maxMemoryPages/16 {
			p.errorf(key("memory_mb"), -1, "limits", "memory_mb = %d is out of range: use 1 to %d", *t.MemoryMB, maxMemoryPages/16)
		} else {
			l.MemoryPages = uint32(*t.MemoryMB * 16)
		}
	case t.MemoryPages != nil:
		if *t.MemoryPages < 1 || *t.MemoryPages > maxMemoryPages {
			p.errorf(key("memory_pages"), -1, "limits", "memory_pages = %d is out of range: use 1 to %d (64 KiB each)", *t.MemoryPages, maxMemoryPages)
		} else {
			l.MemoryPages = uint32(*t.MemoryPages)
		}
	}
	switch {
	case t.TimeoutMS != nil && t.Timeout != nil:
		p.errorf(key("timeout"), -1, "limits", "timeout and timeout_ms are both set: keep one")
	case t.TimeoutMS != nil:
		if *t.TimeoutMS < 1 || *t.TimeoutMS > int64(time.Hour/time.Millisecond) {
			p.errorf(key("timeout_ms"), -1, "limits", "timeout_ms = %d is out of range: use 1 to 3600000", *t.TimeoutMS)
		} else {
			l.Timeout = time.Duration(*t.TimeoutMS) * time.Millisecond
		}
	case t.Timeout != nil:
		d, err := time.ParseDuration(*t.Timeout)
		switch {
		case err != nil:
			p.errorf(key("timeout"), -1, "limits", "timeout %q is not a duration: write it as \"30s\" or \"2m\"", *t.Timeout)
		case d <= 0 || d > time.Hour:
			p.errorf(key("timeout"), -1, "limits", "timeout %q is out of range: use more than 0 and at most 1h", *t.Timeout)
		default:
			l.Timeout = d
		}
	}
	for _, b := range []struct {
		k   string
		v   *int64
		out *int64
	}{{"output_bytes", t.OutputBytes, &l.OutputBytes}, {"input_bytes", t.InputBytes, &l.InputBytes}} {
		if b.v == nil {
			continue
		}
		if *b.v < 1 {
			p.errorf(key(b.k), -1, "limits", "%s = %d must be positive", b.k, *b.v)
			continue
		}
		*b.out = *b.v
	}
	return l
}

// line finds the line of a key (index < 0) or of the index-th element of its
// array value. When the key is not found, it falls back to the closest
// enclosing table, then to 0.
func (p *manifestParser) line(path []string, index int) int {
	return tomlLine(p.doc, path, index)
}

// tomlLine walks the document with go-toml's parser to locate a key. It is
// only called when there is something to report, so findings cost nothing
// on a clean manifest.
func tomlLine(doc []byte, path []string, index int) (line int) {
	defer func() {
		if recover() != nil {
			line = 0
		}
	}()
	var ps unstable.Parser
	ps.Reset(doc)
	var table []string
	best := 0
	for ps.NextExpression() {
		e := ps.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keyOf(e)
			if slices.Equal(table, path) && e.Kind == unstable.Table {
				return lineAt(doc, e.Key())
			}
			if isPrefix(table, path) && len(table) > 0 {
				best = lineAt(doc, e.Key())
			}
		case unstable.KeyValue:
			if l := findKey(doc, e, table, path, index); l > 0 {
				return l
			}
		}
	}
	return best
}

func findKey(doc []byte, kv *unstable.Node, table, path []string, index int) int {
	full := append(slices.Clone(table), keyOf(kv)...)
	if len(full) > len(path) && isPrefix(path, full) {
		return lineAt(doc, kv.Key()) // a dotted key inside path's table
	}
	if !isPrefix(full, path) {
		return 0
	}
	v := kv.Value()
	if len(full) == len(path) {
		if index >= 0 && v.Kind == unstable.Array {
			it := v.Children()
			for i := 0; it.Next(); i++ {
				if i == index && it.Node().Raw.Length > 0 {
					return offsetLine(doc, int(it.Node().Raw.Offset))
				}
			}
		}
		return lineAt(doc, kv.Key())
	}
	if v.Kind == unstable.InlineTable {
		it := v.Children()
		for it.Next() {
			if it.Node().Kind == unstable.KeyValue {
				if l := findKey(doc, it.Node(), full, path, index); l > 0 {
					return l
				}
			}
		}
		return lineAt(doc, kv.Key())
	}
	return 0
}

func keyOf(n *unstable.Node) []string {
	var out []string
	it := n.Key()
	for it.Next() {
		out = append(out, string(it.Node().Data))
	}
	return out
}

func lineAt(doc []byte, it unstable.Iterator) int {
	if it.Next() {
		return offsetLine(doc, int(it.Node().Raw.Offset))
	}
	return 0
}

func offsetLine(doc []byte, off int) int {
	if off > len(doc) {
		off = len(doc)
	}
	return 1 + bytes.Count(doc[:off], []byte("\n"))
}

func isPrefix(prefix, path []string) bool {
	return len(prefix) <= len(path) && slices.Equal(prefix, path[:len(prefix)])
}

// typeMismatch rewrites go-toml's "cannot decode TOML string into struct
// field ... of type int" into words a pack author knows.
func typeMismatch(de *toml.DecodeError) (string, bool) {
	msg := de.Error()
	_, rest, ok := strings.Cut(msg, "cannot decode TOML ")
	if !ok {
		return "", false
	}
	got, _, _ := strings.Cut(rest, " into")
	want := "another type"
	if i := strings.LastIndex(rest, " of type "); i >= 0 {
		want = goTypeWords(rest[i+len(" of type "):])
	}
	return fmt.Sprintf("a TOML %s where %s is expected", got, want), true
}

func goTypeWords(t string) string {
	switch {
	case t == "string" || t == "*string":
		return "a string"
	case t == "bool" || t == "*bool":
		return "a boolean"
	case strings.Contains(t, "int"):
		return "an integer"
	case t == "[]string":
		return "an array of strings"
	case strings.HasPrefix(t, "map[") || strings.Contains(t, "struct") || strings.HasPrefix(t, "packs."):
		return "a table"
	}
	return "a " + t
}

func tomlKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "float"
	case map[string]any:
		return "table"
	case bool:
		return "boolean"
	case []any:
		return "array"
	}
	return "value"
}

// checkSemver accepts a semantic version 2.0.0 (semver.org) in full:
// MAJOR.MINOR.PATCH, optionally followed by a pre-release and build
// metadata, with no leading zeros in a number or a numeric pre-release
// identifier, and no "v" in front. It uses golang.org/x/mod/semver, which
// wants the "v" and accepts "v1" and "v1.2" as shorthands, so the version
// must also be its own canonical form. The error completes "version %q ...".
func checkSemver(v string) error {
	sv := "v" + v
	if !semver.IsValid(sv) {
		return errors.New("is not a semantic version")
	}
	core, _, _ := strings.Cut(sv, "+")
	if semver.Canonical(sv) != core {
		return errors.New("does not have three numbers")
	}
	return nil
}

// checkAPI accepts an api_version "MAJOR" or "MAJOR.MINOR" that this build
// reads: APIVersion's major, and a minor no newer than APIVersion's. The
// error completes "api_version %q ...".
func checkAPI(v string) error {
	major, minor, hasMinor := strings.Cut(v, ".")
	haveMajor, haveMinor, _ := strings.Cut(APIVersion, ".")
	mj, err := strconv.ParseUint(major, 10, 32)
	if err != nil || major != strconv.FormatUint(mj, 10) {
		return fmt.Errorf("is not MAJOR or MAJOR.MINOR: write %q", APIVersion)
	}
	mn := uint64(0)
	if hasMinor {
		if mn, err = strconv.ParseUint(minor, 10, 32); err != nil || minor != strconv.FormatUint(mn, 10) {
			return fmt.Errorf("is not MAJOR or MAJOR.MINOR: write %q", APIVersion)
		}
	}
	hj, _ := strconv.ParseUint(haveMajor, 10, 32)
	hn, _ := strconv.ParseUint(haveMinor, 10, 32)
	switch {
	case mj != hj:
		return fmt.Errorf("is not supported: this build of packs reads manifests of api_version %s.x up to %s", haveMajor, APIVersion)
	case mn > hn:
		return fmt.Errorf("is newer than this build of packs reads (%s): update packs, or write %q if the pack needs nothing newer", APIVersion, APIVersion)
	}
	return nil
}

// unsupportedKey is a key of spec 001 that packs does not act on, and what
// an author does instead.
type unsupportedKey struct {
	path []string
	set  func(*manifestDoc) bool
	do   string
}

// unsupportedKeys are refused wherever they appear, so that no key of a
// manifest is silently ignored.
var unsupportedKeys = []unsupportedKey{
	{[]string{"skill", "min_caro_version"}, func(d *manifestDoc) bool { return d.Skill.MinCaroVersion != nil },
		"packs is not caro: remove it (api_version says which manifest format the pack needs)"},
	{[]string{"knowledge", "topics"}, func(d *manifestDoc) bool { return d.Knowledge.Topics != nil },
		"packs offers a pack to the model by its description, not by topics: put the words in the description (\"Use it for ...\") and remove topics"},
	{[]string{"recipes", "files"}, func(d *manifestDoc) bool { return d.Recipes.Files != nil },
		"packs loads every recipes/*.yaml: remove files, and move a recipe you do not want out of recipes/"},
	{[]string{"executable"}, func(d *manifestDoc) bool { return d.Executable != nil },
		"tools.json says how each tool runs (run.wasm and run.function, or run.abi): describe the module there and remove [executable]"},
	{[]string{"suggestions"}, func(d *manifestDoc) bool { return d.Suggestions != nil },
		"packs never installs or proposes other packs: mention related packs in SKILL.md and remove [suggestions]"},
	{[]string{"features"}, func(d *manifestDoc) bool { return d.Features != nil },
		"packs installs a pack whole, with no optional features: make each optional part its own pack, and remove [features]"},
}

// unsupported reports each key of spec 001 that packs does not act on.
func (p *manifestParser) unsupported(d manifestDoc) {
	for _, k := range unsupportedKeys {
		if k.set(&d) {
			p.errorf(k.path, -1, "manifest-unsupported", "%s is a spec 001 key that packs does not act on: %s", strings.Join(k.path, "."), k.do)
		}
	}
}

// Bounds of [knowledge]. maxContextTokens is far above any model's
// window: a larger value means nothing, so it is a mistake.
const (
	maxPriority      = 1_000_000
	maxContextTokens = 10_000_000
)

// knowledge converts [knowledge].
func (p *manifestParser) knowledge(t knowledgeTable) Knowledge {
	var k Knowledge
	if t.Priority != nil {
		if *t.Priority < 0 || *t.Priority > maxPriority {
			p.errorf([]string{"knowledge", "priority"}, -1, "knowledge", "priority = %d is out of range: use 0 to %d (higher is listed first)", *t.Priority, maxPriority)
		} else {
			k.Priority = int(*t.Priority)
		}
	}
	if t.MaxContextTokens != nil {
		if *t.MaxContextTokens < 1 || *t.MaxContextTokens > maxContextTokens {
			p.errorf([]string{"knowledge", "max_context_tokens"}, -1, "knowledge", "max_context_tokens = %d is out of range: use 1 to %d, or remove it for the chat's own cap", *t.MaxContextTokens, maxContextTokens)
		} else {
			k.MaxContextTokens = int(*t.MaxContextTokens)
		}
	}
	return k
}

// platformOS and platformArch map the names [platform] accepts (spec 001's,
// Go's and uname's) to Go's.
var (
	platformOS = map[string]string{
		"linux": "linux", "macos": "darwin", "darwin": "darwin", "windows": "windows", "freebsd": "freebsd",
		"openbsd": "openbsd", "netbsd": "netbsd", "dragonfly": "dragonfly", "illumos": "illumos", "solaris": "solaris",
	}
	platformArch = map[string]string{
		"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "x86": "386", "i386": "386",
		"i686": "386", "386": "386", "arm": "arm", "armv7": "arm", "riscv64": "riscv64", "ppc64le": "ppc64le",
		"s390x": "s390x", "loong64": "loong64", "mips64le": "mips64le",
	}
)

// platform converts [platform]. A tool must be a command name terminal_exec
// could list; one the manifest blocks could never run.
func (p *manifestParser) platform(t platformTable, te *execTable) Platform {
	var pl Platform
	for _, list := range []struct {
		key   string
		in    []string
		names map[string]string
		out   *[]string
	}{{"os", t.OS, platformOS, &pl.OS}, {"arch", t.Arch, platformArch, &pl.Arch}} {
		for i, v := range list.in {
			goName, ok := list.names[strings.ToLower(v)]
			if !ok {
				p.errorf([]string{"platform", list.key}, i, "platform-value", "%s %q is not known: use one of %s", list.key, v, strings.Join(sortedKeys(list.names), ", "))
				continue
			}
			if !slices.Contains(*list.out, goName) {
				*list.out = append(*list.out, goName)
			}
		}
	}
	for _, list := range []struct {
		key string
		in  []string
		out *[]string
	}{{"required_tools", t.RequiredTools, &pl.RequiredTools}, {"optional_tools", t.OptionalTools, &pl.OptionalTools}} {
		for i, tool := range list.in {
			if err := validateOne(capability.TerminalExec, "terminal_exec.commands", tool); err != nil {
				p.errorf([]string{"platform", list.key}, i, "platform-value", "%s entry %q is not a program: write a bare name (\"git\") or an absolute path", list.key, tool)
				continue
			}
			if te != nil && slices.Contains(te.Blocked, tool) {
				p.errorf([]string{"platform", list.key}, i, "platform-tool", "%s names %q, which terminal_exec blocks: packs can never run it for this pack; remove it from one list", list.key, tool)
				continue
			}
			*list.out = append(*list.out, tool)
		}
	}
	return pl
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// dependencies converts [dependencies]: "pack" = "CONSTRAINT", or
// "pack" = { version = "CONSTRAINT", optional = true }. Entries are sorted
// by pack, so findings come in a stable order.
func (p *manifestParser) dependencies(t map[string]any) []Dependency {
	names := make([]string, 0, len(t))
	for k := range t {
		names = append(names, k)
	}
	slices.Sort(names)
	var out []Dependency
	for _, name := range names {
		d := Dependency{Pack: name, path: []string{"dependencies", name}}
		switch v := t[name].(type) {
		case string:
			d.Constraint = v
		case map[string]any:
			if !p.dependencyTable(&d, v) {
				continue
			}
		default:
			p.errorf(d.path, -1, "toml-type", "dependency %s is a version constraint (\">=1.2\") or a { version, optional } table, not a TOML %s", name, tomlKind(v))
			continue
		}
		if !validDependencyName(name) {
			p.errorf(d.path, -1, "dependency", "%q names no pack: use a pack's name (\"git-flow\") or its skill.toml id (\"examples.git-flow\")", name)
			continue
		}
		c, err := parseConstraint(d.Constraint)
		if err != nil {
			p.errorf(d.path, -1, "dependency", "dependency %s: %v", name, err)
			continue
		}
		d.cons = c
		out = append(out, d)
	}
	return out
}

// dependencyTable reads { version = "...", optional = true }.
func (p *manifestParser) dependencyTable(d *Dependency, v map[string]any) bool {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var ok bool
		want := "a string"
		switch k {
		case "version":
			d.Constraint, ok = v[k].(string)
		case "optional":
			d.Optional, ok = v[k].(bool)
			want = "a boolean"
		default:
			p.errorf(d.path, -1, "toml-unknown-key", "dependency %s: %q is not a key here (version, optional)", d.Pack, k)
			return false
		}
		if !ok {
			p.errorf(d.path, -1, "toml-type", "dependency %s: %s must be %s, not a TOML %s", d.Pack, k, want, tomlKind(v[k]))
			return false
		}
	}
	return true
}

// validDependencyName accepts a pack name or a dotted id of such names.
func validDependencyName(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for _, part := range strings.Split(s, ".") {
		if part == "" {
			return false
		}
		for _, r := range part {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}
