// Package recipe runs a pack's recipes (spec 001, "Recipe Format"): every
// precondition, step, verification check and rollback step is one call
// through runtime.Pipeline, so each is gated, run under the pack's grant
// and audited like any tool call, and all of a run's calls carry its run id.
//
// A step that runs a pack tool is a runtime.Request{Tool}. A step that runs
// a native command is a runtime.Builtin named "<pack>__recipe_<recipe id>"
// (the call class policy rules and "allow for this chat" use): its Check
// refuses, before the gate, a program the grant does not allow, and its Run
// starts the command through hostfns.Exec with the approval the gate gave
// (runtime.Granted.HostCall): no shell, argv from packs.RecipeCommand.
//
// Confirmation levels map onto the gate. The enterprise policy decides
// first for every call. auto and prompt then take the run's blanket
// approvers (a yes given to the whole run, as packs recipe run --yes) and
// the chat's "allow for this chat" memory, then ask Approvers: auto never
// approves anything by itself, so where nothing already approves its class
// it asks, as prompt does. always skips the blanket approvers and the
// chat's memory: a person is asked for that call (or, with nobody to ask,
// it is denied). A step whose risk_level is at or above the policy's
// never_auto_approve_risk is always, and the policy's auto_approve does
// not approve it either.
package recipe

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// Phase is the part of a recipe a call belongs to.
type Phase string

const (
	PhasePrecondition Phase = "precondition"
	PhaseStep         Phase = "step"
	PhaseVerification Phase = "verification"
	PhaseRollback     Phase = "rollback"
)

// Status is how a run ended (spec 001's RecipeResult).
type Status string

const (
	// StatusSuccess: every precondition, step and verification check passed.
	StatusSuccess Status = "success"
	// StatusPartial: at least one step completed, then a step failed or was
	// refused; the rollback ran (Result.RolledBack says whether it all
	// succeeded).
	StatusPartial Status = "partial"
	// StatusFailure: a precondition failed (nothing ran), the first step
	// failed, or the verification failed after every step.
	StatusFailure Status = "failure"
)

// Call is one call of a run: what it was, and how it ended.
type Call struct {
	Phase        Phase              `json:"phase"`
	ID           string             `json:"id"`
	Name         string             `json:"name,omitempty"`
	Invocation   string             `json:"invocation,omitempty"`
	Confirmation packs.Confirmation `json:"confirmation,omitempty"`
	RiskLevel    packs.RiskLevel    `json:"risk_level,omitempty"`
	Argv         []string           `json:"argv,omitempty"`
	Tool         string             `json:"tool,omitempty"`
	Status       capability.Status  `json:"status,omitempty"` // the pipeline's outcome; empty when skipped
	OK           bool               `json:"ok"`
	Skipped      bool               `json:"skipped,omitempty"` // a rollback step whose step never completed
	ExitCode     int                `json:"exit_code"`
	Output       json.RawMessage    `json:"output,omitempty"`
	Error        string             `json:"error,omitempty"`
	Err          error              `json:"-"` // why it failed: the pipeline's error (errors.Is) or packs.ErrExpectation
	Duration     time.Duration      `json:"duration_ns"`
}

// Result is spec 001's RecipeResult, with every call of the run.
type Result struct {
	Run            string `json:"run"`
	Pack           string `json:"pack"`
	Recipe         string `json:"recipe"`
	Status         Status `json:"status"`
	StepsCompleted int    `json:"steps_completed"`
	FailedPhase    Phase  `json:"failed_phase,omitempty"`
	FailedStep     string `json:"failed_step,omitempty"`
	Error          string `json:"error,omitempty"`
	Err            error  `json:"-"` // the failed call's Call.Err
	// RolledBack is true when a rollback ran and every rollback step that
	// applied succeeded.
	RolledBack    bool   `json:"rolled_back"`
	RollbackError string `json:"rollback_error,omitempty"`
	Calls         []Call `json:"calls"`
}

