package web

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// mediaPack has one content tool, show, that returns the blocks it is given.
var mediaPack, _ = filepath.Abs(filepath.Join("testdata", "media"))

// mediaBlocks are the arguments of a show call: a text, a real PNG, a WAV
// header, a text file, a binary one, and a file whose URI's escapes are
// not UTF-8.
func mediaBlocks(t *testing.T) map[string]any {
	t.Helper()
	pic, err := os.ReadFile(filepath.Join(notesPack, "assets", "pixel.png"))
	if err != nil {
		t.Fatal(err)
	}
	wav := append([]byte("RIFF\x04\x00\x00\x00WAVE"), make([]byte, 8)...)
	enc := base64.StdEncoding.EncodeToString
	return map[string]any{"content": []any{
		map[string]any{"type": "text", "text": "a pixel"},
		map[string]any{"type": "image", "data": enc(pic), "mimeType": "image/png"},
		map[string]any{"type": "audio", "data": enc(wav), "mimeType": "audio/wav"},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///notes.md", "mimeType": "text/markdown", "text": "<b>not html</b>"}},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///page.html", "mimeType": "text/html", "blob": enc([]byte("<script>window.pwned=1</script>"))}},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///bad%E0name", "text": "x"}},
	}}
}

// TestByHandContentBlocks: the API hands a content tool's blocks to the
// page in MCP's form.
func TestByHandContentBlocks(t *testing.T) {
	e := newEnv(t, envOptions{noModel: true})
	e.must(http.StatusCreated, "POST", "/v1/packs", map[string]any{"path": mediaPack, "grant": []string{}}, nil)
	var r struct {
		Blocks []map[string]any
		Error  string `json:"error_kind"`
	}
	e.must(http.StatusOK, "POST", "/v1/packs/media/calls", map[string]any{"tool": "show", "arguments": mediaBlocks(t)}, &r)
	var types []string
	for _, b := range r.Blocks {
		types = append(types, b["type"].(string))
	}
	if got := strings.Join(types, ","); got != "text,image,audio,resource,resource,resource" || r.Error != "" {
		t.Fatalf("blocks %s (error %q), want text,image,audio and three resources", got, r.Error)
	}
	if r.Blocks[1]["mimeType"] != "image/png" || r.Blocks[1]["data"] == "" {
		t.Errorf("image block = %v", r.Blocks[1])
	}
}

// TestBrowserContentBlocks: run by hand from the packs page, a content
// tool's image shows inline (the page's policy lets it load), its audio
// gets a player, and its files are downloads, never rendered as HTML.
func TestBrowserContentBlocks(t *testing.T) {
	chromium := findChromium(t)
	e := newEnv(t, envOptions{noModel: true})
	e.must(http.StatusCreated, "POST", "/v1/packs", map[string]any{"path": mediaPack, "grant": []string{}}, nil)
	raw, err := json.Marshal(mediaBlocks(t))
	if err != nil {
		t.Fatal(err)
	}
	args := string(raw)
	b := openBrowser(t, chromium, screenshotDir(t))
	b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#banner")))
	b.openPack("media")
	b.step("the media tool shows", chromedp.WaitVisible(chromedp.CSS(`.pack[data-pack="media"] details.tool`)))
	b.poll("run show by hand", `(() => { const d = document.querySelector(".pack[data-pack=media] details.tool"); d.open = true; d.querySelector(".tool-args").value = `+jsString(args)+`; d.querySelector(".run-by-hand").click(); return true; })()`)
	b.poll("the text shows", `[...document.querySelectorAll(".tool-out .blocks pre")].some(p => p.textContent === "a pixel")`)
	b.poll("the image loads inline", `(() => { const i = document.querySelector(".tool-out .blocks img.inline-img"); return i && i.complete && i.naturalWidth > 0; })()`)
	b.poll("the audio has a player", `(() => { const a = document.querySelector(".tool-out .blocks audio[controls]"); return a && a.src.startsWith("data:audio/wav;base64,"); })()`)
	b.poll("the files are downloads", `(() => { const l = [...document.querySelectorAll(".tool-out .block-resource a.download")]; return l.length === 3 && l[0].download === "notes.md" && l[1].download === "page.html" && l[2].download === "bad%E0name" && l.every(a => a.href.startsWith("data:application/octet-stream;base64,")); })()`)
	b.poll("the text file shows as text", `[...document.querySelectorAll(".tool-out .block-resource pre")].some(p => p.textContent === "<b>not html</b>") && !document.querySelector(".tool-out .block-resource b")`)
	if pwned := must(t, b.ctx, chromedp.Evaluate[bool](`window.pwned === 1`)); pwned {
		t.Error("a resource's HTML ran in the page")
	}
	b.shot("web-content-blocks")
}
