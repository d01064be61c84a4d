package packs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Frontmatter is the YAML header of a pack's entry doc, per the Agent Skills
// specification.
type Frontmatter struct {
	Name          string
	Description   string
	License       string
	Compatibility string
	Metadata      map[string]string
	AllowedTools  []string // "allowed-tools": a space-separated string or a YAML list
	// AllowedToolsLine is the line of allowed-tools in the entry doc.
	AllowedToolsLine int
	// Foreign are the keys other tools define for skills (Claude Code,
	// Codex) that the entry doc sets: recognized, not unknown, and each
	// with what packs does with it (packs lint says so).
	Foreign []ForeignKey
}

// ForeignKey is a frontmatter key another tool defines, where it was set
// and what packs does with it.
type ForeignKey struct {
	Key, Tool, Does string
	Line            int
}

// foreignKeys are the skill frontmatter keys of Claude Code
// (code.claude.com/docs/en/skills) and what packs does with each. Codex
// reads the Agent Skills keys, with its own settings in metadata and
// agents/openai.yaml, which packs leaves alone.
var foreignKeys = map[string]struct{ tool, does string }{
	"disable-model-invocation": {"Claude Code", "packs offers a pack to the model only when the person attached it to the chat, which is already the person's choice; the key changes nothing here"},
	"user-invocable":           {"Claude Code", "packs has no / menu of skills: the person attaches packs (packs chat --attach, the web app); the key changes nothing here"},
	"argument-hint":            {"Claude Code", "packs has no slash-command arguments: the hint is not shown"},
	"arguments":                {"Claude Code", "packs has no slash-command arguments: $ARGUMENTS in the body stays as written"},
	"model":                    {"Claude Code", "the person picks the model (packs chat --model); a pack never does"},
	"effort":                   {"Claude Code", "the person picks the model and its settings; a pack never does"},
	"context":                  {"Claude Code", "packs runs every pack in the chat itself, never in a forked sub-agent"},
	"agent":                    {"Claude Code", "packs has no sub-agents: the key changes nothing here"},
	"hooks":                    {"Claude Code", "packs never runs a pack's hooks: commands run only as tools, through the gate and a terminal_exec grant"},
	"paths":                    {"Claude Code", "packs does not activate packs by file paths: the person attaches them"},
	"shell":                    {"Claude Code", "packs runs no shell: !`command` blocks in the body are not executed"},
	"when_to_use":              {"Claude Code", "packs shows the model the description only: move this text into description"},
	"version":                  {"several tools", "packs reads a pack's version from skill.toml's [skill] version (or metadata.version): move it there"},
}

