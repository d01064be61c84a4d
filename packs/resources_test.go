package packs

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yosida95/uritemplate/v3"
)

// declPack writes a pack with a few files for resources.json to name, and
// a secret beside it, outside the pack.
func declPack(t testing.TB) (dir, outside string) {
	t.Helper()
	root := t.TempDir()
	dir = filepath.Join(root, "decl")
	writePackFiles(t, dir, map[string]string{
		"SKILL.md":              skillMD("decl"),
		"resources/guide.md":    "# Guide\n",
		"resources/pixel.png":   "\x89PNG\r\n\x1a\n",
		"resources/beep.wav":    "RIFF",
		"data/123.txt":          "data 123\n",
		"resources/notes.weird": "x",
	})
	outside = filepath.Join(root, "secret.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, outside
}

func parseDecl(t *testing.T, dir, doc string) (*Declarations, []Finding) {
	t.Helper()
	rep := &reporter{pack: "decl"}
	d := parseDeclarations([]byte(doc), "resources.json", dir, rep)
	checkFindings(t, []byte(doc), rep.list)
	return d, rep.list
}

func TestDeclarationsGranted(t *testing.T) {
	dir, _ := declPack(t)
	writePackFiles(t, dir, map[string]string{"resources.json": `{
  "resources": [
    {"uri": "docs://decl/guide", "file": "resources/guide.md", "title": "Guide"},
    {"uri": "img:pixel", "file": "resources/pixel.png"}
  ],
  "templates": [
    {"uri_template": "data://decl/{id}", "file": "data/{id}.txt", "description": "A data file by id."}
  ],
  "prompts": [
    {"name": "greet", "arguments": [{"name": "who", "required": true}, {"name": "tone"}],
     "messages": [
       {"text": "Greet {{who}} in a {{ tone }} tone."},
       {"role": "assistant", "image": "resources/pixel.png"},
       {"audio": "resources/beep.wav"},
       {"resource": "docs://decl/guide"}
     ]}
  ]
}`})
	p, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := p.Declarations
	if d == nil || len(d.Resources) != 2 || len(d.Templates) != 1 || len(d.Prompts) != 1 {
		t.Fatalf("declarations = %+v", d)
	}
	for _, c := range []struct{ got, want string }{
		{d.Resources[0].MIMEType, "text/markdown"},
		{d.Resources[0].Name, "guide.md"},
		{d.Resources[1].File, "resources/pixel.png"},
		{d.Resources[1].MIMEType, "image/png"},
		{d.Prompts[0].Messages[0].Role, "user"},
		{d.Prompts[0].Messages[1].Role, "assistant"},
		{d.Prompts[0].Messages[2].MIMEType, "audio/wav"},
		{Fill(d.Prompts[0].Messages[0].Text, map[string]string{"who": "Ada", "tone": "warm"}), "Greet Ada in a warm tone."},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if !d.Prompts[0].Arguments[0].Required || d.Prompts[0].Arguments[1].Required {
		t.Errorf("required = %+v", d.Prompts[0].Arguments)
	}
	if r, ok := d.Resource("docs://decl/guide"); !ok || r.File != "resources/guide.md" {
		t.Errorf("Resource(docs://decl/guide) = %+v, %v", r, ok)
	}
	file, ok, err := d.Templates[0].Match("data://decl/123")
	if file != "data/123.txt" || !ok || err != nil {
		t.Errorf("Match(data://decl/123) = %q, %v, %v", file, ok, err)
	}
}

// TestTemplateMatchDenied: a template variable's value can never step out
// of the file name it fills in.
func TestTemplateMatchDenied(t *testing.T) {
	dir, _ := declPack(t)
	d, fs := parseDecl(t, dir, `{"templates": [{"uri_template": "data://decl/{id}/x", "file": "data/{id}.txt"}]}`)
	if HasErrors(fs) {
		t.Fatal(fs)
	}
	tmpl := d.Templates[0]
	for _, c := range []struct {
		uri     string
		matches bool
		bad     bool
	}{
		{"data://decl/123/x", true, false},
		{"data://decl/../x", true, true},
		{"data://decl/.hidden/x", true, true},
		{"data://decl/%2e%2e/x", true, true},
		{"data://decl/a%2fb/x", true, true},
		{"data://decl/a/b/x", false, false},
		{"data://decl//x", false, false},
		{"data://other/1/x", false, false},
		{"data://decl/" + strings.Repeat("a", 200) + "/x", true, true},
	} {
		file, ok, err := tmpl.Match(c.uri)
		if ok != c.matches || (err != nil) != c.bad || (c.bad && !errors.Is(err, errBadTemplateValue)) {
			t.Errorf("Match(%q) = %q, %v, %v; want matches %v, bad %v", c.uri, file, ok, err, c.matches, c.bad)
		}
	}
}

// TestDeclarationsDenied: every file resources.json names stays inside the
// pack, and every other mistake is an error at its line.
func TestDeclarationsDenied(t *testing.T) {
	dir, outside := declPack(t)
	if err := os.Symlink(outside, filepath.Join(dir, "resources", "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(dir, "up")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		doc  string
		rule string
		line int
	}{
		{"dotdot", "{\"resources\": [\n{\"uri\": \"x://a\", \"file\": \"../secret.txt\"}]}", "path-escape", 2},
		{"dotdot inside", `{"resources": [{"uri": "x://a", "file": "resources/../../secret.txt"}]}`, "path-escape", 1},
		{"absolute", `{"resources": [{"uri": "x://a", "file": "` + outside + `"}]}`, "path-escape", 1},
		{"symlink file out", `{"resources": [{"uri": "x://a", "file": "resources/link.txt"}]}`, "path-escape", 1},
		{"symlink dir out", `{"resources": [{"uri": "x://a", "file": "up/secret.txt"}]}`, "path-escape", 1},
		{"template dotdot", `{"templates": [{"uri_template": "x://{id}", "file": "../{id}.txt"}]}`, "path-escape", 1},
		{"template absolute", `{"templates": [{"uri_template": "x://{id}", "file": "/etc/{id}"}]}`, "path-escape", 1},
		{"image escape", `{"prompts": [{"name": "p", "messages": [{"image": "up/secret.txt", "mime_type": "image/png"}]}]}`, "path-escape", 1},
		{"missing file", `{"resources": [{"uri": "x://a", "file": "nope.txt"}]}`, "file-missing", 1},
		{"directory", `{"resources": [{"uri": "x://a", "file": "resources"}]}`, "resource-file", 1},
		{"no file", `{"resources": [{"uri": "x://a"}]}`, "resource-file", 1},
		{"pack scheme", `{"resources": [{"uri": "pack://other/SKILL.md", "file": "SKILL.md"}]}`, "resource-uri", 1},
		{"file scheme", `{"resources": [{"uri": "FILE:///etc/passwd", "file": "SKILL.md"}]}`, "resource-uri", 1},
		{"no scheme", `{"resources": [{"uri": "guide", "file": "SKILL.md"}]}`, "resource-uri", 1},
		{"space", `{"resources": [{"uri": "x://a b", "file": "SKILL.md"}]}`, "resource-uri", 1},
		{"bad percent", `{"resources": [{"uri": "x://a%zz", "file": "SKILL.md"}]}`, "resource-uri", 1},
		{"bad host", `{"resources": [{"uri": "x://[::1/a", "file": "SKILL.md"}]}`, "resource-uri", 1},
		{"template bad literal", `{"templates": [{"uri_template": "x://a|b/{id}", "file": "{id}"}]}`, "uri-template", 1},
		{"template bad percent", `{"templates": [{"uri_template": "x://a%zz/{id}", "file": "{id}"}]}`, "uri-template", 1},
		{"braces in uri", `{"resources": [{"uri": "x://{a}", "file": "SKILL.md"}]}`, "resource-uri", 1},
		{"duplicate uri", "{\"resources\": [\n{\"uri\": \"x://a\", \"file\": \"SKILL.md\"},\n{\"uri\": \"x://a\", \"file\": \"SKILL.md\"}]}", "resource-duplicate", 3},
		{"template no var", `{"templates": [{"uri_template": "x://a", "file": "SKILL.md"}]}`, "uri-template", 1},
		{"template operator", `{"templates": [{"uri_template": "x://{+a}", "file": "{a}"}]}`, "uri-template", 1},
		{"template stray brace", `{"templates": [{"uri_template": "x://{a}/{b", "file": "{a}"}]}`, "uri-template", 1},
		{"template var twice", `{"templates": [{"uri_template": "x://{a}/{a}", "file": "{a}"}]}`, "uri-template", 1},
		{"template unknown var", `{"templates": [{"uri_template": "x://{a}", "file": "{a}/{b}"}]}`, "resource-file", 1},
		{"template unused var", `{"templates": [{"uri_template": "x://{a}/{b}", "file": "{a}.txt"}]}`, "resource-file", 1},
		{"prompt no name", `{"prompts": [{"messages": [{"text": "hi"}]}]}`, "decl-name", 1},
		{"prompt bad name", `{"prompts": [{"name": "a b", "messages": [{"text": "hi"}]}]}`, "decl-name", 1},
		{"prompt no messages", `{"prompts": [{"name": "p"}]}`, "prompt-messages", 1},
		{"prompt two kinds", `{"prompts": [{"name": "p", "messages": [{"text": "hi", "resource": "x://a"}]}]}`, "prompt-messages", 1},
		{"prompt role", `{"prompts": [{"name": "p", "messages": [{"role": "system", "text": "hi"}]}]}`, "prompt-messages", 1},
		{"prompt placeholder", "{\"prompts\": [{\"name\": \"p\",\n\"messages\": [\n{\"text\": \"hi {{who}}\"}]}]}", "prompt-placeholder", 3},
		{"prompt resource undeclared", `{"prompts": [{"name": "p", "messages": [{"resource": "x://nope"}]}]}`, "prompt-resource", 1},
		{"prompt image mime", `{"prompts": [{"name": "p", "messages": [{"image": "resources/notes.weird"}]}]}`, "mime-type", 1},
		{"prompt duplicate", "{\"prompts\": [{\"name\": \"p\", \"messages\": [{\"text\": \"a\"}]},\n{\"name\": \"p\", \"messages\": [{\"text\": \"b\"}]}]}", "prompt-duplicate", 2},
		{"argument twice", `{"prompts": [{"name": "p", "arguments": [{"name": "a"}, {"name": "a"}], "messages": [{"text": "a"}]}]}`, "prompt-argument", 1},
		{"argument required type", `{"prompts": [{"name": "p", "arguments": [{"name": "a", "required": "yes"}], "messages": [{"text": "a"}]}]}`, "json-type", 1},
		{"not an object", `[]`, "json-type", 1},
		{"resources not array", `{"resources": {}}`, "json-type", 1},
		{"syntax", "{\n\"resources\": [\n}", "json-syntax", 3},
		{"duplicate key", `{"resources": [], "resources": []}`, "json-duplicate-key", 1},
		{"mime type", `{"resources": [{"uri": "x://a", "file": "SKILL.md", "mime_type": "not a type"}]}`, "mime-type", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, fs := parseDecl(t, dir, c.doc)
			for _, f := range fs {
				if f.Severity == SeverityError && f.Rule == c.rule && f.Line == c.line && f.File == "resources.json" {
					return
				}
			}
			t.Errorf("want an error %s on line %d, got %+v", c.rule, c.line, fs)
		})
	}
}

// TestDeclarationsLoad: a pack whose resources.json has an error does not
// load; an unknown key only warns.
func TestDeclarationsLoad(t *testing.T) {
	dir, _ := declPack(t)
	writePackFiles(t, dir, map[string]string{"resources.json": `{"resources": [{"uri": "x://a", "file": "../secret.txt"}]}`})
	if _, err := Load(dir, LoadOptions{}); !errors.Is(err, ErrInvalidPack) {
		t.Fatalf("Load = %v, want ErrInvalidPack", err)
	}
	writePackFiles(t, dir, map[string]string{"resources.json": `{"resource": []}`})
	p, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Findings) != 1 || p.Findings[0].Rule != "unknown-key" {
		t.Fatalf("findings = %+v", p.Findings)
	}
}

func FuzzDeclarations(f *testing.F) {
	addSeedFiles(f, "resources.json")
	for _, s := range []string{
		`{"resources":[{"uri":"x://a","file":"a.txt"}],"templates":[{"uri_template":"x://{id}/d","file":"d/{id}.txt"}]}`,
		`{"prompts":[{"name":"p","arguments":[{"name":"a","required":true}],"messages":[{"text":"{{a}}"},{"resource":"x://a"},{"image":"i.png"}]}]}`,
		`{"templates":[{"uri_template":"x://{a}{b}}","file":"../{a}"}]}`,
		`{"templates":[{"uri_template":"x://a%zz|<{a}","file":"{a}"}],"resources":[{"uri":"x://[::1","file":"a.txt"}]}`,
	} {
		f.Add([]byte(s))
	}
	dir := filepath.Join(f.TempDir(), "pack")
	writePackFiles(f, dir, map[string]string{"a.txt": "a", "d/1.txt": "1", "i.png": "\x89PNG"})
	f.Fuzz(func(t *testing.T, doc []byte) {
		rep := &reporter{}
		d := parseDeclarations(doc, "resources.json", dir, rep)
		checkFindings(t, doc, rep.list)
		if HasErrors(rep.list) || d == nil {
			return
		}
		for _, r := range d.Resources {
			if _, err := SafeJoin(dir, r.File); err != nil || r.URI == "" {
				t.Fatalf("accepted resource %+v: %v", r, err)
			}
			if _, err := url.Parse(r.URI); err != nil {
				t.Fatalf("accepted resource URI %q: %v", r.URI, err)
			}
		}
		for _, tm := range d.Templates {
			// The MCP SDK parses templates with this library, and panics on
			// one it refuses.
			if _, err := uritemplate.New(tm.URITemplate); err != nil {
				t.Fatalf("accepted URI template %q that MCP refuses: %v", tm.URITemplate, err)
			}
			if _, err := url.Parse(templateVarRe.ReplaceAllString(tm.URITemplate, "x")); err != nil {
				t.Fatalf("accepted URI template %q: %v", tm.URITemplate, err)
			}
			for _, v := range []string{"1", "..", "a/b", "."} {
				file, ok, err := tm.Match(strings.ReplaceAll(tm.URITemplate, "{"+tm.Vars[0]+"}", v))
				if ok && err == nil {
					if _, err := SafeJoin(dir, file); errors.Is(err, ErrPathEscape) {
						t.Fatalf("template %+v with %q names %q outside the pack", tm, v, file)
					}
				}
			}
		}
		for _, p := range d.Prompts {
			if p.Name == "" || len(p.Messages) == 0 {
				t.Fatalf("accepted prompt %+v", p)
			}
		}
	})
}
