package app

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/packs-run/packs/packs"
)

// stampsJSON is how RecordFolderChecks stores the stamps of real files
// under these names.
func stampsJSON(t testing.TB, names ...string) []byte {
	t.Helper()
	dir := t.TempDir()
	m := map[string]packs.Stamp{}
	for i, n := range names {
		p := filepath.Join(dir, "f"+string(rune('a'+i)))
		if err := os.WriteFile(p, []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		m[n] = packs.StampOf(fi)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseStamps: the direct reading gives what encoding/json gives, for
// plain names and for names JSON escapes.
func TestParseStamps(t *testing.T) {
	for _, names := range [][]string{
		{"SKILL.md", "skill.toml", "tools.json", "bin/echo.wasm"},
		{},
		{"a<b>&.md", "quote\".md", "back\\slash", "tab\there", "é/ü.md"},
	} {
		raw := stampsJSON(t, names...)
		got, err := parseStamps(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		want, err := jsonStamps(raw)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.EqualFunc(got, want, packs.Stamp.Same) || len(got) != len(names) {
			t.Errorf("%s: got %v, want %v", raw, got, want)
		}
	}
}

// FuzzParseStamps: whatever packs.db holds, parseStamps reads what
// encoding/json reads, or fails where it fails.
func FuzzParseStamps(f *testing.F) {
	f.Add(stampsJSON(f, "SKILL.md", "bin/x.wasm"))
	f.Add([]byte(`{"a":"1:2:3:4:5:6:1","a":"1:2:3:4:5:6:1"}`))
	f.Add([]byte(`{ "a" : "1:2:3:4:5:6:1" }`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := parseStamps(raw)
		var want map[string]packs.Stamp
		werr := json.Unmarshal(raw, &want)
		switch {
		case werr != nil || want == nil:
			if err == nil {
				t.Fatalf("%q: parseStamps read %v, encoding/json failed: %v", raw, got, werr)
			}
		case err != nil:
			t.Fatalf("%q: parseStamps failed (%v), encoding/json read %v", raw, err, want)
		case !maps.EqualFunc(got, want, func(a, b packs.Stamp) bool { return a == b }):
			t.Fatalf("%q: parseStamps read %v, encoding/json %v", raw, got, want)
		}
	})
}
