package author

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/packs"
)

// A pack's own tests live in tests/*.yaml (docs/authoring.md, "Testing a
// pack"). Each file holds a list of cases; each case calls one tool with
// an input, under a grant, with host effects faked, and says what must
// come back and which capabilities must have been exercised. This file
// parses them; Test (test.go) runs them through the runtime pipeline.
//
// Findings use these rule ids, all errors:
//
//	test-syntax    the file is not YAML, or a key is not part of the format
//	test-invalid   a value the format does not accept (named in the message)

const (
	// TestsDir is the folder of a pack's tests.
	TestsDir = "tests"
	// maxTestFileBytes caps one test file.
	maxTestFileBytes = 1 << 20
	// maxTestCases caps the cases of one file.
	maxTestCases = 1000
)

// TestCase is one case of a pack test file.
type TestCase struct {
	File string // the test file, as findings name it
	Line int    // the line of the case
	Name string
	Tool string
	// Input is the tool's JSON arguments ({} when the case gives none).
	Input json.RawMessage
	// Grant lists the capabilities the person grants, each in full as the
	// manifest asks; nil grants everything the manifest asks for.
	Grant []capability.Name
	Fakes TestFakes
	// Expect is what must hold after the call.
	Expect TestExpect
}

// TestFakes are the host effects a case fakes: nothing it names is real.
type TestFakes struct {
	HTTP     []FakeHTTP
	Files    map[string]string // workspace-relative path → content, written before the call
	Commands []FakeCommand     // spec 001's mock_commands
}

// FakeHTTP answers requests to one URL.
type FakeHTTP struct {
	URL     string // absolute http(s) URL; the query string must match too when given
	Method  string // empty matches any method
	Status  int    // default 200
	Headers map[string]string
	Body    string
	// Address is what the URL's host resolves to (default DefaultFakeAddress):
	// the grant decides on it as on a real DNS answer.
	Address netip.Addr
}

// DefaultFakeAddress is what a faked host resolves to unless the case says
// otherwise: a public address, never dialled (the fake answers instead).
func DefaultFakeAddress() netip.Addr { return netip.AddrFrom4([4]byte{93, 184, 215, 14}) }

// FakeCommand stubs one native command by name.
type FakeCommand struct {
	Command  string
	Stdout   string
	Stderr   string
	ExitCode int
}

// TestExpect is what a case checks.
type TestExpect struct {
	// Output, when set, must equal the tool's JSON result (as JSON values:
	// key order and spacing do not matter).
	Output json.RawMessage
	// OutputContains are strings the JSON result must contain.
	OutputContains []string
	// Error, when set, is how the call must end: a capability.Status other
	// than ok ("denied", "invalid_input", "tool_error", "limit", "error").
	Error capability.Status
	// ErrorContains is a string the error message must contain.
	ErrorContains string
	// Exercises must each match a recorded exercise.
	Exercises []ExpectedExercise
	// Exhaustive: no exercise beyond those Exercises matches was recorded.
	Exhaustive bool
	// Files are workspace files that must exist after the call, with that
	// content.
	Files map[string]string
}

// ExpectedExercise matches recorded capability exercises.
type ExpectedExercise struct {
	Capability capability.Name
	Resource   string // "" matches any; "*" in it matches any run of characters
	Allowed    *bool  // nil matches either
}

// Matches reports whether e matches the expectation.
func (x ExpectedExercise) Matches(e capability.Exercise) bool {
	return e.Capability == x.Capability && (x.Allowed == nil || *x.Allowed == e.Allowed) &&
		(x.Resource == "" || packs.GlobMatch(x.Resource, e.Resource))
}

// String renders the expectation for a report.
func (x ExpectedExercise) String() string {
	s := string(x.Capability)
	if x.Resource != "" {
		s += " " + x.Resource
	}
	switch {
	case x.Allowed == nil:
	case *x.Allowed:
		s += " (allowed)"
	default:
		s += " (denied)"
	}
	return s
}

// The YAML shapes, decoded strictly.
type testDoc struct {
	Cases []testCaseDoc `yaml:"cases"`
}

