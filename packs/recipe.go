package packs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ohler55/ojg/jp"
	"gopkg.in/yaml.v3"

	"github.com/packs-run/packs/capability"
)

// Recipes are spec 001's declarative workflows (recipes/*.yaml). They are
// parsed strictly at load, every problem a Finding with its line; the rule
// ids are:
//
//	recipe-syntax        [error]   the file is not valid YAML, or uses anchors and aliases
//	recipe-type          [error]   a value of the wrong YAML type
//	recipe-unknown-key   [error]   a key the recipe format does not define
//	recipe-field-missing [error]   id, name, steps, a step's id, or a step's command/tool
//	recipe-id            [error]   a recipe or step id that is not 1-64 of a-z0-9-
//	recipe-duplicate     [error]   two recipes, steps or parameters with one id or name
//	recipe-param         [error]   a parameter's type, default or validation regex is wrong
//	recipe-placeholder   [error]   a {{name}} that names no parameter, or is malformed
//	recipe-command       [error]   a command that does not split into an argv, or uses shell syntax
//	recipe-option        [error]   a parameter that could choose an option of the program
//	recipe-grant         [e/w]     a command (or command_exists) the manifest's terminal_exec does not name; a variable env_read does not name (warning)
//	recipe-tool          [error]   a tool step naming a tool tools.json does not declare
//	recipe-confirmation  [error]   a confirmation level (or skill.toml default_confirmation) other than auto, prompt, always
//	recipe-risk          [error]   a risk_level other than low, moderate, high, critical
//	recipe-timeout       [error]   a timeout that is not a positive number of seconds or a duration up to 1h
//	recipe-expect        [error]   an expect block that is wrong (json_path that does not parse, contains without json_path)
//	recipe-precondition  [error]   a check other than command_exists, env_set, custom, or without its args or command
//	recipe-rollback      [error]   a rollback entry's undoes names no step

// Confirmation is how a recipe step meets the approval gate.
type Confirmation string

const (
	// ConfirmAuto runs without asking only where the policy (or an "allow
	// for this chat", or a blanket yes to the run) already approves the
	// call's class; otherwise it is ConfirmPrompt. It never approves
	// anything by itself.
	ConfirmAuto Confirmation = "auto"
	// ConfirmPrompt is the normal gate.
	ConfirmPrompt Confirmation = "prompt"
	// ConfirmAlways asks a person for this call even when its class was
	// allowed for the chat or the whole run was approved; only the policy
	// decides before the person.
	ConfirmAlways Confirmation = "always"
)

// validConfirmation reports whether s is a confirmation level.
func validConfirmation(s string) bool {
	switch Confirmation(s) {
	case ConfirmAuto, ConfirmPrompt, ConfirmAlways:
		return true
	}
	return false
}

// RiskLevel is how much a step can break, for the approver and the policy
// (capability.RiskLevels lists them).
type RiskLevel = capability.RiskLevel

// Recipe is one recipes/*.yaml file, checked at load.
type Recipe struct {
	ID, Name, Description, Version string
	File                           string // relative to the pack root, slash-separated
	Triggers                       []RecipeTrigger
	Parameters                     []RecipeParameter
	Preconditions                  []Precondition
	Steps                          []RecipeStep
	Verification                   []RecipeStep
	Rollback                       []RecipeStep
}

// RecipeTrigger says when the recipe fits; the host only shows it.
type RecipeTrigger struct {
	Keywords []string `json:"keywords,omitempty"`
	Intent   string   `json:"intent,omitempty"`
	HasFiles []string `json:"has_files,omitempty"`
}

// RecipeParameter is one input of a recipe.
type RecipeParameter struct {
	Name        string
	Type        string // string, integer, number or boolean
	Description string
	Required    bool
	Default     *string        // the default as text; nil without one
	Validation  *regexp.Regexp // matched against the value's text
	Line        int
}

// Precondition is a check made before any step, itself a gated call.
type Precondition struct {
	Check    string         // command_exists, env_set or custom
	Args     []string       // commands (command_exists) or variable names (env_set)
	Command  *RecipeCommand // custom: the command, which must exit 0
	Message  string
	Fallback string // advice shown when the check fails; never run
	Line     int
}

// RecipeStep is a step, a verification check or a rollback step: exactly
// one of Command and Tool.
type RecipeStep struct {
	ID, Name, Description string
	Message               string // verification: what failing means
	Command               *RecipeCommand
	Tool                  string
	Confirmation          Confirmation // resolved: the step's, the manifest's default, or prompt
	RiskLevel             RiskLevel
	Timeout               time.Duration // 0: the grant's limit
	Expect                Expect
	Undoes                string // rollback: runs only when this step completed
	Line                  int
	input                 map[string]inputValue
	inputKeys             []string
}

type inputValue struct {
	param string          // "{{param}}": the parameter's value
	lit   json.RawMessage // otherwise the literal
}

// RecipeCommand is a step's command, split into an argv at load and never
// given to a shell. Parameters fill whole argv elements under the rules of
// ArgvTemplate.
type RecipeCommand struct {
	Text string
	Argv []string // as split, placeholders intact
	tmpl *ArgvTemplate
}

