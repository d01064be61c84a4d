package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/packs-run/packs/internal/dist"
)

// signingKey is an SSH key pair for signing test archives.
type signingKey struct {
	pub     string // authorized_keys line
	pubFile string // the .pub file (packs add --signer)
	priv    []byte // OpenSSH PEM
}

func newSigningKey(t *testing.T, name string) signingKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, name)
	if err != nil {
		t.Fatal(err)
	}
	k := signingKey{pub: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp))), priv: pem.EncodeToMemory(block)}
	k.pubFile = filepath.Join(t.TempDir(), name+".pub")
	if err := os.WriteFile(k.pubFile, []byte(k.pub+" "+name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return k
}

// archiveAt packs the pack files into the archive path (replacing it) and
// signs it with key when key is not nil; an old signature is removed.
func archiveAt(t *testing.T, path string, files map[string]string, key *signingKey) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "weather")
	writeFiles(t, dir, files)
	var buf bytes.Buffer
	if _, err := dist.PackArchive(dir, &buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(path + ".sig")
	if key == nil {
		return
	}
	sig, err := dist.SignArchive(bytes.NewReader(buf.Bytes()), key.priv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".sig", sig, 0o644); err != nil {
		t.Fatal(err)
	}
}

// withManifest is weather's files with more skill.toml text appended.
func withManifest(version, more string) map[string]string {
	f := weatherFiles(version)
	f["skill.toml"] += more
	return f
}

// execTool is weather's files with a tool that runs ls, which skill.toml
// does not request.
func execTool(version string) map[string]string {
	f := weatherFiles(version)
	f["tools.json"] = `[{"name": "list", "description": "Lists files.", "input_schema": {"type": "object"}, "run": {"exec": ["ls"]}}]`
	delete(f, "bin/weather.wasm")
	return f
}

// refusal is one reason an install is refused, as every front end that
// installs must apply it: the policy, the pack (with its signature) and
// the flags that make it, and the exit status that means it.
type refusal struct {
	name   string
	policy func(trusted, other signingKey) string
	files  map[string]string
	signer string // "trusted", "other" or "" (unsigned)
	flags  func(trusted, other signingKey) []string
	code   int
}

func refusals() []refusal {
	none := func(signingKey, signingKey) string { return "" }
	yes := func(signingKey, signingKey) []string { return []string{"--yes"} }
	return []refusal{
		{name: "blocked", policy: func(signingKey, signingKey) string { return "[packs]\nblocked = [\"weather\"]\n" },
			files: weatherFiles("2.0.0"), flags: yes, code: exitDenied},
		{name: "unsigned under require_signature", policy: func(signingKey, signingKey) string { return "[trust]\nrequire_signature = [\"all\"]\n" },
			files: weatherFiles("2.0.0"), flags: yes, code: exitDenied},
		{name: "untrusted signer", policy: none, files: weatherFiles("2.0.0"), signer: "other", flags: yes, code: exitDenied},
		{name: "blocked signer", policy: func(k, _ signingKey) string {
			return "[trust]\nsigners = [\"" + k.pub + "\"]\nblocked_signers = [\"" + k.pub + "\"]\n"
		}, files: weatherFiles("2.0.0"), signer: "trusted", flags: yes, code: exitDenied},
		{name: "wrong platform", policy: none, files: withManifest("2.0.0", "\n[platform]\nos = [\""+otherOS()+"\"]\n"), flags: yes, code: exitFailure},
		{name: "missing dependency", policy: none, files: withManifest("2.0.0", "\n[dependencies]\n\"core.shell\" = \">=1.0\"\n"), flags: yes, code: exitFailure},
		{name: "refused consent", policy: none, files: withManifest("2.0.0", "terminal_exec = { commands = [\"ls\"] }\n"),
			flags: func(signingKey, signingKey) []string { return nil }, code: exitUsage},
		// Defect 2: naming a signer means a signature is required.
		{name: "signer named, archive unsigned", policy: none, files: weatherFiles("2.0.0"),
			flags: func(k, _ signingKey) []string { return []string{"--yes", "--signer", k.pubFile} }, code: exitDenied},
		// Defect 5: a tool runs a command skill.toml does not request.
		{name: "exec not requested", policy: none, files: execTool("2.0.0"), flags: yes, code: exitFailure},
	}
}

