package main

import (
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
)

// otherOS is an OS this test does not run on, in [platform]'s words.
func otherOS() string {
	if goruntime.GOOS == "windows" {
		return "linux"
	}
	return "windows"
}

// manifestPack writes a pack named name with the given skill.toml.
func manifestPack(t *testing.T, name, manifest string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	writeFiles(t, dir, map[string]string{
		"SKILL.md":   "---\nname: " + name + "\ndescription: A pack with requirements.\n---\n# " + name + "\n\nBody.\n",
		"skill.toml": manifest,
	})
	return dir
}

// TestAddChecksHost: packs add refuses a pack that does not fit this
// machine or lacks a pack it depends on, at the manifest's line, and
// installs nothing; packs validate reports the same as a warning.
func TestAddChecksHost(t *testing.T) {
	cases := []struct {
		name, manifest string
		rule           string // "" when the pack installs
		line           int
	}{
		{"os-mismatch", "[skill]\nid = \"t.p\"\n\n[platform]\nos = [\"" + otherOS() + "\"]\n", "platform-os", 5},
		{"os-match", "[platform]\nos = [\"" + goruntime.GOOS + "\"]\n", "", 0},
		{"arch-mismatch", "[platform]\narch = [\"s390x\", \"riscv64\"]\n", "platform-arch", 2},
		{"required-tool-missing", "[platform]\nrequired_tools = [\"packs-no-such-tool\"]\n", "platform-tool", 2},
		{"optional-tool-missing", "[platform]\noptional_tools = [\"packs-no-such-tool\"]\n", "", 0},
		{"dependency-missing", "[dependencies]\n\"core.shell\" = \">=1.0\"\n", "dependency", 2},
	}
	if goruntime.GOARCH == "s390x" || goruntime.GOARCH == "riscv64" {
		t.Skip("the arch case assumes another architecture")
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			src := manifestPack(t, "req", tc.manifest)
			v := withHome(t, home, "validate", src).mustCode(t, 0)
			r := withHome(t, home, "add", src, "--yes")
			if tc.rule == "" {
				r.mustCode(t, 0)
				if got := listJSON(t, home); len(got) != 1 {
					t.Errorf("list after add = %+v", got)
				}
				return
			}
			r.mustCode(t, 1)
			at := regexp.MustCompile(`(?m)skill\.toml:` + strconv.Itoa(tc.line) + `: error: ` + tc.rule + `: `)
			if !at.MatchString(r.stderr) {
				t.Errorf("add: stderr lacks skill.toml:%d: error: %s:\n%s", tc.line, tc.rule, r.stderr)
			}
			if line := r.oneLineError(t); !strings.Contains(line, "does not fit this machine") {
				t.Errorf("add: error line %q", line)
			}
			if got := listJSON(t, home); len(got) != 0 {
				t.Errorf("a refused pack was installed: %+v", got)
			}
			warn := regexp.MustCompile(`(?m)skill\.toml:` + strconv.Itoa(tc.line) + `: warning: ` + tc.rule + `: `)
			if !warn.MatchString(v.stdout) {
				t.Errorf("validate: stdout lacks the warning:\n%s", v.stdout)
			}
		})
	}
}

// TestAddResolvesDependencies: a dependency is met by an installed pack of
// that name or id, in a version the constraint allows.
func TestAddResolvesDependencies(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	dependent := manifestPack(t, "dependent", "[dependencies]\n\"demo.weather\" = \"^1.2\"\n")
	withHome(t, home, "add", dependent, "--yes").mustCode(t, 1)
	withHome(t, home, "add", weatherPack(t, "1.1.0"), "--yes").mustCode(t, 0)
	r := withHome(t, home, "add", dependent, "--yes").mustCode(t, 1)
	if !strings.Contains(r.stderr, "dependent/skill.toml:2: error: dependency: the pack depends on demo.weather ^1.2, and weather 1.1.0 is installed") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	withHome(t, home, "add", weatherPack(t, "1.2.0"), "--yes").mustCode(t, 0)
	withHome(t, home, "add", dependent, "--yes").mustCode(t, 0)
	// info shows what the pack needs.
	if info := withHome(t, home, "info", "dependent").mustCode(t, 0); !regexp.MustCompile(`(?m)^requires: +demo\.weather \^1\.2$`).MatchString(info.stdout) {
		t.Errorf("info:\n%s", info.stdout)
	}
	// validate resolves against the same home.
	if v := withHome(t, home, "validate", dependent).mustCode(t, 0); v.stdout != "" {
		t.Errorf("validate with the dependency installed:\n%s", v.stdout)
	}
}

// TestUpdateChecksHost: a new version that does not fit this machine is
// refused, and the installed one stays.
func TestUpdateChecksHost(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	src := manifestPack(t, "req", "[skill]\nversion = \"1.0.0\"\n")
	withHome(t, home, "add", src, "--yes").mustCode(t, 0)
	writeFiles(t, src, map[string]string{"skill.toml": "[skill]\nversion = \"2.0.0\"\n[platform]\nos = [\"" + otherOS() + "\"]\n"})
	r := withHome(t, home, "update", "req", "--yes").mustCode(t, 1)
	if !strings.Contains(r.stderr, "error: platform-os:") || !strings.Contains(r.oneLineError(t), "req 1.0.0 stays installed") {
		t.Errorf("update:\n%s", r.stderr)
	}
	if got := listJSON(t, home); len(got) != 1 || got[0].Version != "1.0.0" {
		t.Errorf("after a refused update: %+v", got)
	}
}

// TestBundleImportChecksHost: bundle import checks each pack as add does;
// a dependency that comes in the same bundle counts, one left out refuses
// the whole import.
func TestBundleImportChecksHost(t *testing.T) {
	a := filepath.Join(t.TempDir(), "a")
	withHome(t, a, "add", weatherPack(t, "1.2.0"), "--yes").mustCode(t, 0)
	withHome(t, a, "add", manifestPack(t, "dependent", "[dependencies]\n\"demo.weather\" = \"^1.2\"\n"), "--yes").mustCode(t, 0)
	both := filepath.Join(t.TempDir(), "both.bundle")
	withHome(t, a, "bundle", "export", both).mustCode(t, 0)
	alone := filepath.Join(t.TempDir(), "alone.bundle")
	withHome(t, a, "bundle", "export", alone, "dependent").mustCode(t, 0)

	b := filepath.Join(t.TempDir(), "b")
	r := withHome(t, b, "bundle", "import", alone, "--yes").mustCode(t, 1)
	if !strings.Contains(r.stderr, "error: dependency:") || !strings.Contains(r.oneLineError(t), "nothing was installed") {
		t.Errorf("import without the dependency:\n%s", r.stderr)
	}
	if got := listJSON(t, b); len(got) != 0 {
		t.Errorf("installed after a refused import: %+v", got)
	}
	withHome(t, b, "bundle", "import", both, "--yes").mustCode(t, 0)
	if got := listJSON(t, b); len(got) != 2 {
		t.Errorf("after import: %+v", got)
	}
}
