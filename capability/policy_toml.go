package capability

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlError turns a go-toml decoding error into a one-line *PolicyError with
// the line it points at.
func tomlError(file string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		e := strict.Errors[0]
		line, _ := e.Position()
		key := []string(e.Key())
		where := "at the top level"
		if len(key) > 1 {
			where = "in [" + strings.Join(key[:len(key)-1], ".") + "]"
		}
		return &PolicyError{File: file, Line: line, Msg: fmt.Sprintf("unknown key %q %s: fix its spelling or remove it (known keys: %s)",
			strings.Join(key, "."), where, strings.Join(knownKeys(key[:len(key)-1]), ", "))}
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, _ := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if m := typeErrRE.FindStringSubmatch(msg); m != nil {
			msg = "a TOML " + m[1] + " where " + goTypeWords(m[2]) + " belongs"
		}
		if k := de.Key(); len(k) > 0 {
			msg = fmt.Sprintf("key %s: %s", strings.Join(k, "."), msg)
		}
		return &PolicyError{File: file, Line: line, Msg: oneLine(msg) + ": fix the TOML at this line"}
	}
	return &PolicyError{File: file, Msg: oneLine(err.Error()) + ": fix the TOML"}
}

// typeErrRE matches go-toml's type mismatch message, whose Go type names mean
// nothing to the person editing the file.
var typeErrRE = regexp.MustCompile(`cannot decode TOML (\S+) into .* of type (\S+)`)

func goTypeWords(t string) string {
	switch strings.TrimPrefix(t, "*") {
	case "[]string":
		return `a list of strings (["a", "b"])`
	case "string":
		return "a string"
	case "int", "int64":
		return "an integer"
	case "[]capability.preapproveItem":
		return "[[preapprove]] tables"
	}
	return "a table"
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// knownKeys lists the keys a table of the policy file accepts, from the
// struct tags, so an unknown-key error can say what was meant.
func knownKeys(path []string) []string {
	t := reflect.TypeFor[policyFile]()
	for _, part := range path {
		f, ok := fieldByTag(t, part)
		if !ok {
			return nil
		}
		t = f.Type
		for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
	}
	var keys []string
	for f := range t.Fields() {
		keys = append(keys, tagName(f))
	}
	return keys
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for f := range t.Fields() {
		if tagName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func tagName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	return name
}

// lineIndex maps dotted key paths to the line they are written on:
// "ceilings.network" is the key, "ceilings.network[1]" its second element,
// "preapprove[0].grants" a key in the first [[preapprove]] table.
type lineIndex map[string]int

// find returns the line of key, else of its nearest written parent, else 0.
func (li lineIndex) find(key string) int {
	for key != "" {
		if l, ok := li[key]; ok {
			return l
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

// keyLines indexes a document that go-toml has already decoded without
// error, so the parser cannot fail here; if it does, the index is partial and
// errors fall back to a parent's line.
func keyLines(data []byte) lineIndex {
	li := lineIndex{}
	var p unstable.Parser
	p.Reset(data)
	table := ""
	arrays := map[string]int{}
	lineOf := func(n *unstable.Node) int {
		if n == nil || n.Raw.Length == 0 {
			return 0
		}
		return p.Shape(n.Raw).Start.Line
	}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			k, first := joinKey(e.Key())
			if e.Kind == unstable.ArrayTable {
				i := arrays[k]
				arrays[k] = i + 1
				k = fmt.Sprintf("%s[%d]", k, i)
			}
			table = k
			li[k] = lineOf(first)
		case unstable.KeyValue:
			k, first := joinKey(e.Key())
			if table != "" {
				k = table + "." + k
			}
			li[k] = lineOf(first)
			v := e.Value()
			if v.Kind != unstable.Array {
				continue
			}
			i := 0
			for it := v.Children(); it.Next(); {
				c := it.Node()
				if c.Kind == unstable.Comment {
					continue
				}
				if l := lineOf(c); l != 0 {
					li[fmt.Sprintf("%s[%d]", k, i)] = l
				}
				i++
			}
		}
	}
	return li
}

func joinKey(it unstable.Iterator) (string, *unstable.Node) {
	var parts []string
	var first *unstable.Node
	for it.Next() {
		if first == nil {
			first = it.Node()
		}
		parts = append(parts, string(it.Node().Data))
	}
	return strings.Join(parts, "."), first
}
