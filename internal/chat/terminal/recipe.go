package terminal

import (
	"context"
	"errors"
	"strings"

	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/recipe"
	"github.com/packs-run/packs/internal/termtext"
)

var (
	_ chat.ParamAsker    = (*ui)(nil)
	_ chat.RecipeWatcher = (*ui)(nil)
	_ chat.Blanket       = Yes{}
)

// Blanket marks --yes as a yes given before the calls were seen: a recipe
// step marked always still needs a person.
func (Yes) Blanket() {}

// errNoValue: the person left a recipe parameter empty, or Ctrl-C.
var errNoValue = errors.New("terminal: no value given")

// AskParams asks the person for the parameters a recipe run lacks, one
// line each; an empty line, Ctrl-C or the end of input gives none, and the
// run does not start.
func (u *ui) AskParams(ctx context.Context, q chat.ParamQuestion) (map[string]string, error) {
	deny, closeCard := u.openCard("question")
	defer closeCard()
	u.line("+-- recipe %s (pack %s) needs values the model did not give (an empty line cancels the run):\n", q.Recipe, q.Pack)
	out := map[string]string{}
	for _, p := range q.Params {
		hint := p.Type
		if p.Validation != "" {
			hint += ", matching " + p.Validation
		}
		if p.Description != "" {
			u.printf("|   %s: %s\n", p.Name, termtext.OneLine(p.Description, 200))
		}
		u.printf("%s (%s)> ", p.Name, hint)
		select {
		case l, ok := <-u.lines:
			u.typed()
			if !ok {
				u.printf("\n")
				return nil, errNoValue
			}
			v := strings.TrimRight(l, "\r\n")
			if strings.TrimSpace(v) == "" {
				u.line("  the run is cancelled\n")
				return nil, errNoValue
			}
			out[p.Name] = v
		case <-deny:
			u.line("  the run is cancelled\n")
			return nil, errNoValue
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return out, nil
}

// RecipeStarted shows the run's plan.
func (u *ui) RecipeStarted(r chat.RecipeRun) {
	u.line("  recipe %s (%s): %d calls, each approved on its own\n", r.Recipe, r.Run, len(r.Steps))
}

// RecipeCall shows each call of a recipe run as it ends.
func (u *ui) RecipeCall(_ string, c recipe.Call) {
	what := string(c.Phase) + " " + c.ID
	switch {
	case c.Skipped:
		u.line("  %s: skipped (its step did not complete)\n", what)
	case c.OK:
		u.line("  %s: ok\n", what)
	default:
		u.line("  %s: failed: %s\n", what, termtext.OneLine(c.Error, 300))
	}
}
