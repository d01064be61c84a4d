// Package author is the authoring loop of packs: init writes a new pack
// from a template embedded in the binary, build runs the toolchain its
// Makefile names, test runs the pack's own tests (tests/*.yaml) through the
// real runtime pipeline with host effects faked, and lint checks a pack
// against the capability-stack checklist (spec 004).
package author

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	"github.com/packs-run/packs/packs"
)

//go:embed all:templates
var templates embed.FS

// Languages are the template languages init knows, and ABIs the tool ABIs.
var (
	Languages = []string{"go", "rust", "wat"}
	ABIs      = []string{"extism", "wasi"}
)

// ErrExists is returned by Init when the target folder exists and is not
// empty: init never overwrites an author's files.
var ErrExists = errors.New("author: the folder exists and is not empty")

// ErrUsage wraps a name, language or ABI that init does not accept.
var ErrUsage = errors.New("author: invalid init request")

// InitOptions say what to write.
type InitOptions struct {
	Name string // the pack's name, also its folder's
	Lang string // go, rust or wat
	ABI  string // extism (the default) or wasi
}

// templateData is what the templates see.
type templateData struct {
	Name, Lang, LangTitle, ABI, Tool, Purpose string
	HasNameParam                              bool
	Target, Artifact                          string // Rust only
}

// Init writes a new pack named opt.Name into dir (created; it must not
// exist or be empty) and returns the files it wrote, relative to dir.
func Init(dir string, opt InitOptions) ([]string, error) {
	if opt.ABI == "" {
		opt.ABI = "extism"
	}
	if !packs.ValidName(opt.Name) {
		return nil, fmt.Errorf("%w: %q is not a pack name: use 1-64 of a-z, 0-9 and single hyphens, starting and ending with a letter or digit", ErrUsage, opt.Name)
	}
	if !slices.Contains(Languages, opt.Lang) {
		return nil, fmt.Errorf("%w: language %q: use one of %s", ErrUsage, opt.Lang, strings.Join(Languages, ", "))
	}
	if !slices.Contains(ABIs, opt.ABI) {
		return nil, fmt.Errorf("%w: abi %q: use one of %s", ErrUsage, opt.ABI, strings.Join(ABIs, ", "))
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrExists, dir)
	}
	data := templateData{Name: opt.Name, Lang: opt.Lang, ABI: opt.ABI, Tool: "greet", HasNameParam: true,
		Purpose: "Greet a person by name and return the greeting as JSON."}
	switch opt.Lang {
	case "go":
		data.LangTitle = "Go"
	case "rust":
		data.LangTitle = "Rust"
		data.Target, data.Artifact = "wasm32-unknown-unknown", strings.ReplaceAll(opt.Name, "-", "_")
		if opt.ABI == "wasi" {
			data.Target, data.Artifact = "wasm32-wasi", opt.Name
		}
	case "wat":
		data.LangTitle = "WebAssembly text"
		data.Tool, data.HasNameParam = "hello", false
		data.Purpose = "Say hello and return the greeting as JSON."
	}
	var written []string
	for _, root := range []string{"templates/common", "templates/" + opt.Lang} {
		err := fs.WalkDir(templates, root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, ok := outputName(strings.TrimPrefix(p, root+"/"), opt.ABI, data)
			if !ok {
				return nil
			}
			src, err := templates.ReadFile(p)
			if err != nil {
				return err
			}
			t, err := template.New(p).Option("missingkey=error").Parse(string(src))
			if err != nil {
				return fmt.Errorf("author: template %s: %w", p, err)
			}
			var out bytes.Buffer
			if err := t.Execute(&out, data); err != nil {
				return fmt.Errorf("author: template %s: %w", p, err)
			}
			target := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(target, out.Bytes(), 0o644); err != nil {
				return err
			}
			written = append(written, rel)
			return nil
		})
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// outputName maps a template path to the file it writes: ".tmpl" is
// dropped, "X.extism.tmpl" and "X.wasi.tmpl" are written only for that ABI,
// and NAME and TOOL in the path become the pack's and the tool's names.
func outputName(p, abi string, data templateData) (string, bool) {
	p, ok := strings.CutSuffix(p, ".tmpl")
	if !ok {
		return "", false
	}
	for _, a := range ABIs {
		if rest, ok := strings.CutSuffix(p, "."+a); ok {
			if a != abi {
				return "", false
			}
			p = rest
		}
	}
	dir, base := path.Split(p)
	base = strings.ReplaceAll(base, "NAME", data.Name)
	base = strings.ReplaceAll(base, "TOOL", data.Tool)
	return dir + base, true
}
