package main

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Each tool takes the JSON arguments the runtime validated against its
// input_schema and returns the JSON result, or an error the model can act on.
// They are plain functions so that `go test` runs them natively; exports.go
// wires them to Extism exports inside the WebAssembly build.

const (
	defaultLimit = 1000
	maxLimit     = 100000
)

func toolError(format string, args ...any) error {
	return fmt.Errorf("json-tools: "+format, args...)
}

func parseArgs(input []byte) (*object, error) {
	v, err := parseJSON(input)
	if err != nil {
		return nil, toolError("arguments are not valid JSON: %v", err)
	}
	o, ok := v.(*object)
	if !ok {
		return nil, toolError("arguments must be a JSON object, got %s", typeName(v))
	}
	return o, nil
}

// document returns the JSON document to work on: "data" (any JSON value) or
// "text" (a string holding JSON, e.g. the contents of a file).
func document(a *object) (any, error) {
	data, hasData := a.get("data")
	text, hasText := a.get("text")
	switch {
	case hasData && hasText:
		return nil, toolError("pass either data or text, not both")
	case hasData:
		return data, nil
	case hasText:
		s, ok := text.(string)
		if !ok {
			return nil, toolError("text must be a string holding JSON; to pass a JSON value directly use data")
		}
		v, err := parseJSON([]byte(s))
		if err != nil {
			return nil, toolError("text is not valid JSON: %w; validate_json explains syntax errors", err)
		}
		return v, nil
	}
	return nil, toolError("no document: pass data (a JSON value) or text (a string holding JSON)")
}

func stringArg(a *object, key string, required bool) (string, bool, error) {
	v, ok := a.get(key)
	if !ok {
		if required {
			return "", false, toolError("missing %s", key)
		}
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", false, toolError("%s must be a string, got %s", key, typeName(v))
	}
	return s, true, nil
}

func intArg(a *object, key string, def, lo, hi int) (int, error) {
	v, ok := a.get(key)
	if !ok {
		return def, nil
	}
	n, isNum := v.(json.Number)
	i, err := strconv.Atoi(string(n))
	if !isNum || err != nil || i < lo || i > hi {
		return 0, toolError("%s must be a whole number from %d to %d", key, lo, hi)
	}
	return i, nil
}

func boolArg(a *object, key string) (bool, error) {
	v, ok := a.get(key)
	if !ok {
		return false, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, toolError("%s must be true or false", key)
	}
	return b, nil
}

// query: {data|text, path, limit?, locations?} → {count, results, locations?, truncated?}
func query(input []byte) ([]byte, error) {
	a, err := parseArgs(input)
	if err != nil {
		return nil, err
	}
	doc, err := document(a)
	if err != nil {
		return nil, err
	}
	src, _, err := stringArg(a, "path", true)
	if err != nil {
		return nil, err
	}
	limit, err := intArg(a, "limit", defaultLimit, 1, maxLimit)
	if err != nil {
		return nil, err
	}
	withLoc, err := boolArg(a, "locations")
	if err != nil {
		return nil, err
	}
	p, err := ParsePath(src)
	if err != nil {
		return nil, toolError("%v", err)
	}
	vals, err := p.Eval(doc)
	if err != nil {
		return nil, toolError("%v", err)
	}
	out := obj("count", json.Number(strconv.Itoa(len(vals))))
	shown := vals[:min(limit, len(vals))]
	out.set("results", shown)
	if withLoc {
		locs, err := p.Locations(doc)
		if err != nil {
			return nil, err
		}
		out.set("locations", locs[:len(shown)])
	}
	if len(shown) < len(vals) {
		out.set("truncated", true)
	}
	return appendJSON(nil, out), nil
}

// transform: {data|text, at?, steps} → {result}
func transform(input []byte) ([]byte, error) {
	a, err := parseArgs(input)
	if err != nil {
		return nil, err
	}
	doc, err := document(a)
	if err != nil {
		return nil, err
	}
	if at, ok, err := stringArg(a, "at", false); err != nil {
		return nil, err
	} else if ok {
		p, err := ParsePath(at)
		if err != nil {
			return nil, toolError("at: %v", err)
		}
		vals, err := p.Eval(doc)
		if err != nil {
			return nil, toolError("at: %v", err)
		}
		switch {
		case len(vals) == 0:
			return nil, toolError("at: path %q selects nothing in the document; check it with query first", at)
		case len(vals) == 1 && p.simple():
			doc = vals[0]
		default:
			doc = vals
		}
	}
	rawSteps, ok := a.get("steps")
	if !ok {
		return nil, toolError("missing steps: a list such as [{\"pick\": [\".id\", \".name\"]}]")
	}
	steps, err := parseSteps(rawSteps)
	if err != nil {
		return nil, toolError("%v", err)
	}
	res, err := applySteps(doc, steps)
	if err != nil {
		return nil, toolError("%v", err)
	}
	return appendJSON(nil, obj("result", res)), nil
}
