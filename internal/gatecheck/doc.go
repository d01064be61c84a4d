// Package gatecheck holds the tests that prove a tool call cannot run
// without the gate's decision, by any path (issue 4): a static walk of every
// package of the module for the call sites that run guest or native code,
// and dynamic checks of every entry point a person or a model can reach;
// and that a pack is committed into a state directory only through the
// installer in internal/app (issue 24).
// It has no code of its own; `go test ./internal/gatecheck` is the proof.
package gatecheck