// Runner runs recipes of one pack through one pipeline.
type Runner struct {
	Pipeline  *runtime.Pipeline
	Pack      *packs.Pack
	Ref       capability.PackRef
	Workspace string // an existing absolute directory: the commands' working directory
	// Approvers decide each call in turn (a person at a terminal, the web
	// app's card).
	Approvers []capability.Approver
	// Blanket are approvers that stand for a yes given to the whole run
	// before it started. They are asked for auto and prompt calls, never
	// for always calls.
	Blanket []capability.Approver
	// Chat, Memory and Client are passed on to every call (Request.Chat,
	// Request.Memory except for always calls, Request.Client).
	Chat   string
	Memory capability.ChatMemory
	Client string
	// Person and Issuer name who runs the recipe (Request.Person, Issuer).
	Person, Issuer string
	// Environ is what env_set checks read, through the env_read grant;
	// nil means os.Environ().
	Environ []string
	// OnCall, when set, is told about each call as it ends.
	OnCall func(Call)
	// RunID is the run's id (NewRunID), for a front end that shows the
	// run before it starts; empty gets a fresh one.
	RunID string
	// Mocks, when not nil, answer every native command instead of running
	// it (recipe tests): a command no mock matches fails with exit status
	// 127, and command_exists finds every granted program. The calls still
	// go through the gate and the grant's Check.
	Mocks []packs.RecipeMock
}

// errStepTimeout is the cause of a tool step's own timeout.
var errStepTimeout = fmt.Errorf("%w: the step's timeout", runtime.ErrTimeout)

// ErrNoPipeline is returned by Run for a Runner without its pipeline or
// pack, or with a RunID NewRunID did not make.
var ErrNoPipeline = errors.New("recipe: a runner needs a pipeline, a pack and a run id of NewRunID")

// Run runs rc with args (packs.Recipe.Bind). A failed or refused call is a
// Result, not an error: Run returns an error only when a call could not be
// audited (the run stops there) or the Runner is incomplete.
func (r *Runner) Run(ctx context.Context, rc *packs.Recipe, args json.RawMessage) (Result, error) {
	if r.Pipeline == nil || r.Pack == nil || rc == nil {
		return Result{}, ErrNoPipeline
	}
	id := r.RunID
	switch {
	case id == "":
		id = NewRunID()
	case !runIDRE.MatchString(id):
		return Result{}, fmt.Errorf("%w: run id %q is not one of NewRunID", ErrNoPipeline, id)
	}
	run := &runState{r: r, rc: rc, args: args, res: Result{Run: id, Pack: r.Pack.Name, Recipe: rc.ID}}
	err := run.all(ctx)
	return run.res, err
}

// runIDRE is the form of NewRunID's ids.
var runIDRE = regexp.MustCompile(`^rcp_[0-9a-f]{16}$`)

// NewRunID returns a fresh recipe run id, "rcp_" and 16 hex digits. Every
// call of the run has an invocation id that starts with it and a ".".
func NewRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "rcp_" + hex.EncodeToString(b[:])
}

type runState struct {
	r    *Runner
	rc   *packs.Recipe
	args json.RawMessage
	res  Result
}

func (s *runState) fail(ph Phase, id, msg string, err error) {
	s.res.FailedPhase, s.res.FailedStep, s.res.Error, s.res.Err = ph, id, msg, err
}

func (s *runState) all(ctx context.Context) error {
	for i, pc := range s.rc.Preconditions {
		c, err := s.precondition(ctx, i, pc)
		if err != nil {
			return err
		}
		if !c.OK {
			msg := c.Error
			if pc.Message != "" {
				msg = pc.Message + ": " + c.Error
			}
			if pc.Fallback != "" {
				msg += " (try: " + pc.Fallback + ")"
			}
			s.fail(PhasePrecondition, c.ID, msg, c.Err)
			s.res.Status = StatusFailure
			return nil
		}
	}
	completed := map[string]bool{}
	for _, st := range s.rc.Steps {
		c, err := s.step(ctx, PhaseStep, st)
		if err != nil {
			return err
		}
		if !c.OK {
			s.fail(PhaseStep, st.ID, c.Error, c.Err)
			break
		}
		completed[st.ID] = true
		s.res.StepsCompleted++
	}
	if s.res.FailedPhase == "" {
		for _, v := range s.rc.Verification {
			c, err := s.step(ctx, PhaseVerification, v)
			if err != nil {
				return err
			}
			if !c.OK {
				msg := c.Error
				if v.Message != "" {
					msg = v.Message + ": " + c.Error
				}
				s.fail(PhaseVerification, v.ID, msg, c.Err)
				break
			}
		}
	}
	switch {
	case s.res.FailedPhase == "":
		s.res.Status = StatusSuccess
		return nil
	case s.res.FailedPhase == PhaseStep && s.res.StepsCompleted > 0:
		s.res.Status = StatusPartial
	default:
		s.res.Status = StatusFailure
	}
	return s.rollback(ctx, completed)
}

