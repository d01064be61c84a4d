// Package packs reads capability packs: it resolves a pack's entry doc, parses
// its YAML frontmatter, its skill.toml capability manifest and its tools.json
// tool interface, and discovers packs under a list of roots. Every problem is
// a Finding that names the file, the line, a stable rule id and what to do.
//
// Rule ids (severity in brackets; "e/w" means either, depending on the case):
//
//	pack-missing              [error]   the pack folder does not exist or is not a folder
//	entry-missing             [e/w]     no entry doc (SKILL.md, or a README.md / *.md with frontmatter); warning when only the configured one is absent
//	path-escape               [e/w]     a path leaves the pack or the scanned root (absolute, "..", symlink)
//	read-error                [e/w]     a file could not be read, or is not a regular file (warning for a folder discovery skips)
//	encoding                  [e/w]     binary content or invalid UTF-8; warning for a byte-order mark
//	size                      [e/w]     entry doc over the configured maximum (warning); skill.toml or tools.json over the hard cap (error)
//	frontmatter-missing       [error]   the entry doc does not start with a "---" line
//	frontmatter-unterminated  [error]   no closing "---" line
//	frontmatter-size          [error]   the frontmatter is larger than 64 KiB
//	frontmatter-type          [error]   the frontmatter is not a YAML mapping
//	yaml-syntax               [error]   the frontmatter is not valid YAML
//	yaml-lenient              [warning] an unquoted ": " inside a value was quoted so the YAML parses
//	duplicate-key             [error]   a frontmatter key appears twice
//	unknown-key               [warning] a frontmatter key or tools.json field that no format defines (Agent Skills, Claude Code, Codex; tools.json)
//	allowed-tools             [warning] an allowed-tools entry stands for a capability skill.toml does not request (mapAllowedTools)
//	field-type                [e/w]     a frontmatter value of the wrong type (warning when a scalar can stand for the string)
//	name-missing              [error]   no frontmatter name
//	name-format               [error]   name is not 1-64 of a-z0-9- without leading, trailing or double "-"
//	name-mismatch             [error]   name differs from the folder name
//	description-missing       [error]   no or empty description
//	description-length        [error]   description over 1024 characters
//	compatibility-length      [error]   compatibility over 500 characters
//	metadata-type             [warning] a metadata value that is not a string
//	body-empty                [warning] the entry doc has no Markdown body
//	toml-syntax               [error]   skill.toml is not valid TOML
//	toml-type                 [error]   a skill.toml value has the wrong type
//	toml-unknown-key          [error]   a skill.toml key that spec 001 does not define
//	manifest-version          [error]   [skill].version is not a semantic version
//	api-version               [error]   [skill].api_version is not one this build reads (APIVersion's major, a minor up to its own)
//	manifest-unsupported      [error]   a spec 001 key that packs does not act on (min_caro_version, [knowledge] topics, [recipes] files, [executable], [suggestions], [features])
//	provides-mismatch         [error]   [provides] says the pack ships recipes or tools it does not, or not those it does
//	knowledge                 [error]   a [knowledge] priority or max_context_tokens out of range
//	platform-value            [error]   an unknown [platform] os or arch, or a tool that is not a program name
//	platform-os               [e/w]     this machine's OS is not in [platform].os (CheckHost: error at add, warning at validate)
//	platform-arch             [e/w]     this machine's architecture is not in [platform].arch (likewise)
//	platform-tool             [e/w]     a required tool is not installed (likewise), an optional one (warning), or a tool terminal_exec blocks (error)
//	dependency                [e/w]     a [dependencies] entry that does not parse (error), or a pack not installed in that version (CheckHost)
//	capability-pattern        [error]   a capability entry that does not parse (host, env, path or command pattern)
//	capability-invalid        [error]   a capability request that cannot be honoured as written
//	limits                    [error]   a [limits] value out of range or given twice
//	json-syntax               [error]   tools.json is not valid JSON
//	json-type                 [error]   a tools.json value has the wrong JSON type
//	json-duplicate-key        [error]   a JSON object holds the same key twice
//	tools-empty               [warning] tools.json declares no tool
//	tool-field-missing        [error]   a tool lacks name, description, input_schema or run
//	tool-name                 [error]   a tool name that providers reject, or too long with its pack prefix
//	tool-duplicate            [error]   two tools with one name
//	tool-description-length   [warning] a tool description over 4 lines or 400 characters (spec 004)
//	schema-type               [error]   input_schema is not an object schema
//	schema-compile            [error]   input_schema is not a valid JSON Schema
//	schema-ref                [error]   input_schema refers to something outside the pack
//	run-invalid               [error]   a run object that is none of the three forms
//	file-missing              [error]   a file the pack names does not exist
//	wasm-format               [error]   a .wasm path that is not a regular file starting with the WebAssembly magic number
//	wasm-compile              [error]   a module that is not valid WebAssembly or fails to compile (runtime.Check, packs validate)
//	wasm-export               [error]   a module that lacks the export run.function names, or _start for WASI (runtime.Check)
//	wasm-import               [error]   a module that imports a function its ABI does not provide (runtime.Check)
//	exec-command              [error]   an exec argv[0] that is not a bare program name or absolute path
//	exec-placeholder          [error]   a {{param}} that names no input_schema property, or is malformed
//	exec-grant                [warning] an exec tool whose command the manifest's terminal_exec does not list (packs add refuses the pack)
//	exec-blocked              [error]   an exec tool whose command the manifest blocks
//	root-missing              [warning] a discovery root that does not exist
//	discover-limit            [warning] discovery stopped at MaxPacks
//	discover-depth            [warning] packs lie below MaxDepth and were not scanned
//	name-collision            [warning] a pack hidden by an earlier pack of the same name
package packs

