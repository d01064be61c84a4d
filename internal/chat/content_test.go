package chat

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/runtime"
)

// mediaPack's show returns the content blocks it is given (the web app's
// test pack).
var mediaPack = filepath.Join("..", "web", "testdata", "media")

// TestContentToolForTheModel: a content tool's blocks come back whole for
// the front ends, and the model is told the text (a text file's too) and
// what each other block is, never its bytes.
func TestContentToolForTheModel(t *testing.T) {
	h := newHarness(t, install{mediaPack: nil})
	s := h.open(Options{Attach: []string{"media"}})
	if r, err := s.Call(context.Background(), ToolEnableTools, json.RawMessage(`{"pack_id":"media"}`), &person{}); err != nil || r.IsError {
		t.Fatal(r, err)
	}
	pic := base64.StdEncoding.EncodeToString([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))
	args := `{"content":[{"type":"text","text":"a dot"},{"type":"image","data":"` + pic + `","mimeType":"image/gif"},` +
		`{"type":"resource","resource":{"uri":"file:///a.csv","mimeType":"text/csv","text":"x,y"}}]}`
	r, err := s.Call(context.Background(), "media__show", json.RawMessage(args), &person{})
	if err != nil || r.IsError {
		t.Fatal(r, err)
	}
	if len(r.Blocks) != 3 || r.Blocks[1].Type != runtime.BlockImage {
		t.Fatalf("blocks = %+v, want text, image, resource", r.Blocks)
	}
	want := `{"result":{"content":[{"text":"a dot","type":"text"},` +
		`{"description":"[image image/gif, 14 B] (shown to the person, not to you)","type":"image"},` +
		`{"mimeType":"text/csv","text":"x,y","type":"resource","uri":"file:///a.csv"}]}}`
	if r.Content != want {
		t.Fatalf("the model gets\n%s\nwant\n%s", r.Content, want)
	}
	if strings.Contains(r.Content, pic) {
		t.Fatal("the model was sent the image's bytes")
	}
}
