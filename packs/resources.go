package packs

import (
	"errors"
	"fmt"
	"mime"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// resources.json is the sibling of tools.json where a pack declares what it
// offers an MCP client besides tools: resources (files of the pack under a
// URI of the pack's choosing), resource templates (a URI template whose
// variables pick a file) and prompts with arguments. A resource is always a
// file inside the pack; nothing in resources.json runs code.
const (
	resourcesFile     = "resources.json"
	maxResourcesBytes = 256 << 10
	maxURIBytes       = 1024
	maxDeclNameLen    = 64
	maxDeclDescChars  = 1024
	maxPromptMessages = 32
	// maxVarValueLen bounds a template variable's value in a URI.
	maxVarValueLen = 128
)

// errBadTemplateValue is returned by ResourceTemplate.Match when a URI
// matches the template's shape but a variable's value cannot name a file
// (a "..", a slash, a hidden name, ...).
var errBadTemplateValue = errors.New("packs: template variable cannot name a file")

// Declarations is what a pack's resources.json declares.
type Declarations struct {
	Resources []*Resource
	Templates []*ResourceTemplate
	Prompts   []*Prompt
}

// Resource is a file of the pack offered under its own URI.
type Resource struct {
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string // declared, or guessed from the file's extension; may be empty
	File        string // slash-separated, relative to the pack root, checked at load
	Line        int    // where it is declared in resources.json
}

// ResourceTemplate is a URI template (RFC 6570 level 1: {var} only) whose
// variables name a file of the pack through File, a path template with the
// same variables.
type ResourceTemplate struct {
	URITemplate string
	Name        string
	Title       string
	Description string
	MIMEType    string
	File        string // path template, e.g. "data/{id}.txt"
	Vars        []string
	Line        int
	re          *regexp.Regexp // matches URIs; group i is Vars[i]
}

// Prompt is a prompt template with arguments.
type Prompt struct {
	Name        string
	Title       string
	Description string
	Arguments   []PromptArgument
	Messages    []PromptMessage
	Line        int
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string
	Description string
	Required    bool
}

// PromptMessage is one message of a prompt. Exactly one of Text, Image,
// Audio and Resource is set. Text and Resource may hold {{argument}}
// placeholders; Image and Audio are files of the pack.
type PromptMessage struct {
	Role     string // "user" or "assistant"
	Text     string
	Image    string // file, relative to the pack root
	Audio    string // file, relative to the pack root
	Resource string // the URI of one of the pack's declared resources
	MIMEType string // of Image or Audio
}

// Resource returns the declared resource with that URI.
func (d *Declarations) Resource(uri string) (*Resource, bool) {
	if d == nil {
		return nil, false
	}
	for _, r := range d.Resources {
		if r.URI == uri {
			return r, true
		}
	}
	return nil, false
}

// Match reports whether uri has the template's shape and, if so, the file
// it names. A value that cannot be one path element of a plain file name
// gives errBadTemplateValue.
func (t *ResourceTemplate) Match(uri string) (string, bool, error) {
	if t.re == nil { // not made by the parser
		return "", false, nil
	}
	m := t.re.FindStringSubmatch(uri)
	if m == nil {
		return "", false, nil
	}
	file := t.File
	for i, v := range t.Vars {
		val := m[i+1]
		if !safeVarValue(val) {
			return "", true, fmt.Errorf("%w: %s=%q (use letters, digits and . _ - ~ @ + , =, not starting with a dot)", errBadTemplateValue, v, trimValue(val))
		}
		file = strings.ReplaceAll(file, "{"+v+"}", val)
	}
	return file, true, nil
}

// Fill substitutes the {{argument}} placeholders of s with args.
func Fill(s string, args map[string]string) string {
	return placeholderRe.ReplaceAllStringFunc(s, func(ph string) string {
		return args[strings.TrimSpace(ph[2:len(ph)-2])]
	})
}

var (
	declNameRe    = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	varNameRe     = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)
	uriSchemeRe   = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*):`)
	placeholderRe = regexp.MustCompile(`\{\{\s*[^{}]*?\s*\}\}`)
	templateVarRe = regexp.MustCompile(`\{([^{}]*)\}`)
	varValueRe    = regexp.MustCompile(`^[A-Za-z0-9_~@+,=-][A-Za-z0-9._~@+,=-]*$`)
)

// reservedSchemes are URI schemes a pack cannot declare: pack:// names the
// server's own view of every pack's files, and file:// would pass a pack's
// file off as a file of the person's machine.
var reservedSchemes = map[string]string{
	"pack": "pack:// URIs are the server's own names for pack files",
	"file": "file: URIs name files of the person's machine",
}

func safeVarValue(v string) bool {
	return len(v) <= maxVarValueLen && varValueRe.MatchString(v)
}

func trimValue(v string) string {
	if len(v) <= 40 {
		return v
	}
	return v[:40] + "…"
}

// declParser turns one resources.json into declarations and findings.
type declParser struct {
	lines
	src  []byte
	file string
	dir  string
	rep  *reporter
}

// lines maps byte offsets to line numbers.
type lines struct{ nl []int }

func newLines(data []byte) lines {
	var l lines
	for i, c := range data {
		if c == '\n' {
			l.nl = append(l.nl, i)
		}
	}
	return l
}

func (l lines) line(off int) int { return sort.SearchInts(l.nl, off) + 1 }

// parseDeclarations reads resources.json: an object with optional
// "resources", "templates" and "prompts" arrays. Every file it names is
// confined to the pack (no absolute path, no "..", no symlink out of it)
// and must exist.
func parseDeclarations(data []byte, file, dir string, rep *reporter) *Declarations {
	p := &declParser{lines: newLines(data), src: data, file: file, dir: dir, rep: rep}
	root, err := parseJSONTree(data)
	if err != nil {
		(&toolsParser{data: data, nl: p.nl, file: file, rep: rep}).jsonError(err)
		return nil
	}
	if root.kind != '{' {
		rep.errorf(file, p.line(root.off), "json-type", "resources.json must be a JSON object with \"resources\", \"templates\" and \"prompts\" arrays, not %s", kindWord(root.kind))
		return nil
	}
	d := &Declarations{}
	for _, m := range root.members {
		switch m.key {
		case "resources", "templates", "prompts":
			if m.val.kind != '[' {
				rep.errorf(file, p.line(m.val.off), "json-type", "%s must be an array, not %s", m.key, kindWord(m.val.kind))
				continue
			}
		default:
			rep.warnf(file, p.line(m.off), "unknown-key", "%q is not a resources.json key: use \"resources\", \"templates\" or \"prompts\"", m.key)
			continue
		}
		for i, item := range m.val.items {
			if item.kind != '{' {
				rep.errorf(file, p.line(item.off), "json-type", "%s item %d is %s, not a JSON object", m.key, i+1, kindWord(item.kind))
				continue
			}
			switch m.key {
			case "resources":
				if r, ok := p.resource(item); ok {
					d.Resources = append(d.Resources, r)
				}
			case "templates":
				if t, ok := p.template(item); ok {
					d.Templates = append(d.Templates, t)
				}
			case "prompts":
				if pr, ok := p.prompt(item, d); ok {
					d.Prompts = append(d.Prompts, pr)
				}
			}
		}
	}
	p.duplicates(d)
	p.promptResources(d)
	return d
}

// fields reads an object's string members into out (keys listed in
// allowed) and reports the rest; bools and arrays it leaves to the caller
// through other.
func (p *declParser) fields(n *jsonNode, what string, strs map[string]*string, other map[string]bool) bool {
	ok := true
	for _, m := range n.members {
		if dst, isStr := strs[m.key]; isStr {
			if m.val.kind != '"' {
				p.rep.errorf(p.file, p.line(m.off), "json-type", "%s: %s must be a string, not %s", what, m.key, kindWord(m.val.kind))
				ok = false
				continue
			}
			*dst = m.val.str
			continue
		}
		if !other[m.key] {
			p.rep.warnf(p.file, p.line(m.off), "unknown-key", "%s: %q is not a known key: it is ignored", what, m.key)
		}
	}
	return ok
}

// common checks name, title, description and mime_type.
func (p *declParser) common(line int, what, name, desc, mimeType string) bool {
	ok := true
	if name != "" && !declNameRe.MatchString(name) {
		p.rep.errorf(p.file, line, "decl-name", "%s: name %q must be 1 to %d of A-Z a-z 0-9 _ . -", what, name, maxDeclNameLen)
		ok = false
	}
	if utf8.RuneCountInString(desc) > maxDeclDescChars {
		p.rep.errorf(p.file, line, "description", "%s: description is longer than %d characters: shorten it", what, maxDeclDescChars)
		ok = false
	}
	if mimeType != "" {
		if _, _, err := mime.ParseMediaType(mimeType); err != nil {
			p.rep.errorf(p.file, line, "mime-type", "%s: mime_type %q is not a media type (e.g. \"text/plain\"): %v", what, mimeType, err)
			ok = false
		}
	}
	return ok
}

func (p *declParser) resource(n *jsonNode) (*Resource, bool) {
	line := p.line(n.off)
	r := &Resource{Line: line}
	ok := p.fields(n, "resource", map[string]*string{
		"uri": &r.URI, "name": &r.Name, "title": &r.Title, "description": &r.Description, "mime_type": &r.MIMEType, "file": &r.File,
	}, nil)
	what := fmt.Sprintf("resource %q", r.URI)
	if !p.uri(line, what, r.URI, false) {
		ok = false
	}
	if r.File == "" {
		p.rep.errorf(p.file, line, "resource-file", "%s: \"file\" is missing: name the pack file it serves, e.g. \"resources/data.txt\"", what)
		return nil, false
	}
	if !p.common(line, what, r.Name, r.Description, r.MIMEType) {
		ok = false
	}
	f, fileOK := p.packFile(line, what, r.File)
	if !fileOK {
		ok = false
	}
	r.File = f
	if r.Name == "" {
		r.Name = path.Base(f)
	}
	if r.MIMEType == "" {
		r.MIMEType = guessMIME(f)
	}
	return r, ok
}

func (p *declParser) template(n *jsonNode) (*ResourceTemplate, bool) {
	line := p.line(n.off)
	t := &ResourceTemplate{Line: line}
	ok := p.fields(n, "template", map[string]*string{
		"uri_template": &t.URITemplate, "name": &t.Name, "title": &t.Title, "description": &t.Description, "mime_type": &t.MIMEType, "file": &t.File,
	}, nil)
	what := fmt.Sprintf("template %q", t.URITemplate)
	if !p.uri(line, what, t.URITemplate, true) {
		return nil, false
	}
	if t.File == "" {
		p.rep.errorf(p.file, line, "resource-file", "%s: \"file\" is missing: name the pack file each URI serves, with the same variables, e.g. \"data/{id}.txt\"", what)
		return nil, false
	}
	if !p.common(line, what, t.Name, t.Description, t.MIMEType) {
		ok = false
	}
	if strings.Count(t.URITemplate, "{") != len(templateVarRe.FindAllString(t.URITemplate, -1)) || strings.Count(t.URITemplate, "}") != strings.Count(t.URITemplate, "{") {
		p.rep.errorf(p.file, line, "uri-template", "%s: has a stray { or }", what)
		return nil, false
	}
	// The URI: literal text between variables, each variable one path
	// element's worth of characters (no '/', '?' or '#').
	var re strings.Builder
	re.WriteString("^")
	last := 0
	seen := map[string]bool{}
	for _, m := range templateVarRe.FindAllStringSubmatchIndex(t.URITemplate, -1) {
		name := t.URITemplate[m[2]:m[3]]
		if !varNameRe.MatchString(name) {
			p.rep.errorf(p.file, line, "uri-template", "%s: {%s} is not a simple variable: use {name} with letters, digits and _ (operators such as {+x} are not supported)", what, name)
			return nil, false
		}
		if seen[name] {
			p.rep.errorf(p.file, line, "uri-template", "%s: {%s} appears twice: use each variable once", what, name)
			return nil, false
		}
		seen[name] = true
		t.Vars = append(t.Vars, name)
		re.WriteString(regexp.QuoteMeta(t.URITemplate[last:m[0]]))
		re.WriteString(`([^/?#]+)`)
		last = m[1]
	}
	re.WriteString(regexp.QuoteMeta(t.URITemplate[last:]))
	re.WriteString("$")
	if len(t.Vars) == 0 {
		p.rep.errorf(p.file, line, "uri-template", "%s: has no {variable}: declare it under \"resources\" instead", what)
		return nil, false
	}
	t.re = regexp.MustCompile(re.String())
	// The file: the same variables, each inside one path element, and the
	// rest a confined relative path.
	used := map[string]bool{}
	for _, m := range templateVarRe.FindAllStringSubmatch(t.File, -1) {
		if !seen[m[1]] {
			p.rep.errorf(p.file, line, "resource-file", "%s: file %q uses {%s}, which the URI template does not have", what, t.File, m[1])
			return nil, false
		}
		used[m[1]] = true
	}
	for _, v := range t.Vars {
		if !used[v] {
			p.rep.errorf(p.file, line, "resource-file", "%s: file %q does not use {%s}: every variable must pick part of the file name", what, t.File, v)
			ok = false
		}
	}
	if strings.Count(t.File, "{") != len(templateVarRe.FindAllString(t.File, -1)) || strings.Count(t.File, "}") != strings.Count(t.File, "{") {
		p.rep.errorf(p.file, line, "resource-file", "%s: file %q has a stray { or }", what, t.File)
		return nil, false
	}
	if !p.relPath(line, what, templateVarRe.ReplaceAllString(t.File, "x")) {
		return nil, false
	}
	t.File = path.Clean(t.File)
	if t.Name == "" {
		t.Name = path.Base(t.File)
	}
	if t.MIMEType == "" {
		t.MIMEType = guessMIME(t.File)
	}
	return t, ok
}

