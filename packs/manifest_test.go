package packs

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
)

// spec001Complete is the complete example manifest of spec 001, verbatim
// apart from its comments, including its multi-line inline table.
const spec001Complete = `[skill]
id = "cloud.aws"
name = "AWS Cloud Skill"
version = "0.3.0"
description = "AWS workflows from terminal: awscli, sso, iam, cloudwatch, eks, terraform patterns"
authors = ["caro-community <community@caro.dev>"]
license = "MIT"
repository = "https://github.com/caro-skills/cloud-aws"
documentation = "https://caro.dev/skills/cloud-aws"
keywords = ["aws", "cloud", "devops", "infrastructure"]
api_version = "1.0"
min_caro_version = "1.1.0"

[provides]
knowledge = true
recipes = true
executable = false

[knowledge]
topics = ["aws", "cloud", "s3", "ec2", "lambda", "eks", "iam", "cloudwatch"]
priority = 100
max_context_tokens = 2000

[recipes]
files = ["recipes/*.yaml"]
default_confirmation = "prompt"

[executable]
module = "bin/skill.wasm"
exports = ["discover_tools", "parse_output", "plan_workflow"]

[capabilities]
terminal_exec = {
    allowed = true,
    commands = ["aws", "eksctl", "kubectl"],
    blocked = ["rm", "dd", "mkfs"]
}
filesystem_read = [
    "~/.aws",
    "~/.kube",
    "./",
    "$CARO_PROJECT_ROOT"
]
filesystem_write = [
    "./.caro-cache/aws"
]
network = [
    "*.amazonaws.com",
    "sts.*.amazonaws.com"
]
env_read = [
    "AWS_*",
    "KUBECONFIG"
]
secrets_access = false

[dependencies]
"core.shell" = ">=1.0"
"tool.kubectl" = { version = ">=0.2", optional = true }

[suggestions]
"tool.terraform" = "Works great with Terraform for IaC"

[features]
eks = { description = "EKS cluster management", default = true }

[platform]
os = []
arch = []
required_tools = ["aws"]
optional_tools = ["eksctl", "sam", "cdk"]
`

func parseM(doc string) (*Manifest, []string) {
	rep := &reporter{}
	m := parseManifest([]byte(doc), "skill.toml", "", rep)
	var got []string
	for _, f := range rep.list {
		got = append(got, string(f.Severity)+":"+f.Rule+"@"+strconv.Itoa(f.Line))
	}
	return m, got
}

// TestManifestSpec001 parses spec 001's complete example: every key packs
// acts on is converted, and every key it does not act on is refused at its
// line, never silently accepted.
func TestManifestSpec001(t *testing.T) {
	m, fs := parseM(spec001Complete)
	want := []string{
		"error:manifest-unsupported@12", // min_caro_version
		"error:manifest-unsupported@20", // [knowledge] topics
		"error:manifest-unsupported@25", // [recipes] files
		"error:manifest-unsupported@28", // [executable]
		"error:manifest-unsupported@61", // [suggestions]
		"error:manifest-unsupported@64", // [features]
	}
	if !slices.Equal(fs, want) {
		t.Errorf("findings = %v, want %v", fs, want)
	}
	if m.ID != "cloud.aws" || m.Name != "AWS Cloud Skill" || m.Version != "0.3.0" || m.License != "MIT" || m.APIVersion != "1.0" ||
		m.Repository != "https://github.com/caro-skills/cloud-aws" || len(m.Keywords) != 4 {
		t.Errorf("manifest = %+v", m)
	}
	if m.Knowledge != (Knowledge{Priority: 100, MaxContextTokens: 2000}) || m.DefaultConfirmation != "prompt" {
		t.Errorf("knowledge = %+v, default_confirmation = %q", m.Knowledge, m.DefaultConfirmation)
	}
	if !slices.Equal(m.Platform.RequiredTools, []string{"aws"}) || len(m.Platform.OptionalTools) != 3 || m.Platform.OS != nil {
		t.Errorf("platform = %+v", m.Platform)
	}
	if len(m.Dependencies) != 2 || m.Dependencies[0].Pack != "core.shell" || m.Dependencies[0].Optional ||
		m.Dependencies[1].Pack != "tool.kubectl" || !m.Dependencies[1].Optional || m.Dependencies[1].Constraint != ">=0.2" {
		t.Errorf("dependencies = %+v", m.Dependencies)
	}
	r := m.Capabilities
	if !slices.Equal(r.TerminalExec.Commands, []string{"aws", "eksctl", "kubectl"}) || !slices.Equal(r.TerminalExec.Blocked, []string{"rm", "dd", "mkfs"}) {
		t.Errorf("terminal_exec = %+v", r.TerminalExec)
	}
	if len(r.FilesystemRead) != 4 || len(r.FilesystemWrite) != 1 || len(r.Network) != 2 || len(r.EnvRead) != 2 || r.SecretsAccess != nil {
		t.Errorf("request = %+v", r)
	}
	if err := r.Validate(); err != nil {
		t.Errorf("the converted request must validate: %v", err)
	}
}