// rollback runs the rollback steps in reverse order, each unless it undoes
// a step that did not complete. A failed rollback step does not stop the
// others.
func (s *runState) rollback(ctx context.Context, completed map[string]bool) error {
	ran, failed := 0, []string{}
	for i := len(s.rc.Rollback) - 1; i >= 0; i-- {
		rb := s.rc.Rollback[i]
		if rb.Undoes != "" && !completed[rb.Undoes] {
			s.record(Call{Phase: PhaseRollback, ID: rb.ID, Name: rb.Name, Skipped: true, OK: true})
			continue
		}
		c, err := s.step(ctx, PhaseRollback, rb)
		if err != nil {
			return err
		}
		ran++
		if !c.OK {
			failed = append(failed, rb.ID+": "+c.Error)
		}
	}
	s.res.RolledBack = ran > 0 && len(failed) == 0
	if len(failed) > 0 {
		s.res.RollbackError = strings.Join(failed, "; ")
	}
	return nil
}

func (s *runState) record(c Call) {
	s.res.Calls = append(s.res.Calls, c)
	if s.r.OnCall != nil {
		s.r.OnCall(c)
	}
}

// className is the call class of the recipe's builtin calls.
func (s *runState) className() string { return s.r.Pack.Name + "__recipe_" + s.rc.ID }

// request is the pipeline request for one call at confirmation level conf
// and risk level risk. A risk the policy wants a person for
// (never_auto_approve_risk) makes the call always, whatever the step says.
func (s *runState) request(ph Phase, id string, conf packs.Confirmation, risk packs.RiskLevel) runtime.Request {
	req := runtime.Request{
		Invocation: Invocation(s.res.Run, ph, id),
		Chat:       s.r.Chat, Client: s.r.Client, Person: s.r.Person, Issuer: s.r.Issuer,
		Pack: s.r.Pack, Ref: s.r.Ref, Workspace: s.r.Workspace, RiskLevel: risk,
	}
	if conf == packs.ConfirmAlways || s.r.Pipeline.Policy().PersonRequired(risk) {
		req.Approvers = append(req.Approvers, s.r.Approvers...)
		return req
	}
	req.Approvers = append(append(req.Approvers, s.r.Blanket...), s.r.Approvers...)
	req.Memory = s.r.Memory
	return req
}

// step runs a step, a verification check or a rollback step.
func (s *runState) step(ctx context.Context, ph Phase, st packs.RecipeStep) (Call, error) {
	c := Call{Phase: ph, ID: st.ID, Name: st.Name, Confirmation: st.Confirmation, RiskLevel: st.RiskLevel, Tool: st.Tool}
	req := s.request(ph, st.ID, st.Confirmation, st.RiskLevel)
	if st.Command != nil {
		argv, err := st.Command.Expand(s.args)
		c.Argv = argv
		s.commandRequest(&req, ph, st.ID, argv, st.Timeout, err)
		if st.RiskLevel != "" {
			// The approval binds the step's risk with the command (the
			// approver is shown it from Request.RiskLevel).
			req.Arguments = s.arguments(ph, st.ID, map[string]any{"argv": argv, "risk_level": st.RiskLevel})
		}
	} else {
		in, err := st.ToolInput(s.args)
		req.Tool, req.Arguments, req.Invalid = st.Tool, in, err
		if st.Timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeoutCause(ctx, st.Timeout, errStepTimeout)
			defer cancel()
		}
	}
	o, err := s.r.Pipeline.Call(ctx, req)
	if err != nil {
		return c, fmt.Errorf("recipe: run %s: %w", s.res.Run, err)
	}
	s.outcome(&c, o, func(code int, stdout, stderr []byte) error { return st.Expect.Check(code, stdout, stderr) })
	if st.Tool != "" && o.Err != nil && errors.Is(context.Cause(ctx), errStepTimeout) {
		// The runtime names the grant's limit; the step's own was shorter.
		c.Error = fmt.Sprintf("%v: the step's timeout of %s passed and the tool was stopped", runtime.ErrTimeout, st.Timeout)
	}
	s.record(c)
	return c, nil
}