// Expand returns the argv for the recipe's arguments (Recipe.Bind).
func (c *RecipeCommand) Expand(args json.RawMessage) ([]string, error) {
	if c == nil || c.tmpl == nil {
		return nil, errors.New("packs: recipe command was not compiled by Load")
	}
	return c.tmpl.Expand(args)
}

// Expect is what a step's result must show. A command must exit with
// ExitCode (0 when unset).
type Expect struct {
	ExitCode       *int
	OutputContains string
	JSONPath       string
	Contains       string // with JSONPath: a selected value's text must contain it
	path           jp.Expr
}

// ErrExpectation is wrapped by the error of a result that does not meet
// its Expect.
var ErrExpectation = errors.New("packs: the result does not meet the step's expectation")

// Check returns nil when a result with exit status code, stdout and stderr
// meets the expectation, else an error wrapping ErrExpectation:
// output_contains looks in both streams, json_path parses stdout.
func (e Expect) Check(code int, stdout, stderr []byte) error {
	want := 0
	if e.ExitCode != nil {
		want = *e.ExitCode
	}
	if code != want {
		return fmt.Errorf("%w: exit status %d, expected %d", ErrExpectation, code, want)
	}
	if e.OutputContains != "" && !bytes.Contains(stdout, []byte(e.OutputContains)) && !bytes.Contains(stderr, []byte(e.OutputContains)) {
		return fmt.Errorf("%w: the output does not contain %q", ErrExpectation, e.OutputContains)
	}
	if e.JSONPath == "" {
		return nil
	}
	var doc any
	if err := json.Unmarshal(stdout, &doc); err != nil {
		return fmt.Errorf("%w: json_path %s: the output is not JSON", ErrExpectation, e.JSONPath)
	}
	got := e.path.Get(doc)
	if len(got) == 0 {
		return fmt.Errorf("%w: json_path %s selects nothing", ErrExpectation, e.JSONPath)
	}
	if e.Contains == "" {
		return nil
	}
	for _, v := range got {
		s, ok := v.(string)
		if !ok {
			b, _ := json.Marshal(v)
			s = string(b)
		}
		if strings.Contains(s, e.Contains) {
			return nil
		}
	}
	return fmt.Errorf("%w: no value at json_path %s contains %q", ErrExpectation, e.JSONPath, e.Contains)
}

