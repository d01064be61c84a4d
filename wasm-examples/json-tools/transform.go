package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A transform is a list of steps applied in order. Record steps (pick, omit,
// rename, select, flatten, unflatten) work on one object; when the value being
// transformed is an array they apply to every element, which is what "turn
// these records into those records" needs. Array steps (filter, sort_by,
// limit) work on the array itself.

type stepKind int

const (
	stepPick stepKind = iota
	stepOmit
	stepRename
	stepSelect
	stepFlatten
	stepUnflatten
	stepFilter
	stepSortBy
	stepLimit
)

var stepNames = []string{"pick", "omit", "rename", "select", "flatten", "unflatten", "filter", "sort_by", "limit"}

type step struct {
	kind    stepKind
	paths   []*Path // pick, omit
	renames []rename
	selects []selection
	sep     string // flatten, unflatten
	arrays  bool   // flatten: also flatten arrays
	filter  *Filter
	sortBy  *Path
	desc    bool
	limit   int
}

type rename struct{ from, to *Path }

type selection struct {
	key  string
	path *Path
}

func (s step) record() bool { return s.kind <= stepUnflatten }

func (s step) name() string { return stepNames[s.kind] }

// parseSteps reads the "steps" argument: an array of one-key objects.
func parseSteps(v any) ([]step, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("steps must be an array of one-key objects such as {\"pick\": [\".id\"]}, got %s", typeName(v))
	}
	if len(arr) == 0 {
		return nil, fmt.Errorf("steps is empty: give at least one step")
	}
	out := make([]step, 0, len(arr))
	for i, e := range arr {
		s, err := parseStep(e)
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", i+1, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func parseStep(v any) (step, error) {
	o, ok := v.(*object)
	if !ok || len(o.members) != 1 {
		return step{}, fmt.Errorf("a step is an object with exactly one key, one of %s", strings.Join(stepNames, ", "))
	}
	key, arg := o.members[0].key, o.members[0].val
	k := slices.Index(stepNames, key)
	if k < 0 {
		return step{}, fmt.Errorf("unknown step %q: want one of %s", key, strings.Join(stepNames, ", "))
	}
	s := step{kind: stepKind(k)}
	var err error
	switch s.kind {
	case stepPick, stepOmit:
		s.paths, err = fieldPaths(key, arg)
	case stepRename:
		err = s.parseRename(arg)
	case stepSelect:
		err = s.parseSelect(arg)
	case stepFlatten, stepUnflatten:
		err = s.parseSeparator(arg)
	case stepFilter:
		err = s.parseFilter(arg)
	case stepSortBy:
		err = s.parseSortBy(arg)
	case stepLimit:
		err = s.parseLimit(arg)
	}
	if err != nil {
		return step{}, fmt.Errorf("%s: %w", key, err)
	}
	return s, nil
}

// fieldPath parses a path of field names only: the form pick, omit and
// rename can follow and rebuild.
func fieldPath(s string) (*Path, error) {
	p, err := ParsePath(s)
	if err != nil {
		return nil, err
	}
	if p.names == nil && p.simple() && len(p.x) <= 1 {
		return nil, fmt.Errorf("path %q names the whole record: name a field such as .id", s)
	}
	if p.names == nil {
		return nil, fmt.Errorf("path %q: only field names are allowed here (like .user.name); use select for indexes, wildcards and filters", s)
	}
	return p, nil
}

func fieldPaths(key string, arg any) ([]*Path, error) {
	arr, ok := arg.([]any)
	if !ok {
		if s, ok := arg.(string); ok {
			arr = []any{s}
		} else {
			return nil, fmt.Errorf("want an array of field paths such as [\".id\", \".user.name\"], got %s", typeName(arg))
		}
	}
	var out []*Path
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("want field paths as strings, got %s", typeName(e))
		}
		p, err := fieldPath(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func (s *step) parseRename(arg any) error {
	o, ok := arg.(*object)
	if !ok || len(o.members) == 0 {
		return fmt.Errorf("want an object mapping old field paths to new ones, such as {\".user.name\": \".name\"}")
	}
	for _, m := range o.members {
		to, ok := m.val.(string)
		if !ok {
			return fmt.Errorf("new name for %q must be a string, got %s", m.key, typeName(m.val))
		}
		fp, err := fieldPath(m.key)
		if err != nil {
			return err
		}
		tp, err := fieldPath(to)
		if err != nil {
			return err
		}
		s.renames = append(s.renames, rename{fp, tp})
	}
	return nil
}

func (s *step) parseSelect(arg any) error {
	o, ok := arg.(*object)
	if !ok || len(o.members) == 0 {
		return fmt.Errorf("want an object mapping output keys to paths, such as {\"name\": \".user.name\", \"first_tag\": \".tags[0]\"}")
	}
	for _, m := range o.members {
		ps, ok := m.val.(string)
		if !ok {
			return fmt.Errorf("path for %q must be a string, got %s", m.key, typeName(m.val))
		}
		p, err := ParsePath(ps)
		if err != nil {
			return err
		}
		s.selects = append(s.selects, selection{m.key, p})
	}
	return nil
}

func (s *step) parseSeparator(arg any) error {
	s.sep, s.arrays = ".", true
	switch t := arg.(type) {
	case bool:
		if !t {
			return fmt.Errorf("false does nothing: remove the step")
		}
	case string:
		s.sep = t
	case *object:
		for _, m := range t.members {
			switch m.key {
			case "separator":
				sep, ok := m.val.(string)
				if !ok {
					return fmt.Errorf("separator must be a string")
				}
				s.sep = sep
			case "arrays":
				b, ok := m.val.(bool)
				if !ok || s.kind != stepFlatten {
					return fmt.Errorf("arrays is a boolean option of flatten")
				}
				s.arrays = b
			default:
				return fmt.Errorf("unknown option %q: want separator or arrays", m.key)
			}
		}
	default:
		return fmt.Errorf("want true, a separator string, or {\"separator\": \".\", \"arrays\": false}")
	}
	if s.sep == "" {
		return fmt.Errorf("separator must not be empty")
	}
	return nil
}

func (s *step) parseFilter(arg any) error {
	src, ok := arg.(string)
	if !ok {
		return fmt.Errorf("want a filter expression string such as \"@.age >= 18 && @.active\"")
	}
	f, err := ParseFilter(src)
	if err != nil {
		return err
	}
	s.filter = f
	return nil
}

func (s *step) parseSortBy(arg any) error {
	src, ok := arg.(string)
	if !ok {
		return fmt.Errorf("want a path string such as \".age\" (prefix \"-\" to sort descending)")
	}
	if rest, ok := strings.CutPrefix(src, "-"); ok {
		s.desc, src = true, rest
	}
	src = strings.TrimPrefix(src, "@")
	p, err := ParsePath(src)
	if err != nil {
		return err
	}
	s.sortBy = p
	return nil
}

func (s *step) parseLimit(arg any) error {
	n, ok := arg.(json.Number)
	if !ok {
		return fmt.Errorf("want a whole number")
	}
	i, err := strconv.Atoi(n.String())
	if err != nil || i < 0 {
		return fmt.Errorf("want a whole number ≥ 0, got %s", n)
	}
	s.limit = i
	return nil
}

// applySteps runs steps over v in order. v is never modified.
func applySteps(v any, steps []step) (any, error) {
	v = clone(v)
	for i, s := range steps {
		var err error
		if v, err = applyStep(v, s); err != nil {
			return nil, fmt.Errorf("step %d (%s): %w", i+1, s.name(), err)
		}
	}
	return v, nil
}

func applyStep(v any, s step) (any, error) {
	if s.record() {
		if arr, ok := v.([]any); ok {
			for i, e := range arr {
				r, err := applyRecord(e, s)
				if err != nil {
					return nil, fmt.Errorf("element %d: %w", i, err)
				}
				arr[i] = r
			}
			return arr, nil
		}
		return applyRecord(v, s)
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("needs an array, got %s", typeName(v))
	}
	switch s.kind {
	case stepFilter:
		return s.filter.keep(arr)
	case stepSortBy:
		keys := make([]any, len(arr))
		for i, e := range arr {
			if nodes, err := s.sortBy.Eval(e); err == nil && len(nodes) > 0 {
				keys[i] = nodes[0]
			} else {
				keys[i] = missing{}
			}
		}
		idx := make([]int, len(arr))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			c := sortCompare(keys[a], keys[b])
			if s.desc {
				_, ma := keys[a].(missing)
				_, mb := keys[b].(missing)
				if !ma && !mb {
					c = -c
				}
			}
			return c
		})
		out := make([]any, len(arr))
		for i, j := range idx {
			out[i] = arr[j]
		}
		return out, nil
	case stepLimit:
		if s.limit < len(arr) {
			arr = arr[:s.limit]
		}
		return arr, nil
	}
	return nil, fmt.Errorf("unknown array step")
}

