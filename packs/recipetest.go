package packs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// RecipeTestFile is where a pack keeps its recipe tests (spec 001,
// "Testing Strategy").
const RecipeTestFile = "tests/recipe_test.yaml"

// RecipeTestCase is one case of tests/recipe_test.yaml: a recipe run with
// parameters against mocked commands, and the result it must have.
type RecipeTestCase struct {
	Name       string
	Recipe     string
	Parameters map[string]string
	Env        map[string]string // what env_set checks see (none otherwise)
	Mocks      []RecipeMock
	// Expected is success, partial, failure or precondition_failed.
	Expected        string
	ExpectedMessage string // a substring of the run's error
	Line            int
}

// RecipeMock answers the commands it matches instead of running them.
type RecipeMock struct {
	Command  string // matched against the argv joined by spaces; "*" is any run of characters
	ExitCode int
	Stdout   string
	Stderr   string
}

// Matches reports whether the mock answers argv.
func (m RecipeMock) Matches(argv []string) bool {
	return GlobMatch(m.Command, strings.Join(argv, " "))
}

var recipeTestResults = []string{"success", "partial", "failure", "precondition_failed"}

// ParseRecipeTests parses a recipe test file strictly against the pack's
// recipes (nil p checks the format only). It returns the cases and every
// finding; the cases are nil when a finding is an error.
func ParseRecipeTests(doc []byte, file string, p *Pack) ([]RecipeTestCase, []Finding) {
	rep := &reporter{}
	if p != nil {
		rep.pack = p.Name
	}
	rp := &recipeParser{file: file, rep: rep, lm: newYAMLLines(doc)}
	var root yaml.Node
	if err := decodeRecipeYAML(doc, &root); err != nil {
		rep.errorf(file, rp.lm.file(yamlErrLine(err))-1, "recipe-syntax", "%s: fix the YAML", yamlErrMessage(err))
		return nil, rep.list
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		rep.errorf(file, 1, "recipe-field-missing", "the file is empty: write test_cases:")
		return nil, rep.list
	}
	if bad := findAlias(&root); bad != nil {
		rep.errorf(file, rp.line(bad), "recipe-syntax", "recipe tests do not use YAML anchors or aliases: write the value out")
		return nil, rep.list
	}
	var cases []RecipeTestCase
	rp.fields(root.Content[0], "a recipe test file", []string{"test_cases"}, func(_ string, _, v *yaml.Node) {
		for _, it := range rp.list(v, "test_cases") {
			if tc, ok := rp.testCase(it, p); ok {
				cases = append(cases, tc)
			}
		}
	})
	if HasErrors(rep.list) {
		return nil, rep.list
	}
	return cases, rep.list
}

func (p *recipeParser) testCase(n *yaml.Node, pk *Pack) (RecipeTestCase, bool) {
	tc := RecipeTestCase{Line: p.line(n), Parameters: map[string]string{}, Env: map[string]string{}}
	var recipeNode, paramsNode *yaml.Node
	ok := p.fields(n, "a test case", []string{"name", "recipe", "parameters", "env", "mock_commands", "expected_result", "expected_message"}, func(key string, _, v *yaml.Node) {
		switch key {
		case "name":
			tc.Name, _ = p.str(v, "name")
		case "recipe":
			recipeNode = v
			tc.Recipe, _ = p.str(v, "recipe")
		case "parameters":
			paramsNode = v
			tc.Parameters = p.stringMap(v, "parameters")
		case "env":
			tc.Env = p.stringMap(v, "env")
		case "mock_commands":
			for _, it := range p.list(v, "mock_commands") {
				var m RecipeMock
				p.fields(it, "a mock command", []string{"command", "exit_code", "stdout", "stderr"}, func(key string, _, v *yaml.Node) {
					switch key {
					case "command":
						m.Command, _ = p.str(v, "command")
					case "exit_code":
						s, _ := p.str(v, "exit_code")
						c, err := strconv.Atoi(s)
						if err != nil || c < 0 || c > 255 {
							p.errorf(v, "recipe-expect", "exit_code %q is not an exit status 0-255", s)
						}
						m.ExitCode = c
					case "stdout":
						m.Stdout, _ = p.str(v, "stdout")
					case "stderr":
						m.Stderr, _ = p.str(v, "stderr")
					}
				})
				if m.Command == "" {
					p.errorf(it, "recipe-field-missing", "a mock command needs command: the command line it answers (\"*\" matches anything)")
				}
				tc.Mocks = append(tc.Mocks, m)
			}
		case "expected_result":
			if s, ok := p.str(v, "expected_result"); ok {
				if !slices.Contains(recipeTestResults, s) {
					p.errorf(v, "recipe-expect", "expected_result %q is not one of %s", s, strings.Join(recipeTestResults, ", "))
				}
				tc.Expected = s
			}
		case "expected_message":
			tc.ExpectedMessage, _ = p.str(v, "expected_message")
		}
	})
	if !ok {
		return tc, false
	}
	switch {
	case tc.Name == "":
		p.errorf(n, "recipe-field-missing", "a test case needs name")
		return tc, false
	case tc.Recipe == "":
		p.errorf(n, "recipe-field-missing", "test case %q needs recipe: the id of the recipe it runs", tc.Name)
		return tc, false
	case tc.Expected == "":
		p.errorf(n, "recipe-field-missing", "test case %q needs expected_result", tc.Name)
		return tc, false
	}
	if pk == nil {
		return tc, true
	}
	r, found := pk.Recipe(tc.Recipe)
	if !found {
		p.errorf(recipeNode, "recipe-tool", "test case %q runs recipe %q, which the pack does not have", tc.Name, tc.Recipe)
		return tc, false
	}
	for k := range tc.Parameters {
		if !slices.ContainsFunc(r.Parameters, func(rp RecipeParameter) bool { return rp.Name == k }) {
			p.errorf(paramsNode, "recipe-param", "test case %q sets parameter %q, which recipe %s does not declare", tc.Name, k, r.ID)
			return tc, false
		}
	}
	return tc, true
}

func (p *recipeParser) stringMap(n *yaml.Node, what string) map[string]string {
	out := map[string]string{}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "recipe-type", "%s is \"name: value\" lines, not a YAML %s", what, kindName(n))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if _, dup := out[k.Value]; dup {
			p.errorf(k, "recipe-duplicate", "%s %s is set twice", what, k.Value)
			continue
		}
		if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			p.errorf(v, "recipe-type", "%s %s is a YAML %s, not a value", what, k.Value, kindName(v))
			continue
		}
		out[k.Value] = v.Value
	}
	return out
}

// String names the case for a report.
func (tc RecipeTestCase) String() string { return fmt.Sprintf("%s (recipe %s)", tc.Name, tc.Recipe) }

// GlobMatch matches s against a pattern where "*" is any run of characters.
func GlobMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}