// commandRequest makes req a Builtin that runs argv under the pack's
// terminal_exec grant; expandErr, when set, makes the call invalid.
func (s *runState) commandRequest(req *runtime.Request, ph Phase, id string, argv []string, timeout time.Duration, expandErr error) {
	b := &runtime.Builtin{
		Name: s.className(), Capabilities: []capability.Name{capability.TerminalExec}, Granted: true,
		Touches: []string{"command " + strings.Join(argv, " ")},
	}
	req.Builtin = b
	req.Arguments = s.arguments(ph, id, map[string]any{"argv": argv})
	if expandErr != nil {
		req.Invalid = expandErr
		return
	}
	b.Check = func(g capability.Grant) []capability.Decision { return []capability.Decision{g.Command(argv[0])} }
	b.Run = func(ctx context.Context, g runtime.Granted) (json.RawMessage, int, error) {
		lim := g.Grant.Limits().Timeout
		if timeout > 0 && (lim <= 0 || timeout < lim) {
			lim = timeout
		}
		var res hostfns.ExecResult
		var err error
		if s.r.Mocks != nil {
			res = mockExec(s.r.Mocks, argv)
		} else {
			res, err = hostfns.Exec(ctx, g.HostCall(s.r.Pack, b.Name, s.r.Workspace), argv, hostfns.ExecOptions{Timeout: lim})
		}
		out, merr := json.Marshal(execOutput{ExitCode: res.ExitCode, Stdout: utf8(res.Stdout), Stderr: utf8(res.Stderr), Truncated: res.Truncated})
		if err == nil {
			err = merr
		}
		return out, res.Status(), err
	}
}

// execOutput is a command call's JSON result.
type execOutput struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Truncated bool   `json:"truncated,omitempty"`
}

func utf8(b []byte) string { return string(bytes.ToValidUTF8(b, []byte("\uFFFD"))) }

// arguments are a builtin call's JSON arguments: what the approver sees and
// the approval binds.
func (s *runState) arguments(ph Phase, id string, extra map[string]any) json.RawMessage {
	m := map[string]any{"run": s.res.Run, "recipe": s.rc.ID, "phase": ph, "id": id}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return b
}

// outcome fills c from the pipeline's outcome and checks the expectation.
func (s *runState) outcome(c *Call, o runtime.Outcome, check func(int, []byte, []byte) error) {
	c.Invocation, c.Status, c.ExitCode, c.Output = o.Invocation, o.Status, o.Result.ExitCode, o.Output
	c.Duration = o.Finished.Sub(o.Started)
	if o.Err != nil {
		c.Err, c.Error = o.Err, o.Err.Error()
		return
	}
	stdout, stderr := []byte(o.Output), []byte(nil)
	if c.Argv != nil {
		var eo execOutput
		if json.Unmarshal(o.Output, &eo) == nil {
			stdout, stderr = []byte(eo.Stdout), []byte(eo.Stderr)
		}
	}
	if err := check(c.ExitCode, stdout, stderr); err != nil {
		c.Err, c.Error = err, err.Error()
		return
	}
	c.OK = true
}

// preconditionID is the id of a recipe's i-th precondition (from 0).
func preconditionID(i int, pc packs.Precondition) string {
	return fmt.Sprintf("%d-%s", i+1, strings.ReplaceAll(pc.Check, "_", "-"))
}

// Invocation is the invocation id of a run's call.
func Invocation(run string, ph Phase, id string) string { return run + "." + string(ph) + "." + id }

