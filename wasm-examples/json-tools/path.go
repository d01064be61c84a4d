package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The path language is the common ground of jq and JSONPath (RFC 9535):
//
//	.a.b  $.a.b  a.b     field access ("$" and the leading "." are optional)
//	["a b"]  ['a b']     a field whose name is not an identifier
//	[0]  [-1]            array index, negative from the end
//	[1:3]  [:2]  [-2:]   slice, end exclusive
//	[*]  .*              every element or member value
//	[0,2]  ["a","b"]     union of indexes or names
//	..name  ..*  ..[0]   recursive descent: the selector applied at every depth
//	[?(@.price < 10)]    filter children: == != < <= > >= =~ (RE2 regex),
//	                     && || ! and parentheses; @ is the child, $ the root;
//	                     a bare operand tests truthiness (exists, not null/false)
//
// A comparison against a path that selects several nodes holds when any of
// them satisfies it, so [?(@.tags[*] == "red")] reads "tags contains red".

// PathError is a path that does not parse. Column counts runes from 1.
type PathError struct {
	Path   string
	Column int
	Msg    string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("path %q, column %d: %s", e.Path, e.Column, e.Msg)
}

type segKind int

const (
	segName segKind = iota
	segIndex
	segSlice
	segWild
	segUnion
	segFilter
)

type segment struct {
	kind      segKind
	recursive bool
	name      string
	index     int
	start     *int // slice bounds, nil when omitted
	end       *int
	union     []segment // segName or segIndex entries
	filter    expr
}

// Path is a parsed path, ready to evaluate any number of times.
type Path struct {
	raw  string
	segs []segment
}

func (p *Path) String() string { return p.raw }

// simple reports whether p names at most one location: fields and indexes only.
func (p *Path) simple() bool {
	for _, s := range p.segs {
		if s.recursive || s.kind != segName && s.kind != segIndex {
			return false
		}
	}
	return true
}

// maxPathLen bounds the path text; real paths are a few dozen bytes.
const maxPathLen = 4096

// ParsePath compiles a path, or returns a *PathError saying where and why not.
func ParsePath(s string) (*Path, error) {
	p := &pathParser{src: s}
	if len(s) > maxPathLen {
		return nil, &PathError{Path: s, Column: 1, Msg: fmt.Sprintf("path longer than %d bytes", maxPathLen)}
	}
	if !utf8.ValidString(s) {
		return nil, &PathError{Path: s, Column: 1, Msg: "path is not valid UTF-8"}
	}
	segs, err := p.parseSegments(true)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if !p.eof() {
		return nil, p.errorf("unexpected %q: segments start with \".\", \"..\" or \"[\"", p.peekRune())
	}
	return &Path{raw: s, segs: segs}, nil
}

type pathParser struct {
	src   string
	pos   int
	depth int
}

func (p *pathParser) eof() bool { return p.pos >= len(p.src) }

func (p *pathParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.src[p.pos]
}

func (p *pathParser) peekRune() rune {
	r, _ := utf8.DecodeRuneInString(p.src[p.pos:])
	return r
}

func (p *pathParser) column() int { return utf8.RuneCountInString(p.src[:p.pos]) + 1 }

func (p *pathParser) errorf(format string, args ...any) error {
	return &PathError{Path: p.src, Column: p.column(), Msg: fmt.Sprintf(format, args...)}
}