// ToolInput returns a tool step's input for the recipe's arguments: the
// step's input mapping with every "{{param}}" value replaced by the
// parameter's JSON value.
func (s *RecipeStep) ToolInput(args json.RawMessage) (json.RawMessage, error) {
	var vals map[string]json.RawMessage
	if len(bytes.TrimSpace(args)) > 0 {
		if err := json.Unmarshal(args, &vals); err != nil {
			return nil, fmt.Errorf("%w: recipe arguments are not a JSON object", ErrInvalidInput)
		}
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range s.inputKeys {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		b.Write(key)
		b.WriteByte(':')
		v := s.input[k]
		if v.param == "" {
			b.Write(v.lit)
			continue
		}
		pv, ok := vals[v.param]
		if !ok {
			return nil, &inputError{Tool: s.Tool, Problems: []inputProblem{{Field: "/" + v.param, Reason: "the recipe parameter has no value"}}}
		}
		b.Write(pv)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ParamError is a recipe argument that does not fit its parameter.
type ParamError struct {
	Param, Reason string
}

func (e *ParamError) Error() string {
	if e.Param == "" {
		return "packs: recipe arguments: " + e.Reason
	}
	return fmt.Sprintf("packs: recipe parameter %s: %s", e.Param, e.Reason)
}

// Unwrap returns ErrInvalidInput.
func (e *ParamError) Unwrap() error { return ErrInvalidInput }

// Bind checks values (parameter name → text) against the parameters and
// returns the recipe's arguments as one JSON object: defaults filled in,
// each value converted to its type and matched against its validation. A
// missing required parameter, an unknown name or a value that does not fit
// is a *ParamError.
func (r *Recipe) Bind(values map[string]string) (json.RawMessage, error) {
	return r.bind(values, false)
}

// CheckValues checks the values given so far, as Bind does, except that a
// missing required parameter is not an error (Missing lists them): what a
// front end checks before it asks the person for the rest.
func (r *Recipe) CheckValues(values map[string]string) error {
	_, err := r.bind(values, true)
	return err
}

func (r *Recipe) bind(values map[string]string, partial bool) (json.RawMessage, error) {
	for _, k := range slices.Sorted(maps.Keys(values)) {
		if !slices.ContainsFunc(r.Parameters, func(p RecipeParameter) bool { return p.Name == k }) {
			return nil, &ParamError{Param: k, Reason: fmt.Sprintf("recipe %s has no such parameter", r.ID)}
		}
	}
	out := map[string]json.RawMessage{}
	for _, p := range r.Parameters {
		v, ok := values[p.Name]
		if !ok && p.Default != nil {
			v, ok = *p.Default, true
		}
		if !ok {
			if p.Required && !partial {
				return nil, &ParamError{Param: p.Name, Reason: "is required: pass a value"}
			}
			continue
		}
		raw, err := p.value(v)
		if err != nil {
			return nil, &ParamError{Param: p.Name, Reason: err.Error()}
		}
		out[p.Name] = raw
	}
	b, err := json.Marshal(out)
	return b, err
}

// value converts a parameter's text to its JSON value.
func (p RecipeParameter) value(s string) (json.RawMessage, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, errors.New("the value holds a NUL byte")
	}
	if p.Validation != nil && !p.Validation.MatchString(s) {
		return nil, fmt.Errorf("%q does not match %s", s, p.Validation)
	}
	switch p.Type {
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		return json.RawMessage(strconv.FormatInt(n, 10)), nil
	case "number":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f != f || f > 1e308 || f < -1e308 {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return json.RawMessage(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case "boolean":
		b, err := strconv.ParseBool(s)
		if err != nil || (s != "true" && s != "false") {
			return nil, fmt.Errorf("%q is not true or false", s)
		}
		return json.RawMessage(strconv.FormatBool(b)), nil
	}
	return json.Marshal(s)
}

// Recipe returns the recipe with that id.
func (p *Pack) Recipe(id string) (*Recipe, bool) {
	for _, r := range p.Recipes {
		if r.ID == id {
			return r, true
		}
	}
	return nil, false
}

const (
	recipeDir       = "recipes"
	maxRecipeBytes  = 256 << 10
	maxRecipes      = 256
	maxRecipeSteps  = 256
	maxRecipeTimout = time.Hour
)

// loadRecipes reads recipes/*.yaml and recipes/*.yml, sorted by name.
func loadRecipes(dir string, show func(string) string, m *Manifest, tools []*Tool, rep *reporter) []*Recipe {
	if _, err := os.Lstat(filepath.Join(dir, recipeDir)); errors.Is(err, fs.ErrNotExist) {
		return nil // most packs have no recipes: one syscall
	}
	rd, err := SafeJoin(dir, recipeDir)
	if err != nil {
		rep.errorf(show(recipeDir), 0, "path-escape", "the recipes folder %v: make it a folder inside the pack", why(err))
		return nil
	}
	entries, err := readDirSorted(rd)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			rep.errorf(show(recipeDir), 0, "read-error", "cannot list the recipes folder: %v", err)
		}
		return nil
	}
	def := ConfirmPrompt
	var req capability.Request
	if m != nil {
		req = m.Capabilities
		if validConfirmation(m.DefaultConfirmation) {
			def = Confirmation(m.DefaultConfirmation)
		}
	}
	var out []*Recipe
	seen := map[string]string{}
	for _, name := range entries {
		if ext := path.Ext(name); ext != ".yaml" && ext != ".yml" {
			continue
		}
		rel := recipeDir + "/" + name
		if len(out) >= maxRecipes {
			rep.errorf(show(rel), 0, "size", "the pack has more than %d recipes: merge or remove some", maxRecipes)
			break
		}
		doc, ok := readSmall(dir, rel, show(rel), maxRecipeBytes, rep)
		if !ok {
			continue
		}
		r := parseRecipe(doc, show(rel), recipeContext{def: def, req: req, tools: tools, manifest: m != nil}, rep)
		if r == nil {
			continue
		}
		r.File = rel
		if prev, dup := seen[r.ID]; dup {
			rep.errorf(show(rel), 1, "recipe-duplicate", "recipe id %q is already used by %s: give each recipe its own id", r.ID, prev)
			continue
		}
		seen[r.ID] = rel
		out = append(out, r)
	}
	return out
}

func readDirSorted(dir string) ([]string, error) {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if d.IsDir() {
			return filepath.SkipDir
		}
		names = append(names, d.Name())
		return nil
	})
	slices.Sort(names)
	return names, err
}

// recipeContext is what checking a recipe needs from the rest of the pack.
type recipeContext struct {
	def      Confirmation
	req      capability.Request
	tools    []*Tool
	manifest bool
}

// parseRecipe parses doc strictly. It returns nil when the document has an
// error finding.
func parseRecipe(doc []byte, file string, cx recipeContext, rep *reporter) (r *Recipe) {
	rp := &recipeParser{file: file, cx: cx, rep: rep, lm: newYAMLLines(doc)}
	before := len(rep.list)
	defer func() {
		if HasErrors(rep.list[before:]) {
			r = nil
		}
	}()
	var root yaml.Node
	if err := decodeRecipeYAML(doc, &root); err != nil {
		rep.errorf(file, rp.lm.file(yamlErrLine(err))-1, "recipe-syntax", "%s: fix the YAML", yamlErrMessage(err))
		return nil
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		rep.errorf(file, 1, "recipe-field-missing", "the recipe is empty: write id, name, description and steps")
		return nil
	}
	if bad := findAlias(&root); bad != nil {
		rep.errorf(file, rp.line(bad), "recipe-syntax", "recipes do not use YAML anchors or aliases: write the value out")
		return nil
	}
	return rp.recipe(root.Content[0])
}

// decodeRecipeYAML parses one YAML document; a panic in the parser becomes
// an error.
func decodeRecipeYAML(doc []byte, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: the parser failed on this input: %v", r)
		}
	}()
	return yaml.Unmarshal(doc, n)
}