// Planned is one call a run will make, as known before it starts.
type Planned struct {
	Phase        Phase              `json:"phase"`
	ID           string             `json:"id"`
	Invocation   string             `json:"invocation"`
	Name         string             `json:"name,omitempty"`
	What         string             `json:"what"` // the command, or "tool NAME"
	Confirmation packs.Confirmation `json:"confirmation"`
	RiskLevel    packs.RiskLevel    `json:"risk_level,omitempty"`
}

// Plan lists the preconditions, steps and verification checks of a run of
// rc with args (packs.Recipe.Bind) under the run id run, for a front end
// to show before the calls are made. Rollback steps run only on a failure
// and are not listed.
func Plan(run string, rc *packs.Recipe, args json.RawMessage) []Planned {
	out := []Planned{}
	for i, pc := range rc.Preconditions {
		id := preconditionID(i, pc)
		what := strings.TrimSpace(pc.Check + " " + strings.Join(pc.Args, " "))
		if pc.Command != nil {
			what = strings.Join(pc.Command.Argv, " ")
		}
		out = append(out, Planned{Phase: PhasePrecondition, ID: id, Invocation: Invocation(run, PhasePrecondition, id), Name: pc.Message, What: what, Confirmation: packs.ConfirmAuto})
	}
	add := func(ph Phase, steps []packs.RecipeStep) {
		for _, st := range steps {
			what := "tool " + st.Tool
			if st.Command != nil {
				what = st.Command.Text
				if argv, err := st.Command.Expand(args); err == nil {
					what = strings.Join(argv, " ")
				}
			}
			out = append(out, Planned{Phase: ph, ID: st.ID, Invocation: Invocation(run, ph, st.ID), Name: st.Name, What: what, Confirmation: st.Confirmation, RiskLevel: st.RiskLevel})
		}
	}
	add(PhaseStep, rc.Steps)
	add(PhaseVerification, rc.Verification)
	return out
}

// precondition runs one precondition as a gated call.
func (s *runState) precondition(ctx context.Context, i int, pc packs.Precondition) (Call, error) {
	id := preconditionID(i, pc)
	c := Call{Phase: PhasePrecondition, ID: id, Name: pc.Check, Confirmation: packs.ConfirmAuto}
	req := s.request(PhasePrecondition, id, packs.ConfirmAuto, "")
	switch pc.Check {
	case "custom":
		argv, err := pc.Command.Expand(s.args)
		c.Argv = argv
		s.commandRequest(&req, PhasePrecondition, id, argv, 0, err)
	case "command_exists":
		names := pc.Args
		req.Arguments = s.arguments(PhasePrecondition, id, map[string]any{"check": pc.Check, "args": names})
		req.Builtin = &runtime.Builtin{
			Name: s.className(), Capabilities: []capability.Name{capability.TerminalExec}, Granted: true,
			Touches: []string{"command_exists " + strings.Join(names, " ")},
			Check: func(g capability.Grant) []capability.Decision {
				var ds []capability.Decision
				for _, n := range names {
					ds = append(ds, g.Command(n))
				}
				return ds
			},
			Run: func(context.Context, runtime.Granted) (json.RawMessage, int, error) {
				var missing []string
				for _, n := range names {
					if s.r.Mocks == nil && !onSafePath(n) {
						missing = append(missing, n)
					}
				}
				out, _ := json.Marshal(map[string]any{"missing": missing})
				if len(missing) > 0 {
					return out, 1, nil
				}
				return out, 0, nil
			},
		}
	case "env_set":
		names := pc.Args
		req.Arguments = s.arguments(PhasePrecondition, id, map[string]any{"check": pc.Check, "args": names})
		req.Builtin = &runtime.Builtin{
			Name: s.className(), Capabilities: []capability.Name{capability.EnvRead}, Granted: true,
			Touches: []string{"env_set " + strings.Join(names, " ")},
			Check: func(g capability.Grant) []capability.Decision {
				var ds []capability.Decision
				for _, n := range names {
					ds = append(ds, g.Env(n))
				}
				return ds
			},
			Run: func(_ context.Context, g runtime.Granted) (json.RawMessage, int, error) {
				environ := s.r.Environ
				if environ == nil {
					environ = os.Environ()
				}
				vars := hostfns.Environ(g.HostCall(s.r.Pack, s.className(), s.r.Workspace), environ)
				var unset []string
				for _, n := range names {
					if vars[n] == "" {
						unset = append(unset, n)
					}
				}
				// The values stay out of the result and the audit log.
				out, _ := json.Marshal(map[string]any{"unset": unset})
				if len(unset) > 0 {
					return out, 1, nil
				}
				return out, 0, nil
			},
		}
	default:
		return c, fmt.Errorf("recipe: precondition %q was not checked by packs.Load", pc.Check)
	}
	o, err := s.r.Pipeline.Call(ctx, req)
	if err != nil {
		return c, fmt.Errorf("recipe: run %s: %w", s.res.Run, err)
	}
	s.outcome(&c, o, func(code int, _, _ []byte) error {
		if code != 0 {
			what := map[string]string{"command_exists": "a command is not installed", "env_set": "a variable is not set", "custom": "the check failed"}[pc.Check]
			return fmt.Errorf("%w: %s (exit status %d): %s", packs.ErrExpectation, what, code, bytes.TrimSpace(o.Output))
		}
		return nil
	})
	s.record(c)
	return c, nil
}

