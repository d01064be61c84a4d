package recipe

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// grants is what the person granted: a fixed list.
type grants []capability.UserGrant

func (g grants) PeekGrants(context.Context, capability.PackRef, string) ([]capability.UserGrant, error) {
	return g, nil
}

func (g grants) TakeGrants(context.Context, capability.PackRef, string) ([]capability.UserGrant, error) {
	return g, nil
}

var execGrant = grants{{Capability: capability.TerminalExec, Scope: capability.ScopePersistent}}

// person stands for whoever answers the gate: it says verdict to every call
// except those whose invocation contains a deny substring, and counts.
type person struct {
	name    string
	verdict capability.Verdict
	deny    string
	mu      sync.Mutex
	asked   []string
	touches map[string][]string // by invocation
	risks   []capability.RiskLevel
}

func (p *person) Name() string { return p.name }

func (p *person) Approve(_ context.Context, pd capability.Pending) (capability.Verdict, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, pd.Invocation)
	if p.touches == nil {
		p.touches = map[string][]string{}
	}
	p.touches[pd.Invocation] = pd.Touches
	p.risks = append(p.risks, pd.RiskLevel)
	if p.deny != "" && strings.Contains(pd.Invocation, p.deny) {
		return capability.Deny, nil
	}
	return p.verdict, nil
}

func (p *person) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.asked)
}

type fixture struct {
	pack *packs.Pack
	pl   *runtime.Pipeline
	db   *store.DB
	ws   string
}

