package packs

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLintExplainsOtherTools: packs lint says what packs does with each
// Claude Code key and what each allowed-tools entry stands for.
func TestLintExplainsOtherTools(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	writePackFiles(t, dir, map[string]string{"SKILL.md": "---\nname: p\ndescription: d. Use it when testing.\nmodel: haiku\nallowed-tools: Read Bash(git:*) WebSearch\nhooks:\n  Stop: []\n---\n# p\n\nbody\n"})
	p, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	msgs := map[string]string{}
	for _, f := range Lint(dir, p) {
		if f.Rule == "skill-section" {
			continue
		}
		key := filepath.Base(f.File) + ":" + itoa(f.Line) + ":" + f.Rule
		got = append(got, key)
		msgs[key] += f.Message + "\n"
	}
	want := []string{"SKILL.md:4:frontmatter-other-tool", "SKILL.md:6:frontmatter-other-tool", "SKILL.md:5:allowed-tools-map", "SKILL.md:5:allowed-tools-map", "SKILL.md:5:allowed-tools-map"}
	if !slices.Equal(got, want) {
		t.Fatalf("lint = %v, want %v", got, want)
	}
	for key, says := range map[string]string{
		"SKILL.md:4:frontmatter-other-tool": "the person picks the model",
		"SKILL.md:6:frontmatter-other-tool": "never runs a pack's hooks",
		"SKILL.md:5:allowed-tools-map":      "Bash(git:*) stands for terminal_exec git: the pack's request",
	} {
		if !strings.Contains(msgs[key], says) {
			t.Errorf("%s: %q does not say %q", key, msgs[key], says)
		}
	}
	for key, says := range map[string]string{
		"SKILL.md:5:allowed-tools-map": "WebSearch stands for nothing: packs has no web search",
	} {
		if !strings.Contains(msgs[key], says) {
			t.Errorf("%s: %q does not say %q", key, msgs[key], says)
		}
	}
}