// findAlias returns the first anchor or alias node. Refusing both keeps a
// small file from expanding into a large recipe.
func findAlias(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return n
	}
	for _, c := range n.Content {
		if a := findAlias(c); a != nil {
			return a
		}
	}
	return nil
}

type recipeParser struct {
	file   string
	cx     recipeContext
	rep    *reporter
	lm     yamlLines
	params map[string]argvParam
	r      *Recipe
}

func (p *recipeParser) line(n *yaml.Node) int { return p.lm.file(n.Line) - 1 }

func (p *recipeParser) errorf(n *yaml.Node, rule, format string, args ...any) {
	p.rep.errorf(p.file, p.line(n), rule, format, args...)
}

// fields walks a mapping strictly: every key must be in known, once.
func (p *recipeParser) fields(n *yaml.Node, what string, known []string, each func(key string, k, v *yaml.Node)) bool {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "recipe-type", "%s is a YAML %s: write it as \"key: value\" lines", what, kindName(n))
		return false
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.errorf(k, "recipe-type", "a key of %s must be a plain name", what)
			continue
		}
		if prev, dup := seen[k.Value]; dup {
			p.errorf(k, "recipe-duplicate", "%q is already set on line %d: keep one", k.Value, prev)
			continue
		}
		seen[k.Value] = p.line(k)
		if !slices.Contains(known, k.Value) {
			p.errorf(k, "recipe-unknown-key", "%q is not a key of %s (it takes %s)", k.Value, what, strings.Join(known, ", "))
			continue
		}
		each(k.Value, k, v)
	}
	return true
}

// str reads a scalar as text.
func (p *recipeParser) str(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errorf(n, "recipe-type", "%s is text, not a YAML %s", what, kindName(n))
		return "", false
	}
	return n.Value, true
}

func (p *recipeParser) strs(n *yaml.Node, what string) []string {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return []string{n.Value}
	}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "recipe-type", "%s is a list of text, not a YAML %s", what, kindName(n))
		return nil
	}
	var out []string
	for _, it := range n.Content {
		if s, ok := p.str(it, what+" entry"); ok {
			out = append(out, s)
		}
	}
	return out
}

func (p *recipeParser) list(n *yaml.Node, what string) []*yaml.Node {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "recipe-type", "%s is a list (lines starting with \"- \"), not a YAML %s", what, kindName(n))
		return nil
	}
	if len(n.Content) > maxRecipeSteps {
		p.errorf(n, "size", "%s has more than %d entries", what, maxRecipeSteps)
		return nil
	}
	return n.Content
}

var recipeKeys = []string{"id", "name", "description", "version", "triggers", "parameters", "preconditions", "steps", "verification", "rollback"}

func (p *recipeParser) recipe(n *yaml.Node) *Recipe {
	r := &Recipe{}
	p.r = r
	var steps, verify, rollback, pre *yaml.Node
	var idNode *yaml.Node
	ok := p.fields(n, "a recipe", recipeKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "id":
			idNode = v
			r.ID, _ = p.str(v, "id")
		case "name":
			r.Name, _ = p.str(v, "name")
		case "description":
			r.Description, _ = p.str(v, "description")
		case "version":
			r.Version, _ = p.str(v, "version")
		case "triggers":
			r.Triggers = p.triggers(v)
		case "parameters":
			r.Parameters = p.parameters(v)
		case "preconditions":
			pre = v
		case "steps":
			steps = v
		case "verification":
			verify = v
		case "rollback":
			rollback = v
		}
	})
	if !ok {
		return nil
	}
	switch {
	case idNode == nil:
		p.errorf(n, "recipe-field-missing", "the recipe has no id: add id: <a-z0-9->")
	case r.ID != "" && !validRecipeID(r.ID):
		p.errorf(idNode, "recipe-id", "id %q is not 1-64 of a-z, 0-9 and \"-\"", r.ID)
	}
	if r.Name == "" {
		p.errorf(n, "recipe-field-missing", "the recipe has no name: add name: <what it does>")
	}
	p.params = map[string]argvParam{}
	for _, prm := range r.Parameters {
		p.params[prm.Name] = argvParam{closed: prm.Validation != nil || prm.Type != "string", line: prm.Line}
	}
	if pre != nil {
		for _, it := range p.list(pre, "preconditions") {
			if c, ok := p.precondition(it); ok {
				r.Preconditions = append(r.Preconditions, c)
			}
		}
	}
	if steps == nil {
		p.errorf(n, "recipe-field-missing", "the recipe has no steps: add steps: with at least one step")
	} else {
		items := p.list(steps, "steps")
		if len(items) == 0 && steps.Kind == yaml.SequenceNode {
			p.errorf(steps, "recipe-field-missing", "steps is empty: add at least one step")
		}
		ids := map[string]int{}
		for _, it := range items {
			s, ok := p.step(it, "step", stepKeys)
			if !ok {
				continue
			}
			if prev, dup := ids[s.ID]; dup {
				p.errorf(it, "recipe-duplicate", "step id %q is already used on line %d", s.ID, prev)
				continue
			}
			ids[s.ID] = s.Line
			r.Steps = append(r.Steps, s)
		}
	}
	if verify != nil {
		for i, it := range p.list(verify, "verification") {
			if s, ok := p.step(it, "verification", verifyKeys); ok {
				if s.ID == "" {
					s.ID = "verify-" + strconv.Itoa(i+1)
				}
				r.Verification = append(r.Verification, s)
			}
		}
	}
	if rollback != nil {
		for i, it := range p.list(rollback, "rollback") {
			s, ok := p.step(it, "rollback step", rollbackKeys)
			if !ok {
				continue
			}
			if s.ID == "" {
				s.ID = "rollback-" + strconv.Itoa(i+1)
			}
			if s.Undoes != "" && !slices.ContainsFunc(r.Steps, func(x RecipeStep) bool { return x.ID == s.Undoes }) {
				p.errorf(it, "recipe-rollback", "undoes: %q names no step of the recipe", s.Undoes)
				continue
			}
			r.Rollback = append(r.Rollback, s)
		}
	}
	return r
}