// setup loads the pack at dir and builds the real pipeline over a real
// audit log in SQLite, with the grant g and the policy (TOML, "" for none).
func setup(t testing.TB, dir string, g grants, policy string) *fixture {
	t.Helper()
	ctx := context.Background()
	p, err := packs.Load(dir, packs.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	log, err := audit.Open(ctx, db, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	rt, err := runtime.New(ctx, runtime.Config{CacheDir: t.TempDir(), PoolSize: -1, Recorder: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	var pol *capability.Policy
	if policy != "" {
		if pol, err = capability.ParsePolicy("policy.toml", []byte(policy)); err != nil {
			t.Fatal(err)
		}
	}
	pl, err := runtime.NewPipeline(rt, runtime.PipelineConfig{Grants: g, Audit: log, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{pack: p, pl: pl, db: db, ws: t.TempDir()}
}

func (f *fixture) runner(approvers ...capability.Approver) *Runner {
	return &Runner{Pipeline: f.pl, Pack: f.pack, Ref: capability.PackRef{Name: f.pack.Name}, Workspace: f.ws, Approvers: approvers}
}

func (f *fixture) run(t *testing.T, r *Runner, id string, params map[string]string) Result {
	t.Helper()
	rc, ok := f.pack.Recipe(id)
	if !ok {
		t.Fatalf("no recipe %s", id)
	}
	args, err := rc.Bind(params)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(context.Background(), rc, args)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// auditInvocations lists the invocations of the call rows in the log.
func (f *fixture) auditInvocations(t *testing.T) []string {
	t.Helper()
	var out []string
	for e, err := range audit.Entries(context.Background(), f.db, audit.Filter{Kind: audit.KindInvocation}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Invocation)
	}
	return out
}

// writePack writes a pack folder named name with skill.toml granting
// commands and the recipe files.
func writePack(t testing.TB, name string, commands []string, recipes map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	q := make([]string, len(commands))
	for i, c := range commands {
		q[i] = `"` + c + `"`
	}
	files := map[string]string{
		"SKILL.md":   "---\nname: " + name + "\ndescription: A test pack.\n---\n\n# " + name + "\n\nBody.\n",
		"skill.toml": "[skill]\nid = \"" + name + "\"\nname = \"" + name + "\"\nversion = \"1.0.0\"\ndescription = \"t\"\n\n[capabilities]\nterminal_exec = { commands = [" + strings.Join(q, ", ") + "] }\nenv_read = [\"RECIPE_TEST_*\"]\n",
	}
	for k, v := range recipes {
		files["recipes/"+k+".yaml"] = v
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func needGit(t *testing.T) {
	t.Helper()
	if !onSafePath("git") {
		t.Skip("git is not installed in /usr/bin or /bin")
	}
}

// git runs git in dir for the test's own setup and checks.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@localhost", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "LANG=C.UTF-8"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// initRepo makes ws a repository on main with one commit of README.
func initRepo(t *testing.T, ws string) {
	t.Helper()
	git(t, ws, "init", "--quiet")
	if err := os.WriteFile(filepath.Join(ws, "README"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, ws, "add", "README")
	git(t, ws, "commit", "--quiet", "-m", "init")
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const goodPatch = `diff --git a/README b/README
--- a/README
+++ b/README
@@ -1 +1,2 @@
 hello
+world
`

// badPatch adds a line with trailing whitespace: the recipe's check step
// (git diff --check) fails on it.
const badPatch = `diff --git a/README b/README
--- a/README
+++ b/README
@@ -1 +1,2 @@
 hello
+world   
`

func gitFlow(t *testing.T) *fixture {
	needGit(t)
	f := setup(t, filepath.Join("..", "..", "wasm-examples", "git-flow"), execGrant, "")
	initRepo(t, f.ws)
	return f
}

func callIDs(res Result) []string {
	var out []string
	for _, c := range res.Calls {
		s := string(c.Phase) + ":" + c.ID
		switch {
		case c.Skipped:
			s += "=skipped"
		case !c.OK:
			s += "=failed"
		}
		out = append(out, s)
	}
	return out
}

// TestGitFlowSuccess runs the example recipe end to end with real git: the
// branch holds the commit, and every call is in the audit log under the run.
func TestGitFlowSuccess(t *testing.T) {
	f := gitFlow(t)
	writeFile(t, filepath.Join(f.ws, "change.patch"), goodPatch)
	git(t, f.ws, "add", "change.patch")
	git(t, f.ws, "commit", "--quiet", "-m", "patch")
	yes := &person{name: "tester", verdict: capability.RunOnce}
	res := f.run(t, f.runner(yes), "feature-branch", map[string]string{"branch": "feature/world", "patch": "change.patch", "message": "Say world"})
	if res.Status != StatusSuccess || res.StepsCompleted != 5 || res.RolledBack {
		t.Fatalf("result: %+v", res)
	}
	want := []string{"precondition:1-command-exists", "precondition:2-custom", "step:check-clean", "step:create-branch", "step:apply-change", "step:commit", "step:check", "verification:verify-1", "verification:verify-2"}
	if got := callIDs(res); !slices.Equal(got, want) {
		t.Errorf("calls = %q, want %q", got, want)
	}
	if got := git(t, f.ws, "rev-parse", "--abbrev-ref", "HEAD"); got != "feature/world" {
		t.Errorf("HEAD is on %q", got)
	}
	if got := git(t, f.ws, "log", "-1", "--format=%s"); got != "Say world" {
		t.Errorf("last commit %q", got)
	}
	inv := f.auditInvocations(t)
	if len(inv) != len(want) {
		t.Fatalf("audit rows %q, want %d", inv, len(want))
	}
	for i, id := range inv {
		if !strings.HasPrefix(id, res.Run+".") || id != res.Calls[i].Invocation {
			t.Errorf("audit row %d: invocation %q is not the run's call %q", i, id, res.Calls[i].Invocation)
		}
	}
	if yes.count() != len(want) {
		t.Errorf("the person was asked %d times, want every call (%d)", yes.count(), len(want))
	}
	if !slices.Contains(yes.risks, capability.RiskModerate) || !slices.Contains(yes.risks, capability.RiskLow) {
		t.Errorf("the approver was not shown the steps' risks: %q", yes.risks)
	}
}

// TestGitFlowCheckFailsRollsBack: the check step fails on the patch's
// trailing whitespace; the rollback discards the commit, switches back and
// deletes the branch (partial success, rolled back).
func TestGitFlowCheckFailsRollsBack(t *testing.T) {
	f := gitFlow(t)
	writeFile(t, filepath.Join(f.ws, "change.patch"), badPatch)
	git(t, f.ws, "add", "change.patch")
	git(t, f.ws, "commit", "--quiet", "-m", "patch")
	yes := &person{name: "tester", verdict: capability.RunOnce}
	res := f.run(t, f.runner(yes), "feature-branch", map[string]string{"branch": "feature/ws", "patch": "change.patch", "message": "Bad"})
	if res.Status != StatusPartial || res.FailedStep != "check" || res.StepsCompleted != 4 || !res.RolledBack {
		t.Fatalf("result: %+v", res)
	}
	want := []string{"precondition:1-command-exists", "precondition:2-custom", "step:check-clean", "step:create-branch", "step:apply-change", "step:commit", "step:check=failed",
		"rollback:discard-change", "rollback:switch-back", "rollback:delete-branch"}
	if got := callIDs(res); !slices.Equal(got, want) {
		t.Errorf("calls = %q, want %q", got, want)
	}
	if got := git(t, f.ws, "rev-parse", "--abbrev-ref", "HEAD"); got != "main" {
		t.Errorf("HEAD is on %q, want main", got)
	}
	if got := git(t, f.ws, "branch", "--list", "feature/ws"); got != "" {
		t.Errorf("the branch is still there: %q", got)
	}
	if got := git(t, f.ws, "status", "--porcelain"); got != "" {
		t.Errorf("the tree is not clean: %q", got)
	}
}

// TestGitFlowDirtyTree: the first step fails; nothing completed, so no
// rollback step applies and the result is a failure.
func TestGitFlowDirtyTree(t *testing.T) {
	f := gitFlow(t)
	writeFile(t, filepath.Join(f.ws, "README"), "changed\n")
	yes := &person{name: "tester", verdict: capability.RunOnce}
	res := f.run(t, f.runner(yes), "feature-branch", map[string]string{"branch": "b", "patch": "x.patch", "message": "m"})
	if res.Status != StatusFailure || res.FailedStep != "check-clean" || res.StepsCompleted != 0 || res.RolledBack {
		t.Fatalf("result: %+v", res)
	}
	for _, c := range res.Calls {
		if c.Phase == PhaseRollback && !c.Skipped {
			t.Errorf("rollback step %s ran though its step never completed", c.ID)
		}
	}
}

// TestDeniedStepMidRecipe: the person denies the commit; the steps before
// it completed, so the run is a partial success and is rolled back.
func TestDeniedStepMidRecipe(t *testing.T) {
	f := gitFlow(t)
	writeFile(t, filepath.Join(f.ws, "change.patch"), goodPatch)
	git(t, f.ws, "add", "change.patch")
	git(t, f.ws, "commit", "--quiet", "-m", "patch")
	p := &person{name: "tester", verdict: capability.RunOnce, deny: ".step.commit"}
	res := f.run(t, f.runner(p), "feature-branch", map[string]string{"branch": "feature/x", "patch": "change.patch", "message": "m"})
	if res.Status != StatusPartial || res.FailedStep != "commit" || res.StepsCompleted != 3 || !res.RolledBack {
		t.Fatalf("result: %+v", res)
	}
	var denied *Call
	for i := range res.Calls {
		if res.Calls[i].ID == "commit" {
			denied = &res.Calls[i]
		}
	}
	if denied == nil || denied.Status != capability.StatusDenied {
		t.Errorf("the commit call: %+v", denied)
	}
	if got := git(t, f.ws, "rev-parse", "--abbrev-ref", "HEAD"); got != "main" {
		t.Errorf("HEAD is on %q", got)
	}
	if got := git(t, f.ws, "status", "--porcelain"); got != "" {
		t.Errorf("the tree is not clean: %q", got)
	}
}

// TestParameterCannotBecomeAnOption: a value that would be an option of git
// is refused at expansion, recorded as an invalid call, and git never runs.
func TestParameterCannotBecomeAnOption(t *testing.T) {
	needGit(t)
	dir := writePack(t, "opt", []string{"git"}, map[string]string{"r": "id: r\nname: R\nparameters:\n  - name: b\nsteps:\n  - id: s\n    command: git checkout {{b}}\n"})
	f := setup(t, dir, execGrant, "")
	initRepo(t, f.ws)
	yes := &person{name: "tester", verdict: capability.RunOnce}
	res := f.run(t, f.runner(yes), "r", map[string]string{"b": "--orphan=x"})
	if res.Status != StatusFailure || len(res.Calls) != 1 || res.Calls[0].Status != capability.StatusInvalidInput {
		t.Fatalf("result: %+v", res)
	}
	if yes.count() != 0 {
		t.Errorf("the person was asked about a call that cannot run")
	}
}

const statusRecipe = `id: r
name: R
steps:
  - id: s
    command: git status --short
    confirmation: %s
`

// TestConfirmationLevels puts each confirmation level to the gate: approved,
// denied, nobody to ask, a blanket yes to the run, a chat's "allow for this
// chat", and the policy.
func TestConfirmationLevels(t *testing.T) {
	needGit(t)
	allowAll := `[approval]
auto_approve = ["lvl__*"]
`
	type tc struct {
		name, level, policy string
		approver            capability.Verdict // with hasApprover
		hasApprover         bool
		blanket             bool
		remembered          bool // the chat allowed the class before
		wantOK              bool
		wantAsked           int
		wantErr             error
	}
	cases := []tc{
		{name: "prompt approved", level: "prompt", hasApprover: true, approver: capability.RunOnce, wantOK: true, wantAsked: 1},
		{name: "prompt denied", level: "prompt", hasApprover: true, approver: capability.Deny, wantAsked: 1, wantErr: capability.ErrRejected},
		{name: "prompt nobody", level: "prompt", wantErr: capability.ErrNoApprover},
		{name: "prompt blanket", level: "prompt", blanket: true, wantOK: true},
		{name: "prompt remembered", level: "prompt", hasApprover: true, approver: capability.Deny, remembered: true, wantOK: true},
		{name: "auto approved", level: "auto", hasApprover: true, approver: capability.RunOnce, wantOK: true, wantAsked: 1},
		{name: "auto denied", level: "auto", hasApprover: true, approver: capability.Deny, wantAsked: 1, wantErr: capability.ErrRejected},
		{name: "auto nobody", level: "auto", wantErr: capability.ErrNoApprover},
		{name: "auto policy", level: "auto", policy: allowAll, hasApprover: true, approver: capability.Deny, wantOK: true},
		{name: "auto remembered", level: "auto", hasApprover: true, approver: capability.Deny, remembered: true, wantOK: true},
		{name: "always approved", level: "always", hasApprover: true, approver: capability.RunOnce, wantOK: true, wantAsked: 1},
		{name: "always denied", level: "always", hasApprover: true, approver: capability.Deny, wantAsked: 1, wantErr: capability.ErrRejected},
		{name: "always nobody", level: "always", wantErr: capability.ErrNoApprover},
		{name: "always ignores blanket", level: "always", blanket: true, wantErr: capability.ErrNoApprover},
		{name: "always ignores chat memory", level: "always", hasApprover: true, approver: capability.Deny, remembered: true, wantAsked: 1, wantErr: capability.ErrRejected},
		{name: "always remembered asks", level: "always", hasApprover: true, approver: capability.RunOnce, remembered: true, wantOK: true, wantAsked: 1},
		{name: "always policy", level: "always", policy: allowAll, wantOK: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writePack(t, "lvl", []string{"git"}, map[string]string{"r": strings.Replace(statusRecipe, "%s", c.level, 1)})
			f := setup(t, dir, execGrant, c.policy)
			initRepo(t, f.ws)
			p := &person{name: "person", verdict: c.approver}
			r := f.runner()
			if c.hasApprover {
				r.Approvers = []capability.Approver{p}
			}
			if c.blanket {
				r.Blanket = []capability.Approver{&person{name: "--yes", verdict: capability.RunOnce}}
			}
			r.Chat, r.Memory = "chat_1", capability.NewChatMemory()
			if c.remembered {
				if err := r.Memory.Remember(context.Background(), "chat_1", "lvl__recipe_r", "person"); err != nil {
					t.Fatal(err)
				}
			}
			res := f.run(t, r, "r", nil)
			call := res.Calls[0]
			if call.OK != c.wantOK || p.count() != c.wantAsked {
				t.Fatalf("ok %v, asked %d; want ok %v, asked %d: %+v", call.OK, p.count(), c.wantOK, c.wantAsked, call)
			}
			if c.wantOK != (res.Status == StatusSuccess) {
				t.Errorf("status %s", res.Status)
			}
			if c.wantErr != nil && (call.Status != capability.StatusDenied || !errors.Is(call.Err, c.wantErr)) {
				t.Errorf("call: %+v, want denied with %v", call, c.wantErr)
			}
		})
	}
}

const riskRecipe = `id: r
name: R
steps:
  - id: s
    command: git status --short
    confirmation: auto
    risk_level: %s
`

// TestRiskPolicy puts a step's risk_level to the policy's
// never_auto_approve_risk: at or above it, auto_approve, a blanket yes and
// the chat's memory do not approve the step; a person does (approved,
// denied, nobody); below it, the policy approves as usual; never_approve
// still refuses. The approver is shown the risk.
func TestRiskPolicy(t *testing.T) {
	needGit(t)
	const policy = "[approval]\nauto_approve = [\"lvl__*\"]\nnever_auto_approve_risk = \"high\"\n"
	cases := []struct {
		name, risk, policy string
		approver           capability.Verdict
		hasApprover        bool
		blanket            bool
		remembered         bool
		wantOK             bool
		wantAsked          int
		wantErr            error
	}{
		{name: "high approved by the person", risk: "high", policy: policy, hasApprover: true, approver: capability.RunOnce, wantOK: true, wantAsked: 1},
		{name: "high denied by the person", risk: "high", policy: policy, hasApprover: true, approver: capability.Deny, wantAsked: 1, wantErr: capability.ErrRejected},
		{name: "high nobody", risk: "high", policy: policy, wantErr: capability.ErrNoApprover},
		{name: "high blanket", risk: "high", policy: policy, blanket: true, wantErr: capability.ErrNoApprover},
		{name: "high remembered", risk: "high", policy: policy, hasApprover: true, approver: capability.Deny, remembered: true, wantAsked: 1, wantErr: capability.ErrRejected},
		{name: "critical nobody", risk: "critical", policy: policy, wantErr: capability.ErrNoApprover},
		{name: "moderate auto approved", risk: "moderate", policy: policy, wantOK: true},
		{name: "low auto approved", risk: "low", policy: policy, wantOK: true},
		{name: "high without the key", risk: "high", policy: "[approval]\nauto_approve = [\"lvl__*\"]\n", wantOK: true},
		{name: "high never approved", risk: "high", policy: "[approval]\nnever_approve = [\"lvl__*\"]\nnever_auto_approve_risk = \"low\"\n", hasApprover: true, approver: capability.RunOnce, wantErr: capability.ErrRejected},
		{name: "high unlisted deny", risk: "high", policy: policy + "unlisted = \"deny\"\n", hasApprover: true, approver: capability.RunOnce, wantOK: true, wantAsked: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writePack(t, "lvl", []string{"git"}, map[string]string{"r": strings.Replace(riskRecipe, "%s", c.risk, 1)})
			f := setup(t, dir, execGrant, c.policy)
			initRepo(t, f.ws)
			p := &person{name: "person", verdict: c.approver}
			r := f.runner()
			if c.hasApprover {
				r.Approvers = []capability.Approver{p}
			}
			if c.blanket {
				r.Blanket = []capability.Approver{&person{name: "--yes", verdict: capability.RunOnce}}
			}
			r.Chat, r.Memory = "chat_1", capability.NewChatMemory()
			if c.remembered {
				if err := r.Memory.Remember(context.Background(), "chat_1", "lvl__recipe_r", "person"); err != nil {
					t.Fatal(err)
				}
			}
			res := f.run(t, r, "r", nil)
			call := res.Calls[0]
			if call.OK != c.wantOK || p.count() != c.wantAsked {
				t.Fatalf("ok %v, asked %d; want ok %v, asked %d: %+v", call.OK, p.count(), c.wantOK, c.wantAsked, call)
			}
			if c.wantErr != nil && (call.Status != capability.StatusDenied || !errors.Is(call.Err, c.wantErr)) {
				t.Errorf("call: %+v, want denied with %v", call, c.wantErr)
			}
			for _, got := range p.risks {
				if string(got) != c.risk {
					t.Errorf("the approver was shown risk %q, want %q", got, c.risk)
				}
			}
		})
	}
}

// TestGrantRefusesBeforeTheGate: the person's grant allows git only, so a
// step running echo is refused by Builtin.Check: nobody is asked, and the
// refusal is audited under the run.
func TestGrantRefusesBeforeTheGate(t *testing.T) {
	dir := writePack(t, "narrow", []string{"git", "echo"}, map[string]string{"r": "id: r\nname: R\nsteps:\n  - id: s\n    command: echo hi\n"})
	f := setup(t, dir, grants{{Capability: capability.TerminalExec, Resources: []string{"git"}, Scope: capability.ScopePersistent}}, "")
	p := &person{name: "person", verdict: capability.RunOnce}
	res := f.run(t, f.runner(p), "r", nil)
	if res.Status != StatusFailure || res.Calls[0].Status != capability.StatusDenied || p.count() != 0 {
		t.Fatalf("result %+v, asked %d", res, p.count())
	}
	if inv := f.auditInvocations(t); len(inv) != 1 || !strings.HasPrefix(inv[0], res.Run+".step.s") {
		t.Errorf("audit: %q", inv)
	}
}

// TestExpectations: exit_code, output_contains and json_path failures each
// fail their step; the rollback runs after a step that completed.
func TestExpectations(t *testing.T) {
	cases := []struct {
		name, expect string
		ok           bool
	}{
		{"exit code met", "exit_code: 3", true},
		{"exit code", "exit_code: 0", false},
		{"output met", "exit_code: 3\n      output_contains: phase", true},
		{"output", "exit_code: 3\n      output_contains: nope", false},
		{"json_path met", "exit_code: 3\n      json_path: $.items[*].phase\n      contains: Running", true},
		{"json_path value", "exit_code: 3\n      json_path: $.items[*].phase\n      contains: Failed", false},
		{"json_path nothing", "exit_code: 3\n      json_path: $.nope", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			recipe := `id: r
name: R
steps:
  - id: first
    command: echo one
  - id: s
    command: sh -c 'echo "{\"items\":[{\"phase\":\"Running\"}]}"; exit 3'
    expect:
      ` + c.expect + `
rollback:
  - id: undo-first
    command: echo undone
    undoes: first
`
			f := setup(t, writePack(t, "exp", []string{"echo", "sh"}, map[string]string{"r": recipe}), execGrant, "")
			res := f.run(t, f.runner(&person{name: "p", verdict: capability.RunOnce}), "r", nil)
			if c.ok {
				if res.Status != StatusSuccess {
					t.Fatalf("result %+v", res)
				}
				return
			}
			if res.Status != StatusPartial || res.FailedStep != "s" || !res.RolledBack || !strings.Contains(res.Error, "expectation") {
				t.Fatalf("result %+v", res)
			}
			if got := callIDs(res); !slices.Equal(got, []string{"step:first", "step:s=failed", "rollback:undo-first"}) {
				t.Errorf("calls %q", got)
			}
		})
	}
}

// TestVerificationFailureRollsBack: every step completes, the verification
// fails, and every rollback step runs in reverse order.
func TestVerificationFailureRollsBack(t *testing.T) {
	recipe := `id: r
name: R
steps:
  - id: a
    command: echo a
  - id: b
    command: echo b
verification:
  - check: echo not-ready
    expect:
      output_contains: ready-now
    message: the service should be ready
rollback:
  - id: undo-a
    command: echo undo-a
    undoes: a
  - id: undo-b
    command: echo undo-b
    undoes: b
`
	f := setup(t, writePack(t, "ver", []string{"echo"}, map[string]string{"r": recipe}), execGrant, "")
	res := f.run(t, f.runner(&person{name: "p", verdict: capability.RunOnce}), "r", nil)
	if res.Status != StatusFailure || res.FailedPhase != PhaseVerification || res.StepsCompleted != 2 || !res.RolledBack ||
		!strings.HasPrefix(res.Error, "the service should be ready: ") {
		t.Fatalf("result %+v", res)
	}
	if got := callIDs(res); !slices.Equal(got, []string{"step:a", "step:b", "verification:verify-1=failed", "rollback:undo-b", "rollback:undo-a"}) {
		t.Errorf("calls %q", got)
	}
}

// TestRollbackFailure: a failing rollback step does not stop the others,
// and the result says the run was not rolled back, and why.
func TestRollbackFailure(t *testing.T) {
	recipe := `id: r
name: R
steps:
  - id: a
    command: echo a
  - id: b
    command: "false"
rollback:
  - id: undo-a
    command: echo undo-a
    undoes: a
  - id: broken
    command: "false"
`
	f := setup(t, writePack(t, "rbf", []string{"echo", "false"}, map[string]string{"r": recipe}), execGrant, "")
	res := f.run(t, f.runner(&person{name: "p", verdict: capability.RunOnce}), "r", nil)
	if res.Status != StatusPartial || res.RolledBack || !strings.HasPrefix(res.RollbackError, "broken: ") {
		t.Fatalf("result %+v", res)
	}
	if got := callIDs(res); !slices.Equal(got, []string{"step:a", "step:b=failed", "rollback:broken=failed", "rollback:undo-a"}) {
		t.Errorf("calls %q", got)
	}
}

// TestStepTimeout: a step over its timeout is stopped (its process group
// killed) and fails with the limit status.
func TestStepTimeout(t *testing.T) {
	recipe := `id: r
name: R
steps:
  - id: slow
    command: sleep 30
    timeout: 1
`
	f := setup(t, writePack(t, "slow", []string{"sleep"}, map[string]string{"r": recipe}), execGrant, "")
	start := time.Now()
	res := f.run(t, f.runner(&person{name: "p", verdict: capability.RunOnce}), "r", nil)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the run took %s", took)
	}
	if res.Status != StatusFailure || res.Calls[0].Status != capability.StatusLimit {
		t.Fatalf("result %+v", res)
	}
}

// TestPreconditions: command_exists, env_set (through env_read) and custom;
// a failing one stops the run before any step.
func TestPreconditions(t *testing.T) {
	cases := []struct {
		name, pre string
		env       []string
		ok        bool
		msg       string
	}{
		{"command exists", "check: command_exists\n    args: [echo]", nil, true, ""},
		{"command missing", "check: command_exists\n    args: [no-such-program-xyz]\n    message: install it", nil, false, "install it: "},
		{"env set", "check: env_set\n    args: [RECIPE_TEST_X]", []string{"RECIPE_TEST_X=1"}, true, ""},
		{"env unset", "check: env_set\n    args: [RECIPE_TEST_X]\n    fallback: export RECIPE_TEST_X=1", []string{"OTHER=1"}, false, "(try: export RECIPE_TEST_X=1)"},
		{"env not granted", "check: env_set\n    args: [HOME]", []string{"HOME=/x"}, false, "env_read"},
		{"custom passes", "check: custom\n    script: echo ok", nil, true, ""},
		{"custom fails", "check: custom\n    script: \"false\"\n    message: must pass", nil, false, "must pass: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			recipe := "id: r\nname: R\npreconditions:\n  - " + c.pre + "\nsteps:\n  - id: s\n    command: echo step\n"
			g := append(grants{{Capability: capability.EnvRead, Scope: capability.ScopePersistent}}, execGrant...)
			f := setup(t, writePack(t, "pre", []string{"echo", "false", "no-such-program-xyz"}, map[string]string{"r": recipe}), g, "")
			r := f.runner(&person{name: "p", verdict: capability.RunOnce})
			r.Environ = c.env
			res := f.run(t, r, "r", nil)
			if c.ok != (res.Status == StatusSuccess) {
				t.Fatalf("result %+v", res)
			}
			if !c.ok {
				if res.FailedPhase != PhasePrecondition || len(res.Calls) != 1 || !strings.Contains(res.Error, c.msg) {
					t.Errorf("result %+v", res)
				}
			}
		})
	}
}

// TestEnvValuesStayOut: an env_set check's result names unset variables
// only; the values are neither in the result nor in the audit log.
func TestEnvValuesStayOut(t *testing.T) {
	recipe := "id: r\nname: R\npreconditions:\n  - check: env_set\n    args: [RECIPE_TEST_SECRET]\nsteps:\n  - id: s\n    command: echo step\n"
	g := append(grants{{Capability: capability.EnvRead, Scope: capability.ScopePersistent}}, execGrant...)
	f := setup(t, writePack(t, "envv", []string{"echo"}, map[string]string{"r": recipe}), g, "")
	r := f.runner(&person{name: "p", verdict: capability.RunOnce})
	r.Environ = []string{"RECIPE_TEST_SECRET=hunter2-value"}
	res := f.run(t, r, "r", nil)
	b, _ := json.Marshal(res)
	if res.Status != StatusSuccess || strings.Contains(string(b), "hunter2") {
		t.Fatalf("result %s", b)
	}
	for e, err := range audit.Entries(context.Background(), f.db, audit.Filter{}) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(e.Body), "hunter2") {
			t.Errorf("the audit log holds the value: %s", e.Body)
		}
	}
}

// wasmPack writes a pack whose tool "echo" is the runtime's WASI echo guest
// (stdin to stdout) and whose tool "loop" never returns, with the recipes.
func wasmPack(t *testing.T, recipes map[string]string) string {
	t.Helper()
	dir := writePack(t, "wt", []string{"echo"}, recipes)
	for name, guest := range map[string]string{"echo.wasm": "wasi_echo.wasm", "loop.wasm": "wasi_loop.wasm"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "runtime", "testdata", guest))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "bin", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tools := `[
 {"name": "echo", "description": "Echo.", "input_schema": {"type": "object", "properties": {"text": {"type": "string"}, "n": {"type": "integer"}}}, "run": {"wasm": "bin/echo.wasm", "abi": "wasi"}},
 {"name": "loop", "description": "Loop.", "input_schema": {"type": "object"}, "run": {"wasm": "bin/loop.wasm", "abi": "wasi"}}
]`
	if err := os.WriteFile(filepath.Join(dir, "tools.json"), []byte(tools), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestToolSteps: a step that runs a pack's WebAssembly tool is a call of
// that tool, with the parameters in its input, checked by json_path; a
// tool step over its timeout is stopped.
func TestToolSteps(t *testing.T) {
	recipe := `id: r
name: R
parameters:
  - name: msg
steps:
  - id: say
    tool: echo
    input:
      text: "{{msg}}"
      n: 2
    expect:
      json_path: $.text
      contains: hello
verification:
  - tool: echo
    input:
      text: done
    expect:
      output_contains: done
`
	slow := "id: slow\nname: S\nsteps:\n  - id: spin\n    tool: loop\n    timeout: 1\n"
	f := setup(t, wasmPack(t, map[string]string{"r": recipe, "slow": slow}), execGrant, "")
	yes := &person{name: "p", verdict: capability.RunOnce}
	res := f.run(t, f.runner(yes), "r", map[string]string{"msg": "hello there"})
	if res.Status != StatusSuccess || len(res.Calls) != 2 {
		t.Fatalf("result %+v", res)
	}
	if got := string(res.Calls[0].Output); got != `{"text":"hello there","n":2}` {
		t.Errorf("the tool got %s", got)
	}
	if res.Calls[0].Tool != "echo" || !strings.HasPrefix(res.Calls[0].Invocation, res.Run+".step.say") {
		t.Errorf("call %+v", res.Calls[0])
	}

	start := time.Now()
	res = f.run(t, f.runner(yes), "slow", nil)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the run took %s", took)
	}
	if c := res.Calls[0]; res.Status != StatusFailure || c.Status != capability.StatusLimit || !strings.Contains(c.Error, "timeout of 1s") || !errors.Is(c.Err, runtime.ErrTimeout) {
		t.Fatalf("result %+v", res)
	}
}

// TestMocksNeverRunCommands: with Mocks set, a command is answered by the
// first mock that matches it, a command no mock matches fails with 127,
// and no process starts; the calls still pass the gate and the grant.
func TestMocksNeverRunCommands(t *testing.T) {
	recipe := `id: r
name: R
preconditions:
  - check: command_exists
    args: [touch]
steps:
  - id: a
    command: touch mocked
    expect:
      output_contains: made
  - id: b
    command: touch unmocked
`
	f := setup(t, writePack(t, "mock", []string{"touch"}, map[string]string{"r": recipe}), execGrant, "")
	yes := &person{name: "p", verdict: capability.RunOnce}
	r := f.runner(yes)
	r.Mocks = []packs.RecipeMock{{Command: "touch m*", Stdout: "made"}, {Command: "touch mocked", ExitCode: 9}}
	res := f.run(t, r, "r", nil)
	if res.Status != StatusPartial || res.FailedStep != "b" || res.Calls[2].ExitCode != 127 || !strings.Contains(res.Error, "exit status 127") {
		t.Fatalf("result %+v", res)
	}
	for _, name := range []string{"mocked", "unmocked"} {
		if _, err := os.Stat(filepath.Join(f.ws, name)); !os.IsNotExist(err) {
			t.Errorf("%s exists: a real command ran (%v)", name, err)
		}
	}
	if yes.count() != 3 {
		t.Errorf("asked %d times, want 3: mocked calls still pass the gate", yes.count())
	}
	tc := packs.RecipeTestCase{Expected: "partial", ExpectedMessage: "127"}
	if err := CheckTest(res, tc); err != nil {
		t.Error(err)
	}
	tc.Expected = "success"
	if err := CheckTest(res, tc); !errors.Is(err, ErrTestMismatch) {
		t.Errorf("CheckTest = %v", err)
	}
	tc = packs.RecipeTestCase{Expected: "partial", ExpectedMessage: "nope"}
	if err := CheckTest(res, tc); !errors.Is(err, ErrTestMismatch) {
		t.Errorf("CheckTest = %v", err)
	}
}

func TestDescribe(t *testing.T) {
	p, err := packs.Load(filepath.Join("..", "..", "wasm-examples", "git-flow"), packs.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := Describe(p)
	for _, want := range []string{
		"## Recipes of git-flow",
		"### feature-branch: Feature branch with a checked patch",
		"- `branch` (string, required, matching `^[a-z0-9][a-z0-9._/-]{0,99}$`): the branch to create",
		"2. Create the branch: `git checkout --quiet -b {{branch}}` (confirmation prompt, risk low)",
		"On failure it rolls back (3 steps).",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Describe lacks %q:\n%s", want, got)
		}
	}
	if Describe(&packs.Pack{Name: "x"}) != "" {
		t.Error("a pack without recipes")
	}
}

// TestRunID: a run takes the id its front end made (NewRunID), and every
// call's invocation starts with it; an id of another form is refused
// before any call, so no invocation can be made to look like another run's.
func TestRunID(t *testing.T) {
	needGit(t)
	dir := writePack(t, "ids", []string{"git"}, map[string]string{"r": "id: r\nname: R\nsteps:\n  - id: s\n    command: git --version\n"})
	f := setup(t, dir, execGrant, "")
	rc, _ := f.pack.Recipe("r")
	yes := &person{name: "p", verdict: capability.RunOnce}
	for _, tt := range []struct {
		id   string
		want error
	}{
		{"", nil},
		{NewRunID(), nil},
		{"rcp_0123", ErrNoPipeline},
		{"rcp_0123456789abcdef.step.x", ErrNoPipeline},
		{"inv_0123456789abcdef", ErrNoPipeline},
	} {
		r := f.runner(yes)
		r.RunID = tt.id
		res, err := r.Run(context.Background(), rc, json.RawMessage(`{}`))
		if !errors.Is(err, tt.want) {
			t.Errorf("RunID %q: %v, want %v", tt.id, err, tt.want)
			continue
		}
		if err != nil {
			continue
		}
		if (tt.id != "" && res.Run != tt.id) || len(res.Calls) != 1 || res.Calls[0].Invocation != Invocation(res.Run, PhaseStep, "s") {
			t.Errorf("RunID %q: run %s, calls %+v", tt.id, res.Run, res.Calls)
		}
	}
	if n := yes.count(); n != 2 {
		t.Errorf("the person was asked %d times, want 2 (the refused ids ran nothing)", n)
	}
}
