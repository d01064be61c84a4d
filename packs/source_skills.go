package packs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// MarketplaceFile is where a Claude Code plugin marketplace lists its
// plugins, relative to the repository root.
const MarketplaceFile = ".claude-plugin/marketplace.json"

// ErrNoSkill: the skill asked for is not in the source.
var ErrNoSkill = errors.New("packs: no such skill in the source")

// SourceSkill is one skill a source of several holds.
type SourceSkill struct {
	Name        string
	Description string
	Path        string // slash-separated folder inside the source
	Plugin      string // the marketplace plugin that lists it; "" without a marketplace
}

// SourceSkills is what a source of several skills holds.
type SourceSkills struct {
	Marketplace string // the marketplace's name; "" when the source has none
	Skills      []SourceSkill
	Findings    []Finding // skills that do not load, plugins kept elsewhere
}

// Names lists the skills' names, in order.
func (s SourceSkills) Names() []string {
	out := make([]string, len(s.Skills))
	for i, k := range s.Skills {
		out[i] = k.Name
	}
	return out
}

// Pick returns the skills named, in the order given; a name the source
// does not hold is an error wrapping ErrNoSkill that lists those it does.
func (s SourceSkills) Pick(names []string) ([]SourceSkill, error) {
	var out []SourceSkill
	for _, n := range names {
		i := slices.IndexFunc(s.Skills, func(k SourceSkill) bool { return k.Name == n })
		if i < 0 {
			holds := strings.Join(s.Names(), ", ")
			if holds == "" {
				holds = "nothing"
			}
			return nil, fmt.Errorf("%w: %q (it holds: %s)", ErrNoSkill, n, holds)
		}
		if !slices.ContainsFunc(out, func(k SourceSkill) bool { return k.Name == n }) {
			out = append(out, s.Skills[i])
		}
	}
	return out, nil
}

// marketplace is the part of marketplace.json packs reads: each plugin's
// name, where it lives, and the skill folders it names.
type marketplace struct {
	Name     string `json:"name"`
	Metadata struct {
		PluginRoot string `json:"pluginRoot"`
	} `json:"metadata"`
	Plugins []struct {
		Name   string          `json:"name"`
		Source json.RawMessage `json:"source"`
		Skills []string        `json:"skills"`
	} `json:"plugins"`
}

// FindSkills lists the skills the folder root holds. With a Claude Code
// plugin marketplace (MarketplaceFile) they are the skills of its plugins,
// by plugin: the folders a plugin's "skills" names, relative to the
// plugin's folder, else the folders of that plugin's skills/ holding a
// SKILL.md; a plugin kept elsewhere (a source that is not a relative path)
// is a warning. Without one, they are the packs discovered in root's
// skills/ folder and in root itself, two levels deep. A skill listed twice
// (by two plugins) is listed once, with the first plugin.
func FindSkills(ctx context.Context, root string) (SourceSkills, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(MarketplaceFile)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return discoverSkills(ctx, root)
	case err != nil:
		return SourceSkills{}, fmt.Errorf("packs: %s: %w", MarketplaceFile, err)
	}
	var m marketplace
	if err := json.Unmarshal(data, &m); err != nil {
		return SourceSkills{}, fmt.Errorf("%w: %s: %v: fix the JSON", ErrInvalidPack, MarketplaceFile, err)
	}
	out := SourceSkills{Marketplace: m.Name}
	rep := &reporter{}
	for _, pl := range m.Plugins {
		var rel string
		if err := json.Unmarshal(pl.Source, &rel); err != nil {
			rep.warnf(MarketplaceFile, 0, "plugin-elsewhere", "plugin %q is kept in another source (%s): add that source to list its skills", pl.Name, strings.Join(strings.Fields(string(pl.Source)), " "))
			continue
		}
		if !strings.HasPrefix(rel, "./") && m.Metadata.PluginRoot != "" {
			rel = path.Join(m.Metadata.PluginRoot, rel)
		}
		dir, ok := insideSource(rel)
		if !ok {
			rep.warnf(MarketplaceFile, 0, "path-escape", "plugin %q: source %q is not a folder inside the repository: skipped", pl.Name, rel)
			continue
		}
		var folders []string
		for _, s := range pl.Skills {
			p, ok := insideSource(path.Join(dir, s))
			if !ok {
				rep.warnf(MarketplaceFile, 0, "path-escape", "plugin %q: skill %q is not a folder inside the repository: skipped", pl.Name, s)
				continue
			}
			folders = append(folders, p)
		}
		if len(pl.Skills) == 0 {
			entries, _ := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir), "skills"))
			for _, e := range entries {
				if e.IsDir() {
					folders = append(folders, path.Join(dir, "skills", e.Name()))
				}
			}
		}
		for _, f := range folders {
			if slices.ContainsFunc(out.Skills, func(k SourceSkill) bool { return k.Path == f }) {
				continue
			}
			p, err := Load(filepath.Join(root, filepath.FromSlash(f)), LoadOptions{})
			if err != nil {
				rep.warnf(MarketplaceFile, 0, "skill-invalid", "plugin %q: skill %s does not load: %v", pl.Name, f, err)
				continue
			}
			out.Skills = append(out.Skills, SourceSkill{Name: p.Name, Description: p.Frontmatter.Description, Path: f, Plugin: pl.Name})
		}
	}
	out.Findings = rep.list
	return out, nil
}

// insideSource cleans a slash path inside the source; ok is false for one
// that leaves it.
func insideSource(p string) (string, bool) {
	clean := path.Clean(strings.TrimPrefix(p, "./"))
	if clean == "." {
		return ".", true
	}
	return clean, filepath.IsLocal(filepath.FromSlash(clean)) && !strings.Contains(clean, `\`)
}

// discoverSkills is FindSkills without a marketplace.
func discoverSkills(ctx context.Context, root string) (SourceSkills, error) {
	var roots []string
	if fi, err := os.Stat(filepath.Join(root, "skills")); err == nil && fi.IsDir() {
		roots = append(roots, filepath.Join(root, "skills"))
	}
	roots = append(roots, root)
	res, err := Discover(ctx, roots, DiscoverOptions{MaxDepth: 2})
	if err != nil {
		return SourceSkills{}, err
	}
	out := SourceSkills{Findings: res.Findings}
	for _, s := range res.Packs {
		rel, err := filepath.Rel(root, s.Dir)
		if err != nil {
			continue
		}
		out.Skills = append(out.Skills, SourceSkill{Name: s.Name, Description: s.Description, Path: filepath.ToSlash(rel)})
	}
	return out, nil
}