type testCaseDoc struct {
	Name   string    `yaml:"name"`
	Tool   string    `yaml:"tool"`
	Input  yamlValue `yaml:"input"`
	Grant  yamlValue `yaml:"grant"`
	Fakes  fakesDoc  `yaml:"fakes"`
	Expect expectDoc `yaml:"expect"`
}

type fakesDoc struct {
	HTTP     []fakeHTTPDoc     `yaml:"http"`
	Files    map[string]string `yaml:"files"`
	Commands []fakeCommandDoc  `yaml:"commands"`
}

type fakeHTTPDoc struct {
	URL     string            `yaml:"url"`
	Method  string            `yaml:"method"`
	Status  int               `yaml:"status"`
	Headers map[string]string `yaml:"headers"`
	Body    string            `yaml:"body"`
	Address string            `yaml:"address"`
}

type fakeCommandDoc struct {
	Command  string `yaml:"command"`
	Stdout   string `yaml:"stdout"`
	Stderr   string `yaml:"stderr"`
	ExitCode int    `yaml:"exit_code"`
}

type expectDoc struct {
	Output         yamlValue         `yaml:"output"`
	OutputContains yamlStrings       `yaml:"output_contains"`
	Error          string            `yaml:"error"`
	ErrorContains  string            `yaml:"error_contains"`
	Exercises      []exerciseDoc     `yaml:"exercises"`
	Exhaustive     bool              `yaml:"exhaustive"`
	Files          map[string]string `yaml:"files"`
}

type exerciseDoc struct {
	Capability string `yaml:"capability"`
	Resource   string `yaml:"resource"`
	Allowed    *bool  `yaml:"allowed"`
}

// yamlValue is any YAML value, and whether it was given at all.
type yamlValue struct {
	set  bool
	v    any
	line int
}

func (y *yamlValue) UnmarshalYAML(n *yaml.Node) error {
	y.set, y.line = true, n.Line
	return n.Decode(&y.v)
}

// yamlStrings is a string or a list of strings.
type yamlStrings []string

func (y *yamlStrings) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		var s string
		if err := n.Decode(&s); err != nil {
			return err
		}
		*y = []string{s}
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return err
	}
	*y = list
	return nil
}

// LoadTests reads every tests/*.yaml (and *.yml) of the pack in dir, in
// name order, but RecipeTestFile. dir is the folder as the caller names it, for findings. A
// pack without tests/ has no cases and no findings.
func LoadTests(dir string) ([]TestCase, []packs.Finding) {
	rep := &reporter{}
	root, err := packs.SafeJoin(dir, TestsDir)
	if err != nil {
		rep.errorf(filepath.Join(dir, TestsDir), 0, "path-escape", "%v: make tests/ a folder inside the pack", strings.TrimPrefix(err.Error(), "packs: "))
		return nil, rep.list
	}
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		rep.errorf(filepath.Join(dir, TestsDir), 0, "read-error", "%v", err)
		return nil, rep.list
	}
	var cases []TestCase
	for _, e := range entries {
		ext := path.Ext(e.Name())
		if e.IsDir() || ext != ".yaml" && ext != ".yml" {
			continue
		}
		rel := TestsDir + "/" + e.Name()
		if rel == packs.RecipeTestFile {
			continue // spec 001's recipe tests: packs.ParseRecipeTests reads them
		}
		doc, ok, fs := packs.ReadPackFile(dir, rel, filepath.Join(dir, rel), maxTestFileBytes)
		rep.list = append(rep.list, fs...)
		if !ok {
			continue
		}
		cs, fs := ParseTests(filepath.Join(dir, rel), doc)
		cases = append(cases, cs...)
		rep.list = append(rep.list, fs...)
	}
	return cases, rep.list
}

