//go:build !noschema

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// This file is left out of bin/json-tools.wasm (-tags noschema): the
// library's package initializer compiles its metaschemas in every new
// instance, so only validate_json's module, bin/json-schema.wasm, has it.
//
// The schema check is github.com/santhosh-tekuri/jsonschema (drafts 4, 6, 7,
// 2019-09 and 2020-12, the draft picked by $schema, 2020-12 when it has
// none). The pack only flattens the library's error tree into the failed
// rules the model reads. References are resolved inside the schema only:
// the module has no network and no files, so a remote $ref is a schema error.

// SchemaError is one failed rule: where in the instance (a JSON Pointer),
// which keyword, and why.
type SchemaError struct {
	Pointer string `json:"pointer"`
	Keyword string `json:"keyword"`
	Message string `json:"message"`
}

const maxSchemaErrors = 100

// schemaURL names the schema inside the compiler; nothing is fetched from it.
const schemaURL = "urn:json-tools:schema"

var printer = message.NewPrinter(language.English)

// noLoader refuses every external reference.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("$ref %s is outside the schema: json-tools has no network or files; put the referenced schema under $defs", url)
}

// validateSchema checks inst against schema. A schema that is itself broken
// (a bad regex, a $ref that points nowhere) is an error; failed rules are not.
func validateSchema(schema, inst any) ([]SchemaError, error) {
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, plain(schema)); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	err = sch.Validate(plain(inst))
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, err
	}
	var out []SchemaError
	leaves(ve, &out)
	return out, nil
}

// leaves appends the failed rules at the bottom of the error tree: "allOf
// failed" says less than the rule inside it that failed.
func leaves(e *jsonschema.ValidationError, out *[]SchemaError) {
	if len(*out) >= maxSchemaErrors {
		return
	}
	kw := ""
	switch e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf, *kind.Contains:
		// Alternatives: each failed, and saying why each did helps less than
		// saying none matched.
	case *kind.Not:
		kw = "not"
	case *kind.FalseSchema:
		kw = "false"
	default:
		if len(e.Causes) == 0 {
			break
		}
		for _, c := range e.Causes {
			leaves(c, out)
		}
		return
	}
	ptr := "/"
	if len(e.InstanceLocation) > 0 {
		parts := make([]string, len(e.InstanceLocation))
		for i, p := range e.InstanceLocation {
			parts[i] = strings.NewReplacer("~", "~0", "/", "~1").Replace(p)
		}
		ptr = "/" + strings.Join(parts, "/")
	}
	if path := e.ErrorKind.KeywordPath(); kw == "" && len(path) > 0 {
		kw = path[0]
	}
	*out = append(*out, SchemaError{Pointer: ptr, Keyword: kw, Message: e.ErrorKind.LocalizedString(printer)})
}

// plain turns an order-keeping document into the maps the library reads;
// numbers stay json.Number, so no digit is lost.
func plain(v any) any {
	switch v := v.(type) {
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = plain(e)
		}
		return out
	case *object:
		out := make(map[string]any, len(v.members))
		for _, m := range v.members {
			out[m.key] = plain(m.val)
		}
		return out
	}
	return v
}

// validateJSON: {text|data, schema?} → {valid, syntax_error?, errors?}
// An invalid document is a successful answer ("valid": false), not a tool error.
func validateJSON(input []byte) ([]byte, error) {
	a, err := parseArgs(input)
	if err != nil {
		return nil, err
	}
	doc, err := document(a)
	var se *SyntaxError
	if errors.As(err, &se) {
		syn := obj("line", json.Number(strconv.Itoa(se.Line)), "column", json.Number(strconv.Itoa(se.Column)), "message", se.Msg)
		if se.Hint != "" {
			syn.set("hint", se.Hint)
		}
		return appendJSON(nil, obj("valid", false, "syntax_error", syn)), nil
	}
	if err != nil {
		return nil, err
	}
	out := obj("valid", true)
	schema, ok := a.get("schema")
	if !ok {
		return appendJSON(nil, out), nil
	}
	errs, err := validateSchema(schema, doc)
	if err != nil {
		return nil, toolError("%v", err)
	}
	if len(errs) > 0 {
		out.set("valid", false)
		list := make([]any, len(errs))
		for i, e := range errs {
			ptr := e.Pointer
			if ptr == "" {
				ptr = "/"
			}
			list[i] = obj("pointer", ptr, "keyword", e.Keyword, "message", e.Message)
		}
		out.set("errors", list)
	}
	return appendJSON(nil, out), nil
}
