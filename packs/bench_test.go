package packs

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkDiscover1000 scans one root holding 1,000 packs, reading
// frontmatter only, with the page cache warm.
func BenchmarkDiscover1000(b *testing.B) {
	root := b.TempDir()
	files := map[string]string{}
	for i := range 1000 {
		name := fmt.Sprintf("pack-%04d", i)
		files[name+"/SKILL.md"] = "---\nname: " + name + "\n" +
			"description: Generated pack number " + name + " for the discovery benchmark. Use it when nothing else fits.\n" +
			"license: MIT\nmetadata:\n  author: bench\n  version: \"1.0.0\"\n---\n\n# " + name + "\n\nSome body text that discovery must not read.\n"
		if i%3 == 0 {
			files[name+"/tools.json"] = "[]"
		}
	}
	writePackFiles(b, root, files)
	opt := DiscoverOptions{MaxPacks: 1000}
	res, err := Discover(context.Background(), []string{root}, opt)
	if err != nil || len(res.Packs) != 1000 || len(res.Findings) != 0 {
		b.Fatalf("warm-up: %d packs, %v, %v", len(res.Packs), res.Findings, err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Discover(context.Background(), []string{root}, opt); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidate validates one typical pack: frontmatter, a skill.toml
// and a tools.json with three tools whose schemas are compiled.
func BenchmarkValidate(b *testing.B) {
	dir := filepath.Join("testdata", "text-tools")
	if fs := Validate(dir, LoadOptions{}); len(fs) != 0 {
		b.Fatal(fs)
	}
	for b.Loop() {
		Validate(dir, LoadOptions{})
	}
}
