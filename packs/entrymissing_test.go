package packs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoSkillDoc: a folder whose only Markdown has no frontmatter is
// refused because SKILL.md is missing, said of SKILL.md, not as a
// frontmatter error in the README it fell back to. A README that does
// begin with frontmatter still serves as the entry doc (spec 000 §4.2).
func TestNoSkillDoc(t *testing.T) {
	for _, tt := range []struct {
		name, file, body string
		wantRule         string // "" loads
	}{
		{"readme without frontmatter", "README.md", "# My tool\n\nDoes things.\n", "entry-missing"},
		{"first md without frontmatter", "notes.md", "just notes\n", "entry-missing"},
		{"readme with frontmatter", "README.md", "---\nname: tool\ndescription: Does things. Use it to try.\n---\n# tool\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tool")
			os.MkdirAll(dir, 0o755)
			if err := os.WriteFile(filepath.Join(dir, tt.file), []byte(tt.body), 0o644); err != nil {
				t.Fatal(err)
			}
			fs := Validate(dir, LoadOptions{})
			var errs []Finding
			for _, f := range fs {
				if f.Severity == SeverityError {
					errs = append(errs, f)
				}
			}
			if tt.wantRule == "" {
				if len(errs) != 0 {
					t.Fatalf("refused: %v", errs)
				}
				return
			}
			if len(errs) != 1 {
				t.Fatalf("want one error, got %v", errs)
			}
			f := errs[0]
			if f.Rule != tt.wantRule || filepath.Base(f.File) != "SKILL.md" || !strings.Contains(f.Message, "no SKILL.md") || !strings.Contains(f.Message, tt.file) {
				t.Errorf("got %s", f)
			}
		})
	}
}
