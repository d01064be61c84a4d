package chat

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/packs"
)

// loadPack writes and loads a pack folder (not installed), for the file
// readers.
func loadPack(t testing.TB, files map[string]string) *packs.Pack {
	t.Helper()
	root := writePack(t, t.TempDir(), "docs", files)
	p, err := packs.Load(root, packs.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadPackFilePaging(t *testing.T) {
	// Multi-byte characters on every page boundary: each page must still be
	// valid UTF-8 and the pages must add up to the file.
	text := strings.Repeat("añ€😀 ", 5000)
	p := loadPack(t, map[string]string{"SKILL.md": skillMD("docs", "Docs."), "big.txt": text})
	var got strings.Builder
	var offset int64
	pages := 0
	for {
		page, err := ReadPackFile(p, "big.txt", offset, 1000)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if page.Encoding != EncodingUTF8 || !utf8.ValidString(page.Content) || page.MIME != "text/plain" || page.Size != int64(len(text)) {
			t.Fatalf("page %d: %+v", pages, page)
		}
		if page.Offset != offset {
			t.Fatalf("page %d starts at %d, want %d", pages, page.Offset, offset)
		}
		got.WriteString(page.Content)
		if !page.Truncated {
			if page.NextOffset != nil {
				t.Errorf("last page has next_offset %d", *page.NextOffset)
			}
			break
		}
		if *page.NextOffset != offset+int64(len(page.Content)) || len(page.Content) > 1000 || len(page.Content) < 996 {
			t.Fatalf("page %d: %d bytes, next_offset %d", pages, len(page.Content), *page.NextOffset)
		}
		offset = *page.NextOffset
	}
	if got.String() != text {
		t.Errorf("the pages do not add up to the file")
	}
	if pages < 30 {
		t.Errorf("got %d pages, want about %d", pages, len(text)/1000)
	}
	// An offset inside a character starts at the next one.
	page, err := ReadPackFile(p, "big.txt", 2, 10)
	if err != nil || page.Offset != 3 || !utf8.ValidString(page.Content) {
		t.Errorf("offset inside a character: %+v %v", page, err)
	}
	// Past the end: empty, not truncated.
	page, err = ReadPackFile(p, "big.txt", int64(len(text))+5, 10)
	if err != nil || page.Content != "" || page.Truncated {
		t.Errorf("past the end: %+v %v", page, err)
	}
	// The default and the maximum length.
	if page, _ = ReadPackFile(p, "big.txt", 0, 0); int64(len(page.Content)) > DefaultReadLength || !page.Truncated {
		t.Errorf("default length: %d bytes", len(page.Content))
	}
	if page, _ = ReadPackFile(p, "big.txt", 0, 1<<30); int64(len(page.Content)) > MaxReadLength {
		t.Errorf("the length was not capped: %d bytes", len(page.Content))
	}
}

func TestReadPackFileKinds(t *testing.T) {
	bin := string([]byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13})
	p := loadPack(t, map[string]string{
		"SKILL.md":          skillMD("docs", "Docs."),
		"assets/pixel.png":  bin,
		"data/blob":         "\x00\x01\x02binary",
		"latin1.txt":        "caf\xe9",
		"references/REF.md": "# Ref",
	})
	if err := os.Symlink("/etc/passwd", filepath.Join(p.Dir, "passwd")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("references", filepath.Join(p.Dir, "refs")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path     string
		encoding string
		mime     string
		content  string
		err      error
	}{
		{"references/REF.md", EncodingUTF8, "text/markdown", "# Ref", nil},
		{"refs/REF.md", EncodingUTF8, "text/markdown", "# Ref", nil}, // a link that stays inside
		{"./references/../references/REF.md", "", "", "", packs.ErrPathEscape},
		{"assets/pixel.png", EncodingBase64, "image/png", base64.StdEncoding.EncodeToString([]byte(bin)), nil},
		{"data/blob", EncodingBase64, "application/octet-stream", base64.StdEncoding.EncodeToString([]byte("\x00\x01\x02binary")), nil},
		{"latin1.txt", EncodingBase64, "text/plain", base64.StdEncoding.EncodeToString([]byte("caf\xe9")), nil},
		{"../docs/SKILL.md", "", "", "", packs.ErrPathEscape},
		{"/etc/passwd", "", "", "", packs.ErrPathEscape},
		{"passwd", "", "", "", packs.ErrPathEscape},
		{"a\x00b", "", "", "", packs.ErrPathEscape},
		{"missing.md", "", "", "", ErrNotFound},
		{"references", "", "", "", ErrNotAFile},
		{"", "", "", "", ErrBadArguments},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			page, err := ReadPackFile(p, c.path, 0, 0)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("got %+v, %v; want %v", page, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if page.Encoding != c.encoding || page.MIME != c.mime || page.Content != c.content {
				t.Errorf("got %s %s %q, want %s %s %q", page.Encoding, page.MIME, page.Content, c.encoding, c.mime, c.content)
			}
		})
	}
	if _, err := ReadPackFile(p, "references/REF.md", -1, 0); !errors.Is(err, ErrBadArguments) {
		t.Errorf("negative offset: %v", err)
	}
}

func TestOpenDocs(t *testing.T) {
	long := strings.Repeat("x", int(MaxDocBytes)+100)
	root := writePack(t, t.TempDir(), "docs", map[string]string{
		"SKILL.md":          skillMD("docs", "Docs.") + "Body marker B1.\n",
		"references/REF.md": "R1",
		"docs/long.md":      long,
		"docs/deep/a/b.md":  "too deep to list",
		".git/x.md":         "hidden",
		"assets/pic.png":    "\x89PNG\x00",
	})
	h := newHarness(t, install{root: nil})
	s := h.open(Options{Attach: []string{"docs"}})
	r, err := s.Call(context.Background(), ToolOpenDocs, json.RawMessage(`{"pack_id":"docs","docs":["references/REF.md","docs/long.md","assets/pic.png","../x.md"]}`), &person{})
	if err != nil || r.IsError {
		t.Fatal(r, err)
	}
	var out struct {
		EntryDoc       docRef   `json:"entry_doc"`
		AdditionalDocs []docRef `json:"additional_docs"`
		OtherDocs      []string `json:"other_docs"`
	}
	if err := json.Unmarshal([]byte(r.Content), &out); err != nil {
		t.Fatal(err)
	}
	if out.EntryDoc.Path != "SKILL.md" || !strings.HasPrefix(out.EntryDoc.Content, "# docs\n") || !strings.Contains(out.EntryDoc.Content, "B1") {
		t.Errorf("entry doc: %+v", out.EntryDoc)
	}
	add := out.AdditionalDocs
	if len(add) != 4 || add[0].Content != "R1" || !add[1].Truncated || !strings.Contains(add[1].Content, "[truncated:") ||
		!strings.Contains(add[2].Error, "not a text doc") || !strings.Contains(add[3].Error, "..") {
		t.Errorf("additional docs: %+v", add)
	}
	if len(out.OtherDocs) != 0 {
		t.Errorf("other docs: got %v, want none beyond those opened (deep and hidden ones are not listed)", out.OtherDocs)
	}
	r, _ = s.Call(context.Background(), ToolOpenDocs, json.RawMessage(`{"pack_id":"docs"}`), &person{})
	if !strings.Contains(r.Content, `"other_docs":["docs/long.md","references/REF.md"]`) {
		t.Errorf("other docs: %s", r.Content)
	}
}

// TestRefusedBeforeTheGate: bad arguments, unknown tools and paths that
// escape never reach the person; each is audited.
func TestRefusedBeforeTheGate(t *testing.T) {
	h := newHarness(t, install{notesPack: nil})
	s := h.open(Options{Attach: []string{"notes"}})
	cases := []struct {
		name, args, kind string
	}{
		{ToolOpenDocs, `{"pack_id":"notes","extra":1}`, ErrKindArguments},
		{ToolOpenDocs, `{"pack_id":7}`, ErrKindArguments},
		{ToolOpenDocs, `{}`, ErrKindArguments},
		{ToolOpenDocs, `{"pack_id":"notes"`, ErrKindArguments},
		{ToolOpenDocs, `{"pack_id":"other"}`, ErrKindNotFound},
		{ToolReadFile, `{"pack_id":"notes","path":"../../etc/passwd"}`, ErrKindPath},
		{ToolReadFile, `{"pack_id":"notes","path":"/etc/passwd"}`, ErrKindPath},
		{ToolReadFile, `{"pack_id":"notes","path":"x","length":999999999}`, ErrKindArguments},
		{"notes__echo", `{"text":"x"}`, ErrKindUnknownTool},
		{"delete_everything", `{}`, ErrKindUnknownTool},
		{"grant_capability", `{"pack_id":"notes"}`, ErrKindUnknownTool},
	}
	who := &person{}
	for _, c := range cases {
		r, err := s.Call(context.Background(), c.name, json.RawMessage(c.args), who)
		if err != nil {
			t.Fatal(err)
		}
		if !r.IsError || r.ErrorKind != c.kind {
			t.Errorf("%s %s: got %s %s, want %s", c.name, c.args, r.ErrorKind, r.Content, c.kind)
		}
		e := decodeError(t, r.Content)
		if e["hint"] == nil || e["message"] == "" {
			t.Errorf("%s: error without message or hint: %v", c.name, e)
		}
	}
	if n := len(who.asked()); n != 0 {
		t.Errorf("the person was asked %d times, want never", n)
	}
	if n := len(h.invocations()); n != len(cases) {
		t.Errorf("got %d audit rows, want %d", n, len(cases))
	}
}

func TestExecBestEffort(t *testing.T) {
	h := newHarness(t, install{notesPack: {capability.TerminalExec}})
	s := h.open(Options{Attach: []string{"notes"}})
	who := &person{}
	r, err := s.Call(context.Background(), ToolExec, json.RawMessage(`{"pack_id":"notes","command":"sh","args":["-c","printf '# R' > report.md; echo done; echo warn >&2; exit 2"]}`), who)
	if err != nil || r.IsError {
		t.Fatal(r, err)
	}
	var out struct {
		OK       bool   `json:"ok"`
		ExitCode int    `json:"exit_code"`
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
	}
	if err := json.Unmarshal([]byte(r.Content), &out); err != nil {
		t.Fatal(err)
	}
	if out.OK || out.ExitCode != 2 || out.Stdout != "done\n" || out.Stderr != "warn\n" {
		t.Errorf("got %+v", out)
	}
	if want := []Artifact{{Path: "report.md", Type: "file", MIME: "text/markdown", Size: 3}}; !slices.Equal(r.Artifacts, want) {
		t.Errorf("got artifacts %+v, want %+v", r.Artifacts, want)
	}
	if !strings.Contains(r.Content, `"artifacts":[{"path":"report.md","type":"file","mime":"text/markdown","size_bytes":3}]`) {
		t.Errorf("the model is not told of the artifact: %s", r.Content)
	}
	if p := who.asked()[0]; !slices.Contains(p.Capabilities, capability.TerminalExec) || !strings.HasPrefix(p.Touches[0], "command sh -c") {
		t.Errorf("the card showed %+v", p)
	}
	// cwd_policy pack_root runs in the pack, where its files are.
	r, _ = s.Call(context.Background(), ToolExec, json.RawMessage(`{"pack_id":"notes","command":"sh","args":["-c","ls references"],"cwd_policy":"pack_root"}`), who)
	if !strings.Contains(r.Content, "REFERENCE.md") {
		t.Errorf("pack_root: %s", r.Content)
	}
	// A command outside the grant is refused without asking, and recorded.
	asked := len(who.asked())
	r, _ = s.Call(context.Background(), ToolExec, json.RawMessage(`{"pack_id":"notes","command":"rm","args":["-rf","x"]}`), who)
	if !r.IsError || r.ErrorKind != ErrKindDenied || len(who.asked()) != asked {
		t.Errorf("rm: %+v", r)
	}
	var denied []audit.Entry
	for e, err := range audit.Entries(context.Background(), h.db, audit.Filter{Kind: audit.KindExercise}) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(e.Body), `"allowed":false`) {
			denied = append(denied, e)
		}
	}
	if len(denied) != 1 || !strings.Contains(string(denied[0].Body), `"resource":"rm"`) {
		t.Errorf("got denied exercises %+v", denied)
	}
}