// setUp writes the refusal's policy and its pack's archive at path.
func (r refusal) setUp(t *testing.T, path string, trusted, other signingKey) (policy string) {
	t.Helper()
	var key *signingKey
	switch r.signer {
	case "trusted":
		key = &trusted
	case "other":
		key = &other
	}
	archiveAt(t, path, r.files, key)
	policy = filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(policy, []byte(r.policy(trusted, other)), 0o644); err != nil {
		t.Fatal(err)
	}
	return policy
}

// installedVersion is the version of weather in home's packs.lock, or "".
func installedVersion(t *testing.T, home string) string {
	t.Helper()
	for _, p := range listJSON(t, home) {
		if p.Name == "weather" {
			return p.Version
		}
	}
	return ""
}

// TestAddRefusals: packs add (from an archive and, where a folder can
// carry the reason, from a folder) refuses each reason, with its exit
// status, and installs nothing.
func TestAddRefusals(t *testing.T) {
	trusted, other := newSigningKey(t, "trusted"), newSigningKey(t, "other")
	for _, r := range refusals() {
		t.Run(r.name, func(t *testing.T) {
			archive := filepath.Join(t.TempDir(), "weather.tar.gz")
			policy := r.setUp(t, archive, trusted, other)
			home := filepath.Join(t.TempDir(), "home")
			args := append([]string{"--policy", policy, "add", archive}, r.flags(trusted, other)...)
			withHome(t, home, args...).mustCode(t, r.code).oneLineError(t)
			if r.signer == "" {
				folder := filepath.Join(t.TempDir(), "weather")
				writeFiles(t, folder, r.files)
				args := append([]string{"--policy", policy, "add", folder}, r.flags(trusted, other)...)
				withHome(t, home, args...).mustCode(t, r.code).oneLineError(t)
			}
			if v := installedVersion(t, home); v != "" {
				t.Errorf("a refused add installed weather %s", v)
			}
		})
	}
}

// TestUpdateRefusals: packs update fetches a new version that carries the
// reason and refuses it; the old version stays installed.
func TestUpdateRefusals(t *testing.T) {
	trusted, other := newSigningKey(t, "trusted"), newSigningKey(t, "other")
	for _, r := range refusals() {
		t.Run(r.name, func(t *testing.T) {
			archive := filepath.Join(t.TempDir(), "weather.tar.gz")
			archiveAt(t, archive, weatherFiles("1.0.0"), nil)
			home := filepath.Join(t.TempDir(), "home")
			withHome(t, home, "add", archive, "--yes").mustCode(t, 0)
			policy := r.setUp(t, archive, trusted, other)
			args := append([]string{"--policy", policy, "update", "weather"}, r.flags(trusted, other)...)
			withHome(t, home, args...).mustCode(t, r.code).oneLineError(t)
			if v := installedVersion(t, home); v != "1.0.0" {
				t.Errorf("a refused update left weather %q installed, want 1.0.0", v)
			}
		})
	}
}

