package packs_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/packs-run/packs/packs"
)

// Load reads a pack folder: the skill's frontmatter, its tools and what it
// asks for. A folder that breaks a rule is refused with findings that name
// the file, the line and the rule.
func ExampleLoad() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	pack := filepath.Join(dir, "weather")
	os.MkdirAll(pack, 0o755)
	os.WriteFile(filepath.Join(pack, "SKILL.md"), []byte("---\nname: weather\ndescription: Tells the weather. Use it when asked about the weather.\n---\n# weather\n"), 0o644)
	os.WriteFile(filepath.Join(pack, "skill.toml"), []byte("[skill]\nid = \"weather\"\nversion = \"1.0.0\"\n\n[capabilities]\nnetwork = [\"api.weather.example\"]\n"), 0o644)

	p, err := packs.Load(pack, packs.LoadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Name, "asks for", p.Request().Names(), p.Request().Network)

	// The same pack with a name that is not its folder's.
	os.WriteFile(filepath.Join(pack, "SKILL.md"), []byte("---\nname: Weather Pack\ndescription: Tells the weather.\n---\n"), 0o644)
	_, err = packs.Load(pack, packs.LoadOptions{})
	var le *packs.LoadError
	if errors.As(err, &le) {
		for _, f := range le.Findings {
			if f.Severity == packs.SeverityError {
				fmt.Printf("%s:%d: %s\n", filepath.Base(f.File), f.Line, f.Rule)
			}
		}
	}
	// Output:
	// weather asks for [network] [api.weather.example]
	// SKILL.md:2: name-format
}
