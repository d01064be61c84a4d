package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/packs"
)

// installWith installs a pack whose [skill] table has the extra lines.
func installWith(t testing.TB, a *App, name, skill string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for rel, body := range map[string]string{
		"SKILL.md":   "---\nname: " + name + "\ndescription: The " + name + " pack.\n---\nBody.\n",
		"skill.toml": "[skill]\n" + skillID(name, skill) + "version = \"1.0.0\"\n" + skill,
	} {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, err := a.Home.Stage(context.Background(), dir, dist.StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := installStaged(context.Background(), a, st, nil); err != nil {
		t.Fatal(err)
	}
}

// markBuiltin records name's source in packs.lock as a built-in's.
func markBuiltin(t testing.TB, a *App, name string) {
	t.Helper()
	e, err := a.Home.Entry(name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(a.Home.LockPath())
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), `"`+e.Source+`"`, `"builtin:`+name+`"`, 1))
	if err := os.WriteFile(a.Home.LockPath(), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func str(s string) *string { return &s }

// skillID is the id line a test pack gets unless its extra lines set one.
func skillID(name, skill string) string {
	if strings.Contains(skill, "id = ") {
		return ""
	}
	return "id = \"test." + name + "\"\n"
}

func TestCapabilitiesOfInstalledPacks(t *testing.T) {
	ctx := context.Background()
	a := open(t, filepath.Join(t.TempDir(), "home"))
	installWith(t, a, "zeta", "name = \"Zeta Tools\"\ndescription = \"Zeta things.\"\nicon = \"box\"\ncategory = \"Testing\"\n")
	installWith(t, a, "alpha", "status = \"deprecated\"\n")
	installWith(t, a, "current-time", "id = \"current_time\"\nstatus = \"coming_soon\"\n")
	markBuiltin(t, a, "current-time")
	got, err := a.Capabilities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []Capability{
		{ID: "current_time", Name: "current-time", Description: "The current-time pack.", Status: packs.StatusComingSoon, Builtin: true},
		{ID: "alpha", Name: "alpha", Description: "The alpha pack.", Status: packs.StatusDeprecated},
		{ID: "zeta", Name: "Zeta Tools", Description: "Zeta things.", Status: packs.StatusAvailable, Icon: "box", Category: "Testing"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d capabilities, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.Name != w.Name || g.Description != w.Description || g.Status != w.Status || g.Icon != w.Icon ||
			g.Category != w.Category || g.Builtin != w.Builtin || g.PackName() != strings.ReplaceAll(w.ID, "_", "-") {
			t.Errorf("capability %d = %+v, want %+v", i, g, want[i])
		}
	}
}

func TestAgents(t *testing.T) {
	ctx := context.Background()
	a := open(t, filepath.Join(t.TempDir(), "home"))
	installWith(t, a, "notes", "")
	installWith(t, a, "old", "status = \"deprecated\"\n")
	installWith(t, a, "soon", "status = \"coming_soon\"\n")

	ag, err := a.CreateAgent(ctx, AgentChange{Name: str(" Writer "), SystemPrompt: str("Write well."), Capabilities: []string{"old", "notes"}})
	if err != nil {
		t.Fatal(err)
	}
	if ag.Name != "Writer" || !strings.HasPrefix(ag.ID, "agent_") || !slices.Equal(ag.Capabilities, []string{"old", "notes"}) ||
		len(ag.Warnings) != 1 || !strings.Contains(ag.Warnings[0], `"old" is deprecated`) {
		t.Errorf("created %+v", ag)
	}
	bad := []struct {
		name   string
		change AgentChange
		want   error
		names  string
	}{
		{"unknown", AgentChange{Name: str("X"), Capabilities: []string{"notes", "teleport"}}, ErrUnknownCapability, `"teleport"`},
		{"coming-soon", AgentChange{Name: str("X"), Capabilities: []string{"soon"}}, ErrUnavailable, `"soon"`},
		{"twice", AgentChange{Name: str("X"), Capabilities: []string{"notes", "notes"}}, ErrInvalidAgent, `"notes"`},
		{"no-name", AgentChange{}, ErrInvalidAgent, "name"},
		{"blank-name", AgentChange{Name: str("  ")}, ErrInvalidAgent, "name"},
		{"id-like-name", AgentChange{Name: str("agent_1")}, ErrInvalidAgent, "agent_"},
		{"control", AgentChange{Name: str("a\x1bb")}, ErrInvalidAgent, "control"},
		{"same-name", AgentChange{Name: str("WRITER")}, ErrAgentExists, ""},
		{"tokens", AgentChange{Name: str("X"), MaxTokens: new(int(-1))}, ErrInvalidAgent, "max_tokens"},
		{"model", AgentChange{Name: str("X"), Model: str("two words")}, ErrInvalidAgent, "model"},
	}
	for _, tc := range bad {
		_, err := a.CreateAgent(ctx, tc.change)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.names) {
			t.Errorf("%s: got %v, want %v naming %s", tc.name, err, tc.want, tc.names)
		}
	}
	up, err := a.UpdateAgent(ctx, "writer", AgentChange{Capabilities: []string{"notes"}, Model: str("m2"), MaxTokens: new(100)})
	if err != nil {
		t.Fatal(err)
	}
	if up.ID != ag.ID || up.Name != "Writer" || up.SystemPrompt != "Write well." || up.Model != "m2" || up.MaxTokens != 100 ||
		!slices.Equal(up.Capabilities, []string{"notes"}) || len(up.Warnings) != 0 || !up.Created.Equal(ag.Created) {
		t.Errorf("updated %+v", up)
	}
	if _, err := a.UpdateAgent(ctx, "nobody", AgentChange{}); !errors.Is(err, ErrAgentNotFound) {
		t.Errorf("update of no agent: %v", err)
	}
	// A chat starting from the agent finds its capabilities still there,
	// or names the one that went.
	if _, err := a.ChatAgent(ctx, ag.ID); err != nil {
		t.Errorf("ChatAgent: %v", err)
	}
	if _, err := a.Remove(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ChatAgent(ctx, ag.ID); !errors.Is(err, ErrUnknownCapability) || !strings.Contains(err.Error(), `"notes"`) {
		t.Errorf("ChatAgent after the pack went: %v", err)
	}
	if _, err := a.DeleteAgent(ctx, "Writer"); err != nil {
		t.Fatal(err)
	}
	if list, err := a.Agents(ctx); err != nil || len(list) != 0 {
		t.Errorf("after delete: %+v, %v", list, err)
	}
}

// TestBuiltinCapabilityIDs: a built-in is listed under its spec 003 id
// ([skill].id, "test_math") and found under it or its pack's name; an
// agent stores the id and a chat attaches the pack. Another pack is found
// only by its name.
func TestBuiltinCapabilityIDs(t *testing.T) {
	ctx := context.Background()
	a := open(t, filepath.Join(t.TempDir(), "home"))
	installWith(t, a, "test-math", "id = \"test_math\"\n")
	markBuiltin(t, a, "test-math")
	installWith(t, a, "my-pack", "id = \"my_pack\"\n")
	for ref, want := range map[string]string{"test_math": "test_math", "test-math": "test_math", "my-pack": "my-pack"} {
		c, err := a.Capability(ctx, ref)
		if err != nil || c.ID != want {
			t.Errorf("Capability(%q) = %q, %v; want %q", ref, c.ID, err, want)
		}
	}
	if _, err := a.Capability(ctx, "my_pack"); !errors.Is(err, dist.ErrNotInstalled) {
		t.Errorf("a pack's [skill].id is not a capability id: %v", err)
	}
	ag, err := a.CreateAgent(ctx, AgentChange{Name: str("Math"), Capabilities: []string{"test-math", "my-pack"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ag.Capabilities, []string{"test_math", "my-pack"}) || !slices.Equal(ag.Packs, []string{"test-math", "my-pack"}) {
		t.Errorf("stored %v, attaches %v", ag.Capabilities, ag.Packs)
	}
	if _, err := a.CreateAgent(ctx, AgentChange{Name: str("Twice"), Capabilities: []string{"test_math", "test-math"}}); !errors.Is(err, ErrInvalidAgent) {
		t.Errorf("one capability under both names: %v", err)
	}
	got, err := a.ChatAgent(ctx, "Math")
	if err != nil || !slices.Equal(got.Packs, []string{"test-math", "my-pack"}) {
		t.Errorf("ChatAgent: %v, %v", got.Packs, err)
	}
}