func validRecipeID(s string) bool {
	return len(s) <= 64 && recipeIDRE.MatchString(s)
}

var recipeIDRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func (p *recipeParser) triggers(n *yaml.Node) []RecipeTrigger {
	var out []RecipeTrigger
	for _, it := range p.list(n, "triggers") {
		var t RecipeTrigger
		p.fields(it, "a trigger", []string{"keywords", "intent", "context"}, func(key string, _, v *yaml.Node) {
			switch key {
			case "keywords":
				t.Keywords = p.strs(v, "keywords")
			case "intent":
				t.Intent, _ = p.str(v, "intent")
			case "context":
				p.fields(v, "a trigger's context", []string{"has_files"}, func(_ string, _, v *yaml.Node) {
					t.HasFiles = p.strs(v, "has_files")
				})
			}
		})
		out = append(out, t)
	}
	return out
}

var paramTypes = []string{"string", "integer", "number", "boolean"}

func (p *recipeParser) parameters(n *yaml.Node) []RecipeParameter {
	var out []RecipeParameter
	seen := map[string]bool{}
	for _, it := range p.list(n, "parameters") {
		prm := RecipeParameter{Type: "string", Line: p.line(it)}
		var defNode, valNode *yaml.Node
		ok := p.fields(it, "a parameter", []string{"name", "type", "required", "description", "default", "validation"}, func(key string, _, v *yaml.Node) {
			switch key {
			case "name":
				prm.Name, _ = p.str(v, "name")
			case "type":
				if t, ok := p.str(v, "type"); ok {
					if !slices.Contains(paramTypes, t) {
						p.errorf(v, "recipe-param", "type %q is not one of %s", t, strings.Join(paramTypes, ", "))
					}
					prm.Type = t
				}
			case "required":
				if v.Kind != yaml.ScalarNode || (v.Value != "true" && v.Value != "false") {
					p.errorf(v, "recipe-type", "required is true or false")
				}
				prm.Required = v.Value == "true"
			case "description":
				prm.Description, _ = p.str(v, "description")
			case "default":
				defNode = v
			case "validation":
				valNode = v
			}
		})
		if !ok {
			continue
		}
		switch {
		case prm.Name == "":
			p.errorf(it, "recipe-field-missing", "a parameter has no name")
			continue
		case !plainKey(prm.Name):
			p.errorf(it, "recipe-param", "parameter name %q is not a-z, A-Z, 0-9, \"_\" or \"-\"", prm.Name)
			continue
		case seen[prm.Name]:
			p.errorf(it, "recipe-duplicate", "parameter %q is declared twice", prm.Name)
			continue
		}
		seen[prm.Name] = true
		if valNode != nil {
			if s, ok := p.str(valNode, "validation"); ok {
				re, err := regexp.Compile(s)
				if err != nil {
					p.errorf(valNode, "recipe-param", "validation %q is not a regular expression (RE2): %v", s, err)
				} else {
					prm.Validation = re
				}
			}
		}
		if defNode != nil {
			if s, ok := p.str(defNode, "default"); ok {
				if _, err := prm.value(s); err != nil {
					p.errorf(defNode, "recipe-param", "default of %s: %v", prm.Name, err)
				}
				prm.Default = &s
			}
		}
		out = append(out, prm)
	}
	return out
}

var preconditionKeys = []string{"check", "args", "script", "command", "message", "fallback"}

