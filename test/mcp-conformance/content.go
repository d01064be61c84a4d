package main

import (
	_ "embed"
	"encoding/json"
)

// The media the content tools return, also served as pack resources.
var (
	//go:embed resources/pixel.png
	pixelPNG []byte
	//go:embed resources/beep.wav
	beepWAV []byte
)

// block is one MCP content block of a tool result ("output": "content" in
// tools.json, docs/abi.md §1.4). []byte fields marshal to base64.
type block struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	Data     []byte    `json:"data,omitempty"`
	MIMEType string    `json:"mimeType,omitempty"`
	Resource *resource `json:"resource,omitempty"`
}

type resource struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
}

func contentResult(blocks ...block) ([]byte, error) {
	return json.Marshal(map[string][]block{"content": blocks})
}

var (
	imageBlock    = block{Type: "image", Data: pixelPNG, MIMEType: "image/png"}
	audioBlock    = block{Type: "audio", Data: beepWAV, MIMEType: "audio/wav"}
	embeddedBlock = block{Type: "resource", Resource: &resource{URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}}
)

func imageContent([]byte) ([]byte, error)     { return contentResult(imageBlock) }
func audioContent([]byte) ([]byte, error)     { return contentResult(audioBlock) }
func embeddedResource([]byte) ([]byte, error) { return contentResult(embeddedBlock) }

func multipleContentTypes([]byte) ([]byte, error) {
	return contentResult(block{Type: "text", Text: "Multiple content types test:"}, imageBlock,
		block{Type: "resource", Resource: &resource{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}})
}
