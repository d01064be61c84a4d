package packs

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Lint rule ids (all warnings: a pack that lints badly still loads). They
// are spec 004's capability-stack checklist; docs/authoring.md explains
// each and how to fix it.
//
//	skill-length          the entry doc is over maxSkillLines lines
//	skill-section         a recommended section (What This Is, Tools Reference, Decision Tree, Communication Values) is missing
//	description-trigger   the description does not say when to use the pack
//	tool-description      a tool description is shorter than 2 lines (longer than 4 is validate's tool-description-length)
//	tool-unmentioned      a tool the body never names
//	decision-table        a pack with several tools and no table that maps situations to them
//	name-alignment        skill.toml's id does not end in the pack's name
//	tool-name-stutter     a tool name that repeats the pack's name (the model sees pack__tool)
//	frontmatter-other-tool a frontmatter key of Claude Code (or another tool): what packs does with it
//	allowed-tools-map     what an allowed-tools entry stands for in packs, or why it stands for nothing
const (
	// maxSkillLines is spec 004's ceiling for SKILL.md: longer guidance
	// belongs in references/.
	maxSkillLines = 500
	// maxLintBytes bounds what lint reads of the entry doc.
	maxLintBytes = 4 << 20
)

// ValidName reports whether s is a pack name by the Agent Skills rule: 1-64
// of a-z, 0-9 and single hyphens, not starting or ending with one.
func ValidName(s string) bool { return checkName(s) == nil }

// sections are spec 004's recommended SKILL.md sections, each with the
// words a heading may use for it.
var sections = []struct {
	name  string
	words []string
}{
	{"What This Is", []string{"what this is", "overview", "about"}},
	{"Tools Reference", []string{"tools", "tool reference"}},
	{"Decision Tree", []string{"decision", "when to use", "which tool"}},
	{"Communication Values", []string{"communication", "tone", "values"}},
}

// triggerWords are what a description that says when to use the pack
// contains (spec 004: "trigger-focused").
var triggerWords = regexp.MustCompile(`(?i)\b(use (it |this |this pack |this skill )?(when|for|to)|when (you|the user|someone|a user|asked)|whenever|if the user|for (questions|tasks|requests))\b`)