func (p *recipeParser) precondition(n *yaml.Node) (Precondition, bool) {
	c := Precondition{Line: p.line(n)}
	var argsNode, cmdNode *yaml.Node
	ok := p.fields(n, "a precondition", preconditionKeys, func(key string, _, v *yaml.Node) {
		switch key {
		case "check":
			c.Check, _ = p.str(v, "check")
		case "args":
			argsNode = v
			c.Args = p.strs(v, "args")
		case "script", "command":
			if cmdNode != nil {
				p.errorf(v, "recipe-duplicate", "a precondition has one command (script or command)")
			}
			cmdNode = v
		case "message":
			c.Message, _ = p.str(v, "message")
		case "fallback":
			c.Fallback, _ = p.str(v, "fallback")
		}
	})
	if !ok {
		return c, false
	}
	switch c.Check {
	case "command_exists":
		if len(c.Args) == 0 {
			p.errorf(n, "recipe-precondition", "command_exists needs args: the programs to look for")
			return c, false
		}
		for i, a := range c.Args {
			at := n
			if argsNode != nil && argsNode.Kind == yaml.SequenceNode && i < len(argsNode.Content) {
				at = argsNode.Content[i]
			}
			if !p.granted(at, a) {
				return c, false
			}
		}
	case "env_set":
		if len(c.Args) == 0 {
			p.errorf(n, "recipe-precondition", "env_set needs args: the variables that must be set")
			return c, false
		}
		for _, a := range c.Args {
			if !slices.ContainsFunc(p.cx.req.EnvRead, func(pat string) bool { ok, _ := path.Match(pat, a); return ok }) {
				p.rep.warnf(p.file, p.line(n), "recipe-grant", "env_set checks %s, which needs an env_read grant: list it in skill.toml as [capabilities] env_read = [%q]", a, a)
			}
		}
	case "custom":
		if cmdNode == nil {
			p.errorf(n, "recipe-precondition", "a custom check needs script: the command that must exit 0")
			return c, false
		}
		cmd, ok := p.command(cmdNode)
		if !ok {
			return c, false
		}
		c.Command = cmd
	case "":
		p.errorf(n, "recipe-precondition", "the precondition has no check: command_exists, env_set or custom")
		return c, false
	default:
		p.errorf(n, "recipe-precondition", "check %q is not command_exists, env_set or custom", c.Check)
		return c, false
	}
	if cmdNode != nil && c.Check != "custom" {
		p.errorf(cmdNode, "recipe-precondition", "only a custom check runs a script")
		return c, false
	}
	return c, true
}

var (
	stepKeys     = []string{"id", "name", "description", "command", "tool", "input", "confirmation", "risk_level", "timeout", "expect"}
	verifyKeys   = []string{"id", "name", "description", "check", "command", "tool", "input", "confirmation", "risk_level", "timeout", "expect", "message"}
	rollbackKeys = []string{"id", "name", "description", "command", "tool", "input", "confirmation", "risk_level", "timeout", "expect", "undoes"}
)

func (p *recipeParser) step(n *yaml.Node, what string, keys []string) (RecipeStep, bool) {
	s := RecipeStep{Line: p.line(n), Confirmation: p.cx.def}
	var cmdNode, toolNode, inputNode, idNode *yaml.Node
	bad := false
	ok := p.fields(n, "a "+what, keys, func(key string, _, v *yaml.Node) {
		switch key {
		case "id":
			idNode = v
			s.ID, _ = p.str(v, "id")
		case "name":
			s.Name, _ = p.str(v, "name")
		case "description":
			s.Description, _ = p.str(v, "description")
		case "message":
			s.Message, _ = p.str(v, "message")
		case "command", "check":
			if cmdNode != nil {
				p.errorf(v, "recipe-duplicate", "a %s has one command", what)
				bad = true
			}
			cmdNode = v
		case "tool":
			toolNode = v
			s.Tool, _ = p.str(v, "tool")
		case "input":
			inputNode = v
		case "confirmation":
			if c, ok := p.str(v, "confirmation"); ok {
				if !validConfirmation(c) {
					p.errorf(v, "recipe-confirmation", "confirmation %q is not auto, prompt or always", c)
					bad = true
				}
				s.Confirmation = Confirmation(c)
			}
		case "risk_level":
			if r, ok := p.str(v, "risk_level"); ok {
				if !RiskLevel(r).Valid() {
					p.errorf(v, "recipe-risk", "risk_level %q is not low, moderate, high or critical", r)
					bad = true
				}
				s.RiskLevel = RiskLevel(r)
			}
		case "timeout":
			s.Timeout = p.timeout(v)
			bad = bad || s.Timeout == 0
		case "expect":
			e, ok := p.expect(v)
			s.Expect, bad = e, bad || !ok
		case "undoes":
			s.Undoes, _ = p.str(v, "undoes")
		}
	})
	if !ok || bad {
		return s, false
	}
	if idNode == nil && what == "step" {
		p.errorf(n, "recipe-field-missing", "the step has no id: add id: <a-z0-9->")
		return s, false
	}
	if idNode != nil && !validRecipeID(s.ID) {
		p.errorf(idNode, "recipe-id", "step id %q is not 1-64 of a-z, 0-9 and \"-\"", s.ID)
		return s, false
	}
	switch {
	case (cmdNode == nil) == (toolNode == nil):
		p.errorf(n, "recipe-field-missing", "a %s runs a command or a pack tool: give exactly one of command and tool", what)
		return s, false
	case cmdNode != nil:
		if inputNode != nil {
			p.errorf(inputNode, "recipe-unknown-key", "input is for a tool step; a command takes its parameters as {{name}} in the command")
			return s, false
		}
		cmd, ok := p.command(cmdNode)
		if !ok {
			return s, false
		}
		s.Command = cmd
	default:
		if !slices.ContainsFunc(p.cx.tools, func(t *Tool) bool { return t.Name == s.Tool }) {
			p.errorf(toolNode, "recipe-tool", "tool %q is not declared in tools.json", s.Tool)
			return s, false
		}
		if inputNode != nil && !p.input(inputNode, &s) {
			return s, false
		}
	}
	return s, true
}