func TestExecWithoutGrant(t *testing.T) {
	h := newHarness(t, install{notesPack: nil})
	s := h.open(Options{Attach: []string{"notes"}})
	who := &person{}
	r, err := s.Call(context.Background(), ToolExec, json.RawMessage(`{"pack_id":"notes","command":"sh","args":["-c","touch x"]}`), who)
	if err != nil || !r.IsError || r.ErrorKind != ErrKindDenied || len(who.asked()) != 0 {
		t.Fatalf("got %+v %v", r, err)
	}
	if !strings.Contains(r.Content, "terminal_exec") {
		t.Errorf("the denial does not name the capability: %s", r.Content)
	}
	if _, err := os.Stat(filepath.Join(s.Workspace(), "x")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command ran: %v", err)
	}
}

func TestPackToolArtifacts(t *testing.T) {
	h := newHarness(t, install{notesPack: nil})
	s := h.open(Options{Attach: []string{"notes"}})
	ctx := context.Background()
	if r, _ := s.Call(ctx, ToolEnableTools, json.RawMessage(`{"pack_id":"notes"}`), &person{}); r.IsError {
		t.Fatal(r.Content)
	}
	r, err := s.Call(ctx, "notes__note", json.RawMessage(`{}`), &person{})
	if err != nil || r.IsError {
		t.Fatal(r, err)
	}
	want := []Artifact{{Path: "note.md", Type: "file", MIME: "text/markdown", Size: 7}}
	if !slices.Equal(r.Artifacts, want) {
		t.Errorf("got %+v, want %+v", r.Artifacts, want)
	}
	if r.Content != `{"artifacts":[{"path":"note.md","type":"file","mime":"text/markdown","size_bytes":7}],"result":{"written":"note.md"}}` {
		t.Errorf("the model was sent %s", r.Content)
	}
	b, err := os.ReadFile(filepath.Join(s.Workspace(), "note.md"))
	if err != nil || string(b) != "# Note\n" {
		t.Errorf("note.md: %q %v", b, err)
	}
	// Unchanged on the second run: no artifact.
	if r, _ = s.Call(ctx, "notes__echo", json.RawMessage(`{"text":"a"}`), &person{}); len(r.Artifacts) != 0 {
		t.Errorf("echo made artifacts %+v", r.Artifacts)
	}
	got, err := s.Artifacts(ctx)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("stored artifacts: %+v %v", got, err)
	}
	rows := h.invocations()
	if !strings.Contains(string(rows[1].Body), `"artifacts":[{"path":"note.md","mime":"text/markdown","size":7}]`) {
		t.Errorf("audit row: %s", rows[1].Body)
	}
	// Schema violations are refused before the gate.
	if r, _ = s.Call(ctx, "notes__echo", json.RawMessage(`{"text":5}`), &person{}); r.ErrorKind != ErrKindArguments || !strings.Contains(r.Content, "/text") {
		t.Errorf("bad input: %s", r.Content)
	}
}