const (
	// maxFrontmatterBytes caps how much of an entry doc is read before the
	// closing "---": the header is small, the body may be huge.
	maxFrontmatterBytes = 64 << 10
	// DefaultMaxEntryBytes is spec 002's max_skill_md_bytes: a larger entry
	// doc loads with a warning, and readers truncate its body.
	DefaultMaxEntryBytes = 200000
	// sniffBytes is how much of the head and of the body start is checked
	// for binary content.
	sniffBytes = 512
	// readerBytes is the buffer of the reader that streams entry docs.
	readerBytes = 4096

	maxNameChars          = 64
	maxDescriptionChars   = 1024
	maxCompatibilityChars = 500
)

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// readFrontmatter streams an entry doc from br and stops at the closing
// "---", so a multi-megabyte doc costs no more than its header. br's buffer
// must hold at least sniffBytes; callers reuse one reader across files. file
// names the doc in findings and folder is the name the frontmatter must
// carry. It returns the frontmatter, the byte offset where the body starts
// and whether the header could be read at all (false after a fatal finding).
func readFrontmatter(br *bufio.Reader, file, folder string, rep *reporter) (Frontmatter, int64, bool) {
	var off int64
	head, err := br.Peek(sniffBytes)
	if err != nil && !errors.Is(err, io.EOF) {
		rep.errorf(file, 0, "read-error", "cannot read: %v", err)
		return Frontmatter{}, 0, false
	}
	if bytes.HasPrefix(head, utf8BOM) {
		rep.warnf(file, 1, "encoding", "starts with a UTF-8 byte-order mark: save the file without it")
		_, _ = br.Discard(len(utf8BOM))
		off = int64(len(utf8BOM))
		head = head[len(utf8BOM):]
	}
	if i := binaryAt(head, len(head) == sniffBytes-int(off)); i >= 0 {
		rep.errorf(file, 1+bytes.Count(head[:i], []byte("\n")), "encoding",
			"is binary or not UTF-8 (byte %d): an entry doc is UTF-8 Markdown text", int(off)+i)
		return Frontmatter{}, 0, false
	}

	first, err := appendLine(br, nil, maxFrontmatterBytes)
	if err != nil && !errors.Is(err, io.EOF) {
		rep.errorf(file, 0, "read-error", "cannot read: %v", err)
		return Frontmatter{}, 0, false
	}
	if !isFence(first) {
		what := "does not start with a \"---\" line"
		if len(first) == 0 {
			what = "is empty"
		}
		rep.errorf(file, 1, "frontmatter-missing",
			"%s: begin the file with YAML frontmatter between \"---\" lines, holding at least name and description", what)
		return Frontmatter{}, 0, false
	}
	off += int64(len(first))

	var content []byte
	line := 1
	for {
		n := len(content)
		content, err = appendLine(br, content, maxFrontmatterBytes+1-n)
		if err != nil && !errors.Is(err, io.EOF) {
			rep.errorf(file, line, "read-error", "cannot read: %v", err)
			return Frontmatter{}, 0, false
		}
		l := content[n:]
		if len(l) == 0 {
			rep.errorf(file, 1, "frontmatter-unterminated",
				"the frontmatter opened here is never closed: add a \"---\" line after the last key")
			return Frontmatter{}, 0, false
		}
		line++
		if isFence(l) {
			off += int64(len(content))
			content = content[:n]
			break
		}
		if len(content) > maxFrontmatterBytes {
			rep.errorf(file, 1, "frontmatter-size",
				"the frontmatter is larger than %d KiB: keep it to name, description and a few short fields", maxFrontmatterBytes>>10)
			return Frontmatter{}, 0, false
		}
		if i := binaryAt(l, false); i >= 0 {
			rep.errorf(file, line, "encoding", "this line is binary or not UTF-8: an entry doc is UTF-8 Markdown text")
			return Frontmatter{}, 0, false
		}
		if errors.Is(err, io.EOF) {
			rep.errorf(file, 1, "frontmatter-unterminated",
				"the frontmatter opened here is never closed: add a \"---\" line after the last key")
			return Frontmatter{}, 0, false
		}
	}

	body, err := br.Peek(sniffBytes)
	if err != nil && !errors.Is(err, io.EOF) {
		rep.errorf(file, line, "read-error", "cannot read: %v", err)
		return Frontmatter{}, 0, false
	}
	if i := binaryAt(body, len(body) == sniffBytes); i >= 0 {
		rep.errorf(file, line+1+bytes.Count(body[:i], []byte("\n")), "encoding",
			"the body is binary or not UTF-8: an entry doc is UTF-8 Markdown text")
		return Frontmatter{}, 0, false
	}
	if len(body) < sniffBytes && len(bytes.TrimSpace(body)) == 0 {
		rep.warnf(file, line, "body-empty", "the doc has no Markdown body: write the instructions below the frontmatter")
	}

	fm, ok := parseFrontmatter(content, file, folder, rep)
	return fm, off, ok
}

// appendLine appends one line (with its newline) from br to buf, keeping at
// most limit bytes of it. It returns io.EOF when the input ended.
func appendLine(br *bufio.Reader, buf []byte, limit int) ([]byte, error) {
	for {
		frag, err := br.ReadSlice('\n')
		if len(frag) > limit {
			frag = frag[:limit]
		}
		buf = append(buf, frag...)
		limit -= len(frag)
		switch {
		case !errors.Is(err, bufio.ErrBufferFull):
			return buf, err
		case limit <= 0:
			return buf, nil // the caller sees the length
		}
	}
}

// isFence reports whether line is a "---" delimiter.
func isFence(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r\n")) == "---"
}

// binaryAt returns the index of the first NUL byte or invalid UTF-8
// sequence in b, or -1. When truncated, an incomplete rune at the end of b is
// not counted: the next read would complete it.
func binaryAt(b []byte, truncated bool) int {
	for i := 0; i < len(b); {
		if b[i] == 0 {
			return i
		}
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			if truncated && !utf8.FullRune(b[i:]) {
				return -1
			}
			return i
		}
		i += size
	}
	return -1
}

