package mcpserver

import (
	"errors"
	"strings"
	"testing"
)

func TestParsePackURI(t *testing.T) {
	tests := []struct {
		in   string
		want packURI
		ok   bool
	}{
		{"pack://json-tools/SKILL.md", packURI{"json-tools", "SKILL.md"}, true},
		{"pack://json-tools/references/REFERENCE.md", packURI{"json-tools", "references/REFERENCE.md"}, true},
		{"pack://a/docs/with%20space.md", packURI{"a", "docs/with space.md"}, true},
		{"pack://a/%C3%A9t%C3%A9.md", packURI{"a", "été.md"}, true},
		{"pack://a/..", packURI{}, false},
		{"pack://a/docs/../../etc/passwd", packURI{}, false},
		{"pack://a/%2e%2e/x", packURI{}, false},
		{"pack://a//etc/passwd", packURI{}, false},
		{"pack://a/./x", packURI{}, false},
		{"pack://a/x%00y", packURI{}, false},
		{"pack://a/x%5cy", packURI{}, false},
		{"pack://a/x%zz", packURI{}, false},
		{"pack://a/x?y=1", packURI{}, false},
		{"pack://a/x#frag", packURI{}, false},
		{"pack://a", packURI{}, false},
		{"pack://a/", packURI{}, false},
		{"pack://A/x", packURI{}, false},
		{"pack://-a/x", packURI{}, false},
		{"pack://a--b/x", packURI{}, false},
		{"pack://../x", packURI{}, false},
		{"file:///etc/passwd", packURI{}, false},
		{"pack://a/" + strings.Repeat("x", maxURILen), packURI{}, false},
	}
	for _, tt := range tests {
		got, err := parsePackURI(tt.in)
		if tt.ok != (err == nil) || got != tt.want {
			t.Errorf("parsePackURI(%q) = %+v, %v; want %+v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrBadURI) {
			t.Errorf("parsePackURI(%q) error %v does not wrap ErrBadURI", tt.in, err)
		}
	}
}

func TestPackURIRoundTrip(t *testing.T) {
	for _, u := range []packURI{{"a", "SKILL.md"}, {"b-c", "docs/a b/c#d?.md"}, {"x", "é/%41"}} {
		got, err := parsePackURI(u.String())
		if err != nil || got != u {
			t.Errorf("parsePackURI(%q) = %+v, %v; want %+v", u.String(), got, err, u)
		}
	}
}

// FuzzParsePackURI checks that no URI a client sends can panic the parser or
// yield a path that could climb out of a pack.
func FuzzParsePackURI(f *testing.F) {
	for _, s := range []string{"pack://a/SKILL.md", "pack://a/../x", "pack://a/%2e%2e/x", "pack://a//x", "pack://a/b%00", "pack://", "pack://a/x?y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := parsePackURI(s)
		if err != nil {
			if !errors.Is(err, ErrBadURI) {
				t.Fatalf("error %v does not wrap ErrBadURI", err)
			}
			return
		}
		if !validPackName(u.Pack) || u.Path == "" || strings.HasPrefix(u.Path, "/") || strings.ContainsRune(u.Path, 0) {
			t.Fatalf("parsePackURI(%q) accepted %+v", s, u)
		}
		for _, el := range strings.Split(u.Path, "/") {
			if el == "" || el == "." || el == ".." {
				t.Fatalf("parsePackURI(%q) accepted path element %q", s, el)
			}
		}
		again, err := parsePackURI(u.String())
		if err != nil || again != u {
			t.Fatalf("round trip of %+v: %+v, %v", u, again, err)
		}
	})
}