// onSafePath reports whether a granted program name is an executable on
// hostfns.SafePath (or, for an absolute name, at that path): where
// hostfns.Exec would find it.
func onSafePath(name string) bool {
	if filepath.IsAbs(name) {
		_, err := exec.LookPath(name)
		return err == nil
	}
	if strings.ContainsRune(name, '/') {
		return false
	}
	for _, dir := range filepath.SplitList(hostfns.SafePath) {
		if _, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// mockExec answers argv from the first mock that matches it.
func mockExec(mocks []packs.RecipeMock, argv []string) hostfns.ExecResult {
	for _, m := range mocks {
		if m.Matches(argv) {
			return hostfns.ExecResult{ExitCode: m.ExitCode, Stdout: []byte(m.Stdout), Stderr: []byte(m.Stderr)}
		}
	}
	return hostfns.ExecResult{ExitCode: 127, Stderr: []byte("recipe test: no mock_commands entry matches " + strings.Join(argv, " ") + ": recipe tests never run real commands")}
}

// ErrTestMismatch is wrapped by CheckTest's error.
var ErrTestMismatch = errors.New("recipe: the run does not have the expected result")

// CheckTest compares a run with a test case's expectation.
func CheckTest(res Result, tc packs.RecipeTestCase) error {
	got := string(res.Status)
	if res.Status == StatusFailure && res.FailedPhase == PhasePrecondition {
		got = "precondition_failed"
	}
	if got != tc.Expected {
		why := ""
		if res.Error != "" {
			why = " (" + string(res.FailedPhase) + " " + res.FailedStep + ": " + res.Error + ")"
		}
		return fmt.Errorf("%w: %s, expected %s%s", ErrTestMismatch, got, tc.Expected, why)
	}
	if tc.ExpectedMessage != "" && !strings.Contains(res.Error, tc.ExpectedMessage) {
		return fmt.Errorf("%w: the error %q does not contain %q", ErrTestMismatch, res.Error, tc.ExpectedMessage)
	}
	return nil
}

// TestGrants grants a pack everything it requests, for recipe tests: what
// a test shows is the recipe's logic, and the grant's Check still refuses
// what the manifest does not ask for.
type TestGrants struct{ Request capability.Request }

func (g TestGrants) grants() []capability.UserGrant {
	var out []capability.UserGrant
	for _, n := range g.Request.Names() {
		out = append(out, capability.UserGrant{Capability: n, Scope: capability.ScopePersistent})
	}
	return out
}

// PeekGrants implements capability.GrantSource.
func (g TestGrants) PeekGrants(context.Context, capability.PackRef, string) ([]capability.UserGrant, error) {
	return g.grants(), nil
}

// TakeGrants implements capability.GrantSource.
func (g TestGrants) TakeGrants(context.Context, capability.PackRef, string) ([]capability.UserGrant, error) {
	return g.grants(), nil
}
