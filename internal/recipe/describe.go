package recipe

import (
	"fmt"
	"strings"

	"github.com/packs-run/packs/packs"
)

// Describe is the Markdown a model reads about a pack's recipes (for
// open_docs): each recipe's id, what it does, its parameters and its steps
// with their confirmation levels. It is "" for a pack without recipes.
func Describe(p *packs.Pack) string {
	if len(p.Recipes) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Recipes of %s\n\nRun one with run_recipe (pack_id %q, the recipe's id, its parameters); the host runs each step through the approval gate and rolls back on failure.\n", p.Name, p.Name)
	for _, r := range p.Recipes {
		fmt.Fprintf(&b, "\n### %s: %s\n\n", r.ID, oneLine(r.Name))
		if r.Description != "" {
			fmt.Fprintf(&b, "%s\n\n", oneLine(r.Description))
		}
		if len(r.Parameters) > 0 {
			b.WriteString("Parameters:\n")
			for _, prm := range r.Parameters {
				fmt.Fprintf(&b, "- `%s` (%s", prm.Name, prm.Type)
				switch {
				case prm.Default != nil:
					fmt.Fprintf(&b, ", default %q", *prm.Default)
				case prm.Required:
					b.WriteString(", required")
				}
				if prm.Validation != nil {
					fmt.Fprintf(&b, ", matching `%s`", prm.Validation)
				}
				b.WriteString(")")
				if prm.Description != "" {
					b.WriteString(": " + oneLine(prm.Description))
				}
				b.WriteString("\n")
			}
			b.WriteString("\n")
		}
		b.WriteString("Steps:\n")
		for i, s := range r.Steps {
			what := "tool " + s.Tool
			if s.Command != nil {
				what = strings.Join(s.Command.Argv, " ")
			}
			name := s.ID
			if s.Name != "" {
				name = oneLine(s.Name)
			}
			fmt.Fprintf(&b, "%d. %s: `%s` (confirmation %s", i+1, name, what, s.Confirmation)
			if s.RiskLevel != "" {
				fmt.Fprintf(&b, ", risk %s", s.RiskLevel)
			}
			b.WriteString(")\n")
		}
		if len(r.Rollback) > 0 {
			fmt.Fprintf(&b, "\nOn failure it rolls back (%d steps).\n", len(r.Rollback))
		}
	}
	return b.String()
}

// oneLine keeps pack text on one line of the model's Markdown.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
