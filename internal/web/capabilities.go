package web

import (
	"net/http"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
)

// capabilityJSON is one capability in spec 003's shape: a built-in or an
// installed pack. icon and category are null when the pack names none.
type capabilityJSON struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Status      string  `json:"status"`
	Icon        *string `json:"icon"`
	Category    *string `json:"category"`
}

// capabilityDetailJSON is GET /v1/capabilities/{id}: the listing's fields,
// where the pack comes from, and its tools.
type capabilityDetailJSON struct {
	capabilityJSON
	Builtin bool       `json:"builtin"`
	Version string     `json:"version"`
	Source  string     `json:"source"`
	Tools   []toolJSON `json:"tools"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func capabilityOut(c app.Capability) capabilityJSON {
	return capabilityJSON{ID: c.ID, Name: c.Name, Description: c.Description, Status: string(c.Status), Icon: nullable(c.Icon), Category: nullable(c.Category)}
}

func (s *Server) listCapabilities(w http.ResponseWriter, r *http.Request) {
	list, err := s.cfg.App.Capabilities(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	items := make([]capabilityJSON, 0, len(list))
	for _, c := range list {
		items = append(items, capabilityOut(c))
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "total": len(items)})
}

func (s *Server) getCapability(w http.ResponseWriter, r *http.Request) {
	c, err := s.cfg.App.Capability(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	e := c.Pack.Entry
	out := capabilityDetailJSON{capabilityJSON: capabilityOut(c), Builtin: c.Builtin, Version: e.Version, Source: e.Source, Tools: []toolJSON{}}
	if p := c.Pack.Pack; p != nil {
		for _, t := range p.Tools {
			out.Tools = append(out.Tools, toolJSON{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// permissionJSON is one kind of access a pack can ask for in skill.toml
// and a person grants (capability.Name): GET /v1/permissions.
type permissionJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Icon        string `json:"icon"`
	Category    string `json:"category"`
}

// permissionInfo describes each kind of access a pack can ask for.
var permissionInfo = map[capability.Name]permissionJSON{
	capability.FilesystemRead:  {Name: "Read files", Description: "Read the listed paths, read-only. Without a grant a pack reads only its own folder.", Icon: "file-text", Category: "Filesystem"},
	capability.FilesystemWrite: {Name: "Write files", Description: "Read and write the listed paths. Without a grant a pack writes only the chat's workspace.", Icon: "file-pen", Category: "Filesystem"},
	capability.Network:         {Name: "Network", Description: "HTTP(S) requests to the listed host patterns, through the host's http_request.", Icon: "globe", Category: "Network"},
	capability.EnvRead:         {Name: "Environment", Description: "See the listed environment variables (names or patterns).", Icon: "variable", Category: "System"},
	capability.TerminalExec:    {Name: "Run commands", Description: "Run the listed native commands, never through a shell, with a timeout and a scrubbed environment.", Icon: "terminal", Category: "System"},
	capability.SecretsAccess:   {Name: "Secrets", Description: "Read the named secrets from the secret store.", Icon: "key", Category: "Secrets"},
	capability.AskPerson:       {Name: "Ask you", Description: "Put questions to you while a tool runs (a form you answer, decline or cancel), through the channel that approves its calls.", Icon: "message-circle-question", Category: "Person"},
}

func describePermission(n capability.Name) permissionJSON {
	p := permissionInfo[n]
	p.ID = string(n)
	return p
}

func (s *Server) listPermissions(w http.ResponseWriter, r *http.Request) {
	items := make([]permissionJSON, 0, len(capability.All()))
	for _, n := range capability.All() {
		items = append(items, describePermission(n))
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "total": len(items)})
}

func (s *Server) getPermission(w http.ResponseWriter, r *http.Request) {
	n, err := capability.ParseName(r.PathValue("id"))
	if err != nil {
		writeError(w, http.StatusNotFound, codeNotFound, "web: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, describePermission(n))
}