// TestBundleImportRefusals: packs bundle import refuses a bundle whose
// pack carries the reason, and installs nothing. The bundle is exported
// from a home where the pack fits: reasons of the pack itself (a command
// not requested, a signer named) cannot reach a bundle, as no home
// installs such a pack.
func TestBundleImportRefusals(t *testing.T) {
	trusted, other := newSigningKey(t, "trusted"), newSigningKey(t, "other")
	tools := t.TempDir()
	if err := os.WriteFile(filepath.Join(tools, "weather-cli"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, r := range refusals() {
		if r.name == "signer named, archive unsigned" || r.name == "exec not requested" || r.name == "wrong platform" {
			continue
		}
		t.Run(r.name, func(t *testing.T) {
			a := filepath.Join(t.TempDir(), "a")
			archive := filepath.Join(t.TempDir(), "weather.tar.gz")
			files := r.files
			if r.name == "missing dependency" {
				// In a, the dependency is installed; the bundle holds weather alone.
				shell := map[string]string{}
				for k, v := range weatherFiles("1.5.0") {
					shell[strings.ReplaceAll(k, "weather", "shell")] = strings.ReplaceAll(strings.ReplaceAll(v, "demo.weather", "core.shell"), "weather", "shell")
				}
				dir := filepath.Join(t.TempDir(), "shell")
				writeFiles(t, dir, shell)
				withHome(t, a, "add", dir, "--yes").mustCode(t, 0)
			}
			var key *signingKey
			switch r.signer {
			case "trusted":
				key = &trusted
			case "other":
				key = &other
			}
			archiveAt(t, archive, files, key)
			addArgs := []string{"add", archive, "--yes"}
			if key != nil {
				addArgs = append(addArgs, "--signer", key.pubFile)
			}
			withHome(t, a, addArgs...).mustCode(t, 0)
			bundle := filepath.Join(t.TempDir(), "packs.bundle")
			withHome(t, a, "bundle", "export", bundle, "weather").mustCode(t, 0)

			policy := filepath.Join(t.TempDir(), "policy.toml")
			if err := os.WriteFile(policy, []byte(r.policy(trusted, other)), 0o644); err != nil {
				t.Fatal(err)
			}
			b := filepath.Join(t.TempDir(), "b")
			args := []string{"--policy", policy, "bundle", "import", bundle}
			if r.name != "refused consent" {
				args = append(args, "--yes")
			}
			withHome(t, b, args...).mustCode(t, r.code).oneLineError(t)
			if v := installedVersion(t, b); v != "" {
				t.Errorf("a refused import installed weather %s", v)
			}
		})
	}
	// A required tool found on a's PATH and not on b's.
	t.Run("wrong platform", func(t *testing.T) {
		a := filepath.Join(t.TempDir(), "a")
		archive := filepath.Join(t.TempDir(), "weather.tar.gz")
		archiveAt(t, archive, withManifest("2.0.0", "\n[platform]\nrequired_tools = [\"weather-cli\"]\n"), nil)
		t.Setenv("PATH", tools+string(os.PathListSeparator)+os.Getenv("PATH"))
		withHome(t, a, "add", archive, "--yes").mustCode(t, 0)
		bundle := filepath.Join(t.TempDir(), "packs.bundle")
		withHome(t, a, "bundle", "export", bundle).mustCode(t, 0)
		t.Setenv("PATH", strings.TrimPrefix(os.Getenv("PATH"), tools+string(os.PathListSeparator)))
		b := filepath.Join(t.TempDir(), "b")
		withHome(t, b, "bundle", "import", bundle, "--yes").mustCode(t, exitFailure).oneLineError(t)
		if v := installedVersion(t, b); v != "" {
			t.Errorf("a refused import installed weather %s", v)
		}
	})
}

// TestValidateAgreesWithAdd: a symlink that leaves the pack is an error
// of packs validate as it is a refusal of packs add (defect 4).
func TestValidateAgreesWithAdd(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "weather")
	writeFiles(t, dir, weatherFiles("1.0.0"))
	if err := os.Symlink("../../secret", filepath.Join(dir, "docs", "link")); err != nil {
		t.Fatal(err)
	}
	r := packsCLI(t, "validate", dir).mustCode(t, exitFailure)
	if !strings.Contains(r.stdout, "error: path-escape") {
		t.Errorf("validate:\n%s", r.stdout)
	}
	withHome(t, filepath.Join(t.TempDir(), "home"), "add", dir, "--yes").mustCode(t, exitFailure)
}