// parseFrontmatter decodes the YAML between the fences (file line 2 onward)
// and checks every field.
func parseFrontmatter(content []byte, file, folder string, rep *reporter) (Frontmatter, bool) {
	var fm Frontmatter
	lm := newYAMLLines(content)
	doc, err := decodeYAML(content)
	if err != nil {
		fixed, lines := quoteColonValues(content)
		if len(lines) == 0 {
			rep.errorf(file, lm.file(yamlErrLine(err)), "yaml-syntax", "%s: fix the YAML (quote values that hold \": \" or start with a special character)", yamlErrMessage(err))
			return fm, false
		}
		if doc, err = decodeYAML(fixed); err != nil {
			rep.errorf(file, lm.file(yamlErrLine(err)), "yaml-syntax", "%s: fix the YAML (quote values that hold \": \" or start with a special character)", yamlErrMessage(err))
			return fm, false
		}
		for _, l := range lines {
			rep.warnf(file, l+1, "yaml-lenient", "this value holds an unquoted \": \"; it was read as quoted text: put it in quotes")
		}
	}

	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode && root.Kind != 0 && root.Kind != yaml.DocumentNode {
		rep.errorf(file, lm.file(root.Line), "frontmatter-type", "the frontmatter is a YAML %s: write it as \"key: value\" lines", kindName(root))
		return fm, false
	}

	ok := true
	var nameLine, descLine int
	var nameSt, descSt fieldState
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], deref(root.Content[i+1])
		line := lm.file(k.Line)
		if k.Kind != yaml.ScalarNode {
			rep.errorf(file, line, "field-type", "a frontmatter key must be a plain name, not a YAML %s", kindName(k))
			ok = false
			continue
		}
		key := k.Value
		if prev, dup := seen[key]; dup {
			rep.errorf(file, line, "duplicate-key", "%q is already set on line %d: keep one", key, prev)
			ok = false
			continue
		}
		seen[key] = line
		var st fieldState
		switch key {
		case "name":
			fm.Name, nameSt = scalarField(v, key, file, line, rep)
			nameLine, st = line, nameSt
		case "description":
			fm.Description, descSt = scalarField(v, key, file, line, rep)
			descLine, st = line, descSt
		case "license":
			fm.License, st = scalarField(v, key, file, line, rep)
		case "compatibility":
			fm.Compatibility, st = scalarField(v, key, file, line, rep)
			if n := utf8.RuneCountInString(fm.Compatibility); n > maxCompatibilityChars {
				rep.errorf(file, line, "compatibility-length", "compatibility is %d characters, over %d: shorten it", n, maxCompatibilityChars)
				ok = false
			}
		case "metadata":
			fm.Metadata, st = metadataField(v, file, line, lm, rep)
		case "allowed-tools":
			fm.AllowedTools, st = allowedToolsField(v, file, line, lm, rep)
			fm.AllowedToolsLine = line
		default:
			if f, ok := foreignKeys[key]; ok {
				fm.Foreign = append(fm.Foreign, ForeignKey{Key: key, Tool: f.tool, Does: f.does, Line: line})
				continue
			}
			rep.warnf(file, line, "unknown-key", "%q is not an Agent Skills frontmatter key (name, description, license, compatibility, metadata, allowed-tools) nor one Claude Code or Codex defines: move it under metadata or remove it", key)
		}
		if st == fieldBad {
			ok = false
		}
	}

	switch {
	case nameSt == fieldBad:
	case fm.Name == "":
		rep.errorf(file, max(nameLine, 1), "name-missing", "the frontmatter has no name: add \"name: %s\"", suggestName(folder))
		ok = false
	default:
		if err := checkName(fm.Name); err != nil {
			rep.errorf(file, nameLine, "name-format", "name %q %v", fm.Name, err)
			ok = false
		} else if folder != "" && fm.Name != folder {
			rep.errorf(file, nameLine, "name-mismatch", "name %q differs from the folder name %q: rename one so they match", fm.Name, folder)
			ok = false
		}
	}
	switch n := utf8.RuneCountInString(fm.Description); {
	case descSt == fieldBad:
	case strings.TrimSpace(fm.Description) == "":
		rep.errorf(file, max(descLine, 1), "description-missing", "the frontmatter has no description: add one that says what the pack does and when to use it")
		ok = false
	case n > maxDescriptionChars:
		rep.errorf(file, descLine, "description-length", "description is %d characters, over %d: shorten it and move detail into the body", n, maxDescriptionChars)
		ok = false
	}
	return fm, ok
}

// fieldState says what a field decoder made of a value.
type fieldState int

const (
	fieldOK     fieldState = iota
	fieldAbsent            // null or empty: treated as not given
	fieldBad               // wrong type; the finding is already reported
)