func (p *declParser) prompt(n *jsonNode, d *Declarations) (*Prompt, bool) {
	line := p.line(n.off)
	pr := &Prompt{Line: line}
	ok := p.fields(n, "prompt", map[string]*string{"name": &pr.Name, "title": &pr.Title, "description": &pr.Description},
		map[string]bool{"arguments": true, "messages": true})
	what := fmt.Sprintf("prompt %q", pr.Name)
	if pr.Name == "" {
		p.rep.errorf(p.file, line, "decl-name", "prompt: \"name\" is missing: the client lists prompts by name")
		return nil, false
	}
	if !p.common(line, what, pr.Name, pr.Description, "") {
		ok = false
	}
	args := map[string]bool{}
	if m := n.member("arguments"); m != nil {
		if m.val.kind != '[' {
			p.rep.errorf(p.file, p.line(m.val.off), "json-type", "%s: arguments must be an array, not %s", what, kindWord(m.val.kind))
			return nil, false
		}
		for _, item := range m.val.items {
			a, aok := p.argument(item, what)
			if !aok {
				ok = false
				continue
			}
			if args[a.Name] {
				p.rep.errorf(p.file, p.line(item.off), "prompt-argument", "%s: argument %q is declared twice: keep one", what, a.Name)
				ok = false
				continue
			}
			args[a.Name] = true
			pr.Arguments = append(pr.Arguments, a)
		}
	}
	m := n.member("messages")
	if m == nil || m.val.kind != '[' || len(m.val.items) == 0 {
		p.rep.errorf(p.file, line, "prompt-messages", "%s: \"messages\" must be a non-empty array of {\"role\", \"text\"|\"image\"|\"audio\"|\"resource\"}", what)
		return nil, false
	}
	if len(m.val.items) > maxPromptMessages {
		p.rep.errorf(p.file, p.line(m.val.off), "prompt-messages", "%s: more than %d messages: shorten the prompt", what, maxPromptMessages)
		return nil, false
	}
	for _, item := range m.val.items {
		msg, mok := p.message(item, what, args)
		if !mok {
			ok = false
			continue
		}
		pr.Messages = append(pr.Messages, msg)
	}
	return pr, ok
}

