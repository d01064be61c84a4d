package runtime

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/packs"
)

// tinyPNG is a real 1×1 PNG.
func tinyPNG(tb testing.TB) []byte {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// tinyWAV is a real WAV file holding 4 samples of silence.
func tinyWAV() []byte {
	var b bytes.Buffer
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	w(uint32(36 + 8))
	b.WriteString("WAVEfmt ")
	w(uint32(16))
	w(uint16(1))    // PCM
	w(uint16(1))    // mono
	w(uint32(8000)) // sample rate
	w(uint32(16000))
	w(uint16(2))
	w(uint16(16))
	b.WriteString("data")
	w(uint32(8))
	b.Write(make([]byte, 8))
	return b.Bytes()
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func TestParseContent(t *testing.T) {
	pngB64, wavB64 := b64(tinyPNG(t)), b64(tinyWAV())
	html := b64([]byte("<html><script>alert(1)</script></html>"))
	tests := []struct {
		name    string
		in      string
		want    []Block // when valid
		wantErr string  // a part of the error
		block   int     // the block the error names
	}{
		{name: "text", in: `{"content":[{"type":"text","text":"hello"}]}`, want: []Block{{Type: BlockText, Text: "hello"}}},
		{name: "image and audio", in: `{"content":[{"type":"image","data":"` + pngB64 + `","mimeType":"image/png"},{"type":"audio","data":"` + wavB64 + `","mimeType":"audio/wav"}]}`,
			want: []Block{{Type: BlockImage, MIMEType: "image/png", Data: tinyPNG(t)}, {Type: BlockAudio, MIMEType: "audio/wav", Data: tinyWAV()}}},
		{name: "text resource", in: `{"content":[{"type":"resource","resource":{"uri":"file:///r.csv","mimeType":"text/csv","text":"a,b\n"}}]}`,
			want: []Block{{Type: BlockResource, URI: "file:///r.csv", MIMEType: "text/csv", Text: "a,b\n"}}},
		{name: "blob resource without type", in: `{"content":[{"type":"resource","resource":{"uri":"packs://x/y.bin","blob":"AAEC"}}]}`,
			want: []Block{{Type: BlockResource, URI: "packs://x/y.bin", Data: []byte{0, 1, 2}}}},

		{name: "not an object", in: `[{"type":"text","text":"x"}]`, wantErr: "must be a JSON object"},
		{name: "plain JSON output", in: `{"temperature": 21}`, wantErr: "exactly one key"},
		{name: "extra top-level key", in: `{"content":[{"type":"text","text":"x"}],"isError":true}`, wantErr: "exactly one key"},
		{name: "repeated top-level key", in: `{"content":[],"content":[{"type":"text","text":"x"}]}`, wantErr: `key "content" appears twice`},
		{name: "trailing data", in: `{"content":[{"type":"text","text":"x"}]} {}`, wantErr: "extra data"},
		{name: "content not an array", in: `{"content":"x"}`, wantErr: "JSON array"},
		{name: "content null", in: `{"content":null}`, wantErr: "JSON array"},
		{name: "no blocks", in: `{"content":[]}`, wantErr: "at least one block"},
		{name: "too many blocks", in: `{"content":[` + strings.Repeat(`{"type":"text","text":"x"},`, MaxContentBlocks) + `{"type":"text","text":"x"}]}`, wantErr: "at most 64"},
		{name: "block not an object", in: `{"content":["x"]}`, block: 1, wantErr: "must be a JSON object"},
		{name: "unknown type", in: `{"content":[{"type":"text","text":"x"},{"type":"video","data":"AA=="}]}`, block: 2, wantErr: `type "video"`},
		{name: "type missing", in: `{"content":[{"text":"x"}]}`, block: 1, wantErr: `"type" is missing`},
		{name: "text not a string", in: `{"content":[{"type":"text","text":5}]}`, block: 1, wantErr: `"text" must be a string`},
		{name: "unknown key in a block", in: `{"content":[{"type":"text","text":"x","annotations":{}}]}`, block: 1, wantErr: `unknown key "annotations"`},
		{name: "repeated key in a block", in: `{"content":[{"type":"image","mimeType":"image/png","mimeType":"image/png","data":"` + pngB64 + `"}]}`, block: 1, wantErr: "appears twice"},
		{name: "svg is not an image", in: `{"content":[{"type":"image","data":"` + b64([]byte("<svg/>")) + `","mimeType":"image/svg+xml"}]}`, block: 1, wantErr: `"image/svg+xml" is not allowed`},
		{name: "audio type for an image", in: `{"content":[{"type":"image","data":"` + wavB64 + `","mimeType":"audio/wav"}]}`, block: 1, wantErr: "is not allowed"},
		{name: "html labelled png", in: `{"content":[{"type":"image","data":"` + html + `","mimeType":"image/png"}]}`, block: 1, wantErr: "signature"},
		{name: "png labelled jpeg", in: `{"content":[{"type":"image","data":"` + pngB64 + `","mimeType":"image/jpeg"}]}`, block: 1, wantErr: "signature"},
		{name: "png labelled wav", in: `{"content":[{"type":"audio","data":"` + pngB64 + `","mimeType":"audio/wav"}]}`, block: 1, wantErr: "signature"},
		{name: "bad base64", in: `{"content":[{"type":"image","data":"not base64!","mimeType":"image/png"}]}`, block: 1, wantErr: "not standard base64"},
		{name: "unpadded base64", in: `{"content":[{"type":"resource","resource":{"uri":"file:///a","blob":"AAE"}}]}`, block: 1, wantErr: "not standard base64"},
		{name: "url-safe base64", in: `{"content":[{"type":"resource","resource":{"uri":"file:///a","blob":"_-8="}}]}`, block: 1, wantErr: "not standard base64"},
		{name: "empty data", in: `{"content":[{"type":"image","data":"","mimeType":"image/png"}]}`, block: 1, wantErr: `"data" is empty`},
		{name: "mimeType missing", in: `{"content":[{"type":"audio","data":"` + wavB64 + `"}]}`, block: 1, wantErr: `"mimeType" is missing`},
		{name: "resource with text and blob", in: `{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"x","blob":"AA=="}}]}`, block: 1, wantErr: "exactly one of"},
		{name: "resource with neither", in: `{"content":[{"type":"resource","resource":{"uri":"file:///a"}}]}`, block: 1, wantErr: "exactly one of"},
		{name: "resource with empty text", in: `{"content":[{"type":"resource","resource":{"uri":"file:///a","text":""}}]}`, block: 1, wantErr: `"text" is empty`},
		{name: "resource without a scheme", in: `{"content":[{"type":"resource","resource":{"uri":"report.csv","text":"x"}}]}`, block: 1, wantErr: "no scheme"},
		{name: "javascript uri", in: `{"content":[{"type":"resource","resource":{"uri":"JavaScript:alert(1)","text":"x"}}]}`, block: 1, wantErr: `scheme "javascript"`},
		{name: "data uri", in: `{"content":[{"type":"resource","resource":{"uri":"data:text/html,<b>","text":"x"}}]}`, block: 1, wantErr: `scheme "data"`},
		{name: "resource uri with a newline", in: `{"content":[{"type":"resource","resource":{"uri":"file:///a\nb","text":"x"}}]}`, block: 1, wantErr: "control character"},
		{name: "resource uri too long", in: `{"content":[{"type":"resource","resource":{"uri":"file:///` + strings.Repeat("a", MaxResourceURI) + `","text":"x"}}]}`, block: 1, wantErr: "at most 2048"},
		{name: "resource bad media type", in: `{"content":[{"type":"resource","resource":{"uri":"file:///a","mimeType":"text/","text":"x"}}]}`, block: 1, wantErr: "not a media type"},
		{name: "resource unknown key", in: `{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"x","name":"a"}}]}`, block: 1, wantErr: `unknown key "name"`},
		{name: "resource not an object", in: `{"content":[{"type":"resource","resource":"file:///a"}]}`, block: 1, wantErr: `"resource" must be an object`},
		{name: "resource missing", in: `{"content":[{"type":"resource"}]}`, block: 1, wantErr: `"resource" must be an object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseContent([]byte(tt.in))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseContent: %v", err)
				}
				gotJSON, _ := json.Marshal(got)
				wantJSON, _ := json.Marshal(tt.want)
				if !bytes.Equal(gotJSON, wantJSON) {
					t.Fatalf("got %s, want %s", gotJSON, wantJSON)
				}
				return
			}
			var ce *ContentError
			if !errors.As(err, &ce) || !errors.Is(err, ErrBadContent) || !errors.Is(err, ErrToolFailed) {
				t.Fatalf("err = %v, want a *ContentError wrapping ErrBadContent and ErrToolFailed", err)
			}
			if !strings.Contains(ce.Reason, tt.wantErr) || ce.Block != tt.block {
				t.Fatalf("err = block %d: %q, want block %d: ...%q...", ce.Block, ce.Reason, tt.block, tt.wantErr)
			}
		})
	}
}

// TestBlockJSONRoundTrip: a block's JSON form is what ParseContent reads.
func TestBlockJSONRoundTrip(t *testing.T) {
	in := []Block{
		{Type: BlockText, Text: "a"},
		{Type: BlockImage, MIMEType: "image/png", Data: tinyPNG(t)},
		{Type: BlockAudio, MIMEType: "audio/wav", Data: tinyWAV()},
		{Type: BlockResource, URI: "file:///a.txt", MIMEType: "text/plain", Text: "x"},
		{Type: BlockResource, URI: "file:///a.bin", Data: []byte{1}},
	}
	b, err := json.Marshal(map[string]any{"content": in})
	if err != nil {
		t.Fatal(err)
	}
	out, err := ParseContent(b)
	if err != nil {
		t.Fatalf("ParseContent(%s): %v", b, err)
	}
	again, _ := json.Marshal(map[string]any{"content": out})
	if !bytes.Equal(b, again) {
		t.Fatalf("round trip changed the blocks:\n%s\n%s", b, again)
	}
}

// TestPipelineContent runs a content tool, a plain one and one with an
// output_schema through the pipeline on the same WASI guest (it echoes its
// arguments): only the tool that declares "output": "content" has blocks,
// and a malformed result, or one that breaks the output_schema, is the
// tool's failure, recorded as such.
func TestPipelineContent(t *testing.T) {
	h := newHarness(t, Config{})
	p := testPack{name: "media", tools: `[
  {"name": "show", "description": "Shows what it is given.", "output": "content", "input_schema": {"type": "object"}, "run": {"wasm": "bin/x.wasm", "abi": "wasi"}},
  {"name": "plain", "description": "Echoes what it is given.", "input_schema": {"type": "object"}, "run": {"wasm": "bin/x.wasm", "abi": "wasi"}},
  {"name": "typed", "description": "Echoes a count.", "input_schema": {"type": "object"}, "run": {"wasm": "bin/x.wasm", "abi": "wasi"},
   "output_schema": {"type": "object", "properties": {"c": {"type": "number"}}, "required": ["c"]}}
]`, files: map[string]string{"bin/x.wasm": "testdata/wasi_echo.wasm"}}.load(t)
	pl := h.pipeline(p)
	image := `{"content":[{"type":"text","text":"radar"},{"type":"image","data":"` + b64(tinyPNG(t)) + `","mimeType":"image/png"}]}`
	tests := []struct {
		name, tool, args string
		want             []BlockType
		wantStatus       capability.Status
		wantErr          error
	}{
		{name: "content tool", tool: "show", args: image, want: []BlockType{BlockText, BlockImage}, wantStatus: capability.StatusOK},
		{name: "plain tool, same output", tool: "plain", args: image, wantStatus: capability.StatusOK},
		{name: "malformed content", tool: "show", args: `{"content":[{"type":"image","data":"` + b64([]byte("<html>")) + `","mimeType":"image/png"}]}`, wantStatus: capability.StatusToolError, wantErr: ErrBadContent},
		{name: "plain JSON from a content tool", tool: "show", args: `{"temperature":21}`, wantStatus: capability.StatusToolError, wantErr: ErrBadContent},
		{name: "result follows the output schema", tool: "typed", args: `{"c":2}`, wantStatus: capability.StatusOK},
		{name: "result breaks the output schema", tool: "typed", args: `{"c":"two"}`, wantStatus: capability.StatusToolError, wantErr: packs.ErrOutputSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := h.call(pl, p, tt.tool, tt.args)
			if o.Status != tt.wantStatus {
				t.Fatalf("status %s (%v), want %s", o.Status, o.Err, tt.wantStatus)
			}
			var got []BlockType
			for _, b := range o.Content {
				got = append(got, b.Type)
			}
			if strings.Join(typeNames(got), ",") != strings.Join(typeNames(tt.want), ",") {
				t.Fatalf("blocks %v, want %v", got, tt.want)
			}
			if tt.wantStatus == capability.StatusOK && !json.Valid(o.Output) {
				t.Fatalf("output %s is not JSON", o.Output)
			}
			if tt.wantErr != nil && (!errors.Is(o.Err, tt.wantErr) || !errors.Is(o.Err, ErrToolFailed) || !strings.Contains(o.Err.Error(), "media__"+tt.tool)) {
				t.Fatalf("err = %v, want %v and ErrToolFailed naming media__%s", o.Err, tt.wantErr, tt.tool)
			}
		})
	}
}

func typeNames(ts []BlockType) []string {
	var out []string
	for _, t := range ts {
		out = append(out, string(t))
	}
	return out
}

// FuzzParseContent: whatever a guest returns, ParseContent never panics,
// and what it accepts marshals back to content it accepts again.
func FuzzParseContent(f *testing.F) {
	f.Add([]byte(`{"content":[{"type":"text","text":"hello"}]}`))
	f.Add([]byte(`{"content":[{"type":"image","data":"` + b64(tinyPNG(f)) + `","mimeType":"image/png"}]}`))
	f.Add([]byte(`{"content":[{"type":"audio","data":"` + b64(tinyWAV()) + `","mimeType":"audio/wav"}]}`))
	f.Add([]byte(`{"content":[{"type":"resource","resource":{"uri":"file:///a","mimeType":"text/csv","text":"a"}}]}`))
	f.Add([]byte(`{"content":[{"type":"resource","resource":{"uri":"file:///a","blob":"AAE="}}]}`))
	f.Add([]byte(`{"content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png","x":1}],"content":2}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		blocks, err := ParseContent(in)
		if err != nil {
			if !errors.Is(err, ErrBadContent) {
				t.Fatalf("error %v does not wrap ErrBadContent", err)
			}
			return
		}
		b, err := json.Marshal(map[string]any{"content": blocks})
		if err != nil {
			t.Fatalf("marshal accepted blocks: %v", err)
		}
		if _, err := ParseContent(b); err != nil {
			t.Fatalf("accepted %q, but not its own form %s: %v", in, b, err)
		}
	})
}
