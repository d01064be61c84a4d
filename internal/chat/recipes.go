package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/recipe"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// ToolRunRecipe runs one of a pack's recipes (spec 001): offered while an
// attached pack has recipes; open_docs lists them (recipe.Describe).
const ToolRunRecipe = "run_recipe"

var runRecipeTool = llm.Tool{
	Name:        ToolRunRecipe,
	Description: "Run a recipe that a pack's open_docs result lists: the host runs each step through the person's approval and rolls back on failure.\nPass the parameters you know; the person is asked for missing required ones: never guess them. Returns the run's result.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"pack_id":{"type":"string"},"recipe":{"type":"string","description":"the recipe's id"},"parameters":{"type":"object","additionalProperties":{"type":["string","number","boolean"]},"description":"the recipe's parameters by name"}},"required":["pack_id","recipe"],"additionalProperties":false}`),
}

// Blanket marks an approver that stands for a yes given before any call
// was seen (packs chat --message --yes), not for a person looking at each
// call. A recipe run takes it as the run's blanket yes: its auto and prompt
// steps run past it, but a step marked always, or one whose risk the
// policy's never_auto_approve_risk holds back, needs a person, so it does
// not approve those.
type Blanket interface {
	capability.Approver
	Blanket()
}

// ParamAsker is an approver that can ask the person for a recipe's missing
// parameters (the terminal, the web app), so that the model never has to
// guess them. With an approver that is not one, run_recipe refuses a call
// that lacks a required parameter and tells the model to ask the person.
type ParamAsker interface {
	// AskParams returns a value for each parameter of q, or an error when
	// the person gave none (declined, or the turn ended).
	AskParams(ctx context.Context, q ParamQuestion) (map[string]string, error)
}

// ParamQuestion is what the person is asked for.
type ParamQuestion struct {
	Invocation string // the run_recipe call's invocation
	Chat       string
	Pack       string
	Recipe     string // its id
	Name       string // its name
	Params     []ParamInfo
}

// ParamInfo describes one parameter to ask for.
type ParamInfo struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
	Validation  string `json:"validation,omitempty"`
}

// RecipeWatcher is an approver that shows a recipe run as it happens (the
// web app's recipe card, the terminal's progress lines).
type RecipeWatcher interface {
	// RecipeStarted is called once the run's parameters are known, before
	// its first call.
	RecipeStarted(r RecipeRun)
	// RecipeCall is called as each call of the run ends.
	RecipeCall(run string, c recipe.Call)
}

// RecipeRun describes a run that starts: its id and what it will do.
type RecipeRun struct {
	Run        string          `json:"run"`
	Invocation string          `json:"invocation"` // the run_recipe call's
	Chat       string          `json:"chat"`
	Pack       string          `json:"pack"`
	Recipe     string          `json:"recipe"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"` // the bound parameters
	// Steps are the preconditions, steps and verification checks; rollback
	// steps are told of when they run.
	Steps []recipe.Planned `json:"steps"`
}

// ErrParamsNotGiven: the person did not give a recipe's missing
// parameters. It wraps capability.ErrDenied: the run did not start.
var ErrParamsNotGiven = fmt.Errorf("chat: the person did not give the recipe's parameters: %w", capability.ErrDenied)

// ErrRecipeFailed: a recipe run did not succeed (a step, check or
// verification failed or was denied); the result says how far it got and
// whether it rolled back. It wraps runtime.ErrToolFailed.
var ErrRecipeFailed = fmt.Errorf("%w: recipe", runtime.ErrToolFailed)

// hasRecipes reports whether an attached pack has recipes; s.mu held.
func (s *Session) hasRecipesLocked() bool {
	for _, name := range s.order {
		if len(s.active[name].pack.Recipes) > 0 {
			return true
		}
	}
	return false
}