// ParseTests parses one test file. It returns the cases that parsed
// cleanly and a finding for each problem; a file with findings should not
// be run.
func ParseTests(file string, doc []byte) (cases []TestCase, findings []packs.Finding) {
	rep := &reporter{}
	defer func() {
		// yaml.v3 reads untrusted input here: a panic inside it is a finding.
		if r := recover(); r != nil {
			cases = nil
			findings = append(rep.list, packs.Finding{File: file, Severity: packs.SeverityError, Rule: "test-syntax", Message: fmt.Sprintf("the YAML parser failed on this file: %v", r)})
		}
	}()
	var d testDoc
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(&d); err != nil {
		if errors.Is(err, io.EOF) {
			rep.errorf(file, 0, "test-syntax", "the file is empty: write cases: [...] (see docs/authoring.md)")
			return nil, rep.list
		}
		rep.errorf(file, packs.YAMLErrorLine(err), "test-syntax", "%s: fix it (the format is in docs/authoring.md)", strings.TrimPrefix(err.Error(), "yaml: "))
		return nil, rep.list
	}
	lines := caseLines(doc)
	if len(d.Cases) == 0 {
		rep.errorf(file, 0, "test-invalid", "no cases: write cases: with at least one case")
	}
	if len(d.Cases) > maxTestCases {
		rep.errorf(file, 0, "test-invalid", "%d cases, over %d: split the file", len(d.Cases), maxTestCases)
		return nil, rep.list
	}
	names := map[string]bool{}
	for i, c := range d.Cases {
		line := 0
		if i < len(lines) {
			line = lines[i]
		}
		tc, ok := convertCase(file, line, i, c, rep)
		if names[tc.Name] {
			rep.errorf(file, line, "test-invalid", "two cases named %q: give each its own name", tc.Name)
			ok = false
		}
		names[tc.Name] = true
		if ok {
			cases = append(cases, tc)
		}
	}
	if packs.HasErrors(rep.list) {
		return nil, rep.list
	}
	return cases, rep.list
}