func TestEnableToolsWithoutTools(t *testing.T) {
	root := writePack(t, t.TempDir(), "plain", map[string]string{"SKILL.md": skillMD("plain", "Docs only.")})
	h := newHarness(t, install{root: nil})
	s := h.open(Options{Attach: []string{"plain"}})
	r, err := s.Call(context.Background(), ToolEnableTools, json.RawMessage(`{"pack_id":"plain"}`), &person{})
	if err != nil || r.ErrorKind != ErrKindNotFound || !strings.Contains(r.Content, "no tools.json") {
		t.Errorf("got %+v %v", r, err)
	}
}

func TestBaseToolsCannotGrant(t *testing.T) {
	for _, name := range BaseToolNames() {
		for _, word := range []string{"grant", "policy", "approve", "revoke", "allow"} {
			if strings.Contains(name, word) {
				t.Errorf("base tool %s looks like it changes %s", name, word)
			}
		}
	}
	for _, tool := range []struct{ name, schema string }{{openDocsTool.Name, string(openDocsTool.InputSchema)}, {readFileTool.Name, string(readFileTool.InputSchema)},
		{enableToolsTool.Name, string(enableToolsTool.InputSchema)}, {execTool.Name, string(execTool.InputSchema)}, {runRecipeTool.Name, string(runRecipeTool.InputSchema)}} {
		var v map[string]any
		if err := json.Unmarshal([]byte(tool.schema), &v); err != nil || v["additionalProperties"] != false {
			t.Errorf("%s: schema %s: %v", tool.name, tool.schema, err)
		}
		if !bytes.Contains([]byte(tool.schema), []byte(`"pack_id"`)) {
			t.Errorf("%s takes no pack_id", tool.name)
		}
	}
}

