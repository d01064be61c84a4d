package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ohler55/ojg/jp"
)

// Paths are JSONPath (RFC 9535 as implemented by github.com/ohler55/ojg's jp
// package): the pack parses and evaluates them with that library and keeps
// only two things of its own, both small:
//
//   - a path may be written jq-style from the root (.a.b, [0], or a bare
//     name a.b): it is read as $.a.b, $[0], $.a.b;
//   - evaluation runs on a view of the document whose numbers are Go numbers
//     (what jp compares) and whose objects keep their key order (an object is
//     a jp.Keyed), so results come back in document order with their keys in
//     the order they were written.

// maxPathLen bounds a path or filter so that hostile input stays cheap to parse.
const maxPathLen = 4096

// maxNodes bounds how many nodes one evaluation may produce.
const maxNodes = 100000

var errTooManyNodes = errors.New("the path selects more than 100000 values: narrow it")

// PathError is a path that does not parse.
type PathError struct {
	Filter bool // a filter expression, not a whole path
	Path   string
	Msg    string
}

func (e *PathError) Error() string {
	if e.Filter {
		return fmt.Sprintf("filter %q: %s (a JSONPath filter, RFC 9535: e.g. @.age >= 18 && @.active)", e.Path, e.Msg)
	}
	return fmt.Sprintf("path %q: %s (JSONPath, RFC 9535: e.g. $.items[0].name, $[*].id, $[?(@.price < 10)])", e.Path, e.Msg)
}

// Path is a parsed JSONPath.
type Path struct {
	raw   string
	x     jp.Expr
	names []string // the field names, when the path is only field names from the root
}

func (p *Path) String() string { return p.raw }

// simple reports whether p selects at most one value: only names and indexes.
func (p *Path) simple() bool {
	for _, f := range p.x {
		switch f.(type) {
		case jp.Root, jp.At, jp.Child, jp.Nth:
		default:
			return false
		}
	}
	return true
}

// ParsePath parses s as JSONPath, read from the root when written jq-style.
func ParsePath(s string) (*Path, error) {
	if len(s) > maxPathLen {
		return nil, &PathError{Path: s[:32] + "…", Msg: fmt.Sprintf("longer than %d bytes", maxPathLen)}
	}
	src := strings.TrimSpace(s)
	switch {
	case src == "", src == ".":
		src = "$"
	case strings.HasPrefix(src, "$"):
	case strings.HasPrefix(src, "@"):
		src = "$" + src[1:]
	case strings.HasPrefix(src, "."), strings.HasPrefix(src, "["):
		src = "$" + src
	default:
		src = "$." + src
	}
	x, err := jp.ParseString(src)
	if err != nil {
		return nil, &PathError{Path: s, Msg: err.Error()}
	}
	p := &Path{raw: s, x: x}
	for _, f := range x {
		switch f := f.(type) {
		case jp.Root, jp.At:
		case jp.Child:
			p.names = append(p.names, string(f))
		default:
			p.names = nil
			return p, nil
		}
	}
	return p, nil
}

// Eval applies p to root and returns every selected value, in document order.
func (p *Path) Eval(root any) ([]any, error) {
	return evalExpr(p.x, root)
}

func evalExpr(x jp.Expr, root any) ([]any, error) {
	view := numbers(root)
	// Locate is bounded; Get is not: count first so that a hostile path
	// cannot make the module build millions of results.
	if len(x.Locate(view, maxNodes+1)) > maxNodes {
		return nil, errTooManyNodes
	}
	if len(x) == 1 { // $ alone: the document
		return []any{root}, nil
	}
	got := x.Get(view)
	out := make([]any, len(got))
	for i, v := range got {
		out[i] = fromNumbers(v)
	}
	return out, nil
}

