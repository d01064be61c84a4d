package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/packs"
)

// byHandFile, under the state directory, maps each pack to the chat its
// tools run in when the person runs them by hand from the packs page.
const byHandFile = "web/by-hand.json"

// byHandChats remembers the one "by hand: PACK" chat of each pack, across
// restarts, so that running tools by hand does not fill the chat list.
type byHandChats struct {
	mu     sync.Mutex
	loaded bool
	m      map[string]string // byHandKey -> chat id
}

// byHandKey keys a person's by-hand chat of pack: the pack's name for the
// token holder, as before people signed in; "PACK\nISSUER\nSUBJECT" for
// someone signed in, whose by-hand chats are their own.
func byHandKey(pack string, o chat.Owner) string {
	if o == (chat.Owner{}) {
		return pack
	}
	return pack + "\n" + o.Issuer + "\n" + o.Subject
}

func (b *byHandChats) path(home string) string {
	return filepath.Join(home, filepath.FromSlash(byHandFile))
}

// load reads the file once; a missing or unreadable file is an empty map
// (the chats stay in the list, under their first message).
func (b *byHandChats) load(home string) {
	if b.loaded {
		return
	}
	b.loaded, b.m = true, map[string]string{}
	if data, err := os.ReadFile(b.path(home)); err == nil {
		_ = json.Unmarshal(data, &b.m)
	}
}

// save writes the map whole: a temporary file renamed over the old one.
func (b *byHandChats) save(home string) error {
	p := b.path(home)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("web: by-hand chats: %w", err)
	}
	data, err := json.MarshalIndent(b.m, "", "  ")
	if err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("web: by-hand chats: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("web: by-hand chats: %w", err)
	}
	return nil
}

// packOf returns the pack whose by-hand chat id is, or "".
func (b *byHandChats) packOf(home, id string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.load(home)
	for k, c := range b.m {
		if c == id {
			p, _, _ := strings.Cut(k, "\n")
			return p
		}
	}
	return ""
}

// byHandChat returns the by-hand chat of pack, with the pack attached and
// its tools enabled, starting it when there is none.
func (s *Server) byHandChat(ctx context.Context, pack string, o chat.Owner) (*chatState, error) {
	home := s.cfg.App.Home.Dir()
	b := &s.byHand
	b.mu.Lock()
	defer b.mu.Unlock()
	b.load(home)
	var cs *chatState
	key := byHandKey(pack, o)
	if id, ok := b.m[key]; ok {
		var err error
		if cs, err = s.chat(ctx, id); err != nil && !errors.Is(err, chat.ErrNotFound) {
			return nil, err
		}
	}
	if cs == nil {
		sess, err := chat.Open(ctx, s.cfg.Chat, chat.Options{Attach: []string{pack}, Owner: o})
		if err != nil {
			return nil, err
		}
		cs = s.keep(sess)
		b.m[key] = sess.ID()
		if err := b.save(home); err != nil {
			return nil, err
		}
	}
	i := slices.IndexFunc(cs.s.Packs(), func(p chat.PackState) bool { return p.Name == pack })
	if i < 0 {
		if err := cs.s.Attach(ctx, pack); err != nil {
			return nil, err
		}
	}
	if i < 0 || !cs.s.Packs()[i].Enabled {
		// Enabling the pack's tools is a call like any other: the
		// person's click approves it, and the audit log records it.
		res, err := cs.s.Call(ctx, chat.ToolEnableTools, json.RawMessage(fmt.Sprintf(`{"pack_id":%q}`, pack)), byHand{class: chat.ToolEnableTools})
		if err != nil {
			return nil, err
		}
		cs.events.publish("tool_done", resultJSON("", res))
		if res.IsError {
			return nil, fmt.Errorf("%w: the tools of %s could not be enabled: %s", errBadRequest, pack, res.Content)
		}
	}
	return cs, nil
}

// byHandJSON is the result of a tool run by hand, and the chat it ran in.
type byHandJSON struct {
	toolResultJSON
	Chat string `json:"chat"`
}

// runByHand runs one tool of a pack with the arguments the person typed:
// the request is their approval of that call only. A request that names no
// call (not JSON, arguments that are not an object, an unknown tool) is
// refused before any chat opens, and leaves no audit row; the arguments
// themselves are checked by the pipeline, once, like every call's.
func (s *Server) runByHand(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}
	name := r.PathValue("name")
	if err := readJSON(w, r, &body); err != nil {
		s.fail(w, err)
		return
	}
	args := bytes.TrimSpace(body.Arguments)
	if len(args) == 0 {
		args = []byte("{}")
	}
	switch {
	case body.Tool == "":
		s.fail(w, fmt.Errorf("%w: name the tool: {\"tool\": \"NAME\", \"arguments\": {...}}", errBadRequest))
		return
	case args[0] != '{':
		s.fail(w, fmt.Errorf("%w: the arguments must be a JSON object", errBadRequest))
		return
	}
	ip, err := s.cfg.App.Pack(r.Context(), name)
	if err == nil && ip.Pack == nil {
		err = fmt.Errorf("%w: pack %s does not load (%s): reinstall it", errNotFound, name, ip.Status)
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	i := slices.IndexFunc(ip.Pack.Tools, func(t *packs.Tool) bool { return t.Name == body.Tool })
	if i < 0 {
		s.fail(w, fmt.Errorf("%w: pack %s has no tool %q", errNotFound, name, body.Tool))
		return
	}
	p, _ := personOf(r)
	cs, err := s.byHandChat(r.Context(), name, owner(p))
	if err != nil {
		s.fail(w, err)
		return
	}
	full := chat.PackToolName(name, body.Tool)
	res, err := cs.s.Call(r.Context(), full, args, byHand{class: full})
	if err != nil {
		s.fail(w, err)
		return
	}
	out := resultJSON("", res)
	cs.events.publish("tool_done", out)
	if res.IsError && res.ErrorKind == chat.ErrKindArguments {
		// The pipeline checked the arguments against the tool's schema
		// (the one place they are checked) and the call ended as invalid
		// input: for the person who typed them, a bad request.
		s.fail(w, fmt.Errorf("%w: %s", errBadRequest, res.ErrorMessage()))
		return
	}
	writeJSON(w, http.StatusOK, byHandJSON{toolResultJSON: out, Chat: cs.s.ID()})
}