// scalarField reads a string-valued key. A non-string scalar (a number, a
// boolean) stands for its literal text with a warning; a mapping or a list
// is an error.
func scalarField(v *yaml.Node, key, file string, line int, rep *reporter) (string, fieldState) {
	switch {
	case v.Kind != yaml.ScalarNode:
		rep.errorf(file, line, "field-type", "%s must be a string, not a YAML %s", key, kindName(v))
		return "", fieldBad
	case v.Tag == "!!null":
		return "", fieldAbsent
	case v.Tag != "!!str":
		rep.warnf(file, line, "field-type", "%s is a YAML %s; it is read as the text %q: put it in quotes", key, strings.TrimPrefix(v.Tag, "!!"), v.Value)
	}
	return v.Value, fieldOK
}

// metadataField reads the string-to-string metadata mapping. Values that are
// not strings warn: scalars keep their literal text, lists and mappings are
// dropped. Real packs write "version: 1.0" there, and refusing to load them
// for it would help nobody.
func metadataField(v *yaml.Node, file string, line int, lm yamlLines, rep *reporter) (map[string]string, fieldState) {
	switch {
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
		return nil, fieldAbsent
	case v.Kind != yaml.MappingNode:
		rep.errorf(file, line, "field-type", "metadata must be a mapping of string keys to string values, not a YAML %s", kindName(v))
		return nil, fieldBad
	}
	m := make(map[string]string, len(v.Content)/2)
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], deref(v.Content[i+1])
		kl := lm.file(k.Line)
		if k.Kind != yaml.ScalarNode {
			rep.warnf(file, kl, "metadata-type", "a metadata key must be a plain name, not a YAML %s: the entry is ignored", kindName(k))
			continue
		}
		switch {
		case val.Kind != yaml.ScalarNode:
			rep.warnf(file, kl, "metadata-type", "metadata %q is a YAML %s, not a string: the entry is ignored", k.Value, kindName(val))
			continue
		case val.Tag == "!!null":
			rep.warnf(file, kl, "metadata-type", "metadata %q has no value: the entry is ignored", k.Value)
			continue
		case val.Tag != "!!str":
			rep.warnf(file, kl, "metadata-type", "metadata %q is a YAML %s; it is read as the text %q: put it in quotes", k.Value, strings.TrimPrefix(val.Tag, "!!"), val.Value)
		}
		m[k.Value] = val.Value
	}
	return m, fieldOK
}

// allowedToolsField accepts the specification's space-separated string
// (Claude Code writes commas too: "Read, Grep, Bash(git *)") and the YAML
// list that many packs write instead.
func allowedToolsField(v *yaml.Node, file string, line int, lm yamlLines, rep *reporter) ([]string, fieldState) {
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" {
			return nil, fieldAbsent
		}
		return splitAllowedTools(v.Value), fieldOK
	case yaml.SequenceNode:
		out := make([]string, 0, len(v.Content))
		for _, item := range v.Content {
			item = deref(item)
			if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
				rep.errorf(file, lm.file(item.Line), "field-type", "each allowed-tools entry must be a tool name, not a YAML %s", kindName(item))
				return nil, fieldBad
			}
			out = append(out, item.Value)
		}
		return out, fieldOK
	}
	rep.errorf(file, line, "field-type", "allowed-tools must be a space-separated string or a list, not a YAML %s", kindName(v))
	return nil, fieldBad
}

// checkName applies the Agent Skills name rule. The error completes the
// sentence "name %q ...".
func checkName(s string) error {
	switch n := utf8.RuneCountInString(s); {
	case n == 0 || n > maxNameChars:
		return fmt.Errorf("is %d characters: use 1 to %d of a-z, 0-9 and \"-\"", n, maxNameChars)
	case s[0] == '-' || s[len(s)-1] == '-':
		return errors.New("starts or ends with \"-\": remove it")
	case strings.Contains(s, "--"):
		return errors.New("holds \"--\": use single hyphens")
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Errorf("holds %q: use only lowercase a-z, 0-9 and \"-\"", r)
		}
	}
	return nil
}

// suggestName turns a folder name into a valid pack name for messages.
func suggestName(folder string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(folder) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	s := strings.TrimSuffix(b.String(), "-")
	if s == "" {
		return "my-pack"
	}
	if len(s) > maxNameChars {
		s = strings.TrimSuffix(s[:maxNameChars], "-")
	}
	return s
}

