package packs

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// hostPack writes a pack whose skill.toml is manifest and loads it.
func hostPack(t *testing.T, manifest string) *Pack {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "p")
	writePackFiles(t, dir, map[string]string{"SKILL.md": skillMD("p"), "skill.toml": manifest})
	p, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeBin makes a folder holding executables of the given names.
func fakeBin(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func spotList(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, filepath.Base(f.File)+":"+strconv.Itoa(f.Line)+":"+string(f.Severity)+":"+f.Rule)
	}
	return out
}

// TestCheckHost checks [platform] and [dependencies] against a machine:
// at add (Install) an unmet requirement is an error that refuses the pack,
// at validate a warning; optional ones always warn.
func TestCheckHost(t *testing.T) {
	personal := fakeBin(t, "aws", "jq")
	safe := fakeBin(t, "git")
	installed := []Installed{{Name: "git-flow", ID: "examples.git-flow", Version: "0.1.0"}, {Name: "old", Version: "0.9.0"}, {Name: "bare"}}
	base := Host{OS: "linux", Arch: "amd64", ExecPath: safe, Path: personal, Installed: installed}
	cases := []struct {
		name, manifest string
		install        bool
		want           []string
	}{
		{"no-manifest-keys", "[skill]\nid = \"x.p\"\n", true, nil},
		{"os-match", "[platform]\nos = [\"linux\", \"macos\"]\n", true, nil},
		{"os-mismatch-add", "[platform]\nos = [\"macos\", \"windows\"]\n", true, []string{"skill.toml:2:error:platform-os"}},
		{"os-mismatch-validate", "[platform]\nos = [\"macos\"]\n", false, []string{"skill.toml:2:warning:platform-os"}},
		{"arch-mismatch-add", "[platform]\n\narch = [\"aarch64\"]\n", true, []string{"skill.toml:3:error:platform-arch"}},
		{"arch-match", "[platform]\narch = [\"x86_64\"]\n", true, nil},
		{"empty-lists-mean-any", "[platform]\nos = []\narch = []\n", true, nil},
		// A tool the pack runs (terminal_exec) is looked for where packs runs
		// it; one the person runs, on the person's PATH.
		{"tool-on-path", "[platform]\nrequired_tools = [\"aws\"]\n", true, nil},
		{"tool-missing-add", "[platform]\nrequired_tools = [\"aws\", \"kubectl\"]\n", true, []string{"skill.toml:2:error:platform-tool"}},
		{"tool-missing-validate", "[platform]\nrequired_tools = [\n  \"kubectl\",\n]\n", false, []string{"skill.toml:3:warning:platform-tool"}},
		{"exec-tool-on-exec-path", "[capabilities]\nterminal_exec = { commands = [\"git\"] }\n[platform]\nrequired_tools = [\"git\"]\n", true, nil},
		{"exec-tool-only-on-person-path", "[capabilities]\nterminal_exec = { commands = [\"jq\"] }\n[platform]\nrequired_tools = [\"jq\"]\n", true, []string{"skill.toml:4:error:platform-tool"}},
		{"optional-tool-missing-add", "[platform]\noptional_tools = [\"sam\"]\n", true, []string{"skill.toml:2:warning:platform-tool"}},
		{"absolute-tool", "[platform]\nrequired_tools = [\"" + filepath.Join(personal, "aws") + "\", \"/nonexistent/tool\"]\n", true, []string{"skill.toml:2:error:platform-tool"}},
		// Dependencies resolve by name or skill.toml id, with a version.
		{"dep-by-id", "[dependencies]\n\"examples.git-flow\" = \">=0.1\"\n", true, nil},
		{"dep-by-name", "[dependencies]\ngit-flow = \"^0.1.0\"\n", true, nil},
		{"dep-any-version", "[dependencies]\nbare = \"*\"\n", true, nil},
		{"dep-missing-add", "[dependencies]\n\"core.shell\" = \">=1.0\"\n", true, []string{"skill.toml:2:error:dependency"}},
		{"dep-missing-validate", "[dependencies]\n\"core.shell\" = \">=1.0\"\n", false, []string{"skill.toml:2:warning:dependency"}},
		{"dep-too-old", "[dependencies]\nold = \">=1.0\"\n", true, []string{"skill.toml:2:error:dependency"}},
		{"dep-unversioned", "[dependencies]\nbare = \">=1\"\n", true, []string{"skill.toml:2:error:dependency"}},
		{"dep-optional-missing", "[dependencies]\n\"tool.kubectl\" = { version = \">=0.2\", optional = true }\n", true, []string{"skill.toml:2:warning:dependency"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := base
			h.Install = tc.install
			got := spotList(CheckHost(hostPack(t, tc.manifest), h))
			if !slices.Equal(got, tc.want) {
				t.Errorf("findings = %v, want %v", got, tc.want)
			}
		})
	}
	// A home with nothing installed resolves no dependency.
	got := spotList(CheckHost(hostPack(t, "[dependencies]\ngit-flow = \"*\"\n"), Host{OS: "linux", Arch: "amd64", Install: true}))
	if want := []string{"skill.toml:2:error:dependency"}; !slices.Equal(got, want) {
		t.Errorf("no home: findings = %v, want %v", got, want)
	}
}