func (p *declParser) argument(n *jsonNode, what string) (PromptArgument, bool) {
	line := p.line(n.off)
	var a PromptArgument
	if n.kind != '{' {
		p.rep.errorf(p.file, line, "json-type", "%s: an argument is %s, not a JSON object", what, kindWord(n.kind))
		return a, false
	}
	ok := p.fields(n, what+" argument", map[string]*string{"name": &a.Name, "description": &a.Description}, map[string]bool{"required": true})
	if m := n.member("required"); m != nil {
		if m.val.kind != 't' {
			p.rep.errorf(p.file, p.line(m.off), "json-type", "%s: required must be true or false, not %s", what, kindWord(m.val.kind))
			ok = false
		} else {
			a.Required = string(p.raw(m.val)) == "true"
		}
	}
	if !varNameRe.MatchString(a.Name) {
		p.rep.errorf(p.file, line, "prompt-argument", "%s: argument name %q must be 1 to 64 of A-Z a-z 0-9 _", what, a.Name)
		ok = false
	}
	return a, ok
}

// raw is the JSON text of a scalar node.
func (p *declParser) raw(n *jsonNode) []byte { return p.src[n.off:n.end] }

func (p *declParser) message(n *jsonNode, what string, args map[string]bool) (PromptMessage, bool) {
	line := p.line(n.off)
	var msg PromptMessage
	if n.kind != '{' {
		p.rep.errorf(p.file, line, "json-type", "%s: a message is %s, not a JSON object", what, kindWord(n.kind))
		return msg, false
	}
	ok := p.fields(n, what+" message", map[string]*string{
		"role": &msg.Role, "text": &msg.Text, "image": &msg.Image, "audio": &msg.Audio, "resource": &msg.Resource, "mime_type": &msg.MIMEType,
	}, nil)
	switch msg.Role {
	case "":
		msg.Role = "user"
	case "user", "assistant":
	default:
		p.rep.errorf(p.file, line, "prompt-messages", "%s: role %q must be \"user\" or \"assistant\"", what, msg.Role)
		ok = false
	}
	kinds := 0
	for _, s := range []string{msg.Text, msg.Image, msg.Audio, msg.Resource} {
		if s != "" {
			kinds++
		}
	}
	if kinds != 1 {
		p.rep.errorf(p.file, line, "prompt-messages", "%s: a message has exactly one of \"text\", \"image\", \"audio\" and \"resource\"", what)
		return msg, false
	}
	for _, s := range []string{msg.Text, msg.Resource} {
		for _, ph := range placeholderRe.FindAllString(s, -1) {
			if name := strings.TrimSpace(ph[2 : len(ph)-2]); !args[name] {
				p.rep.errorf(p.file, line, "prompt-placeholder", "%s: %s names no declared argument: add it to \"arguments\" or fix the name", what, ph)
				ok = false
			}
		}
	}
	for _, f := range []*string{&msg.Image, &msg.Audio} {
		if *f == "" {
			continue
		}
		clean, fok := p.packFile(line, what, *f)
		if !fok {
			ok = false
		}
		*f = clean
		if msg.MIMEType == "" {
			msg.MIMEType = guessMIME(clean)
		}
		want := "image/"
		if f == &msg.Audio {
			want = "audio/"
		}
		if !strings.HasPrefix(msg.MIMEType, want) {
			p.rep.errorf(p.file, line, "mime-type", "%s: %q needs a mime_type starting with %q (its extension does not say)", what, clean, want)
			ok = false
		}
	}
	if msg.MIMEType != "" && !p.common(line, what, "", "", msg.MIMEType) {
		ok = false
	}
	return msg, ok
}

