package chat

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/packs"
)

func TestSystemPrompt(t *testing.T) {
	st := promptState{
		packs: []packMeta{
			{ID: "incident-triage", Name: "incident-triage", Description: "Triage production incidents; use for outages, error spikes, and status updates.", HasTools: true},
			{ID: "brand-guidelines", Name: "brand-guidelines", Description: "Apply Acme brand rules\nto documents and copy.", HasTools: false},
		},
		opened:  []string{"incident-triage"},
		enabled: []string{"incident-triage"},
	}
	got := systemPrompt(st)
	// The block of spec 000 §5.2, exactly.
	block := `Capability Packs (attached; metadata only):
- pack_id: incident-triage
  name: incident-triage
  description: Triage production incidents; use for outages, error spikes, and status updates.
  has_tools_json: true
- pack_id: brand-guidelines
  name: brand-guidelines
  description: Apply Acme brand rules to documents and copy.
  has_tools_json: false
`
	if !strings.Contains(got, block) {
		t.Errorf("the metadata block is not spec 000's:\n%s", got)
	}
	if !strings.HasPrefix(got, bootstrap) {
		t.Errorf("the prompt does not start with the bootstrap instructions")
	}
	for _, want := range []string{"Docs already opened in this conversation: incident-triage\n", "Tools enabled: incident-triage\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the prompt lacks %q", want)
		}
	}
	// The bootstrap teaches every step of spec 000 §5.3.
	for _, want := range []string{"open_docs(pack_id)", "read_file(pack_id, path", "enable_tools(pack_id) before", "Never assume pack contents", "Prefer asking the user"} {
		if !strings.Contains(bootstrap, want) {
			t.Errorf("the bootstrap lacks %q", want)
		}
	}
	st.noTools, st.explicit, st.injected = true, "brand-guidelines", "Use blue."
	got = systemPrompt(st)
	if !strings.HasPrefix(got, bootstrapNoTools) || !strings.Contains(got, "<pack_docs pack_id=\"brand-guidelines\">\nUse blue.\n</pack_docs>") {
		t.Errorf("the no-tools prompt:\n%s", got)
	}
}

// TestMetadataTokens measures what each known pack adds to every request
// (goal: at most 60 tokens for a typical description).
func TestMetadataTokens(t *testing.T) {
	dirs := []string{notesPack, filepath.Join("..", "..", "packs", "testdata", "skills-system-validation")}
	examples, _ := filepath.Glob(filepath.Join("..", "..", "wasm-examples", "*", "SKILL.md"))
	for _, e := range examples {
		dirs = append(dirs, filepath.Dir(e))
	}
	for _, dir := range dirs {
		p, err := packs.Load(dir, packs.LoadOptions{})
		if err != nil {
			t.Logf("%s: %v", dir, err)
			continue
		}
		n := MetadataTokens(p.Name, p.Frontmatter.Description, p.HasTools())
		t.Logf("%-28s %4d description bytes → %3d tokens", p.Name, len(p.Frontmatter.Description), n)
		// The entry costs the fixed keys plus the name twice plus the
		// description, a quarter token per byte.
		want := EstimateTokens("- pack_id: \n  name: \n  description: \n  has_tools_json: true\n" + p.Name + p.Name + p.Frontmatter.Description)
		if p.HasTools() == false {
			want = EstimateTokens("- pack_id: \n  name: \n  description: \n  has_tools_json: false\n" + p.Name + p.Name + p.Frontmatter.Description)
		}
		if n != want {
			t.Errorf("%s: got %d tokens, want %d", p.Name, n, want)
		}
	}
	if n := MetadataTokens("notes", "Keep short notes in the chat workspace. Use it when the person asks to jot something down or to echo data back.", true); n > 60 {
		t.Errorf("a typical pack costs %d tokens, over the goal of 60", n)
	}
}

func TestEstimateTokens(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{{"", 0}, {"a", 1}, {"abcd", 1}, {"abcde", 2}, {strings.Repeat("x", 240), 60}} {
		if got := EstimateTokens(c.in); got != c.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestParseInvocation(t *testing.T) {
	cases := []struct {
		in, name, rest string
		ok             bool
	}{
		{"/notes write this", "notes", "write this", true},
		{"/notes", "notes", "", true},
		{"/notes\n\tmulti\nline", "notes", "multi\nline", true},
		{"/a-b-9 x", "a-b-9", "x", true},
		{"/Notes x", "", "/Notes x", false},
		{"/-notes x", "", "/-notes x", false},
		{"/notes- x", "", "/notes- x", false},
		{"/no--tes x", "", "/no--tes x", false},
		{"/notes/x y", "", "/notes/x y", false},
		{"/ notes", "", "/ notes", false},
		{" /notes x", "", " /notes x", false},
		{"notes x", "", "notes x", false},
		{"/" + strings.Repeat("a", 65), "", "/" + strings.Repeat("a", 65), false},
		{"", "", "", false},
	}
	for _, c := range cases {
		name, rest, ok := ParseInvocation(c.in)
		if name != c.name || rest != c.rest || ok != c.ok {
			t.Errorf("ParseInvocation(%q) = %q, %q, %v; want %q, %q, %v", c.in, name, rest, ok, c.name, c.rest, c.ok)
		}
	}
}

func FuzzParseInvocation(f *testing.F) {
	for _, s := range []string{"/notes hi", "/a", "/", "/x\u00a0y", "/ab--c d", "plain", "/n\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		name, rest, ok := ParseInvocation(msg)
		if !ok {
			if name != "" || rest != msg {
				t.Fatalf("not an invocation, yet got %q %q", name, rest)
			}
			return
		}
		if !validPackName(name) || !strings.HasPrefix(msg, "/"+name) || !strings.HasSuffix(msg, rest) {
			t.Fatalf("ParseInvocation(%q) = %q, %q", msg, name, rest)
		}
		if len(rest) > 0 && strings.TrimSpace(rest[:1]) == "" {
			t.Fatalf("rest %q starts with space", rest)
		}
	})
}

func FuzzReadPackFile(f *testing.F) {
	dir := f.TempDir()
	root := writePack(f, dir, "fz", map[string]string{"SKILL.md": skillMD("fz", "Fuzz."), "a/b.txt": "héllo wörld", "bin.dat": "\x00\xff\xfe"})
	if err := os.Symlink("/etc", filepath.Join(root, "out")); err != nil {
		f.Fatal(err)
	}
	p, err := packs.Load(root, packs.LoadOptions{})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"a/b.txt", "../x", "/etc/passwd", "out/passwd", "a/../a/b.txt", "bin.dat", "a", "a\x00"} {
		f.Add(s, int64(0), int64(3))
	}
	f.Fuzz(func(t *testing.T, rel string, offset, length int64) {
		page, err := ReadPackFile(p, rel, offset, length)
		if err != nil {
			return
		}
		if strings.Contains(page.Content, "root:") {
			t.Fatalf("%q read outside the pack", rel)
		}
		n := len(page.Content)
		if page.Encoding == EncodingBase64 {
			b, err := base64.StdEncoding.DecodeString(page.Content)
			if err != nil {
				t.Fatal(err)
			}
			n = len(b)
		}
		if int64(n) > MaxReadLength {
			t.Fatalf("page of %d bytes", n)
		}
	})
}
