package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/packs"
)

// addSkills installs the skills chosen (names, or all) from source, a
// folder or git repository of several skills, each through the one
// installer as packs add SOURCE would (install). It stops at the first
// that fails, saying which were installed before it.
func (c *cli) addSkills(ctx context.Context, source string, names []string, all bool, install func(string) error) error {
	if all && len(names) > 0 {
		return usageError("add: --all or --skill NAME, not both")
	}
	found, done, err := dist.ListSourceSkills(ctx, source, dist.ArchiveLimits{})
	if err != nil {
		return usageError("add: %v", err)
	}
	defer done()
	for _, f := range found.Findings {
		fmt.Fprintln(c.stderr, f.String())
	}
	if len(found.Skills) == 0 {
		return usageError("add: %s holds no skill (no folder with a SKILL.md in skills/, at its root, or named by %s)", source, packs.MarketplaceFile)
	}
	if all {
		names = found.Names()
	}
	chosen, err := found.Pick(names)
	if err != nil {
		c.printSkills(source, found)
		return usageError("add: %v", err)
	}
	var installed []string
	for _, k := range chosen {
		s, err := dist.SkillSource(source, k)
		if err != nil {
			return err
		}
		if err := install(s); err != nil {
			if len(installed) > 0 {
				fmt.Fprintf(c.stderr, "packs: installed before this one: %s\n", strings.Join(installed, ", "))
			}
			return err
		}
		installed = append(installed, k.Name)
	}
	return nil
}

// printSkills lists the skills of a source on stderr, by plugin when a
// marketplace groups them.
func (c *cli) printSkills(source string, found packs.SourceSkills) {
	what := source
	if found.Marketplace != "" {
		what += " (marketplace " + found.Marketplace + ")"
	}
	fmt.Fprintf(c.stderr, "%s holds these skills:\n", what)
	tw := tabwriter.NewWriter(c.stderr, 0, 4, 2, ' ', 0)
	if found.Marketplace != "" {
		fmt.Fprintln(tw, "  PLUGIN\tSKILL\tFOLDER\tDESCRIPTION")
	} else {
		fmt.Fprintln(tw, "  SKILL\tFOLDER\tDESCRIPTION")
	}
	for _, k := range found.Skills {
		desc := k.Description
		if len(desc) > 60 {
			desc = desc[:57] + "..."
		}
		if found.Marketplace != "" {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", k.Plugin, k.Name, k.Path, desc)
		} else {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", k.Name, k.Path, desc)
		}
	}
	tw.Flush()
}

// listSkillsInstead is for an install of source that failed: when source
// is a folder or repository of several skills with none at its root, it
// lists them on stderr and reports true, so add can say to choose.
func (c *cli) listSkillsInstead(ctx context.Context, source string) bool {
	if fi, err := os.Stat(source); err == nil && fi.IsDir() {
		if _, err := os.Stat(filepath.Join(source, "SKILL.md")); err == nil {
			return false
		}
	}
	src, err := dist.ParseSource(source)
	if err != nil || src.Kind != dist.SourceLocal && src.Kind != dist.SourceGit {
		return false
	}
	found, done, err := dist.ListSourceSkills(ctx, source, dist.ArchiveLimits{})
	if err != nil {
		return false
	}
	defer done()
	if len(found.Skills) < 1 || (len(found.Skills) == 1 && found.Skills[0].Path == ".") {
		return false
	}
	c.printSkills(source, found)
	return true
}
