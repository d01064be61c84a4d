package chat

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestKnowledgePriority: [knowledge] priority orders the metadata block,
// higher first, ties in attachment order.
func TestKnowledgePriority(t *testing.T) {
	dir := t.TempDir()
	in := install{}
	for name, manifest := range map[string]string{
		"low":   "",
		"mid":   "[knowledge]\npriority = 50\n",
		"high":  "[knowledge]\npriority = 100\n",
		"mid-b": "[knowledge]\npriority = 50\n",
	} {
		files := map[string]string{"SKILL.md": skillMD(name, "The "+name+" pack.")}
		if manifest != "" {
			files["skill.toml"] = manifest
		}
		in[writePack(t, dir, name, files)] = nil
	}
	h := newHarness(t, in)
	s := h.open(Options{Attach: []string{"low", "mid", "high", "mid-b"}})
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^- pack_id: (\S+)$`).FindAllStringSubmatch(s.SystemPrompt(), -1) {
		got = append(got, m[1])
	}
	if want := []string{"high", "mid", "mid-b", "low"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("metadata order = %v, want %v", got, want)
	}
	// The attachment order itself is unchanged.
	var attached []string
	for _, p := range s.Packs() {
		attached = append(attached, p.Name)
	}
	if want := "low,mid,high,mid-b"; strings.Join(attached, ",") != want {
		t.Errorf("attached = %v, want %s", attached, want)
	}
}

// TestKnowledgeMaxContextTokens: [knowledge] max_context_tokens caps what
// one open_docs call returns for the pack, with a notice that says how to
// read the rest, and read_file reads it from there.
func TestKnowledgeMaxContextTokens(t *testing.T) {
	body := strings.Repeat("abcdefghij", 20) // 200 bytes
	dir := t.TempDir()
	capped := writePack(t, dir, "capped", map[string]string{
		"SKILL.md":          skillMD("capped", "Capped docs.") + body + "\n",
		"skill.toml":        "[knowledge]\nmax_context_tokens = 25\n", // 100 bytes
		"references/REF.md": "R1 reference text",
	})
	free := writePack(t, dir, "free", map[string]string{
		"SKILL.md":          skillMD("free", "Uncapped docs.") + body + "\n",
		"references/REF.md": "R1 reference text",
	})
	h := newHarness(t, install{capped: nil, free: nil})
	s := h.open(Options{Attach: []string{"capped", "free"}})
	type out struct {
		EntryDoc       docRef   `json:"entry_doc"`
		AdditionalDocs []docRef `json:"additional_docs"`
	}
	open := func(pack string) out {
		t.Helper()
		r, err := s.Call(context.Background(), ToolOpenDocs, json.RawMessage(`{"pack_id":"`+pack+`","docs":["references/REF.md"]}`), &person{})
		if err != nil || r.IsError {
			t.Fatal(r, err)
		}
		var o out
		if err := json.Unmarshal([]byte(r.Content), &o); err != nil {
			t.Fatal(err)
		}
		return o
	}

	f := open("free")
	if f.EntryDoc.Truncated || !strings.Contains(f.EntryDoc.Content, body) || f.AdditionalDocs[0].Content != "R1 reference text" {
		t.Errorf("uncapped pack: %+v", f)
	}

	c := open("capped")
	e := c.EntryDoc
	notice := regexp.MustCompile(`\[truncated: shown up to byte (\d+) of \d+, as the pack caps open_docs at 25 tokens \(max_context_tokens in skill\.toml\); read the rest with read_file\(pack_id="capped", path="SKILL.md", offset=(\d+)\)\]$`)
	m := notice.FindStringSubmatch(e.Content)
	if !e.Truncated || m == nil {
		t.Fatalf("capped entry doc: truncated=%t\n%s", e.Truncated, e.Content)
	}
	shown := strings.TrimSuffix(e.Content, m[0])
	if len(shown) > 100+2 {
		t.Errorf("capped entry doc shows %d bytes, over the 100 bytes of 25 tokens", len(shown))
	}
	ref := c.AdditionalDocs[0]
	if !ref.Truncated || strings.Contains(ref.Content, "R1") || !strings.Contains(ref.Content, `read_file(pack_id="capped", path="references/REF.md", offset=0)`) {
		t.Errorf("a doc past the cap: %+v", ref)
	}

	// read_file at the notice's offset returns the rest.
	r, err := s.Call(context.Background(), ToolReadFile, json.RawMessage(`{"pack_id":"capped","path":"SKILL.md","offset":`+m[2]+`}`), &person{})
	if err != nil || r.IsError {
		t.Fatal(r, err)
	}
	var page struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal([]byte(r.Content), &page); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(strings.TrimSpace(shown)+page.Content, body+"\n") {
		t.Errorf("shown + rest does not end with the body:\nshown %q\nrest %q", shown, page.Content)
	}
}