// decodeYAML parses frontmatter into a node tree: the common shape through
// fastYAML, anything else through yaml.v3. The YAML library is third party
// and reads untrusted input, so a panic inside it becomes an error.
func decodeYAML(b []byte) (doc yaml.Node, err error) {
	if doc, ok := fastYAML(b); ok {
		return doc, nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: the parser failed on this input: %v", r)
		}
	}()
	err = yaml.Unmarshal(b, &doc)
	return doc, err
}

// yamlErrLine returns the YAML line of a yaml.v3 error. yaml.v3 counts lines
// from 1 for scanner errors but from 0 for parser errors (which it reports
// at the start of the enclosing construct), and an error without a line is
// on line 0.
// YAMLErrorLine is the line of the file that a yaml.v3 error names (1
// when it names none): yaml.v3 counts some parser errors from 0.
func YAMLErrorLine(err error) int { return yamlErrLine(err) }

func yamlErrLine(err error) int {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return 1
	}
	n, problem, ok := strings.Cut(rest, ": ")
	l, err := strconv.Atoi(n)
	if !ok || err != nil {
		return 1
	}
	switch problem {
	case "did not find expected ',' or ']'", "did not find expected ',' or '}'", "did not find expected '-' indicator",
		"did not find expected <document start>", "did not find expected key", "did not find expected node content",
		"found duplicate %TAG directive", "found duplicate %YAML directive", "found incompatible YAML document",
		"found undefined tag handle":
		l++ // a parser error, counted from 0
	}
	return l
}

// yamlLines maps the lines yaml.v3 reports to lines of the file. YAML
// breaks lines at "\r", NEL, LS and PS as well as "\n"; the file's lines,
// as editors and findings count them, break at "\n" only. Index i holds the
// content line of YAML line i.
type yamlLines []int

func newYAMLLines(content []byte) yamlLines {
	m := yamlLines{1, 1}
	fileLine := 1
	for i := 0; i < len(content); i++ {
		switch c := content[i]; {
		case c == '\r' && i+1 < len(content) && content[i+1] == '\n':
			i++
			fileLine++
		case c == '\n':
			fileLine++
		case c == '\r':
		case c == 0xC2 && i+1 < len(content) && content[i+1] == 0x85:
			i++
		case c == 0xE2 && i+2 < len(content) && content[i+1] == 0x80 && (content[i+2] == 0xA8 || content[i+2] == 0xA9):
			i += 2
		default:
			continue
		}
		m = append(m, fileLine)
	}
	return m
}

// file returns the file line of a YAML line of the frontmatter, which
// starts on the file's line 2.
func (m yamlLines) file(yamlLine int) int {
	yamlLine = min(max(yamlLine, 1), len(m)-1)
	return m[yamlLine] + 1
}

// yamlErrMessage strips the "yaml: line N: " prefix.
func yamlErrMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if _, m, ok := strings.Cut(rest, ": "); ok {
			return m
		}
	}
	return msg
}

// quoteColonValues rewrites "key: a: b" lines, whose plain value holds ": ",
// to "key: 'a: b'". It returns the new text and the 1-based lines it changed.
func quoteColonValues(b []byte) ([]byte, []int) {
	var out []byte
	var changed []int
	for n, line := range bytes.SplitAfter(b, []byte("\n")) {
		text := string(line)
		eol := ""
		for _, e := range []string{"\r\n", "\n"} {
			if strings.HasSuffix(text, e) {
				text, eol = strings.TrimSuffix(text, e), e
				break
			}
		}
		indent := len(text) - len(strings.TrimLeft(text, " "))
		key, val, found := strings.Cut(text[indent:], ": ")
		val = strings.TrimSpace(val)
		if found && plainKey(key) && val != "" && !strings.ContainsAny(val[:1], "\"'|>[{&*!#%@`") && strings.Contains(val, ": ") {
			text = text[:indent] + key + ": '" + strings.ReplaceAll(val, "'", "''") + "'"
			changed = append(changed, n+1)
		}
		out = append(out, text...)
		out = append(out, eol...)
	}
	return out, changed
}

func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// deref follows YAML aliases to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 16; i++ {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	case yaml.DocumentNode:
		return "document"
	}
	return "value"
}