// Locations returns the normalized location of each value p selects, in
// document order, e.g. $.items[2].name.
func (p *Path) Locations(root any) ([]string, error) {
	view := numbers(root)
	if len(p.x) == 1 {
		return []string{"$"}, nil
	}
	locs := p.x.Locate(view, maxNodes+1)
	if len(locs) > maxNodes {
		return nil, errTooManyNodes
	}
	if n := len(p.x.Get(view)); n != len(locs) {
		return nil, fmt.Errorf("json-tools: locations are not available for %q (a filter that refers to $ is not located by the JSONPath library); query without locations", p.raw)
	}
	slices.SortStableFunc(locs, func(a, b jp.Expr) int { return docOrder(view, a, b) })
	out := make([]string, len(locs))
	for i, l := range locs {
		out[i] = l.String()
	}
	return out, nil
}

// docOrder compares two normalized locations by where they are in the
// document: indexes by number, names by their place in the object.
func docOrder(v any, a, b jp.Expr) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		fa, fb := a[i], b[i]
		switch fa := fa.(type) {
		case jp.Nth:
			fb, ok := fb.(jp.Nth)
			if !ok {
				return 0
			}
			if c := cmp.Compare(int(fa), int(fb)); c != 0 {
				return c
			}
			arr, _ := v.([]any)
			if int(fa) < 0 || int(fa) >= len(arr) {
				return 0
			}
			v = arr[int(fa)]
		case jp.Child:
			fb, ok := fb.(jp.Child)
			o, isObj := v.(*object)
			if !ok || !isObj {
				return 0
			}
			if fa != fb {
				return cmp.Compare(o.index(string(fa)), o.index(string(fb)))
			}
			v, _ = o.get(string(fa))
		}
	}
	return cmp.Compare(len(a), len(b))
}

// Filter is a filter expression applied to each element of an array, such as
// @.age >= 18 && @.active.
type Filter struct{ x jp.Expr }

// ParseFilter parses a filter expression (what goes inside [?( )]).
func ParseFilter(src string) (*Filter, error) {
	if len(src) > maxPathLen {
		return nil, &PathError{Filter: true, Path: src[:32] + "…", Msg: fmt.Sprintf("longer than %d bytes", maxPathLen)}
	}
	x, err := jp.ParseString("$[?(" + src + ")]")
	if err != nil {
		return nil, &PathError{Filter: true, Path: src, Msg: err.Error()}
	}
	return &Filter{x: x}, nil
}

// keep returns the elements of arr that pass f, in order.
func (f *Filter) keep(arr []any) ([]any, error) {
	return evalExpr(f.x, arr)
}

// numbers returns a view of v that jp can compare: the same objects (in the
// same key order) and arrays, with json.Number turned into int64 or float64.
func numbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i
		}
		f, _ := strconv.ParseFloat(string(v), 64)
		return f
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = numbers(e)
		}
		return out
	case *object:
		out := &object{members: make([]member, len(v.members))}
		for i, m := range v.members {
			out.members[i] = member{m.key, numbers(m.val)}
		}
		return out
	}
	return v
}

// fromNumbers is the reverse of numbers, for what jp selected.
func fromNumbers(v any) any {
	switch v := v.(type) {
	case int64:
		return json.Number(strconv.FormatInt(v, 10))
	case float64:
		return json.Number(strconv.FormatFloat(v, 'g', -1, 64))
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = fromNumbers(e)
		}
		return out
	case *object:
		out := &object{members: make([]member, len(v.members))}
		for i, m := range v.members {
			out.members[i] = member{m.key, fromNumbers(m.val)}
		}
		return out
	}
	return v
}

// index is where key sits in o, or -1.
func (o *object) index(key string) int {
	for i, m := range o.members {
		if m.key == key {
			return i
		}
	}
	return -1
}

// An object is a jp.Keyed, so jp walks it in document order.

func (o *object) ValueForKey(key string) (any, bool) { return o.get(key) }
func (o *object) SetValueForKey(key string, v any)   { o.set(key, v) }
func (o *object) RemoveValueForKey(key string)       { o.remove(key) }
func (o *object) Keys() []string {
	keys := make([]string, len(o.members))
	for i, m := range o.members {
		keys[i] = m.key
	}
	return keys
}