// uri checks a resource's URI or a template's URI template.
func (p *declParser) uri(line int, what, s string, template bool) bool {
	key := "uri"
	if template {
		key = "uri_template"
	}
	m := uriSchemeRe.FindStringSubmatch(s)
	switch {
	case s == "":
		p.rep.errorf(p.file, line, "resource-uri", "%s: %q is missing: give a URI such as \"docs://my-pack/guide\"", what, key)
		return false
	case len(s) > maxURIBytes:
		p.rep.errorf(p.file, line, "resource-uri", "%s: longer than %d bytes: shorten it", what, maxURIBytes)
		return false
	case m == nil:
		p.rep.errorf(p.file, line, "resource-uri", "%s: has no scheme: give a URI such as \"docs://my-pack/guide\"", what)
		return false
	case strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f || r == utf8.RuneError }):
		p.rep.errorf(p.file, line, "resource-uri", "%s: holds a space, a control character or invalid UTF-8: percent-encode it", what)
		return false
	case !template && strings.ContainsAny(s, "{}"):
		p.rep.errorf(p.file, line, "resource-uri", "%s: holds { or }: declare it under \"templates\" with \"uri_template\"", what)
		return false
	}
	if template {
		literal := templateVarRe.ReplaceAllString(s, "")
		if i := strings.IndexAny(literal, "\"'<>\\^`|"); i >= 0 {
			p.rep.errorf(p.file, line, "uri-template", "%s: %q may not appear outside a {variable} (RFC 6570): percent-encode it", what, literal[i])
			return false
		}
		if !validPercents(literal) {
			p.rep.errorf(p.file, line, "uri-template", "%s: a %% is not followed by two hex digits: write %%25 for a literal %%", what)
			return false
		}
	}
	if _, err := url.Parse(templateVarRe.ReplaceAllString(s, "x")); err != nil {
		p.rep.errorf(p.file, line, "resource-uri", "%s: not a valid URI: %v", what, errors.Unwrap(err))
		return false
	}
	if why, bad := reservedSchemes[strings.ToLower(m[1])]; bad {
		p.rep.errorf(p.file, line, "resource-uri", "%s: the %s: scheme is reserved (%s): choose a scheme of your own, such as the pack's name", what, strings.ToLower(m[1]), why)
		return false
	}
	return true
}

