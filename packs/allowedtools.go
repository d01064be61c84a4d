package packs

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/packs-run/packs/capability"
)

// maxAllowedTools bounds the entries read from allowed-tools.
const maxAllowedTools = 256

// splitAllowedTools splits an allowed-tools string into entries at spaces
// and commas outside parentheses: "Read, Grep, Bash(git log *)" is three.
func splitAllowedTools(s string) []string {
	var out []string
	depth, start := 0, -1
	flush := func(end int) {
		if start >= 0 && len(out) < maxAllowedTools {
			out = append(out, s[start:end])
		}
		start = -1
	}
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case (r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r') && depth == 0:
			flush(i)
			continue
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(s))
	return out
}

// toolMapping is what packs makes of one allowed-tools entry: the
// capability request it stands for, or why it stands for none.
type toolMapping struct {
	Entry   string
	Request capability.Request // zero when the entry maps to nothing
	// Default says the entry needs nothing beyond what every pack holds
	// (reading the pack, writing the chat's workspace).
	Default bool
	// Wider says the request is wider than the entry (packs grants a
	// program, not one of its subcommands).
	Wider bool
	// Unmapped says why the entry maps to nothing packs can grant; "" when
	// it maps.
	Unmapped string
}

// mapAllowedTools maps Claude Code's allowed-tools entries to packs'
// capability requests: Bash(git:*) or Bash(git log *) asks for
// terminal_exec git; Read(PATH) for filesystem_read PATH; Write(PATH) and
// Edit(PATH) for filesystem_write PATH; WebFetch(domain:HOST) for network
// HOST. Read, Grep, Glob, Write and Edit without a path need only the
// defaults. What packs cannot grant (a shell for every command, web
// search, sub-agents, MCP tools, a fetch of any host) maps to nothing and
// says why.
func mapAllowedTools(entries []string) []toolMapping {
	out := make([]toolMapping, 0, len(entries))
	for _, e := range entries {
		out = append(out, mapTool(e))
	}
	return out
}

func mapTool(entry string) toolMapping {
	m := toolMapping{Entry: entry}
	name, arg, hasArg := strings.Cut(entry, "(")
	if hasArg {
		var ok bool
		if arg, ok = strings.CutSuffix(arg, ")"); !ok {
			m.Unmapped = "it is not NAME or NAME(SPEC)"
			return m
		}
		arg = strings.TrimSpace(arg)
	}
	switch name {
	case "Bash":
		cmd := bashCommand(arg)
		switch {
		case !hasArg || cmd == "" || cmd == "*":
			m.Unmapped = "it allows every command, and packs grants commands one program at a time: list them as Bash(PROGRAM:*) or in skill.toml's terminal_exec commands"
			return m
		}
		m.Request.TerminalExec.Commands = []string{cmd}
		rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSuffix(strings.TrimSuffix(arg, ":*"), "*"), cmd))
		m.Wider = rest != ""
	case "Read", "Grep", "Glob", "LS":
		if !hasArg {
			m.Default = true
			return m
		}
		m.Request.FilesystemRead = []string{claudePath(arg)}
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		if !hasArg {
			m.Default = true
			return m
		}
		m.Request.FilesystemWrite = []string{claudePath(arg)}
	case "WebFetch":
		host, ok := strings.CutPrefix(arg, "domain:")
		if !hasArg || !ok || host == "" {
			m.Unmapped = "it allows every host, and packs grants hosts by name: write WebFetch(domain:HOST) or list the hosts in skill.toml's network"
			return m
		}
		m.Request.Network = []string{host}
	case "WebSearch":
		m.Unmapped = "packs has no web search: a pack's tool reaches the hosts its network grant names"
		return m
	case "Task", "Agent", "TodoWrite", "TodoRead", "ExitPlanMode", "Skill", "SlashCommand":
		m.Unmapped = "it is a tool of Claude Code itself, which packs does not have"
		return m
	default:
		switch {
		case strings.HasPrefix(name, "mcp__"):
			m.Unmapped = "it is another MCP server's tool: packs grants only its own capabilities"
		default:
			m.Unmapped = "packs knows no such tool"
		}
		return m
	}
	if err := m.Request.Validate(); err != nil {
		reason := err.Error()
		var pe *capability.PatternError
		if errors.As(err, &pe) {
			reason = pe.Reason
		}
		m.Request, m.Wider = capability.Request{}, false
		m.Unmapped = "it does not fit packs' pattern rules (" + reason + ")"
	}
	return m
}

// bashCommand is the program of a Bash(...) rule: "git" of "git:*",
// "git log *" and "git".
func bashCommand(arg string) string {
	arg = strings.TrimSpace(arg)
	if i := strings.IndexAny(arg, ": "); i >= 0 {
		arg = arg[:i]
	}
	return arg
}

// claudePath turns a Claude Code path rule into packs' form: "//abs" is an
// absolute path, "~/x" stays, "/x" and "x" are relative to the project,
// which is the workspace ("./x") for packs.
func claudePath(p string) string {
	switch {
	case strings.HasPrefix(p, "//"):
		return p[1:]
	case strings.HasPrefix(p, "~/"), strings.HasPrefix(p, "./"), strings.HasPrefix(p, "$"):
		return p
	}
	return "./" + strings.TrimPrefix(p, "/")
}

// allowedToolsRequest maps the frontmatter's allowed-tools and, when the
// pack has a skill.toml (which says what the pack asks for), reports at
// the allowed-tools line each mapped request skill.toml does not make. It
// returns the request the entries stand for, for a pack without
// skill.toml. What each entry stands for, and why one stands for nothing,
// is packs lint's (allowed-tools-map): the pack runs the same either way.
func allowedToolsRequest(fm Frontmatter, m *Manifest, file string, rep *reporter) capability.Request {
	var all capability.Request
	for _, tm := range mapAllowedTools(fm.AllowedTools) {
		if tm.Unmapped != "" || tm.Default {
			continue
		}
		for _, n := range tm.Request.Names() {
			for _, r := range tm.Request.Resources(n) {
				if m != nil && !slices.Contains(m.Capabilities.Resources(n), r) {
					rep.warnf(file, fm.AllowedToolsLine, "allowed-tools", "%s asks for %s %s, which skill.toml does not request: packs follows skill.toml, so add it to [capabilities] or remove the entry", tm.Entry, n, r)
				}
			}
		}
		all = mergeRequest(all, tm.Request)
	}
	return all
}

// mergeRequest adds b's resources to a, each once.
func mergeRequest(a, b capability.Request) capability.Request {
	add := func(dst *[]string, src []string) {
		for _, s := range src {
			if !slices.Contains(*dst, s) {
				*dst = append(*dst, s)
			}
		}
	}
	add(&a.TerminalExec.Commands, b.TerminalExec.Commands)
	add(&a.FilesystemRead, b.FilesystemRead)
	add(&a.FilesystemWrite, b.FilesystemWrite)
	add(&a.Network, b.Network)
	return a
}

// describeMapping says in words what packs makes of an entry, for packs
// lint.
func describeMapping(tm toolMapping) string {
	switch {
	case tm.Unmapped != "":
		return "nothing: " + tm.Unmapped
	case tm.Default:
		return "nothing beyond the defaults (the pack's own files, the chat's workspace)"
	}
	var parts []string
	for _, n := range tm.Request.Names() {
		parts = append(parts, fmt.Sprintf("%s %s", n, strings.Join(tm.Request.Resources(n), ", ")))
	}
	if tm.Wider {
		parts = append(parts, "the whole program, since packs grants programs and not their subcommands")
	}
	return strings.Join(parts, ", ")
}
