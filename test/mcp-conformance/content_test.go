package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestContentTools(t *testing.T) {
	for _, c := range []struct {
		name  string
		tool  func([]byte) ([]byte, error)
		types []string
	}{
		{"image", imageContent, []string{"image"}},
		{"audio", audioContent, []string{"audio"}},
		{"embedded", embeddedResource, []string{"resource"}},
		{"mixed", multipleContentTypes, []string{"text", "image", "resource"}},
	} {
		out, err := c.tool(nil)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Content []struct {
				Type string `json:"type"`
				Data []byte `json:"data"`
			} `json:"content"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(got.Content) != len(c.types) {
			t.Fatalf("%s: %d blocks, want %d", c.name, len(got.Content), len(c.types))
		}
		for i, b := range got.Content {
			if b.Type != c.types[i] {
				t.Errorf("%s block %d: type %s, want %s", c.name, i, b.Type, c.types[i])
			}
		}
	}
	if !bytes.HasPrefix(pixelPNG, []byte("\x89PNG")) || !bytes.HasPrefix(beepWAV, []byte("RIFF")) {
		t.Error("the embedded media lost their signatures")
	}
}