import (
	"errors"
	"fmt"
	"strings"
)

// Severity says whether a finding stops a pack from loading.
type Severity string

const (
	// SeverityError means the pack cannot load until the problem is fixed.
	SeverityError Severity = "error"
	// SeverityWarning means the pack loads and the person is told.
	SeverityWarning Severity = "warning"
)

// Finding is one problem in one file of one pack.
type Finding struct {
	Pack     string   `json:"pack"`
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Severity Severity `json:"severity"`
	Rule     string   `json:"rule"`
	Message  string   `json:"message"`
}

// String formats the finding the way compilers do:
// "file:line: error: rule: message", or "file: error: rule: message" when
// the finding has no line.
func (f Finding) String() string {
	if f.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s: %s", f.File, f.Line, f.Severity, f.Rule, f.Message)
	}
	return fmt.Sprintf("%s: %s: %s: %s", f.File, f.Severity, f.Rule, f.Message)
}

// ErrInvalidPack is wrapped by every *LoadError.
var ErrInvalidPack = errors.New("packs: invalid pack")

// LoadError is returned by Load when a pack has at least one error finding.
type LoadError struct {
	Findings []Finding // every finding, errors and warnings
}

// Error lists the error findings, one per line.
func (e *LoadError) Error() string {
	var b strings.Builder
	b.WriteString("packs: invalid pack:")
	for _, f := range e.Findings {
		if f.Severity == SeverityError {
			b.WriteString("\n\t")
			b.WriteString(f.String())
		}
	}
	return b.String()
}

// Unwrap returns ErrInvalidPack.
func (e *LoadError) Unwrap() error { return ErrInvalidPack }

// HasErrors reports whether a finding of fs is an error.
func HasErrors(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}

// reporter collects findings for one pack.
type reporter struct {
	pack string
	list []Finding
}

func (r *reporter) add(file string, line int, sev Severity, rule, format string, args ...any) {
	r.list = append(r.list, Finding{
		Pack: r.pack, File: file, Line: line, Severity: sev, Rule: rule,
		Message: fmt.Sprintf(format, args...),
	})
}

func (r *reporter) errorf(file string, line int, rule, format string, args ...any) {
	r.add(file, line, SeverityError, rule, format, args...)
}

func (r *reporter) warnf(file string, line int, rule, format string, args ...any) {
	r.add(file, line, SeverityWarning, rule, format, args...)
}
