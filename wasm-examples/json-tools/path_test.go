package main

import (
	"errors"
	"strings"
	"testing"
)

const store = `{
  "store": {
    "books": [
      {"title": "Dune", "author": "Herbert", "price": 9.5, "tags": ["scifi", "classic"], "stock": 3},
      {"title": "Emma", "author": "Austen", "price": 4, "tags": ["classic"], "stock": 0},
      {"title": "Neuromancer", "author": "Gibson", "price": 12, "tags": ["scifi", "cyberpunk"]},
      {"title": "It", "author": "King", "price": null, "tags": []}
    ],
    "bike": {"color": "red", "price": 199},
    "odd key": {"a.b": 1}
  }
}`

func mustParse(t testing.TB, s string) any {
	t.Helper()
	v, err := parseJSON([]byte(s))
	if err != nil {
		t.Fatalf("parseJSON(%q): %v", s, err)
	}
	return v
}

func evalJSON(t *testing.T, doc any, path string) string {
	t.Helper()
	p, err := ParsePath(path)
	if err != nil {
		t.Fatalf("ParsePath(%q): %v", path, err)
	}
	vals, err := p.Eval(doc)
	if err != nil {
		t.Fatalf("Eval(%q): %v", path, err)
	}
	return string(appendJSON(nil, vals))
}

func locations(t *testing.T, doc any, path string) []string {
	t.Helper()
	p, err := ParsePath(path)
	if err != nil {
		t.Fatalf("ParsePath(%q): %v", path, err)
	}
	locs, err := p.Locations(doc)
	if err != nil {
		t.Fatalf("Locations(%q): %v", path, err)
	}
	return locs
}

func TestPathEval(t *testing.T) {
	doc := mustParse(t, store)
	tests := []struct {
		path, want string
	}{
		{".", `[` + string(appendJSON(nil, doc)) + `]`},
		{"$", `[` + string(appendJSON(nil, doc)) + `]`},
		{".store.bike.color", `["red"]`},
		{"store.bike.color", `["red"]`},
		{"$.store.bike.color", `["red"]`},
		{`.store["odd key"]["a.b"]`, `[1]`},
		{`.store['odd key']`, `[{"a.b":1}]`},
		{".store.books[0].title", `["Dune"]`},
		{".store.books[-1].title", `["It"]`},
		{".store.books[9].title", `[]`},
		{".store.books[1:3].title", `["Emma","Neuromancer"]`},
		{".store.books[:1].title", `["Dune"]`},
		{".store.books[-2:].title", `["Neuromancer","It"]`},
		{".store.books[0,2].author", `["Herbert","Gibson"]`},
		{`.store.bike["color","price"]`, `["red",199]`},
		{".store.books[*].stock", `[3,0]`},
		{".store.books.*.stock", `[3,0]`},
		{".store.bike.*", `["red",199]`},
		{"..color", `["red"]`},
		{"..price", `[9.5,4,12,null,199]`},
		{".store..tags[0]", `["scifi","classic","scifi"]`},
		{".missing.deeper", `[]`},
		{".store.bike.color.length", `[]`},
		{".store.books[?(@.price < 10)].title", `["Dune","Emma"]`},
		{".store.books[?@.price >= 12].title", `["Neuromancer"]`},
		{".store.books[?(@.stock)].title", `["Dune","Emma"]`}, // exists (RFC 9535), so 0 counts
		{".store.books[?(!@.stock)].title", `["Neuromancer","It"]`},
		{".store.books[?(@.price)].title", `["Dune","Emma","Neuromancer","It"]`}, // null exists too
		{".store.books[?(@.price == null)].title", `["It"]`},
		{".store.books[?(@.tags[*] == 'cyberpunk')].title", `["Neuromancer"]`},
		{".store.books[?(@.author =~ '^[A-H]')].title", `["Dune","Emma","Neuromancer"]`},
		{".store.books[?(@.price > 5 && @.tags[*] == \"classic\")].title", `["Dune"]`},
		{".store.books[?(@.price < 5 || @.author == 'King')].title", `["Emma","It"]`},
		{".store.books[?(@.author != 'King')].title", `["Dune","Emma","Neuromancer"]`},
		{".store.books[?(@.stock != 0)].title", `["Dune","Neuromancer","It"]`},
		{".store.books[?(@.price < $.store.bike.price && (@.stock > 1 || @.price > 10))].title", `["Dune","Neuromancer"]`},
		{".store.books[?(length(@.tags) == 2)].title", `["Dune","Neuromancer"]`},
		{".store.books[?(match(@.author, 'G.*'))].title", `["Neuromancer"]`},
		{".store.books[?(search(@.title, 'm'))].title", `["Emma","Neuromancer"]`},
		{".store.books[?(@.price < 10)]", `[{"title":"Dune","author":"Herbert","price":9.5,"tags":["scifi","classic"],"stock":3},{"title":"Emma","author":"Austen","price":4,"tags":["classic"],"stock":0}]`},
		{".store.books[?(@.title > 'F')].title", `["Neuromancer","It"]`},
		{".store.books[?(@.title == 5)].title", `[]`},
		{".store.books[?(@.price > 'a')].title", `[]`},
		{".store.bike[?(@ == 'red')]", `["red"]`},
	}
	for _, tt := range tests {
		got := evalJSON(t, doc, tt.path)
		if got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.path, got, tt.want)
		}
	}
}

