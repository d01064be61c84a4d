package chat

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
)

// uploader approves a call and, when the call asks it a question, puts a
// file in the workspace first: the person uploading while the call runs.
type uploader struct {
	person
	workspace string
}

func (u *uploader) Ask(ctx context.Context, q capability.Question) (capability.Answer, error) {
	if err := os.WriteFile(filepath.Join(u.workspace, "upload.txt"), []byte("the person's file"), 0o644); err != nil {
		return capability.Answer{}, err
	}
	return capability.Answer{Action: capability.ActionDecline}, nil
}

// TestArtifactsAreTheCallsOwn: a file the person puts in the workspace
// while a call runs is not the call's artifact: not on its card, not in
// the result the model is sent, not in the chat's artifacts. What the call
// wrote is.
func TestArtifactsAreTheCallsOwn(t *testing.T) {
	h := newHarness(t, install{filepath.Join("testdata", "asknote"): {capability.AskPerson}})
	s := h.open(Options{Attach: []string{"asknote"}})
	ctx := context.Background()
	if r, _ := s.Call(ctx, ToolEnableTools, json.RawMessage(`{"pack_id":"asknote"}`), &person{}); r.IsError {
		t.Fatal(r.Content)
	}
	r, err := s.Call(ctx, "asknote__note", json.RawMessage(`{}`), &uploader{workspace: s.Workspace()})
	if err != nil || r.IsError {
		t.Fatal(r, err)
	}
	if _, err := os.Stat(filepath.Join(s.Workspace(), "upload.txt")); err != nil {
		t.Fatalf("the upload did not happen during the call: %v", err)
	}
	paths := func(arts []Artifact) []string {
		var out []string
		for _, a := range arts {
			out = append(out, a.Path)
		}
		return out
	}
	if got := paths(r.Artifacts); !slices.Equal(got, []string{"note.md"}) {
		t.Errorf("the call's artifacts are %v, want [note.md]", got)
	}
	if strings.Contains(r.Content, "upload.txt") {
		t.Errorf("the model is told the call made the upload: %s", r.Content)
	}
	stored, err := s.Artifacts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(stored); !slices.Equal(got, []string{"note.md"}) {
		t.Errorf("the chat's artifacts are %v, want [note.md]", got)
	}
}
