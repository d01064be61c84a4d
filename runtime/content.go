package runtime

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// BlockType is the kind of one content block of a tool's result.
type BlockType string

// The kinds of block a tool whose tools.json entry says "output": "content"
// may return (docs/abi.md §1.4). They are MCP's content types.
const (
	BlockText     BlockType = "text"
	BlockImage    BlockType = "image"
	BlockAudio    BlockType = "audio"
	BlockResource BlockType = "resource" // an embedded resource: a file the tool hands over
)

// MaxContentBlocks is how many blocks one result may hold.
const MaxContentBlocks = 64

// MaxResourceURI is the longest URI an embedded resource may have.
const MaxResourceURI = 2048

// Block is one block of a tool's rich result (Outcome.Content). Its JSON
// form is MCP's content block: {"type": "image", "data": BASE64,
// "mimeType": "image/png"}, {"type": "resource", "resource": {"uri": ...,
// "mimeType": ..., "text" or "blob": ...}}.
type Block struct {
	Type BlockType
	// Text is a text block's text, or a text resource's contents.
	Text string
	// MIMEType is an image's or audio's type (from ImageTypes, AudioTypes),
	// or a resource's (possibly empty).
	MIMEType string
	// Data is an image's or audio's bytes, or a blob resource's: decoded,
	// never empty for those. Nil for text and text resources.
	Data []byte
	// URI names an embedded resource.
	URI string
}

// ImageTypes and AudioTypes are the media types an image or audio block may
// declare; its bytes must begin with that format's signature. SVG is left
// out on purpose: it is a document that can hold scripts, not a picture.
var (
	ImageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}
	AudioTypes = []string{"audio/wav", "audio/mpeg", "audio/ogg", "audio/flac", "audio/webm"}
)

// ErrBadContent: a tool that declares "output": "content" returned
// something that is not a valid list of content blocks. It is a failure of
// the tool (it wraps ErrToolFailed); *ContentError says where and why.
var ErrBadContent = fmt.Errorf("runtime: malformed content: %w", ErrToolFailed)

// ContentError says what is wrong with a tool's content.
type ContentError struct {
	Pack, Tool string
	Block      int // 1-based; 0 for the result as a whole
	Reason     string
}

func (e *ContentError) Error() string {
	where := "its result"
	if e.Block > 0 {
		where = "content block " + strconv.Itoa(e.Block)
	}
	return fmt.Sprintf("runtime: tool %s__%s declares \"output\": \"content\" and %s is malformed: %s (docs/abi.md §1.4)", e.Pack, e.Tool, where, e.Reason)
}

func (e *ContentError) Unwrap() error { return ErrBadContent }

