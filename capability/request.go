package capability

import (
	"fmt"
	"slices"
)

// ExecRequest is the terminal_exec part of a request: the commands a pack may
// run (by program name, never through a shell) and the ones it must never run.
type ExecRequest struct {
	Commands []string
	Blocked  []string
}

// Request is what a pack asks for in skill.toml. It is plain data; Compile
// checks every pattern once so nothing downstream can fail on one.
type Request struct {
	TerminalExec    ExecRequest
	FilesystemRead  []string // host paths ("~" and "$VAR" expanded at grant time) or globs
	FilesystemWrite []string
	Network         []string // host patterns: "api.example.com", "*.example.com", "10.0.0.1"
	EnvRead         []string // variable names or prefixes with a trailing "*": "AWS_*"
	SecretsAccess   []string // secret names; "reveal:NAME" lets the tool read the value (RevealPrefix)
	SecretsInject   []SecretInjection
	AskPerson       bool // the guest may ask the person questions (resource AskResource)
	Limits          Limits

	c *compiled // set by Compile: the patterns, parsed once
}

// Compile parses every pattern once and returns a copy of r that keeps
// them, so that resolving a grant for each call does not parse them again
// (a pack's loader compiles its request at load). A change to the fields
// of the copy afterwards is not seen by what it compiled: compile again.
func (r Request) Compile() (Request, error) {
	c, err := r.compile()
	if err != nil {
		return r, err
	}
	r.c = &c
	return r, nil
}

// Names lists the capabilities the request asks for, in the order of All.
func (r Request) Names() []Name {
	var out []Name
	for _, n := range all {
		if r.Has(n) {
			out = append(out, n)
		}
	}
	return out
}

// Has reports whether the request asks for n at all.
func (r Request) Has(n Name) bool {
	switch n {
	case TerminalExec:
		return len(r.TerminalExec.Commands) > 0
	case FilesystemRead:
		return len(r.FilesystemRead) > 0
	case FilesystemWrite:
		return len(r.FilesystemWrite) > 0
	case Network:
		return len(r.Network) > 0
	case EnvRead:
		return len(r.EnvRead) > 0
	case SecretsAccess:
		return len(r.SecretsAccess) > 0
	case AskPerson:
		return r.AskPerson
	}
	return false
}

// Resources returns a copy of the resources the request lists under n
// (commands, paths, host patterns, variable patterns or secret names).
func (r Request) Resources(n Name) []string { return slices.Clone(r.resources(n)) }

// resources is Resources without the copy, for callers that only read.
func (r Request) resources(n Name) []string {
	switch n {
	case TerminalExec:
		return r.TerminalExec.Commands
	case FilesystemRead:
		return r.FilesystemRead
	case FilesystemWrite:
		return r.FilesystemWrite
	case Network:
		return r.Network
	case EnvRead:
		return r.EnvRead
	case SecretsAccess:
		return r.SecretsAccess
	case AskPerson:
		if r.AskPerson {
			return askResources
		}
	}
	return nil
}

// askResources is what a request for ask_person asks for; never modified.
var askResources = []string{AskResource}

// PatternError reports a pattern that does not compile. Field is the
// capability, Index the position in its list.
type PatternError struct {
	Field   Name
	Index   int
	Pattern string
	Reason  string
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("capability: %s[%d] %q: %s", e.Field, e.Index, e.Pattern, e.Reason)
}

// Validate compiles every pattern in the request and returns the first
// *PatternError, or nil.
func (r Request) Validate() error {
	_, err := r.compile()
	return err
}

// compiled is a Request whose patterns have been parsed.
type compiled struct {
	commands []string
	blocked  []string
	read     []PathRule
	write    []PathRule
	hosts    []HostPattern
	env      []EnvPattern
	secrets  []string
	inject   []SecretInjection
	ask      bool
}

func (r Request) compile() (compiled, error) {
	c := compiled{
		commands: make([]string, 0, len(r.TerminalExec.Commands)),
		read:     make([]PathRule, 0, len(r.FilesystemRead)),
		write:    make([]PathRule, 0, len(r.FilesystemWrite)),
		hosts:    make([]HostPattern, 0, len(r.Network)),
		env:      make([]EnvPattern, 0, len(r.EnvRead)),
		secrets:  make([]string, 0, len(r.SecretsAccess)),
		ask:      r.AskPerson,
	}
	for i, s := range r.TerminalExec.Commands {
		if err := checkCommand(s); err != nil {
			return c, &PatternError{TerminalExec, i, s, err.Error()}
		}
		c.commands = append(c.commands, s)
	}
	for i, s := range r.TerminalExec.Blocked {
		if err := checkCommand(s); err != nil {
			return c, &PatternError{TerminalExec, i, s, err.Error()}
		}
		c.blocked = append(c.blocked, s)
	}
	for i, s := range r.FilesystemRead {
		p, err := ParsePathRule(s)
		if err != nil {
			return c, &PatternError{FilesystemRead, i, s, err.Error()}
		}
		c.read = append(c.read, p)
	}
	for i, s := range r.FilesystemWrite {
		p, err := ParsePathRule(s)
		if err != nil {
			return c, &PatternError{FilesystemWrite, i, s, err.Error()}
		}
		c.write = append(c.write, p)
	}
	for i, s := range r.Network {
		h, err := ParseHostPattern(s)
		if err != nil {
			return c, &PatternError{Network, i, s, err.Error()}
		}
		c.hosts = append(c.hosts, h)
	}
	for i, s := range r.EnvRead {
		e, err := ParseEnvPattern(s)
		if err != nil {
			return c, &PatternError{EnvRead, i, s, err.Error()}
		}
		c.env = append(c.env, e)
	}
	for i, s := range r.SecretsAccess {
		if err := checkSecretResource(s); err != nil {
			return c, &PatternError{SecretsAccess, i, s, err.Error()}
		}
		c.secrets = append(c.secrets, s)
	}
	for i, in := range r.SecretsInject {
		if err := in.check(&c); err != nil {
			return c, &InjectionError{Index: i, Reason: err.Error()}
		}
		c.inject = append(c.inject, in)
	}
	return c, nil
}