func (p *recipeParser) timeout(v *yaml.Node) time.Duration {
	s, ok := p.str(v, "timeout")
	if !ok {
		return 0
	}
	var d time.Duration
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n > 0 && n <= int64(maxRecipeTimout/time.Second) {
			d = time.Duration(n) * time.Second
		}
	} else if pd, err := time.ParseDuration(s); err == nil {
		d = pd
	}
	if d <= 0 || d > maxRecipeTimout {
		p.errorf(v, "recipe-timeout", "timeout %q is not a number of seconds or a duration (\"30s\") above 0 and up to 1h", s)
		return 0
	}
	return d
}

func (p *recipeParser) expect(n *yaml.Node) (Expect, bool) {
	var e Expect
	before := len(p.rep.list)
	ok := p.fields(n, "an expect block", []string{"exit_code", "output_contains", "json_path", "contains"}, func(key string, _, v *yaml.Node) {
		switch key {
		case "exit_code":
			s, _ := p.str(v, "exit_code")
			c, err := strconv.Atoi(s)
			if err != nil || c < 0 || c > 255 {
				p.errorf(v, "recipe-expect", "exit_code %q is not an exit status 0-255", s)
				return
			}
			e.ExitCode = &c
		case "output_contains":
			e.OutputContains, _ = p.str(v, "output_contains")
		case "json_path":
			s, ok := p.str(v, "json_path")
			if !ok {
				return
			}
			x, err := parseJSONPath(s)
			if err != nil {
				p.errorf(v, "recipe-expect", "json_path %q does not parse: %v", s, err)
				return
			}
			e.JSONPath, e.path = s, x
		case "contains":
			e.Contains, _ = p.str(v, "contains")
		}
	})
	if ok && e.Contains != "" && e.JSONPath == "" {
		p.errorf(n, "recipe-expect", "contains looks inside json_path's values: add json_path, or use output_contains")
	}
	return e, ok && !HasErrors(p.rep.list[before:])
}

// parseJSONPath parses an RFC 9535 JSONPath; a path that starts with "."
// or "[" (jq style, as in spec 001) is read from the root.
func parseJSONPath(s string) (x jp.Expr, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the JSONPath parser failed: %v", r)
		}
	}()
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "[") {
		s = "$" + s
	}
	if !strings.HasPrefix(s, "$") {
		return nil, errors.New("a JSONPath starts with $ (or . for the root)")
	}
	return jp.ParseString(s)
}

// input reads a tool step's input mapping.
func (p *recipeParser) input(n *yaml.Node, s *RecipeStep) bool {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "recipe-type", "input is the tool's arguments as \"key: value\" lines")
		return false
	}
	s.input = map[string]inputValue{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.errorf(k, "recipe-type", "an input key is a plain name")
			return false
		}
		if _, dup := s.input[k.Value]; dup {
			p.errorf(k, "recipe-duplicate", "input %q is set twice", k.Value)
			return false
		}
		if v.Kind == yaml.ScalarNode && v.Tag == "!!str" && strings.Contains(v.Value, placeholderOpen) {
			parts, err := parseArgvElement(v.Value)
			if err != nil || len(parts) != 1 || !parts[0].param {
				p.errorf(v, "recipe-placeholder", "input %s: a parameter fills a whole value, written \"{{name}}\"", k.Value)
				return false
			}
			if _, ok := p.params[parts[0].text]; !ok {
				p.errorf(v, "recipe-placeholder", "input %s uses {{%s}}, which is not a parameter of the recipe", k.Value, parts[0].text)
				return false
			}
			s.input[k.Value] = inputValue{param: parts[0].text}
			s.inputKeys = append(s.inputKeys, k.Value)
			continue
		}
		if hasPlaceholder(v) {
			p.errorf(v, "recipe-placeholder", "input %s: a parameter fills a whole top-level value, not a part of a nested one", k.Value)
			return false
		}
		var val any
		if err := v.Decode(&val); err != nil {
			p.errorf(v, "recipe-type", "input %s: %v", k.Value, err)
			return false
		}
		b, err := json.Marshal(val)
		if err != nil {
			p.errorf(v, "recipe-type", "input %s cannot be JSON: %v", k.Value, err)
			return false
		}
		s.input[k.Value] = inputValue{lit: b}
		s.inputKeys = append(s.inputKeys, k.Value)
	}
	return true
}

func hasPlaceholder(n *yaml.Node) bool {
	if n.Kind == yaml.ScalarNode {
		return strings.Contains(n.Value, placeholderOpen)
	}
	for _, c := range n.Content {
		if hasPlaceholder(c) {
			return true
		}
	}
	return false
}