// validPercents reports whether every '%' in s starts a %XX escape.
func validPercents(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// relPath checks the shape of a relative, slash-separated path in the pack.
func (p *declParser) relPath(line int, what, rel string) bool {
	bad := ""
	switch {
	case strings.HasPrefix(rel, "/") || filepath.IsAbs(rel):
		bad = "is absolute"
	case strings.ContainsAny(rel, "\\\x00"):
		bad = "holds a backslash or a NUL"
	default:
		for _, el := range strings.Split(rel, "/") {
			switch el {
			case "..":
				bad = `holds ".."`
			case "", ".":
				bad = "has an empty or \".\" element"
			}
		}
	}
	if bad != "" {
		p.rep.errorf(p.file, line, "path-escape", "%s: file %q %s: give a path inside the pack, such as \"resources/data.txt\"", what, rel, bad)
		return false
	}
	return true
}

// packFile checks that rel names a regular file inside the pack, following
// no symlink out of it, and returns it cleaned.
func (p *declParser) packFile(line int, what, rel string) (string, bool) {
	if !p.relPath(line, what, rel) {
		return rel, false
	}
	full, err := SafeJoin(p.dir, rel)
	if err != nil {
		if errors.Is(err, ErrPathEscape) {
			p.rep.errorf(p.file, line, "path-escape", "%s: %v: keep the file inside the pack folder", what, why(err))
		} else {
			p.rep.errorf(p.file, line, "read-error", "%s: %q: %v", what, rel, err)
		}
		return rel, false
	}
	f, _, err := openRegular(full)
	switch {
	case errors.Is(err, errNotRegular):
		p.rep.errorf(p.file, line, "resource-file", "%s: %q is not a regular file", what, rel)
		return rel, false
	case err != nil:
		p.rep.errorf(p.file, line, "file-missing", "%s: %q does not exist in the pack: add it or fix the path", what, rel)
		return rel, false
	}
	f.Close()
	return path.Clean(rel), true
}

// duplicates reports URIs, templates and prompt names declared twice.
func (p *declParser) duplicates(d *Declarations) {
	d.Resources = firstOf(d.Resources, func(r *Resource) (string, int) { return r.URI, r.Line }, func(r *Resource, prev int) {
		p.rep.errorf(p.file, r.Line, "resource-duplicate", "resource %q is already declared on line %d: keep one", r.URI, prev)
	})
	d.Templates = firstOf(d.Templates, func(t *ResourceTemplate) (string, int) { return t.URITemplate, t.Line }, func(t *ResourceTemplate, prev int) {
		p.rep.errorf(p.file, t.Line, "resource-duplicate", "template %q is already declared on line %d: keep one", t.URITemplate, prev)
	})
	d.Prompts = firstOf(d.Prompts, func(pr *Prompt) (string, int) { return pr.Name, pr.Line }, func(pr *Prompt, prev int) {
		p.rep.errorf(p.file, pr.Line, "prompt-duplicate", "prompt %q is already declared on line %d: rename or remove one", pr.Name, prev)
	})
}

// firstOf keeps the first of the items that share a key, in order, and
// calls dup with each later one and the line of the first.
func firstOf[T any](items []T, key func(T) (string, int), dup func(T, int)) []T {
	seen := map[string]int{}
	keep := items[:0]
	for _, it := range items {
		k, line := key(it)
		if prev, ok := seen[k]; ok {
			dup(it, prev)
			continue
		}
		seen[k] = line
		keep = append(keep, it)
	}
	return keep
}

// promptResources checks that a prompt's fixed resource URIs are declared
// resources of the pack (one with a placeholder is checked when the prompt
// is filled in).
func (p *declParser) promptResources(d *Declarations) {
	for _, pr := range d.Prompts {
		for _, m := range pr.Messages {
			if m.Resource == "" || placeholderRe.MatchString(m.Resource) {
				continue
			}
			if _, ok := d.Resource(m.Resource); !ok {
				p.rep.errorf(p.file, pr.Line, "prompt-resource", "prompt %q embeds %q, which is not among the pack's \"resources\": declare it there", pr.Name, m.Resource)
			}
		}
	}
}

// guessMIME is the media type of a file's extension, or "".
func guessMIME(rel string) string {
	switch strings.ToLower(path.Ext(rel)) {
	case ".md", ".markdown":
		return "text/markdown"
	case ".txt":
		return "text/plain"
	case ".wav":
		return "audio/wav"
	}
	t := mime.TypeByExtension(path.Ext(rel))
	if mt, _, err := mime.ParseMediaType(t); err == nil {
		return mt
	}
	return ""
}

// Values lists the values of the template's variable that name existing
// files of the pack in dir, sorted, when the template has one variable and
// it sits in the file's last path element ("data/{id}.txt"); otherwise
// nil. It is for completion: a value it lists still goes through the gate
// when read.
func (t *ResourceTemplate) Values(dir string) []string {
	if len(t.Vars) != 1 {
		return nil
	}
	folder, base := path.Split(t.File)
	if strings.Contains(folder, "{") {
		return nil
	}
	prefix, suffix, _ := strings.Cut(base, "{"+t.Vars[0]+"}")
	if folder == "" {
		folder = "."
	}
	full, err := SafeJoin(dir, folder)
	if err != nil {
		return nil
	}
	entries, err := os.ReadDir(full)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || len(name) < len(prefix)+len(suffix) || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, suffix) {
			continue
		}
		if v := name[len(prefix) : len(name)-len(suffix)]; safeVarValue(v) {
			out = append(out, v)
		}
	}
	return out
}
