package httpguard

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

func TestNewToken(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		tok, err := NewToken()
		if err != nil {
			t.Fatal(err)
		}
		if len(tok) != 43 || CheckToken(tok) != nil || seen[tok] {
			t.Fatalf("NewToken() = %q: want 43 URL-safe characters, new each time (%v)", tok, CheckToken(tok))
		}
		seen[tok] = true
	}
}

func TestCheckToken(t *testing.T) {
	long := strings.Repeat("a", MinTokenLen)
	tests := []struct {
		token string
		ok    bool
	}{
		{"", false},
		{"s3cret", false},
		{long[1:], false},
		{long, true},
		{long + "+/=-_~.", true},
		{long + " x", false},
		{long + "\n", false},
		{long + ";", false},
		{long + `"`, false},
		{long + "é", false},
	}
	for _, tt := range tests {
		if err := CheckToken(tt.token); (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrWeakToken)) {
			t.Errorf("CheckToken(%q) = %v, want ok %v", tt.token, err, tt.ok)
		}
	}
}

func TestTokenMatches(t *testing.T) {
	const want = "0123456789abcdef0123456789abcdef"
	tests := []struct {
		got, want string
		match     bool
	}{
		{want, want, true},
		{want[:31], want, false},
		{want + "0", want, false},
		{"1" + want[1:], want, false},
		{want[:31] + "0", want, false},
		{"", want, false},
		{"", "", false}, // an unset token matches nothing
		{strings.ToUpper(want), want, false},
	}
	for _, tt := range tests {
		if got := TokenMatches(tt.got, tt.want); got != tt.match {
			t.Errorf("TokenMatches(%q, %q) = %v, want %v", tt.got, tt.want, got, tt.match)
		}
	}
}

func TestBearerToken(t *testing.T) {
	tests := []struct {
		header, want string
		ok           bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer abc", "abc", true},
		{"BEARER abc", "abc", true},
		{"Bearer ", "", false},
		{"Bearer", "", false},
		{"Basic abc", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/", nil)
		if tt.header != "" {
			r.Header.Set("Authorization", tt.header)
		}
		if got, ok := BearerToken(r); got != tt.want || ok != tt.ok {
			t.Errorf("BearerToken(%q) = %q, %v; want %q, %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}
}

// TestTokenComparedInConstantTime: no server compares a token but through
// TokenMatches (SHA-256 digests compared with crypto/subtle). A timing test
// could not tell a 43-byte == from a constant-time compare on a shared
// machine, so this one reads the code: in the packages that hold a token,
// no ==, !=, strings or bytes comparison has an operand whose name says
// token or secret, and TokenMatches calls subtle.ConstantTimeCompare.
func TestTokenComparedInConstantTime(t *testing.T) {
	tokenish := func(e ast.Expr) bool {
		var name string
		switch x := e.(type) {
		case *ast.Ident:
			name = x.Name
		case *ast.SelectorExpr:
			name = x.Sel.Name
		case *ast.CallExpr:
			if sel, ok := x.Fun.(*ast.SelectorExpr); ok {
				name = sel.Sel.Name // c.Value of a cookie is checked by the callers' names
			}
		}
		n := strings.ToLower(name)
		return strings.Contains(n, "token") || strings.Contains(n, "secret") || n == "tok" || n == "got" || n == "want"
	}
	fset := token.NewFileSet()
	sawSubtle := false
	for _, dir := range []string{".", filepath.Join("..", "web"), filepath.Join("..", "mcpserver")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.BinaryExpr:
					if (x.Op == token.EQL || x.Op == token.NEQ) && (tokenish(x.X) && !isEmpty(x.Y) || tokenish(x.Y) && !isEmpty(x.X)) {
						t.Errorf("%s: a token compared with %s: use TokenMatches", fset.Position(x.Pos()), x.Op)
					}
				case *ast.CallExpr:
					sel, ok := x.Fun.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					pkg, _ := sel.X.(*ast.Ident)
					if pkg == nil {
						return true
					}
					switch pkg.Name + "." + sel.Sel.Name {
					case "subtle.ConstantTimeCompare":
						sawSubtle = sawSubtle || filepath.Base(file) == "token.go"
					case "strings.EqualFold", "strings.Compare", "bytes.Equal", "bytes.Compare", "strings.HasPrefix":
						for _, a := range x.Args {
							if tokenish(a) {
								t.Errorf("%s: a token compared with %s.%s: use TokenMatches", fset.Position(x.Pos()), pkg.Name, sel.Sel.Name)
							}
						}
					}
				}
				return true
			})
		}
	}
	if !sawSubtle {
		t.Error("TokenMatches does not use subtle.ConstantTimeCompare")
	}
}

// isEmpty reports whether e is the literal "" (a check for an unset token,
// which leaks nothing).
// isEmpty reports whether e is "" or nil: asking whether a token is there
// at all reveals nothing about it.
func isEmpty(e ast.Expr) bool {
	if id, ok := e.(*ast.Ident); ok && id.Name == "nil" {
		return true
	}
	lit, ok := e.(*ast.BasicLit)
	return ok && lit.Value == `""`
}