// command splits a command string into argv and compiles it.
func (p *recipeParser) command(n *yaml.Node) (*RecipeCommand, bool) {
	text, ok := p.str(n, "command")
	if !ok {
		return nil, false
	}
	argv, err := splitCommand(text)
	if err != nil {
		p.errorf(n, "recipe-command", "command %q: %v", text, err)
		return nil, false
	}
	prog := argv[0]
	if strings.Contains(prog, placeholderOpen) {
		p.errorf(n, "recipe-command", "command %q: the program must be fixed, not a parameter", text)
		return nil, false
	}
	if err := (capability.Request{TerminalExec: capability.ExecRequest{Commands: []string{prog}}}).Validate(); err != nil {
		reason := err.Error()
		var pe *capability.PatternError
		if errors.As(err, &pe) {
			reason = pe.Reason
		}
		p.errorf(n, "recipe-command", "command %q: program %q: %s", text, prog, reason)
		return nil, false
	}
	for _, a := range argv {
		parts, err := parseArgvElement(a)
		if err != nil {
			p.errorf(n, "recipe-placeholder", "command %q: argument %q %v", text, a, err)
			return nil, false
		}
		for _, part := range parts {
			if _, ok := p.params[part.text]; part.param && !ok {
				p.errorf(n, "recipe-placeholder", "command %q uses {{%s}}, which is not a parameter of the recipe: declare it under parameters", text, part.text)
				return nil, false
			}
		}
	}
	tmpl, probs := compileArgv(argv, p.params)
	for _, pr := range probs {
		if pr.warn {
			continue
		}
		p.errorf(n, "recipe-option", "command %q: argument %d lets a parameter choose which option %s reads: write the option name and the value in one argument (\"--name={{value}}\")", text, pr.elem, prog)
	}
	if tmpl == nil {
		return nil, false
	}
	tmpl.tool = p.r.ID
	if !p.granted(n, prog) {
		return nil, false
	}
	return &RecipeCommand{Text: text, Argv: argv, tmpl: tmpl}, true
}

// granted checks a program against the manifest's terminal_exec request.
func (p *recipeParser) granted(n *yaml.Node, prog string) bool {
	te := p.cx.req.TerminalExec
	switch {
	case slices.Contains(te.Blocked, prog):
		p.errorf(n, "recipe-grant", "%q is blocked by skill.toml's terminal_exec: a recipe cannot run it", prog)
		return false
	case !slices.Contains(te.Commands, prog):
		p.errorf(n, "recipe-grant", "%q is not in skill.toml's terminal_exec: list it as [capabilities] terminal_exec = { commands = [%q] }", prog, prog)
		return false
	}
	return true
}

// errShellSyntax is wrapped by splitCommand's refusal of text that only a
// shell would give a meaning.
var errShellSyntax = errors.New("uses shell syntax, and recipe commands run without a shell")

// splitCommand splits a recipe command into argv the way a POSIX shell
// splits words, and no further: blanks separate words; '…' quotes
// literally; "…" quotes with \" and \\ as escapes; a backslash outside
// quotes escapes the next character. Everything a shell would do beyond
// that — pipes, redirections, ";", "&", "$" expansion, command substitution,
// globs, "~" and comments — is refused with errShellSyntax, so nothing in a
// recipe looks like it does what it would not.
func splitCommand(s string) ([]string, error) {
	var (
		argv  []string
		cur   strings.Builder
		inArg bool
	)
	shell := func(c byte) error {
		return fmt.Errorf("%q %w: quote it ('%c') to pass it as text, or make it a separate step", c, errShellSyntax, c)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inArg {
				argv = append(argv, cur.String())
				cur.Reset()
				inArg = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("has a ' without its closing '")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inArg = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				switch s[i] {
				case '\\':
					if i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
						i++
					}
				case '$', '`':
					return nil, shell(s[i])
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("has a \" without its closing \"")
			}
			inArg = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("ends in a backslash")
			}
			i++
			if s[i] == '\n' {
				continue // a line continuation
			}
			cur.WriteByte(s[i])
			inArg = true
		case strings.IndexByte("|&;<>()$`*?[", c) >= 0:
			return nil, shell(c)
		case (c == '#' || c == '~') && !inArg:
			return nil, shell(c)
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if inArg {
		argv = append(argv, cur.String())
	}
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("is empty: name a program")
	}
	return argv, nil
}

// ParamValues reads recipe arguments given as one JSON object (a model's
// run_recipe parameters) as texts, the way Bind takes them: a string value
// is its text as it is; a number or boolean is its JSON text. Anything else
// is a *ParamError. Empty args are no values.
func ParamValues(args json.RawMessage) (map[string]string, error) {
	values := map[string]string{}
	if len(bytes.TrimSpace(args)) > 0 {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(args, &raw); err != nil || bytes.TrimSpace(args)[0] != '{' {
			return nil, &ParamError{Reason: "the parameters must be one JSON object"}
		}
		for k, v := range raw {
			v = bytes.TrimSpace(v)
			switch {
			case len(v) > 0 && v[0] == '"':
				var s string
				if err := json.Unmarshal(v, &s); err != nil {
					return nil, &ParamError{Param: k, Reason: err.Error()}
				}
				values[k] = s
			case len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')), string(v) == "true", string(v) == "false":
				values[k] = string(v)
			default:
				return nil, &ParamError{Param: k, Reason: "a parameter is a string, a number or a boolean"}
			}
		}
	}
	return values, nil
}

// Missing lists the required parameters without a default that values
// does not set, in declaration order: what to ask for before a run.
func (r *Recipe) Missing(values map[string]string) []string {
	var out []string
	for _, p := range r.Parameters {
		if _, ok := values[p.Name]; !ok && p.Required && p.Default == nil {
			out = append(out, p.Name)
		}
	}
	return out
}
