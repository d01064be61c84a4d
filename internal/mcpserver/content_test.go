package mcpserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/png"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mediaTools is echo-pack's echo as a content tool: it returns its
// arguments, so a test passes the blocks it wants back.
const mediaTools = `[{"name": "show", "description": "Returns the content blocks it is given.", "output": "content",
	"input_schema": {"type": "object"}, "run": {"wasm": "bin/echo.wasm", "function": "echo"}}]`

// TestToolReturnsContentBlocks: a tool that returns content blocks gives
// the MCP client an image, audio and embedded resources with their types,
// and a malformed block is a tool error the client can read.
func TestToolReturnsContentBlocks(t *testing.T) {
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	pic := pngBuf.Bytes()
	wav := append([]byte("RIFF\x04\x00\x00\x00WAVE"), make([]byte, 8)...)
	e := newEnv(t, "[approval]\nauto_approve = [\"media__show\"]\n")
	e.installCopy(t, "media", mediaTools)
	e.srv.cfg.Attach = []string{"media"}
	e.srv.cfg.Tools = []string{"media"}
	cs := e.connect(t, "viewer", nil)

	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "show", Arguments: map[string]any{"content": []any{
		map[string]any{"type": "text", "text": "a picture"},
		map[string]any{"type": "image", "data": base64.StdEncoding.EncodeToString(pic), "mimeType": "image/png"},
		map[string]any{"type": "audio", "data": base64.StdEncoding.EncodeToString(wav), "mimeType": "audio/wav"},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///notes.md", "mimeType": "text/markdown", "text": "# notes"}},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///x.bin", "blob": "AAEC"}},
	}}})
	if err != nil || res.IsError {
		t.Fatalf("show: %+v %v", res, err)
	}
	if len(res.Content) != 5 {
		t.Fatalf("content = %d blocks, want 5", len(res.Content))
	}
	if c, ok := res.Content[0].(*mcp.TextContent); !ok || c.Text != "a picture" {
		t.Errorf("block 1 = %#v, want the text", res.Content[0])
	}
	if c, ok := res.Content[1].(*mcp.ImageContent); !ok || c.MIMEType != "image/png" || !bytes.Equal(c.Data, pic) {
		t.Errorf("block 2 = %#v, want the PNG", res.Content[1])
	}
	if c, ok := res.Content[2].(*mcp.AudioContent); !ok || c.MIMEType != "audio/wav" || !bytes.Equal(c.Data, wav) {
		t.Errorf("block 3 = %#v, want the WAV", res.Content[2])
	}
	if c, ok := res.Content[3].(*mcp.EmbeddedResource); !ok || c.Resource.URI != "file:///notes.md" || c.Resource.Text != "# notes" || c.Resource.MIMEType != "text/markdown" {
		t.Errorf("block 4 = %#v, want the text resource", res.Content[3])
	}
	if c, ok := res.Content[4].(*mcp.EmbeddedResource); !ok || !bytes.Equal(c.Resource.Blob, []byte{0, 1, 2}) {
		t.Errorf("block 5 = %#v, want the blob resource", res.Content[4])
	}

	text, isErr := callText(t, cs, "show", map[string]any{"content": []any{
		map[string]any{"type": "image", "data": base64.StdEncoding.EncodeToString([]byte("<svg onload=alert(1)>")), "mimeType": "image/svg+xml"},
	}})
	if !isErr || !strings.Contains(text, "tool_failed") || !strings.Contains(text, "content block 1") || !strings.Contains(text, "image/svg+xml") {
		t.Errorf("an SVG image = %q (error %v), want a tool error naming the block and the type", text, isErr)
	}
	rows := e.auditRows(t) // flat mode's enable_tools, then the two calls
	if n := len(rows); n < 2 || rows[n-2]["tool"] != "show" || rows[n-2]["status"] != "ok" || rows[n-1]["status"] != "tool_error" {
		t.Errorf("audit rows = %v, want show ok then show tool_error", rows)
	}
}

// TestSchemaTheSDKRefusesIsLeftOut: a pack's input schema that the MCP SDK
// refuses when a tool is added (it panics on an x-mcp-header that is not a
// non-empty string on a primitive property) does not take the server down:
// that tool is left out and every other tool is served.
func TestSchemaTheSDKRefusesIsLeftOut(t *testing.T) {
	for _, header := range []string{`5`, `""`, `"X-Ok"`} {
		t.Run(header, func(t *testing.T) {
			e := newEnv(t, "")
			e.installCopy(t, "headers", `[{"name": "echo", "description": "Returns its arguments unchanged.",
				"input_schema": {"type": "object", "properties": {"message": {"type": "object", "x-mcp-header": `+header+`}}},
				"run": {"wasm": "bin/echo.wasm", "function": "echo"}}]`)
			e.srv.cfg.Attach = []string{"echo-pack", "headers"}
			e.srv.cfg.Tools = []string{"echo-pack", "headers"}
			cs := e.connect(t, "headers", nil)
			names := toolNames(t, cs)
			if !slices.Contains(names, "echo-pack__echo") || !slices.Contains(names, "open_docs") || slices.Contains(names, "headers__echo") {
				t.Fatalf("tools = %v, want echo-pack's and the base tools, not headers__echo", names)
			}
		})
	}
}