// FuzzPrepare feeds the base tools arbitrary names and arguments, as a
// model may: every refusal is a classified error, never a panic, and a
// read_file that passes names a file inside the pack.
func FuzzPrepare(f *testing.F) {
	h := newHarness(f, install{notesPack: nil})
	s := h.open(Options{Attach: []string{"notes"}})
	for _, seed := range []struct{ name, args string }{
		{ToolOpenDocs, `{"pack_id":"notes","docs":["references/REFERENCE.md"]}`},
		{ToolReadFile, `{"pack_id":"notes","path":"assets/pixel.png","offset":3,"length":9}`},
		{ToolReadFile, `{"pack_id":"notes","path":"../notes/SKILL.md"}`},
		{ToolEnableTools, `{"pack_id":"notes"}`},
		{ToolExec, `{"pack_id":"notes","command":"sh","args":["-c","id"],"cwd_policy":"pack_root"}`},
		{"notes__echo", `{"text":"x"}`},
		{ToolReadFile, `{"pack_id":"notes","path":"a","offset":-1}`},
		{ToolOpenDocs, `[]`},
	} {
		f.Add(seed.name, []byte(seed.args))
	}
	f.Fuzz(func(t *testing.T, name string, args []byte) {
		if !json.Valid(args) {
			return // Call refuses invalid JSON before prepare
		}
		p, err := s.prepare(name, args, nil)
		if err != nil {
			if k := errorKind(err); k == ErrKindInternal {
				t.Fatalf("%s %s: unclassified error %v", name, args, err)
			}
			return
		}
		if p.req.Ref.Name != "notes" || p.req.Pack == nil || (p.req.Tool == "") == (p.req.Builtin == nil) {
			t.Fatalf("request %+v", p.req)
		}
		if name == ToolReadFile {
			var a struct {
				Path string `json:"path"`
			}
			json.Unmarshal(args, &a)
			if filepath.IsAbs(a.Path) || slices.Contains(strings.FieldsFunc(a.Path, func(r rune) bool { return r == '/' || r == '\\' }), "..") || strings.ContainsRune(a.Path, 0) {
				t.Fatalf("read_file accepted %q", a.Path)
			}
		}
	})
}