func TestManifestConversions(t *testing.T) {
	cases := []struct {
		doc  string
		want capability.Request
	}{
		{"", capability.Request{}},
		{"[capabilities]\nsecrets_access = [\"GITHUB_TOKEN\", \"NPM_TOKEN\"]\n",
			capability.Request{SecretsAccess: []string{"GITHUB_TOKEN", "NPM_TOKEN"}}},
		{"[capabilities.terminal_exec]\ncommands = [\"git\"]\n",
			capability.Request{TerminalExec: capability.ExecRequest{Commands: []string{"git"}}}},
		{"[capabilities]\nterminal_exec = { allowed = false, commands = [\"git\"], blocked = [\"rm\"] }\n",
			capability.Request{TerminalExec: capability.ExecRequest{Blocked: []string{"rm"}}}},
		{"[limits]\nmemory_pages = 100\ntimeout_ms = 1500\ninput_bytes = 10\n",
			capability.Request{Limits: capability.Limits{MemoryPages: 100, Timeout: 1500 * time.Millisecond, InputBytes: 10}}},
		{"[limits]\nmemory_mb = 1\ntimeout = \"2m\"\n",
			capability.Request{Limits: capability.Limits{MemoryPages: 16, Timeout: 2 * time.Minute}}},
	}
	for _, tc := range cases {
		m, fs := parseM(tc.doc)
		if len(fs) != 0 || m == nil {
			t.Errorf("%q: findings %v", tc.doc, fs)
			continue
		}
		if got := m.Capabilities; !equalRequest(got, tc.want) {
			t.Errorf("%q: request = %+v, want %+v", tc.doc, got, tc.want)
		}
	}
}

func equalRequest(a, b capability.Request) bool {
	return slices.Equal(a.TerminalExec.Commands, b.TerminalExec.Commands) &&
		slices.Equal(a.TerminalExec.Blocked, b.TerminalExec.Blocked) &&
		slices.Equal(a.FilesystemRead, b.FilesystemRead) && slices.Equal(a.FilesystemWrite, b.FilesystemWrite) &&
		slices.Equal(a.Network, b.Network) && slices.Equal(a.EnvRead, b.EnvRead) &&
		slices.Equal(a.SecretsAccess, b.SecretsAccess) && a.Limits == b.Limits
}