func (p *pathParser) skipSpace() {
	for !p.eof() && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

func (p *pathParser) accept(s string) bool {
	if strings.HasPrefix(p.src[p.pos:], s) {
		p.pos += len(s)
		return true
	}
	return false
}

// parseSegments reads segments until something that cannot start one. top
// allows a bare leading name ("a.b") and a leading "$".
func (p *pathParser) parseSegments(top bool) ([]segment, error) {
	var segs []segment
	if top {
		p.skipSpace()
		p.accept("$")
		if !p.eof() && isNameStart(p.peekRune()) {
			s, err := p.parseName()
			if err != nil {
				return nil, err
			}
			segs = append(segs, s)
		} else if p.peek() == '.' && (p.pos+1 == len(p.src) || p.src[p.pos+1] == ' ') {
			p.pos++ // "." alone is the root, as in jq
		}
	}
	for !p.eof() {
		switch {
		case p.accept(".."):
			s, err := p.parseAfterDot()
			if err != nil {
				return nil, err
			}
			s.recursive = true
			segs = append(segs, s)
		case p.accept("."):
			s, err := p.parseAfterDot()
			if err != nil {
				return nil, err
			}
			segs = append(segs, s)
		case p.peek() == '[':
			s, err := p.parseBracket()
			if err != nil {
				return nil, err
			}
			segs = append(segs, s)
		default:
			return segs, nil
		}
	}
	return segs, nil
}

func (p *pathParser) parseAfterDot() (segment, error) {
	switch {
	case p.accept("*"):
		return segment{kind: segWild}, nil
	case p.peek() == '[':
		return p.parseBracket()
	case !p.eof() && isNameStart(p.peekRune()):
		return p.parseName()
	case p.eof():
		return segment{}, p.errorf("path ends after \".\": name a field, or use \"*\"")
	}
	return segment{}, p.errorf("unexpected %q after \".\": quote unusual names as [\"name\"]", p.peekRune())
}

func isNameStart(r rune) bool {
	return r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isNameRune(r rune) bool { return isNameStart(r) || r == '-' }

func (p *pathParser) parseName() (segment, error) {
	start := p.pos
	for !p.eof() {
		r, size := utf8.DecodeRuneInString(p.src[p.pos:])
		if !isNameRune(r) {
			break
		}
		p.pos += size
	}
	return segment{kind: segName, name: p.src[start:p.pos]}, nil
}

func (p *pathParser) parseBracket() (segment, error) {
	open := p.pos
	p.pos++ // '['
	p.skipSpace()
	if p.eof() {
		p.pos = open
		return segment{}, p.errorf("unterminated \"[\": close it with \"]\"")
	}
	var s segment
	switch {
	case p.accept("*"):
		s = segment{kind: segWild}
	case p.peek() == '?':
		p.pos++
		p.skipSpace()
		e, err := p.parseExpr()
		if err != nil {
			return s, err
		}
		s = segment{kind: segFilter, filter: e}
	default:
		var err error
		if s, err = p.parseSelectors(); err != nil {
			return s, err
		}
	}
	p.skipSpace()
	if !p.accept("]") {
		if p.eof() {
			p.pos = open
			return s, p.errorf("unterminated \"[\": close it with \"]\"")
		}
		return s, p.errorf("unexpected %q inside [...]: expected \"]\"", p.peekRune())
	}
	return s, nil
}

// parseSelectors reads an index, a slice, a quoted name, or a union of
// indexes and names.
func (p *pathParser) parseSelectors() (segment, error) {
	var items []segment
	for {
		p.skipSpace()
		var s segment
		switch c := p.peek(); {
		case c == '"' || c == '\'':
			name, err := p.parseString()
			if err != nil {
				return s, err
			}
			s = segment{kind: segName, name: name}
		case c == '-' || c == ':' || c >= '0' && c <= '9':
			var err error
			if s, err = p.parseIndexOrSlice(); err != nil {
				return s, err
			}
			if s.kind == segSlice && len(items) == 0 && p.peekAfterSpace() != ',' {
				return s, nil
			}
			if s.kind == segSlice {
				return s, p.errorf("a slice cannot be part of a union")
			}
		case c == 0:
			return s, p.errorf("unterminated \"[\": close it with \"]\"")
		default:
			return s, p.errorf("unexpected %q inside [...]: expected an index, a slice, a quoted name, \"*\" or \"?\"", p.peekRune())
		}
		items = append(items, s)
		p.skipSpace()
		if !p.accept(",") {
			break
		}
	}
	if len(items) == 1 {
		return items[0], nil
	}
	return segment{kind: segUnion, union: items}, nil
}

func (p *pathParser) peekAfterSpace() byte {
	save := p.pos
	p.skipSpace()
	c := p.peek()
	p.pos = save
	return c
}

func (p *pathParser) parseInt() (int, bool, error) {
	start := p.pos
	if p.peek() == '-' {
		p.pos++
	}
	digits := p.pos
	for !p.eof() && p.peek() >= '0' && p.peek() <= '9' {
		p.pos++
	}
	if p.pos == digits {
		p.pos = start
		return 0, false, nil
	}
	num := p.src[start:p.pos]
	n, err := strconv.Atoi(num)
	if err != nil {
		p.pos = start
		return 0, false, p.errorf("index %s is out of range", num)
	}
	return n, true, nil
}

func (p *pathParser) parseIndexOrSlice() (segment, error) {
	n, ok, err := p.parseInt()
	if err != nil {
		return segment{}, err
	}
	p.skipSpace()
	if !p.accept(":") {
		if !ok {
			return segment{}, p.errorf("expected a number")
		}
		return segment{kind: segIndex, index: n}, nil
	}
	s := segment{kind: segSlice}
	if ok {
		s.start = &n
	}
	p.skipSpace()
	m, ok, err := p.parseInt()
	if err != nil {
		return s, err
	}
	if ok {
		s.end = &m
	}
	return s, nil
}

// parseString reads a single- or double-quoted string with JSON-style escapes.
func (p *pathParser) parseString() (string, error) {
	q := p.src[p.pos]
	open := p.pos
	p.pos++
	var b strings.Builder
	for !p.eof() {
		c := p.src[p.pos]
		switch {
		case c == q:
			p.pos++
			return b.String(), nil
		case c == '\\':
			p.pos++
			if p.eof() {
				break
			}
			e := p.src[p.pos]
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\', '\'', '"', '/':
				b.WriteByte(e)
			default:
				return "", p.errorf("unknown escape \\%c in a quoted name", e)
			}
			p.pos++
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
	p.pos = open
	return "", p.errorf("unterminated string: close it with %c", q)
}

// Filter expressions.

type expr interface {
	truth(ctx evalCtx) bool
}

type evalCtx struct {
	root, cur any
}

type orExpr struct{ a, b expr }
type andExpr struct{ a, b expr }
type notExpr struct{ e expr }

func (e orExpr) truth(c evalCtx) bool  { return e.a.truth(c) || e.b.truth(c) }
func (e andExpr) truth(c evalCtx) bool { return e.a.truth(c) && e.b.truth(c) }
func (e notExpr) truth(c evalCtx) bool { return !e.e.truth(c) }

// operand is a literal or a path relative to @ (the child) or $ (the root).
type operand struct {
	lit      any
	isPath   bool
	fromRoot bool
	segs     []segment
}

func (o operand) values(c evalCtx) []any {
	if !o.isPath {
		return []any{o.lit}
	}
	start := c.cur
	if o.fromRoot {
		start = c.root
	}
	nodes, _ := evalSegments(c.root, []node{{val: start}}, o.segs, false)
	vals := make([]any, len(nodes))
	for i, n := range nodes {
		vals[i] = n.val
	}
	return vals
}

type truthExpr struct{ o operand }

func (e truthExpr) truth(c evalCtx) bool {
	for _, v := range e.o.values(c) {
		if v != nil && v != false {
			return true
		}
	}
	return false
}

type cmpExpr struct {
	op   string
	l, r operand
	re   *regexp.Regexp
}

func (e cmpExpr) truth(c evalCtx) bool {
	if e.op == "!=" {
		return !cmpExpr{op: "==", l: e.l, r: e.r}.truth(c)
	}
	ls, rs := e.l.values(c), e.r.values(c)
	for _, l := range ls {
		if e.re != nil {
			if s, ok := l.(string); ok && e.re.MatchString(s) {
				return true
			}
			continue
		}
		for _, r := range rs {
			if compare(e.op, l, r) {
				return true
			}
		}
	}
	return false
}

func compare(op string, l, r any) bool {
	if op == "==" {
		return equal(l, r)
	}
	if ln, ok := l.(json.Number); ok {
		rn, ok := r.(json.Number)
		if !ok {
			return false
		}
		a, err1 := ln.Float64()
		b, err2 := rn.Float64()
		if err1 != nil || err2 != nil {
			return false
		}
		return order(op, cmp3(a < b, a > b))
	}
	if ls, ok := l.(string); ok {
		rs, ok := r.(string)
		if !ok {
			return false
		}
		return order(op, strings.Compare(ls, rs))
	}
	return false
}

func cmp3(less, more bool) int {
	switch {
	case less:
		return -1
	case more:
		return 1
	}
	return 0
}

func order(op string, c int) bool {
	switch op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}

const maxExprDepth = 64

func (p *pathParser) parseExpr() (expr, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxExprDepth {
		return nil, p.errorf("filter nested deeper than %d levels", maxExprDepth)
	}
	a, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for {
		p.skipSpace()
		if !p.accept("||") {
			return a, nil
		}
		b, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		a = orExpr{a, b}
	}
}

func (p *pathParser) parseAnd() (expr, error) {
	a, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	for {
		p.skipSpace()
		if !p.accept("&&") {
			return a, nil
		}
		b, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		a = andExpr{a, b}
	}
}

func (p *pathParser) parseNot() (expr, error) {
	p.skipSpace()
	if p.peek() == '!' && !strings.HasPrefix(p.src[p.pos:], "!=") {
		p.pos++
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > maxExprDepth {
			return nil, p.errorf("filter nested deeper than %d levels", maxExprDepth)
		}
		e, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		return notExpr{e}, nil
	}
	if p.accept("(") {
		e, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if !p.accept(")") {
			return nil, p.errorf("expected \")\" to close the group")
		}
		return e, nil
	}
	return p.parseComparison()
}

var ops = []string{"==", "!=", "<=", ">=", "=~", "<", ">"}

func (p *pathParser) parseComparison() (expr, error) {
	l, err := p.parseOperand()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	for _, op := range ops {
		if !p.accept(op) {
			continue
		}
		p.skipSpace()
		at := p.pos
		r, err := p.parseOperand()
		if err != nil {
			return nil, err
		}
		e := cmpExpr{op: op, l: l, r: r}
		if op == "=~" {
			s, ok := r.lit.(string)
			if r.isPath || !ok {
				p.pos = at
				return nil, p.errorf("=~ takes a quoted regular expression on its right")
			}
			re, err := regexp.Compile(s)
			if err != nil {
				p.pos = at
				return nil, p.errorf("bad regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			}
			e.re = re
		}
		return e, nil
	}
	if p.peek() == '=' {
		return nil, p.errorf("use \"==\" to compare")
	}
	return truthExpr{l}, nil
}

func (p *pathParser) parseOperand() (operand, error) {
	p.skipSpace()
	switch c := p.peek(); {
	case c == '@' || c == '$':
		p.pos++
		segs, err := p.parseSegments(false)
		if err != nil {
			return operand{}, err
		}
		return operand{isPath: true, fromRoot: c == '$', segs: segs}, nil
	case c == '"' || c == '\'':
		s, err := p.parseString()
		return operand{lit: s}, err
	case c == '-' || c >= '0' && c <= '9':
		start := p.pos
		if c == '-' {
			p.pos++
		}
		for !p.eof() && strings.IndexByte("0123456789.eE+-", p.peek()) >= 0 {
			p.pos++
		}
		num := p.src[start:p.pos]
		if _, err := strconv.ParseFloat(num, 64); err != nil {
			p.pos = start
			return operand{}, p.errorf("bad number %q", num)
		}
		return operand{lit: json.Number(num)}, nil
	case p.accept("true"):
		return operand{lit: true}, nil
	case p.accept("false"):
		return operand{lit: false}, nil
	case p.accept("null"):
		return operand{lit: nil}, nil
	case c == 0:
		return operand{}, p.errorf("filter ends early: expected @.field, a quoted string, a number, true, false or null")
	}
	return operand{}, p.errorf("unexpected %q in filter: expected @.field, a quoted string, a number, true, false or null", p.peekRune())
}

// Evaluation.

// node is a selected value and its normalized location, e.g. $.items[2].name.
type node struct {
	val any
	loc string
}

// maxNodes bounds how many nodes one evaluation may produce.
const maxNodes = 1 << 20

var errTooManyNodes = errors.New("the path selects more than 1048576 nodes: narrow it")

// Eval applies p to root and returns every selected node, in document order.
func (p *Path) Eval(root any) ([]node, error) {
	return evalSegments(root, []node{{val: root, loc: "$"}}, p.segs, true)
}

func evalSegments(root any, cur []node, segs []segment, withLoc bool) ([]node, error) {
	for _, s := range segs {
		var next []node
		for _, n := range cur {
			var err error
			if s.recursive {
				err = descend(n, withLoc, func(d node) error {
					var err error
					next, err = s.apply(root, d, next, withLoc)
					return err
				})
			} else {
				next, err = s.apply(root, n, next, withLoc)
			}
			if err != nil {
				return nil, err
			}
		}
		cur = next
	}
	return cur, nil
}

// descend calls f on n and every value below it, parents first.
func descend(n node, withLoc bool, f func(node) error) error {
	if err := f(n); err != nil {
		return err
	}
	switch t := n.val.(type) {
	case []any:
		for i, e := range t {
			if err := descend(node{e, indexLoc(n.loc, i, withLoc)}, withLoc, f); err != nil {
				return err
			}
		}
	case *object:
		for _, m := range t.members {
			if err := descend(node{m.val, nameLoc(n.loc, m.key, withLoc)}, withLoc, f); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s segment) apply(root any, n node, out []node, withLoc bool) ([]node, error) {
	if len(out) >= maxNodes {
		return nil, errTooManyNodes
	}
	switch s.kind {
	case segName:
		if o, ok := n.val.(*object); ok {
			if v, ok := o.get(s.name); ok {
				out = append(out, node{v, nameLoc(n.loc, s.name, withLoc)})
			}
		}
	case segIndex:
		if a, ok := n.val.([]any); ok {
			i := s.index
			if i < 0 {
				i += len(a)
			}
			if i >= 0 && i < len(a) {
				out = append(out, node{a[i], indexLoc(n.loc, i, withLoc)})
			}
		}
	case segSlice:
		if a, ok := n.val.([]any); ok {
			lo, hi := bound(s.start, 0, len(a)), bound(s.end, len(a), len(a))
			for i := lo; i < hi; i++ {
				out = append(out, node{a[i], indexLoc(n.loc, i, withLoc)})
			}
		}
	case segWild:
		out = children(n, out, withLoc, nil)
	case segUnion:
		for _, u := range s.union {
			var err error
			if out, err = u.apply(root, n, out, withLoc); err != nil {
				return nil, err
			}
		}
	case segFilter:
		out = children(n, out, withLoc, func(v any) bool { return s.filter.truth(evalCtx{root: root, cur: v}) })
	}
	return out, nil
}

func children(n node, out []node, withLoc bool, keep func(any) bool) []node {
	switch t := n.val.(type) {
	case []any:
		for i, e := range t {
			if keep == nil || keep(e) {
				out = append(out, node{e, indexLoc(n.loc, i, withLoc)})
			}
		}
	case *object:
		for _, m := range t.members {
			if keep == nil || keep(m.val) {
				out = append(out, node{m.val, nameLoc(n.loc, m.key, withLoc)})
			}
		}
	}
	return out
}

func bound(p *int, def, n int) int {
	if p == nil {
		return def
	}
	i := *p
	if i < 0 {
		i += n
	}
	return max(0, min(i, n))
}

func indexLoc(loc string, i int, withLoc bool) string {
	if !withLoc {
		return ""
	}
	return loc + "[" + strconv.Itoa(i) + "]"
}

func nameLoc(loc, name string, withLoc bool) string {
	if !withLoc {
		return ""
	}
	if isIdent(name) {
		return loc + "." + name
	}
	return loc + "[" + string(appendString(nil, name)) + "]"
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