// Lint checks a loaded pack against spec 004's checklist. dir is the pack
// folder as the caller names it, for the findings' file names. It reads the
// entry doc's body; checks that need the pack's compiled modules (which
// capabilities the code uses) are the caller's.
func Lint(dir string, p *Pack) []Finding {
	rep := &reporter{pack: p.Name}
	entry := filepath.Join(dir, p.EntryDoc)
	body, bodyLine := readBody(filepath.Join(p.Dir, p.EntryDoc), p.Body)

	lines := bytes.Count(body, []byte("\n")) + bodyLine
	if len(body) > 0 && body[len(body)-1] != '\n' {
		lines++
	}
	if lines > maxSkillLines {
		rep.warnf(entry, maxSkillLines+1, "skill-length", "is %d lines, over spec 004's %d: move reference material into references/ and link to it", lines, maxSkillLines)
	}
	if !triggerWords.MatchString(p.Frontmatter.Description) {
		rep.warnf(entry, fieldLine(filepath.Join(p.Dir, p.EntryDoc), "description:"), "description-trigger",
			"the description does not say when to use the pack: add \"Use it when ...\" with the requests or words that call for it (the model picks packs by this line)")
	}

	headings := map[string]int{}
	for i, l := range strings.Split(string(body), "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "#") {
			headings[strings.ToLower(strings.TrimSpace(strings.TrimLeft(t, "#")))] = bodyLine + i
		}
	}
	for _, s := range sections {
		if !hasHeading(headings, s.words) {
			rep.warnf(entry, 0, "skill-section", "no %q section: spec 004 recommends What This Is, Tools Reference, Decision Tree and Communication Values", s.name)
		}
	}

	text := string(body)
	for _, t := range p.Tools {
		if n := strings.Count(strings.TrimSpace(t.Description), "\n") + 1; n < 2 {
			rep.warnf(t.File, t.Line, "tool-description", "tool %s has a %d-line description: use 2-4 lines, what it does and when, pointing to the skill for detail", t.Name, n)
		}
		if !mentions(text, t.Name) {
			rep.warnf(entry, 0, "tool-unmentioned", "the body never names tool %s: say when to use it, under Tools Reference", t.Name)
		}
		if strings.HasPrefix(t.Name, strings.ReplaceAll(p.Name, "-", "_")+"_") || strings.HasPrefix(t.Name, p.Name+"-") {
			rep.warnf(t.File, t.Line, "tool-name-stutter", "tool %s repeats the pack's name: the model already sees it as %s__%s", t.Name, p.Name, t.Name)
		}
	}
	if len(p.Tools) > 1 && !hasDecisionTable(text, p.Tools) {
		rep.warnf(entry, 0, "decision-table", "%d tools and no table that maps situations to them: add a Decision Tree table (| situation | tool | notes |)", len(p.Tools))
	}
	for _, k := range p.Frontmatter.Foreign {
		rep.warnf(entry, k.Line, "frontmatter-other-tool", "%s is a %s key: %s", k.Key, k.Tool, k.Does)
	}
	for _, tm := range mapAllowedTools(p.Frontmatter.AllowedTools) {
		where := ": the pack's request, as it has no skill.toml"
		switch {
		case tm.Default, tm.Unmapped != "":
			where = ""
		case p.Manifest != nil:
			where = ", which skill.toml must request"
		}
		rep.warnf(entry, p.Frontmatter.AllowedToolsLine, "allowed-tools-map", "allowed-tools %s stands for %s%s", tm.Entry, describeMapping(tm), where)
	}
	if m := p.Manifest; m != nil && m.ID != "" {
		if last := m.ID[strings.LastIndexByte(m.ID, '.')+1:]; last != p.Name {
			rep.warnf(filepath.Join(dir, manifestFile), tomlLine(readAll(filepath.Join(p.Dir, manifestFile)), []string{"skill", "id"}, -1), "name-alignment",
				"id %q does not end in the pack's name %q: use \"<namespace>.%s\", so folder, frontmatter, id and tools share one name", m.ID, p.Name, p.Name)
		}
	}
	return rep.list
}

// readBody returns the entry doc's Markdown body (from offset on, at most
// maxLintBytes) and the line it starts on.
func readBody(path string, offset int64) ([]byte, int) {
	b := readAll(path)
	if offset > int64(len(b)) {
		offset = int64(len(b))
	}
	start := 1 + bytes.Count(b[:offset], []byte("\n"))
	return b[offset:], start
}

func readAll(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxLintBytes))
	return b
}

// fieldLine is the line of the first line starting with prefix, or 0.
func fieldLine(path, prefix string) int {
	for i, l := range strings.Split(string(readAll(path)), "\n") {
		if strings.HasPrefix(l, prefix) {
			return i + 1
		}
	}
	return 0
}

func hasHeading(headings map[string]int, words []string) bool {
	for h := range headings {
		for _, w := range words {
			if strings.Contains(h, w) {
				return true
			}
		}
	}
	return false
}

// mentions reports whether text names tool as a word.
func mentions(text, tool string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], tool)
		if j < 0 {
			return false
		}
		j += i
		before, after := byte(' '), byte(' ')
		if j > 0 {
			before = text[j-1]
		}
		if k := j + len(tool); k < len(text) {
			after = text[k]
		}
		if !isWordByte(before) && !isWordByte(after) {
			return true
		}
		i = j + 1
	}
}

func isWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// hasDecisionTable reports whether a Markdown table row names at least two
// of the tools (or every tool when there are two).
func hasDecisionTable(text string, tools []*Tool) bool {
	named := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "|") {
			continue
		}
		for _, t := range tools {
			if mentions(l, t.Name) {
				named[t.Name] = true
			}
		}
	}
	return len(named) >= 2
}