// ParseContent reads a content result: exactly {"content": [BLOCK, ...]}
// with 1 to MaxContentBlocks blocks, each of MCP's form. Every key is
// checked (an unknown or repeated one is refused), base64 must be standard
// and padded, an image's or audio's type must be allowed and match its
// bytes. The error is a *ContentError (pack and tool left empty).
func ParseContent(out []byte) ([]Block, error) {
	top, err := members(out)
	if err != nil {
		return nil, &ContentError{Reason: "the result must be a JSON object {\"content\": [...]}: " + err.Error()}
	}
	raw, ok := top["content"]
	if !ok || len(top) != 1 {
		return nil, &ContentError{Reason: "the result must be an object with exactly one key, \"content\", holding a list of blocks"}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		return nil, &ContentError{Reason: "\"content\" must be a JSON array of blocks"}
	}
	switch {
	case len(items) == 0:
		return nil, &ContentError{Reason: "\"content\" is empty: return at least one block"}
	case len(items) > MaxContentBlocks:
		return nil, &ContentError{Reason: fmt.Sprintf("%d blocks: at most %d", len(items), MaxContentBlocks)}
	}
	blocks := make([]Block, 0, len(items))
	for i, it := range items {
		b, err := parseBlock(it)
		if err != nil {
			return nil, &ContentError{Block: i + 1, Reason: err.Error()}
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// parseBlock reads one block.
func parseBlock(raw json.RawMessage) (Block, error) {
	m, err := members(raw)
	if err != nil {
		return Block{}, fmt.Errorf("a block must be a JSON object: %v", err)
	}
	var b Block
	typ, err := stringMember(m, "type", true)
	if err != nil {
		return Block{}, err
	}
	b.Type = BlockType(typ)
	switch b.Type {
	case BlockText:
		if err := onlyKeys(m, "type", "text"); err != nil {
			return Block{}, err
		}
		b.Text, err = stringMember(m, "text", true)
		return b, err
	case BlockImage, BlockAudio:
		if err := onlyKeys(m, "type", "data", "mimeType"); err != nil {
			return Block{}, err
		}
		if b.MIMEType, err = stringMember(m, "mimeType", true); err != nil {
			return Block{}, err
		}
		allowed := ImageTypes
		if b.Type == BlockAudio {
			allowed = AudioTypes
		}
		if !slices.Contains(allowed, b.MIMEType) {
			return Block{}, fmt.Errorf("%s mimeType %q is not allowed: use one of %s", b.Type, b.MIMEType, strings.Join(allowed, ", "))
		}
		if b.Data, err = base64Member(m, "data"); err != nil {
			return Block{}, err
		}
		if !signature(b.MIMEType, b.Data) {
			return Block{}, fmt.Errorf("the data is not %s: its bytes do not begin with that format's signature", b.MIMEType)
		}
		return b, nil
	case BlockResource:
		if err := onlyKeys(m, "type", "resource"); err != nil {
			return Block{}, err
		}
		r, err := members(m["resource"])
		if err != nil {
			return Block{}, fmt.Errorf("\"resource\" must be an object {\"uri\", \"mimeType\", \"text\" or \"blob\"}: %v", err)
		}
		if err := onlyKeys(r, "uri", "mimeType", "text", "blob"); err != nil {
			return Block{}, fmt.Errorf("resource: %v", err)
		}
		if b.URI, err = stringMember(r, "uri", true); err != nil {
			return Block{}, fmt.Errorf("resource: %v", err)
		}
		if err := checkURI(b.URI); err != nil {
			return Block{}, fmt.Errorf("resource uri %q: %v", b.URI, err)
		}
		if b.MIMEType, err = stringMember(r, "mimeType", false); err != nil {
			return Block{}, fmt.Errorf("resource: %v", err)
		}
		if b.MIMEType != "" {
			if _, _, err := mime.ParseMediaType(b.MIMEType); err != nil {
				return Block{}, fmt.Errorf("resource mimeType %q is not a media type: %v", b.MIMEType, err)
			}
		}
		_, hasText := r["text"]
		_, hasBlob := r["blob"]
		switch {
		case hasText == hasBlob:
			return Block{}, errors.New("a resource holds exactly one of \"text\" and \"blob\"")
		case hasText:
			if b.Text, err = stringMember(r, "text", true); err == nil && b.Text == "" {
				err = errors.New("\"text\" is empty: MCP cannot carry an empty resource; say so in a text block")
			}
		default:
			b.Data, err = base64Member(r, "blob")
		}
		if err != nil {
			return Block{}, fmt.Errorf("resource: %v", err)
		}
		return b, nil
	}
	return Block{}, fmt.Errorf("type %q is not a block type: use text, image, audio or resource", typ)
}

// members decodes a JSON object into its members, refusing a repeated key
// (encoding/json would keep the last one silently) and anything after it.
func members(raw []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("it is not an object")
	}
	m := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string) // inside an object, the decoder yields only string keys
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := m[key]; dup {
			return nil, fmt.Errorf("key %q appears twice", key)
		}
		m[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("extra data after the object")
	}
	return m, nil
}

// onlyKeys refuses a key other than those named.
func onlyKeys(m map[string]json.RawMessage, keys ...string) error {
	var extra []string
	for k := range m {
		if !slices.Contains(keys, k) {
			extra = append(extra, strconv.Quote(k))
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return fmt.Errorf("unknown key %s: this block has %s", strings.Join(extra, ", "), strings.Join(keys, ", "))
	}
	return nil
}

// stringMember reads a string member; a missing one is "" unless required.
func stringMember(m map[string]json.RawMessage, key string, required bool) (string, error) {
	raw, ok := m[key]
	if !ok {
		if required {
			return "", fmt.Errorf("%q is missing", key)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%q must be a string", key)
	}
	return s, nil
}

// base64Member reads a required, non-empty member in standard base64 with
// padding (RFC 4648 §4), as MCP carries binary data.
func base64Member(m map[string]json.RawMessage, key string) ([]byte, error) {
	s, err := stringMember(m, key, true)
	if err != nil {
		return nil, err
	}
	if s == "" {
		return nil, fmt.Errorf("%q is empty", key)
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not standard base64 with padding: %v", key, err)
	}
	return b, nil
}

// checkURI accepts an absolute URI without spaces or control characters,
// whose scheme names a resource rather than code or inline data.
func checkURI(s string) error {
	if len(s) > MaxResourceURI {
		return fmt.Errorf("%d bytes: at most %d", len(s), MaxResourceURI)
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return errors.New("it holds a space or a control character")
	}
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	switch u.Scheme { // url.Parse lowercases it
	case "":
		return errors.New("it has no scheme: write e.g. file:///report.csv")
	case "javascript", "vbscript", "data":
		// A client that shows the URI as a link would run or load it.
		return fmt.Errorf("scheme %q is not a resource's name: write e.g. file:///report.csv", u.Scheme)
	}
	return nil
}

// signature reports whether data begins as a file of type t must.
func signature(t string, data []byte) bool {
	has := func(off int, sig string) bool {
		return len(data) >= off+len(sig) && string(data[off:off+len(sig)]) == sig
	}
	switch t {
	case "image/png":
		return has(0, "\x89PNG\r\n\x1a\n")
	case "image/jpeg":
		return has(0, "\xff\xd8\xff")
	case "image/gif":
		return has(0, "GIF87a") || has(0, "GIF89a")
	case "image/webp":
		return has(0, "RIFF") && has(8, "WEBP")
	case "audio/wav":
		return has(0, "RIFF") && has(8, "WAVE")
	case "audio/mpeg":
		return has(0, "ID3") || len(data) >= 2 && data[0] == 0xff && data[1]&0xe0 == 0xe0
	case "audio/ogg":
		return has(0, "OggS")
	case "audio/flac":
		return has(0, "fLaC")
	case "audio/webm":
		return has(0, "\x1a\x45\xdf\xa3")
	}
	return false
}

// MarshalJSON writes the block in MCP's form (docs/abi.md §1.4).
func (b Block) MarshalJSON() ([]byte, error) {
	switch b.Type {
	case BlockText:
		return json.Marshal(struct {
			Type BlockType `json:"type"`
			Text string    `json:"text"`
		}{b.Type, b.Text})
	case BlockImage, BlockAudio:
		return json.Marshal(struct {
			Type     BlockType `json:"type"`
			Data     []byte    `json:"data"`
			MIMEType string    `json:"mimeType"`
		}{b.Type, b.Data, b.MIMEType})
	case BlockResource:
		type resource struct {
			URI      string  `json:"uri"`
			MIMEType string  `json:"mimeType,omitempty"`
			Text     *string `json:"text,omitempty"`
			Blob     []byte  `json:"blob,omitempty"`
		}
		r := resource{URI: b.URI, MIMEType: b.MIMEType, Blob: b.Data}
		if b.Data == nil {
			r.Text = &b.Text
		}
		return json.Marshal(struct {
			Type     BlockType `json:"type"`
			Resource resource  `json:"resource"`
		}{b.Type, r})
	}
	return nil, fmt.Errorf("runtime: block type %q has no JSON form", b.Type)
}

// Describe is a one-line account of a block for a reader that cannot show
// it (a terminal, a model without images): a text block's own text, else
// its kind, type, size and, for a resource, its URI.
func (b Block) Describe() string {
	switch b.Type {
	case BlockText:
		return b.Text
	case BlockResource:
		size := len(b.Text)
		if b.Data != nil {
			size = len(b.Data)
		}
		t := b.MIMEType
		if t == "" {
			t = "no type"
		}
		return fmt.Sprintf("[resource %s, %s, %s]", b.URI, t, byteSize(size))
	}
	return fmt.Sprintf("[%s %s, %s]", b.Type, b.MIMEType, byteSize(len(b.Data)))
}

// byteSize writes n bytes for people: 512 B, 2.0 KiB, 1.5 MiB.
func byteSize(n int) string {
	switch {
	case n < 1024:
		return strconv.Itoa(n) + " B"
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