// fastYAML parses the shape nearly every frontmatter has (top-level
// "key: value" lines with one-line text values, plain or simply quoted, and
// one level of indented "key: value" lines under a key with no value) into
// the node tree yaml.v3 would build. Anything else (escapes, block scalars,
// lists, comments, values YAML would read as numbers, booleans or nulls)
// makes it report false, and yaml.v3 parses the input instead. Discovery
// reads a thousand frontmatters at a time and yaml.v3 was most of that cost.
// FuzzFastYAML checks that both parsers agree on everything fastYAML accepts
// (columns aside, which nothing here reads).
func fastYAML(b []byte) (yaml.Node, bool) {
	root := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1}
	var nested *yaml.Node // the mapping under a key with no value
	indent := 0           // the indentation of nested's keys
	for line := 1; len(b) > 0; line++ {
		raw := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			raw, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		raw = bytes.TrimSuffix(raw, []byte("\r"))
		if len(raw) == 0 {
			continue
		}
		n := len(raw) - len(bytes.TrimLeft(raw, " "))
		key, val, ok := plainPair(raw[n:])
		if !ok {
			return yaml.Node{}, false
		}
		k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: line}
		v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: val, Line: line}
		switch {
		case n == 0:
			if nested != nil && len(nested.Content) == 0 {
				return yaml.Node{}, false // a key with no value is null
			}
			if len(root.Content) == 0 {
				root.Line = line // yaml.v3 places a mapping at its first key
			}
			nested = nil
			if val == "" {
				nested = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
				root.Content = append(root.Content, k, nested)
				continue
			}
		case nested != nil && val != "" && (len(nested.Content) == 0 || n == indent):
			if len(nested.Content) == 0 {
				indent, nested.Line = n, line
			}
			nested.Content = append(nested.Content, k, v)
			continue
		default:
			return yaml.Node{}, false
		}
		root.Content = append(root.Content, k, v)
	}
	if len(root.Content) == 0 || nested != nil && len(nested.Content) == 0 {
		return yaml.Node{}, false
	}
	return yaml.Node{Kind: yaml.DocumentNode, Line: root.Line, Content: []*yaml.Node{root}}, true
}

// maxFastKey keeps fastYAML's keys well under YAML's 1024-character limit
// on implicit keys.
const maxFastKey = 128

// plainPair splits "key: value" where both are text that YAML reads as a
// plain string, exactly as written. value is "" for "key:".
func plainPair(b []byte) (key, value string, ok bool) {
	i := bytes.IndexByte(b, ':')
	if i <= 0 || i > maxFastKey || !plainText(string(b[:i]), false) {
		return "", "", false
	}
	rest := b[i+1:]
	if len(rest) == 0 {
		return string(b[:i]), "", true
	}
	if rest[0] != ' ' {
		return "", "", false
	}
	v := string(bytes.Trim(rest, " "))
	if q, ok := quotedText(v); ok {
		return string(b[:i]), q, true
	}
	if v == "" || !plainText(v, true) {
		return "", "", false
	}
	return string(b[:i]), v, true
}

// quotedText unquotes a one-line, non-empty quoted scalar without escapes:
// "text" with no '"' or '\' inside, or 'text' with quotes doubled.
func quotedText(v string) (string, bool) {
	if len(v) < 3 || v[0] != v[len(v)-1] || v[0] != '"' && v[0] != '\'' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	if v[0] == '"' && strings.ContainsAny(inner, "\"\\") {
		return "", false
	}
	if v[0] == '\'' {
		if strings.Contains(strings.ReplaceAll(inner, "''", ""), "'") {
			return "", false
		}
		inner = strings.ReplaceAll(inner, "''", "'")
	}
	for _, r := range inner {
		if !printable(r) {
			return "", false
		}
	}
	return inner, true
}

// plainText reports whether s is read by YAML as the string s itself in
// block context: it starts with a letter, holds no ": ", " #", tab or
// control character, and is not a word YAML resolves to a boolean or null.
// Keys (value false) hold only letters, digits, "_" and "-".
func plainText(s string, value bool) bool {
	first, _ := utf8.DecodeRuneInString(s)
	if !unicode.IsLetter(first) || strings.HasSuffix(s, ":") ||
		strings.Contains(s, ": ") || strings.Contains(s, " #") {
		return false
	}
	switch strings.ToLower(s) {
	case "true", "false", "null", "yes", "no", "on", "off", "y", "n":
		return false
	}
	for _, r := range s {
		if !printable(r) || !value && !(r < utf8.RuneSelf && (r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

// printable reports whether r may appear in a one-line YAML scalar: no
// control characters, line breaks (NEL, LS, PS), byte-order marks or
// replacement characters.
func printable(r rune) bool {
	return r >= ' ' && r != 0x7F && !(r >= 0x80 && r < 0xA0) && r != utf8.RuneError &&
		r != 0xFEFF && r != 0x2028 && r != 0x2029 && r != 0xFFFE && r != 0xFFFF
}