// TestProvides checks [provides] against what the pack ships.
func TestProvides(t *testing.T) {
	recipe := "id: r\nname: R\ndescription: d\nsteps:\n  - id: s\n    command: git status\n"
	tools := `{"tools":[{"name":"ls","description":"List.\nOne line more.","input_schema":{"type":"object"},"run":{"exec":["ls"]}}]}`
	cases := []struct {
		name     string
		manifest string
		files    map[string]string
		want     []string
	}{
		{"recipes-true-with-recipes", "[provides]\nrecipes = true\n[capabilities]\nterminal_exec = { commands = [\"git\"] }\n", map[string]string{"recipes/r.yaml": recipe}, nil},
		{"recipes-true-without", "[provides]\nrecipes = true\n", nil, []string{"skill.toml:2:error:provides-mismatch"}},
		{"recipes-false-with-recipes", "[provides]\nrecipes = false\n[capabilities]\nterminal_exec = { commands = [\"git\"] }\n", map[string]string{"recipes/r.yaml": recipe}, []string{"skill.toml:2:error:provides-mismatch"}},
		{"executable-true-without-tools", "[provides]\nknowledge = true\nexecutable = true\n", nil, []string{"skill.toml:3:error:provides-mismatch"}},
		{"executable-false-with-tools", "[provides]\nexecutable = false\n[capabilities]\nterminal_exec = { commands = [\"ls\"] }\n", map[string]string{"tools.json": tools}, []string{"skill.toml:2:error:provides-mismatch"}},
		{"executable-true-with-tools", "[provides]\nexecutable = true\n[capabilities]\nterminal_exec = { commands = [\"ls\"] }\n", map[string]string{"tools.json": tools}, nil},
		{"undeclared", "[skill]\nid = \"x.p\"\n", map[string]string{"tools.json": tools}, []string{"tools.json:1:warning:exec-grant"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			files := map[string]string{"SKILL.md": skillMD("p"), "skill.toml": tc.manifest}
			for k, v := range tc.files {
				files[k] = v
			}
			writePackFiles(t, dir, files)
			got := spotList(Validate(dir, LoadOptions{}))
			if !slices.Equal(got, tc.want) {
				t.Errorf("findings = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestConstraint checks version constraints as Cargo and npm read them.
func TestConstraint(t *testing.T) {
	cases := []struct {
		c       string
		allow   []string
		refuse  []string
		invalid bool
	}{
		{c: "", allow: []string{"0.0.1", "9.9.9"}},
		{c: "*", allow: []string{"1.0.0"}},
		{c: ">=1.0", allow: []string{"1.0.0", "2.3.4"}, refuse: []string{"0.9.9", "1.0.0-rc.1", ""}},
		{c: ">1.2.3", allow: []string{"1.2.4"}, refuse: []string{"1.2.3"}},
		{c: "<2", allow: []string{"1.99.0"}, refuse: []string{"2.0.0"}},
		{c: "<=1.2", allow: []string{"1.2.0"}, refuse: []string{"1.2.1"}},
		{c: "1.2.3", allow: []string{"1.2.3"}, refuse: []string{"1.2.4"}},
		{c: "==1.2.3", allow: []string{"1.2.3"}, refuse: []string{"1.2.2"}},
		{c: "^1.4", allow: []string{"1.4.0", "1.9.9"}, refuse: []string{"1.3.9", "2.0.0"}},
		{c: "^0.2.3", allow: []string{"0.2.3", "0.2.9"}, refuse: []string{"0.3.0"}},
		{c: "^0.0.3", allow: []string{"0.0.3"}, refuse: []string{"0.0.4"}},
		{c: "^0", allow: []string{"0.9.0"}, refuse: []string{"1.0.0"}},
		{c: "~1.2", allow: []string{"1.2.9"}, refuse: []string{"1.3.0"}},
		{c: "~1", allow: []string{"1.9.0"}, refuse: []string{"2.0.0"}},
		{c: ">=1.0, <2", allow: []string{"1.5.0"}, refuse: []string{"2.0.0", "0.5.0"}},
		{c: ">= 1.0", invalid: true},
		{c: ">=banana", invalid: true},
		{c: "1.2.3.4", invalid: true},
		{c: "01.2", invalid: true},
		{c: "v1.2", invalid: true},
		{c: "^", invalid: true},
	}
	for _, tc := range cases {
		c, err := parseConstraint(tc.c)
		if (err != nil) != tc.invalid {
			t.Errorf("parseConstraint(%q) error = %v, want invalid = %t", tc.c, err, tc.invalid)
			continue
		}
		for _, v := range tc.allow {
			if !c.allows(v) {
				t.Errorf("%q refuses %q", tc.c, v)
			}
		}
		for _, v := range tc.refuse {
			if c.allows(v) {
				t.Errorf("%q allows %q", tc.c, v)
			}
		}
	}
}