// prepareRunRecipe resolves a run_recipe call. The call itself is gated
// (the person agrees to start the run); then each precondition, step,
// check and rollback step is its own gated, audited call, under one run
// id, decided by approver.
func (s *Session) prepareRunRecipe(raw json.RawMessage, approver capability.Approver) (*prepared, error) {
	var args struct {
		PackID     string          `json:"pack_id"`
		Recipe     string          `json:"recipe"`
		Parameters json.RawMessage `json:"parameters"`
	}
	if err := decodeArgs(ToolRunRecipe, raw, &args); err != nil {
		return nil, err
	}
	a, err := s.lookup(ToolRunRecipe, args.PackID)
	if err != nil {
		return nil, err
	}
	rc, ok := a.pack.Recipe(args.Recipe)
	if !ok {
		var ids []string
		for _, r := range a.pack.Recipes {
			ids = append(ids, r.ID)
		}
		return nil, fmt.Errorf("%w: pack %s has no recipe %q; its recipes: %s", ErrNotFound, a.pack.Name, args.Recipe, orNone(ids))
	}
	values, err := packs.ParamValues(args.Parameters)
	if err == nil {
		err = rc.CheckValues(values)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: run_recipe: %w", ErrBadArguments, err)
	}
	missing := rc.Missing(values)
	asker, canAsk := approver.(ParamAsker)
	if len(missing) > 0 && !canAsk {
		return nil, fmt.Errorf("%w: run_recipe: recipe %s needs %s, and the person cannot be asked for them here: ask the person (do not guess), then call run_recipe again with them",
			ErrBadArguments, rc.ID, strings.Join(missing, ", "))
	}
	s.mu.Lock()
	client := s.client
	s.mu.Unlock()
	run := func(ctx context.Context, g runtime.Granted) (json.RawMessage, int, error) {
		if len(missing) > 0 {
			q := ParamQuestion{Invocation: g.Invocation, Chat: s.id, Pack: a.pack.Name, Recipe: rc.ID, Name: rc.Name}
			for _, name := range missing {
				for _, p := range rc.Parameters {
					if p.Name == name {
						pi := ParamInfo{Name: p.Name, Type: p.Type, Description: p.Description}
						if p.Validation != nil {
							pi.Validation = p.Validation.String()
						}
						q.Params = append(q.Params, pi)
					}
				}
			}
			got, err := asker.AskParams(ctx, q)
			if err != nil {
				return nil, 0, fmt.Errorf("%w (%s): %v", ErrParamsNotGiven, strings.Join(missing, ", "), err)
			}
			// Only what was asked for is taken from the answer.
			for _, name := range missing {
				v, ok := got[name]
				if !ok {
					return nil, 0, fmt.Errorf("%w: no value for %s", ErrParamsNotGiven, name)
				}
				values[name] = v
			}
		}
		bound, err := rc.Bind(values)
		if err != nil {
			return nil, 0, err
		}
		r := &recipe.Runner{
			Pipeline: s.deps.Pipeline, Pack: a.pack, Ref: a.ref, Workspace: s.workspace,
			Chat: s.id, Memory: s.memory, Client: client, Person: s.owner.Subject, Issuer: s.owner.Issuer, RunID: recipe.NewRunID(),
		}
		if _, ok := approver.(Blanket); ok {
			r.Blanket = []capability.Approver{approver}
		} else if approver != nil {
			r.Approvers = []capability.Approver{approver}
		}
		if w, ok := approver.(RecipeWatcher); ok {
			w.RecipeStarted(RecipeRun{Run: r.RunID, Invocation: g.Invocation, Chat: s.id, Pack: a.pack.Name, Recipe: rc.ID, Name: rc.Name,
				Arguments: bound, Steps: recipe.Plan(r.RunID, rc, bound)})
			r.OnCall = func(c recipe.Call) { w.RecipeCall(r.RunID, c) }
		}
		res, err := r.Run(ctx, rc, bound)
		if err != nil {
			return nil, 0, err
		}
		out, err := json.Marshal(res)
		if err != nil {
			return nil, 0, err
		}
		if res.Status == recipe.StatusSuccess {
			return out, 0, nil
		}
		return out, 1, fmt.Errorf("%w %s %s: %s", ErrRecipeFailed, a.pack.Name, rc.ID, outcome(res))
	}
	touches := []string{fmt.Sprintf("recipe %s: %d steps, each asks for its own approval", rc.ID, len(rc.Steps))}
	if len(missing) > 0 {
		touches = append(touches, "asks you for "+strings.Join(missing, ", "))
	}
	return &prepared{writes: true, req: builtin(a, ToolRunRecipe, nil, touches, run)}, nil
}

// outcome says in one line how a run that did not succeed ended.
func outcome(res recipe.Result) string {
	msg := fmt.Sprintf("%s at %s %s: %s", res.Status, res.FailedPhase, res.FailedStep, res.Error)
	switch {
	case res.RolledBack:
		msg += "; rolled back"
	case res.RollbackError != "":
		msg += "; the rollback failed: " + res.RollbackError
	}
	return msg
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	sort.Strings(l)
	return strings.Join(l, ", ")
}