func TestPathLocations(t *testing.T) {
	doc := mustParse(t, store)
	tests := []struct {
		path string
		want []string
	}{
		{`..["a.b"]`, []string{`$.store['odd key']['a.b']`}},
		{".store.books[?(@.stock == 0)].title", []string{"$.store.books[1].title"}},
		// In document order, which the library does not promise for filters.
		{".store.books[?(@.price < 10)].title", []string{"$.store.books[0].title", "$.store.books[1].title"}},
		{".store.bike.*", []string{"$.store.bike.color", "$.store.bike.price"}},
		{"$", []string{"$"}},
	}
	for _, tt := range tests {
		if got := locations(t, doc, tt.path); strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%s: got %q, want %q", tt.path, got, tt.want)
		}
	}
}

func TestPathErrors(t *testing.T) {
	tests := []struct{ path, msg string }{
		{".a[", "not terminated"},
		{".a.", "not terminated"},
		{".a b", "parse error"},
		{`.a["x]`, "invalid bracket"},
		{`.a['\q']`, "not a valid escaped character"},
		{".a[?(@.b = 1)]", "not a valid operation"},
		{".a[?(@.b > )]", "not a value"},
		{strings.Repeat(".a", 3000), "longer than"},
	}
	for _, tt := range tests {
		_, err := ParsePath(tt.path)
		var pe *PathError
		if !errors.As(err, &pe) {
			t.Errorf("ParsePath(%q) = %v, want a *PathError", tt.path, err)
			continue
		}
		if !strings.Contains(pe.Error(), tt.msg) || !strings.Contains(pe.Error(), "RFC 9535") {
			t.Errorf("ParsePath(%q): %q, want it to contain %q and name the syntax", tt.path, pe.Error(), tt.msg)
		}
	}
}

func TestPathTooManyNodes(t *testing.T) {
	// Arrays nested 300 deep: each "..*" multiplies the nodes by about the
	// depth, so three of them pass maxNodes while the document stays tiny.
	doc := strings.Repeat("[", 300) + strings.Repeat("]", 300)
	p, err := ParsePath("..*..*..*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Eval(mustParse(t, doc)); !errors.Is(err, errTooManyNodes) {
		t.Fatalf("Eval = %v, want errTooManyNodes", err)
	}
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{
		".a.b[0]", "$..x", `.a["b c"]`, ".a[1:-1]", ".a[?(@.b > 1 && !(@.c =~ 'x'))]", ".a[0,'b']", "a", ".", "..*",
		".a[?@.b]", ".a[?(@.b == $.c)]", `.a['\'']`,
	} {
		f.Add(s)
	}
	doc := mustParse(f, store)
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			var pe *PathError
			if !errors.As(err, &pe) {
				t.Fatalf("ParsePath(%q) = %v, want a *PathError", s, err)
			}
			return
		}
		if _, err := p.Eval(doc); err != nil && !errors.Is(err, errTooManyNodes) {
			t.Fatalf("Eval(%q) = %v", s, err)
		}
	})
}