// missing sorts after every value, ascending or descending.
type missing struct{}

// sortRank orders types as jq does: null < false/true < numbers < strings <
// arrays < objects, and a missing key last.
func sortRank(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case bool:
		return 1
	case json.Number:
		return 2
	case string:
		return 3
	case []any:
		return 4
	case *object:
		return 5
	}
	return 6
}

func sortCompare(a, b any) int {
	ra, rb := sortRank(a), sortRank(b)
	if ra != rb {
		return ra - rb
	}
	switch x := a.(type) {
	case bool:
		y := b.(bool)
		switch {
		case !x && y:
			return -1
		case x && !y:
			return 1
		}
		return 0
	case json.Number:
		fx, _ := x.Float64()
		fy, _ := b.(json.Number).Float64()
		return cmp.Compare(fx, fy)
	case string:
		return strings.Compare(x, b.(string))
	}
	return 0
}

func applyRecord(v any, s step) (any, error) {
	switch s.kind {
	case stepSelect:
		out := &object{}
		for _, sel := range s.selects {
			nodes, err := sel.path.Eval(v)
			if err != nil {
				return nil, err
			}
			switch {
			case sel.path.simple() && len(nodes) > 0:
				out.set(sel.key, nodes[0])
			case sel.path.simple():
				out.set(sel.key, nil)
			default:
				out.set(sel.key, nodes)
			}
		}
		return out, nil
	case stepFlatten:
		out := &object{}
		flatten(out, "", v, s.sep, s.arrays)
		return out, nil
	}
	o, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf("is %s, not an object", typeName(v))
	}
	switch s.kind {
	case stepPick:
		out := &object{}
		for _, p := range s.paths {
			if val, ok := getField(o, p); ok {
				setField(out, p, val)
			}
		}
		return out, nil
	case stepOmit:
		for _, p := range s.paths {
			removeField(o, p)
		}
		return o, nil
	case stepRename:
		for _, r := range s.renames {
			if val, ok := removeField(o, r.from); ok {
				setField(o, r.to, val)
			}
		}
		return o, nil
	case stepUnflatten:
		out := &object{}
		for _, m := range o.members {
			parts := strings.Split(m.key, s.sep)
			cur := out
			for _, part := range parts[:len(parts)-1] {
				next, ok := cur.get(part)
				child, isObj := next.(*object)
				if !ok || !isObj {
					child = &object{}
					cur.set(part, child)
				}
				cur = child
			}
			cur.set(parts[len(parts)-1], m.val)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown record step")
}

func flatten(out *object, prefix string, v any, sep string, arrays bool) {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + sep + k
	}
	switch t := v.(type) {
	case *object:
		if len(t.members) == 0 && prefix != "" {
			out.set(prefix, t)
			return
		}
		for _, m := range t.members {
			flatten(out, join(m.key), m.val, sep, arrays)
		}
		return
	case []any:
		if arrays && len(t) > 0 {
			for i, e := range t {
				flatten(out, join(strconv.Itoa(i)), e, sep, arrays)
			}
			return
		}
	}
	if prefix == "" {
		prefix = "value"
	}
	out.set(prefix, v)
}

func getField(o *object, p *Path) (any, bool) {
	var cur any = o
	for _, name := range p.names {
		co, ok := cur.(*object)
		if !ok {
			return nil, false
		}
		if cur, ok = co.get(name); !ok {
			return nil, false
		}
	}
	return cur, true
}

// setField stores v at p, creating objects on the way and replacing any
// non-object that stands in the way.
func setField(o *object, p *Path, v any) {
	cur := o
	for _, name := range p.names[:len(p.names)-1] {
		next, _ := cur.get(name)
		child, ok := next.(*object)
		if !ok {
			child = &object{}
			cur.set(name, child)
		}
		cur = child
	}
	cur.set(p.names[len(p.names)-1], v)
}

func removeField(o *object, p *Path) (any, bool) {
	cur := o
	for _, name := range p.names[:len(p.names)-1] {
		next, _ := cur.get(name)
		child, ok := next.(*object)
		if !ok {
			return nil, false
		}
		cur = child
	}
	return cur.remove(p.names[len(p.names)-1])
}