// TestManifestFindings: each bad manifest yields its findings at the lines
// of the offending keys or array elements.
func TestManifestFindings(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []string
	}{
		{"two-unknown-keys", "[skill]\nid = \"x\"\nidd = 1\n[capabilities]\nnetwrk = []\n", []string{"error:toml-unknown-key@3", "error:toml-unknown-key@5"}},
		{"unknown-table", "[skil]\nid = \"x\"\n", []string{"error:toml-unknown-key@1"}},
		{"unknown-in-inline", "[capabilities]\nterminal_exec = { allowed = true, commands = [\"git\"], only = 1 }\n", []string{"error:toml-unknown-key@2"}},
		{"each-bad-pattern", "[capabilities]\nnetwork = [\"ok.example.com\", \"http://x\", \"a:0\"]\nenv_read = [\n  \"HOME\",\n  \"*\",\n]\n",
			[]string{"error:capability-pattern@2", "error:capability-pattern@2", "error:capability-pattern@5"}},
		{"bad-path", "[capabilities]\nfilesystem_read = [\"relative/dir\"]\nfilesystem_write = [\"./ok\", \"/tmp/../etc\"]\n",
			[]string{"error:capability-pattern@2", "error:capability-pattern@3"}},
		{"bad-command", "[capabilities.terminal_exec]\ncommands = [\"git\", \"rm -rf\"]\nblocked = [\"a;b\"]\n",
			[]string{"error:capability-pattern@2", "error:capability-pattern@3"}},
		{"allowed-and-blocked", "[capabilities]\nterminal_exec = { commands = [\"git\"], blocked = [\"git\"] }\n", []string{"error:capability-invalid@2"}},
		{"dotted-keys", "capabilities.network = [\"bad url\"]\n", []string{"error:capability-pattern@1"}},
		{"secrets-wrong-type", "[capabilities]\nsecrets_access = \"TOKEN\"\n", []string{"error:toml-type@2"}},
		{"secrets-item-type", "[capabilities]\nsecrets_access = [\"A\", 3]\n", []string{"error:toml-type@2"}},
		{"secrets-empty-name", "[capabilities]\nsecrets_access = [\"\"]\n", []string{"error:capability-pattern@2"}},
		{"timeout-both", "[limits]\ntimeout = \"1s\"\ntimeout_ms = 5\n", []string{"error:limits@2"}},
		{"timeout-bad", "[limits]\ntimeout = \"soon\"\n", []string{"error:limits@2"}},
		{"timeout-zero", "[limits]\ntimeout_ms = 0\n", []string{"error:limits@2"}},
		{"memory-huge", "[limits]\nmemory_pages = 70000\n", []string{"error:limits@2"}},
		{"bytes-negative", "[limits]\n\noutput_bytes = -1\n", []string{"error:limits@3"}},
		{"semver-leading-zero", "[skill]\nversion = \"1.02.0\"\n", []string{"error:manifest-version@2"}},
		{"semver-pre-release", "[skill]\nversion = \"1.2.0-rc.1+build.5\"\n", nil},
		{"semver-numeric-pre-release-leading-zero", "[skill]\nversion = \"1.0.0-01\"\n", []string{"error:manifest-version@2"}},
		{"filesystem-doublestar", "[capabilities]\nfilesystem_read = [\"~/logs/**/*.log\"]\n", []string{"error:capability-pattern@2"}},
		{"api-1", "[skill]\napi_version = \"1\"\n", nil},
		{"status-unknown", "[skill]\nid = \"x\"\n\nstatus = \"beta\"\n", []string{"error:manifest-status@4"}},
		{"status-case", "[skill]\nstatus = \"Deprecated\"\n", []string{"error:manifest-status@2"}},
		{"status-type", "[skill]\nstatus = 1\n", []string{"error:toml-type@2"}},
		{"icon-type", "[skill]\nicon = [\"a\"]\n", []string{"error:toml-type@2"}},
		{"type-bool", "[provides]\nknowledge = \"yes\"\n", []string{"error:toml-type@2"}},
		// Every spec 001 key packs does not act on is refused at its line.
		{"min-caro-version", "[skill]\nid = \"x\"\nmin_caro_version = \"1.1.0\"\n", []string{"error:manifest-unsupported@3"}},
		{"knowledge-topics", "[knowledge]\npriority = 1\ntopics = [\"aws\"]\n", []string{"error:manifest-unsupported@3"}},
		{"recipes-files", "[recipes]\nfiles = [\"recipes/*.yaml\"]\n", []string{"error:manifest-unsupported@2"}},
		{"executable", "[skill]\nid = \"x\"\n\n[executable]\nmodule = \"bin/x.wasm\"\n", []string{"error:manifest-unsupported@4"}},
		{"executable-exports", "executable.exports = [\"f\"]\n", []string{"error:manifest-unsupported@1"}},
		{"executable-empty", "[executable]\n", []string{"error:manifest-unsupported@1"}},
		{"suggestions", "[suggestions]\n\"tool.x\" = \"works well\"\n", []string{"error:manifest-unsupported@1"}},
		{"features", "[features]\neks = { description = \"d\", default = true }\n", []string{"error:manifest-unsupported@1"}},
		// api_version: this build's major, a minor no newer than its own.
		{"api-1.0", "[skill]\napi_version = \"1.0\"\n", nil},
		{"api-newer-minor", "[skill]\napi_version = \"1.1\"\n", []string{"error:api-version@2"}},
		{"api-major-2", "[skill]\napi_version = \"2\"\n", []string{"error:api-version@2"}},
		{"api-three-numbers", "[skill]\napi_version = \"1.0.0\"\n", []string{"error:api-version@2"}},
		{"api-leading-zero", "[skill]\napi_version = \"01\"\n", []string{"error:api-version@2"}},
		// Enum values.
		{"default-confirmation-ok", "[recipes]\ndefault_confirmation = \"always\"\n", nil},
		{"default-confirmation-bad", "[recipes]\n\ndefault_confirmation = \"never\"\n", []string{"error:recipe-confirmation@3"}},
		{"provides-knowledge-false", "[provides]\nknowledge = false\n", []string{"error:provides-mismatch@2"}},
		// [knowledge] ranges.
		{"knowledge-ok", "[knowledge]\npriority = 0\nmax_context_tokens = 1\n", nil},
		{"priority-negative", "[knowledge]\npriority = -1\n", []string{"error:knowledge@2"}},
		{"max-context-zero", "[knowledge]\nmax_context_tokens = 0\n", []string{"error:knowledge@2"}},
		{"max-context-type", "[knowledge]\nmax_context_tokens = \"2k\"\n", []string{"error:toml-type@2"}},
		// [platform] values.
		{"platform-ok", "[platform]\nos = [\"linux\", \"macos\"]\narch = [\"x86_64\", \"aarch64\"]\nrequired_tools = [\"git\", \"/usr/bin/env\"]\n", nil},
		{"platform-os-unknown", "[platform]\nos = [\"linux\",\n  \"beos\"]\n", []string{"error:platform-value@3"}},
		{"platform-arch-unknown", "[platform]\narch = [\"z80\"]\n", []string{"error:platform-value@2"}},
		{"platform-tool-not-a-program", "[platform]\nrequired_tools = [\"git\", \"rm -rf\"]\n", []string{"error:platform-value@2"}},
		{"platform-tool-blocked", "[capabilities]\nterminal_exec = { commands = [\"git\"], blocked = [\"rm\"] }\n[platform]\noptional_tools = [\"rm\"]\n", []string{"error:platform-tool@4"}},
		// [dependencies].
		{"dependencies-ok", "[dependencies]\n\"core.shell\" = \">=1.0\"\ngit-flow = { version = \"^0.1\", optional = true }\nany = \"*\"\n", nil},
		{"dependency-bad-constraint", "[dependencies]\na = \">=1.0\"\nb = \">=banana\"\n", []string{"error:dependency@3"}},
		{"dependency-bad-name", "[dependencies]\n\"a b\" = \"1\"\n", []string{"error:dependency@2"}},
		{"dependency-type", "[dependencies]\na = 1\n", []string{"error:toml-type@2"}},
		{"dependency-table-key", "[dependencies]\na = { version = \"1\", features = [] }\n", []string{"error:toml-unknown-key@2"}},
		{"dependency-table-type", "[dependencies]\na = { optional = \"yes\" }\n", []string{"error:toml-type@2"}},
		{"syntax", "[skill]\nid = \"unterminated\n", []string{"error:toml-syntax@2"}},
		{"duplicate-key", "[skill]\nid = \"a\"\nid = \"b\"\n", []string{"error:toml-syntax@3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, got := parseM(tc.doc)
			if !slices.Equal(got, tc.want) {
				t.Errorf("findings = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestManifestPresentation: [skill].category, icon and status (spec 003)
// reach the parsed manifest; status defaults to available.
func TestManifestPresentation(t *testing.T) {
	cases := []struct {
		doc            string
		category, icon string
		status         Status
	}{
		{"", "", "", StatusAvailable},
		{"[skill]\nid = \"x\"\n", "", "", StatusAvailable},
		{"[skill]\ncategory = \"Testing\"\nicon = \"calculator\"\n", "Testing", "calculator", StatusAvailable},
		{"[skill]\nstatus = \"available\"\n", "", "", StatusAvailable},
		{"[skill]\nstatus = \"coming_soon\"\n", "", "", StatusComingSoon},
		{"[skill]\nstatus = \"deprecated\"\nicon = \"box\"\n", "", "box", StatusDeprecated},
	}
	for _, tc := range cases {
		m, fs := parseM(tc.doc)
		if len(fs) != 0 || m == nil {
			t.Errorf("%q: findings %v", tc.doc, fs)
			continue
		}
		if m.Category != tc.category || m.Icon != tc.icon || m.Status != tc.status {
			t.Errorf("%q: category, icon, status = %q, %q, %q; want %q, %q, %q", tc.doc, m.Category, m.Icon, m.Status, tc.category, tc.icon, tc.status)
		}
	}
}

func TestCheckSemver(t *testing.T) {
	for _, v := range []string{"0.0.0", "1.2.3", "10.20.30", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0+20130313144700", "1.0.0-beta+exp.sha.5114f85", "1.0.0-0", "1.0.0-0a", "1.0.0-x-y.0", "1.0.0+001"} {
		if err := checkSemver(v); err != nil {
			t.Errorf("checkSemver(%q) = %v", v, err)
		}
	}
	for _, v := range []string{"", "1", "1.2", "1.2.3.4", "01.2.3", "1.2.x", "v1.2.3", "1.2.3-", "1.2.3+", "1.2.3-a..b", "1.2.3-é",
		"1.0.0-01", "1.0.0-alpha.007", "1.2.3-rc.00", "1.2.3+build..1", " 1.2.3", "1.2.3\n"} {
		if err := checkSemver(v); err == nil {
			t.Errorf("checkSemver(%q) = nil, want an error", v)
		}
	}
}
