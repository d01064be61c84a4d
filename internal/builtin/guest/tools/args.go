// Package tools holds the logic of the built-in packs' offline tools
// (current-time, session-file-system, stateless-todo-list, test-math,
// test-weather) as plain Go: cmd/builtins exports each as an Extism
// function, and go test runs them natively.
package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid marks an argument the tool cannot use; the host already
// checked the arguments against the tool's schema, so this is a second line.
var ErrInvalid = errors.New("invalid argument")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// decode reads the JSON arguments into v, refusing unknown fields.
func decode(input []byte, v any) error {
	if len(bytes.TrimSpace(input)) == 0 {
		input = []byte("{}")
	}
	d := json.NewDecoder(bytes.NewReader(input))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return invalid("arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// Tool is one tool: JSON arguments in, JSON result out.
type Tool func(input []byte) ([]byte, error)

// wrap turns a typed function into a Tool.
func wrap[A, R any](f func(A) (R, error)) Tool {
	return func(input []byte) ([]byte, error) {
		var a A
		if err := decode(input, &a); err != nil {
			return nil, err
		}
		r, err := f(a)
		if err != nil {
			return nil, err
		}
		return json.Marshal(r)
	}
}