// convertCase checks one case and turns it into a TestCase.
func convertCase(file string, line, i int, c testCaseDoc, rep *reporter) (TestCase, bool) {
	before := len(rep.list)
	bad := func(format string, args ...any) { rep.errorf(file, line, "test-invalid", format, args...) }
	tc := TestCase{File: file, Line: line, Name: c.Name, Tool: c.Tool, Input: json.RawMessage("{}")}
	if tc.Name == "" {
		tc.Name = fmt.Sprintf("case %d", i+1)
	}
	if c.Tool == "" {
		bad("case %q names no tool: add tool: NAME", tc.Name)
	}
	if c.Input.set {
		b, err := toJSON(c.Input.v)
		if err != nil {
			bad("case %q: input %v", tc.Name, err)
		}
		tc.Input = b
	}
	if c.Grant.set {
		tc.Grant = []capability.Name{}
		switch v := c.Grant.v.(type) {
		case string:
			switch v {
			case "all":
				tc.Grant = nil
			case "none":
			default:
				bad("case %q: grant is all, none or a list of capability names, not %q", tc.Name, v)
			}
		case []any:
			for _, item := range v {
				s, _ := item.(string)
				n, err := capability.ParseName(s)
				if err != nil {
					bad("case %q: grant: %q is not a capability (use %s)", tc.Name, item, capNames())
					continue
				}
				tc.Grant = append(tc.Grant, n)
			}
		default:
			bad("case %q: grant is all, none or a list of capability names", tc.Name)
		}
	}
	for _, h := range c.Fakes.HTTP {
		u, err := url.Parse(h.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("case %q: fake http url %q is not an absolute http(s) URL", tc.Name, h.URL)
			continue
		}
		f := FakeHTTP{URL: h.URL, Method: strings.ToUpper(h.Method), Status: h.Status, Headers: h.Headers, Body: h.Body, Address: DefaultFakeAddress()}
		if f.Status == 0 {
			f.Status = 200
		}
		if f.Status < 100 || f.Status > 599 {
			bad("case %q: fake http status %d is not an HTTP status", tc.Name, h.Status)
		}
		if h.Address != "" {
			a, err := netip.ParseAddr(h.Address)
			if err != nil {
				bad("case %q: fake http address %q is not an IP address", tc.Name, h.Address)
			}
			f.Address = a
		}
		tc.Fakes.HTTP = append(tc.Fakes.HTTP, f)
	}
	for p := range c.Fakes.Files {
		if !localPath(p) {
			bad("case %q: fake file %q: use a relative path inside the workspace, without ..", tc.Name, p)
		}
	}
	for p := range c.Expect.Files {
		if !localPath(p) {
			bad("case %q: expected file %q: use a relative path inside the workspace, without ..", tc.Name, p)
		}
	}
	tc.Fakes.Files, tc.Expect.Files = c.Fakes.Files, c.Expect.Files
	for _, m := range c.Fakes.Commands {
		if m.Command == "" || strings.ContainsAny(m.Command, "/\\\x00") || m.Command == "." || m.Command == ".." {
			bad("case %q: fake command %q: name the program as the tool runs it, a bare name such as git", tc.Name, m.Command)
			continue
		}
		if m.ExitCode < 0 || m.ExitCode > 255 {
			bad("case %q: fake command %s: exit_code %d is not 0-255", tc.Name, m.Command, m.ExitCode)
		}
		tc.Fakes.Commands = append(tc.Fakes.Commands, FakeCommand(m))
	}
	x := c.Expect
	if x.Output.set {
		b, err := toJSON(x.Output.v)
		if err != nil {
			bad("case %q: output %v", tc.Name, err)
		}
		tc.Expect.Output = b
	}
	tc.Expect.OutputContains, tc.Expect.ErrorContains, tc.Expect.Exhaustive = x.OutputContains, x.ErrorContains, x.Exhaustive
	if x.Error != "" {
		st := capability.Status(x.Error)
		if !slices.Contains(testStatuses, st) || st == capability.StatusOK {
			bad("case %q: error %q: use one of denied, invalid_input, tool_error, limit, error", tc.Name, x.Error)
		}
		tc.Expect.Error = st
		if x.Output.set || len(x.OutputContains) > 0 {
			bad("case %q: expects both an error and an output: a call ends one way", tc.Name)
		}
	}
	for _, e := range x.Exercises {
		n, err := capability.ParseName(e.Capability)
		if err != nil {
			bad("case %q: exercise capability %q is not one of %s", tc.Name, e.Capability, capNames())
			continue
		}
		tc.Expect.Exercises = append(tc.Expect.Exercises, ExpectedExercise{Capability: n, Resource: e.Resource, Allowed: e.Allowed})
	}
	return tc, len(rep.list) == before
}

var testStatuses = []capability.Status{capability.StatusOK, capability.StatusToolError, capability.StatusDenied, capability.StatusInvalidInput, capability.StatusLimit, capability.StatusError}

func capNames() string {
	names := make([]string, len(capability.All()))
	for i, n := range capability.All() {
		names[i] = string(n)
	}
	return strings.Join(names, ", ")
}

// localPath reports whether p is a relative, clean path with no "..".
func localPath(p string) bool {
	return p != "" && filepath.IsLocal(p) && !strings.ContainsRune(p, 0) && !strings.Contains(p, `\`)
}

// toJSON converts a decoded YAML value to JSON; a mapping with keys that
// are not strings has no JSON form.
func toJSON(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, errors.New("has no JSON form: use string keys and plain values")
	}
	return b, nil
}

// caseLines returns the line of each case, in order.
func caseLines(doc []byte) []int {
	var root yaml.Node
	if yaml.Unmarshal(doc, &root) != nil || len(root.Content) == 0 {
		return nil
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "cases" {
			var out []int
			for _, c := range m.Content[i+1].Content {
				out = append(out, c.Line)
			}
			return out
		}
	}
	return nil
}

// reporter collects the findings of the test files, all errors.
type reporter struct{ list []packs.Finding }

func (r *reporter) errorf(file string, line int, rule, format string, args ...any) {
	r.list = append(r.list, packs.Finding{File: file, Line: line, Severity: packs.SeverityError, Rule: rule, Message: fmt.Sprintf(format, args...)})
}
