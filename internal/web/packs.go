package web

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/builtin"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/packs"
)

// maxUpload bounds an uploaded pack archive.
const maxUpload = 64 << 20

type toolJSON struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// capJSON is one requested capability: what the pack asks for (its
// skill.toml), whether the person granted it and which resources, and (in a
// pack's details) what a call holds.
type capJSON struct {
	Capability capability.Name `json:"capability"`
	// Requested is what skill.toml asks for; empty when the pack does not
	// load, since only its lock entry is known then.
	Requested []string `json:"requested"`
	Granted   bool     `json:"granted"`
	// GrantedResources is the part of Requested the person granted: in the
	// listing, the persistent grants packs.lock mirrors; in a pack's
	// details, the person's layer (which includes a policy pre-approval).
	GrantedResources []string `json:"granted_resources"`
	Effective        []string `json:"effective,omitempty"`
	Scope            string   `json:"scope,omitempty"`
	Held             *bool    `json:"held,omitempty"`
	Reason           string   `json:"reason,omitempty"`
}

type packJSON struct {
	// CapabilityStatus is [skill].status when it is not "available":
	// "deprecated" or "coming_soon" (spec 003).
	CapabilityStatus string `json:"capability_status,omitempty"`

	Name         string     `json:"name"`
	Version      string     `json:"version"`
	Source       string     `json:"source"`
	Integrity    string     `json:"integrity"`
	Installed    time.Time  `json:"installed"`
	Status       string     `json:"status"`
	Error        string     `json:"error,omitempty"`
	Description  string     `json:"description"`
	Tools        []toolJSON `json:"tools"`
	Capabilities []capJSON  `json:"capabilities"`
	Blocked      string     `json:"blocked,omitempty"`
	Mandated     bool       `json:"mandated,omitempty"`
	// Disabled: the person disabled the pack (packs disable); it cannot be
	// attached to a chat or run.
	Disabled bool `json:"disabled,omitempty"`
	// InPlace is set for a pack used in place (status "in_place").
	InPlace *inPlaceJSON `json:"in_place,omitempty"`
	// Origin is where the pack comes from: "installed" (packs add, the
	// app's Add a pack), "built_in" (it comes with packs) or "in_place"
	// (used from a skills folder, not installed).
	Origin string `json:"origin"`
	// Docs is the pack's entry doc rendered, in a pack's details only.
	Docs *docsJSON `json:"docs,omitempty"`
}

// docsJSON is a pack's entry doc: its file and its Markdown body as HTML,
// rendered as the chat's replies are (raw HTML escaped, unsafe links
// dropped).
type docsJSON struct {
	File      string `json:"file"`
	HTML      string `json:"html"`
	Truncated bool   `json:"truncated,omitempty"`
}

// maxDocsShown bounds the part of an entry doc a pack's page renders.
const maxDocsShown = 256 << 10

// Origins of a pack in the listing.
const (
	originInstalled = "installed"
	originBuiltIn   = "built_in"
	originInPlace   = "in_place"
)

func packInfo(ip app.InstalledPack) packJSON {
	e := ip.Entry
	out := packJSON{Name: e.Name, Version: e.Version, Source: e.Source, Integrity: e.Integrity, Installed: e.Installed,
		Status: string(ip.Status), Tools: []toolJSON{}, Capabilities: []capJSON{}, Disabled: ip.Disabled, Origin: originInstalled}
	if builtin.IsSource(e.Source) {
		out.Origin = originBuiltIn
	}
	if ip.LoadErr != nil {
		out.Error = ip.LoadErr.Error()
	}
	if ip.Pack != nil {
		out.Description = ip.Pack.Frontmatter.Description
		if m := ip.Pack.Manifest; m != nil && m.Status != packs.StatusAvailable {
			out.CapabilityStatus = string(m.Status)
		}
		for _, t := range ip.Pack.Tools {
			out.Tools = append(out.Tools, toolJSON{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
		}
	}
	// The lock entry's resources are the granted ones; the requested ones
	// are in skill.toml, which the integrity digest covers.
	var req capability.Request
	if ip.Pack != nil {
		req = ip.Pack.Request()
	}
	for _, n := range e.Requested() {
		lc := e.Capabilities[n]
		out.Capabilities = append(out.Capabilities, capJSON{Capability: n, Requested: orEmpty(req.Resources(n)),
			Granted: lc.Granted, GrantedResources: orEmpty(lc.Resources)})
	}
	return out
}

func (s *Server) listPacks(w http.ResponseWriter, r *http.Request) {
	installed, err := s.cfg.App.Packs(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	items := make([]packJSON, 0, len(installed))
	for _, ip := range installed {
		items = append(items, packInfo(ip))
	}
	found, err := s.inPlacePacks(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	items = append(items, found...)
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "total": len(items)})
}

// getPack adds to the listing what every layer says of each capability:
// the policy, the person's grants, and what a call holds.
func (s *Server) getPack(w http.ResponseWriter, r *http.Request) {
	out, err := s.packDetails(r, r.PathValue("name"))
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) packDetails(r *http.Request, name string) (packJSON, error) {
	ip, err := s.cfg.App.Pack(r.Context(), name)
	if isNotInstalled(err) {
		return s.inPlaceDetails(r, name, err)
	}
	if err != nil {
		return packJSON{}, err
	}
	out := packInfo(ip)
	if ip.Pack == nil {
		return out, nil
	}
	out.Docs = s.docs(ip.Pack)
	ref := ip.Entry.Ref()
	user, err := s.cfg.App.DB.PeekGrants(r.Context(), name, "", s.cfg.App.Grants().Lapse())
	if err != nil {
		return out, err
	}
	id := r.URL.Query().Get("chat")
	if p, _ := personOf(r); id != "" && !s.canSee(r.Context(), p, id) {
		return out, fmt.Errorf("%w: no chat %q of yours", chat.ErrNotFound, id)
	}
	ws, err := s.workspaceOf(r.Context(), id)
	if err != nil {
		return out, err
	}
	rep, err := capability.Explain(ref, ip.Pack.Request(), user, s.cfg.Chat.Pipeline.Policy(), ws.env)
	if err != nil {
		return out, err
	}
	if rep.Blocked != nil {
		out.Blocked = rep.Blocked.Error()
	}
	out.Mandated = rep.Mandated
	for _, c := range rep.Capabilities {
		i := slices.IndexFunc(out.Capabilities, func(x capJSON) bool { return x.Capability == c.Capability })
		if i < 0 {
			out.Capabilities = append(out.Capabilities, capJSON{Capability: c.Capability, Requested: orEmpty(c.Requested)})
			i = len(out.Capabilities) - 1
		}
		held := c.Err == nil
		cj := &out.Capabilities[i]
		cj.Requested = orEmpty(c.Requested)
		cj.Granted, cj.GrantedResources = c.User.Allowed, []string{}
		if c.User.Allowed {
			cj.GrantedResources = orEmpty(c.User.Resources)
		}
		cj.Effective, cj.Scope, cj.Held = c.Effective, string(c.Scope), &held
		if c.Err != nil {
			cj.Reason = c.Err.Error()
		}
		cj.GrantedResources, cj.Effective = ws.show(cj.GrantedResources), ws.show(cj.Effective)
	}
	return out, nil
}

// chatWorkspace is where the paths a pack asks for in the workspace
// ("./data") are, for the pack's page and a waiting call's card alike.
type chatWorkspace struct {
	dir  string
	real bool // dir is one chat's own workspace
	env  capability.Env
}

// workspaceOf is chat id's workspace: the folder it was started with
// (packs chat --workspace DIR), or the one packs made for it, wherever it
// lies. A path in it is a real path only in that chat: with no chat (id
// empty) the workspace is a made-up chat's, and show writes the paths in
// it as the pack wrote them, relative to each chat's workspace.
func (s *Server) workspaceOf(ctx context.Context, id string) (chatWorkspace, error) {
	ws := chatWorkspace{dir: filepath.Join(s.cfg.Chat.Workspaces, "chat_"+rand.Text())}
	if id != "" {
		cs, err := s.chat(ctx, id)
		if err != nil {
			return chatWorkspace{}, err
		}
		ws = chatWorkspace{dir: cs.s.Workspace(), real: true}
	}
	ws.env = s.cfg.Chat.Pipeline.Env(ws.dir)
	return ws, nil
}

// show writes the paths of l as the person should read them: as they are
// in a chat's own workspace; otherwise those under the made-up workspace
// relative to it, as a pack writes them: "./data", "." for the workspace
// itself.
func (ws chatWorkspace) show(l []string) []string {
	if ws.real {
		return orEmpty(l)
	}
	out := make([]string, len(l))
	for i, p := range l {
		switch rel, err := filepath.Rel(ws.dir, p); {
		case p == ws.dir:
			out[i] = "."
		case err == nil && filepath.IsLocal(rel):
			out[i] = "./" + filepath.ToSlash(rel)
		default:
			out[i] = p
		}
	}
	return out
}

// docs is readDocs for a pack's details: docs that cannot be read are
// left out (the page says so) and logged, and the rest of the details
// stand.
func (s *Server) docs(p *packs.Pack) *docsJSON {
	d, err := readDocs(p)
	if err != nil {
		s.log.Warn("web: a pack's docs cannot be read", "pack", p.Name, "err", err)
		return nil
	}
	return d
}

// readDocs renders the body of p's entry doc (its frontmatter left out),
// at most maxDocsShown bytes of it, read inside the pack's folder.
func readDocs(p *packs.Pack) (*docsJSON, error) {
	f, err := os.OpenInRoot(p.Dir, p.EntryDoc)
	if err != nil {
		return nil, fmt.Errorf("web: the docs of %s: %w", p.Name, err)
	}
	defer f.Close()
	if _, err := f.Seek(p.Body, io.SeekStart); err != nil {
		return nil, fmt.Errorf("web: the docs of %s: %w", p.Name, err)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxDocsShown+1))
	if err != nil {
		return nil, fmt.Errorf("web: the docs of %s: %w", p.Name, err)
	}
	d := &docsJSON{File: p.EntryDoc, Truncated: len(b) > maxDocsShown}
	if d.Truncated {
		b = b[:maxDocsShown]
	}
	d.HTML = renderMarkdown(string(b))
	return d, nil
}

// installForm is what an install request says besides its source: the
// person's grants ("all", or capability names; nothing is granted
// without it), preview (show what the pack asks for, install nothing)
// and integrity (install only the content the person reviewed).
type installForm struct {
	Grant     []string
	Preview   bool
	Integrity string
}

// installPack installs from a path on this machine or a URL ({"source":
// ..., "grant": [...]}; "path" is the older name of "source") or from an
// uploaded .tar.gz (multipart form: archive, grant, preview, integrity).
// With preview it answers what the pack asks for and installs nothing:
// the app's consent dialog. Both go through the one installer (policy,
// trust, the machine's fit), the preview stopping where consent is asked.
func (s *Server) installPack(w http.ResponseWriter, r *http.Request) {
	var (
		source string
		form   installForm
	)
	ct := r.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "multipart/form-data") {
		dir, err := os.MkdirTemp("", "packs-upload-")
		if err != nil {
			s.fail(w, err)
			return
		}
		defer os.RemoveAll(dir)
		if source, form, err = saveUpload(w, r, dir); err != nil {
			s.fail(w, err)
			return
		}
	} else {
		var body struct {
			Source    string   `json:"source"`
			Path      string   `json:"path"`
			Grant     []string `json:"grant"`
			Preview   bool     `json:"preview"`
			Integrity string   `json:"integrity"`
		}
		if err := readJSON(w, r, &body); err != nil {
			s.fail(w, err)
			return
		}
		source = cmp.Or(body.Source, body.Path)
		if err := checkSource(source); err != nil {
			s.fail(w, err)
			return
		}
		form = installForm{Grant: body.Grant, Preview: body.Preview, Integrity: body.Integrity}
	}
	consent, err := installConsent(form.Grant)
	if err != nil {
		s.fail(w, err)
		return
	}
	var offer *offerJSON
	consent = reviewed(consent, form, &offer)
	// The installer applies the policy (block list, [trust], the machine's
	// fit) exactly as packs add does; the request's grant field is the
	// person's consent.
	p, _ := personOf(r)
	res, err := s.cfg.App.Install(r.Context(), app.InstallRequest{Source: source, Consent: consent, By: "web", Person: p.Subject, Issuer: p.Issuer})
	if form.Preview && errors.Is(err, errPreview) {
		writeJSON(w, http.StatusOK, offer)
		return
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	out, err := s.packDetails(r, res.Entry.Name)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

// checkSource refuses a source the server would read relative to where
// it was started: a folder or archive is named by its absolute path, and
// anything else is a URL (git+https://, https://…#sha256=, oci://).
func checkSource(source string) error {
	if source == "" || !filepath.IsAbs(source) && !strings.Contains(source, "://") {
		return fmt.Errorf("%w: give the absolute path of a pack folder or .tar.gz, or a URL (git+https://HOST/REPO, https://…/x.tar.gz#sha256=HEX, oci://…): {\"source\": \"/abs/dir\", \"grant\": [\"network\"]}", errBadRequest)
	}
	return nil
}

// saveUpload writes the uploaded archive into dir and returns its path
// and the form's other fields.
func saveUpload(w http.ResponseWriter, r *http.Request, dir string) (string, installForm, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxUpload)
	mr, err := r.MultipartReader()
	if err != nil {
		return "", installForm{}, fmt.Errorf("%w: %v", errBadRequest, err)
	}
	var (
		saved string
		form  installForm
	)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", installForm{}, fmt.Errorf("%w: reading the upload: %v", errBadRequest, err)
		}
		switch part.FormName() {
		case "grant", "preview", "integrity":
			b, err := io.ReadAll(io.LimitReader(part, 4096))
			if err != nil {
				return "", installForm{}, fmt.Errorf("%w: %v", errBadRequest, err)
			}
			v := strings.TrimSpace(string(b))
			switch part.FormName() {
			case "preview":
				form.Preview = v == "true"
			case "integrity":
				form.Integrity = v
			default:
				for _, g := range strings.Split(v, ",") {
					if g = strings.TrimSpace(g); g != "" {
						form.Grant = append(form.Grant, g)
					}
				}
			}
		case "archive":
			name := filepath.Base(filepath.Clean("/" + part.FileName()))
			lower := strings.ToLower(name)
			if !strings.HasSuffix(lower, ".tar.gz") && !strings.HasSuffix(lower, ".tgz") || !filepath.IsLocal(name) {
				return "", installForm{}, fmt.Errorf("%w: upload a .tar.gz or .tgz archive of a pack, not %q", errBadRequest, part.FileName())
			}
			saved = filepath.Join(dir, name)
			f, err := os.Create(saved)
			if err != nil {
				return "", installForm{}, err
			}
			_, err = io.Copy(f, part)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return "", installForm{}, fmt.Errorf("%w: reading the upload: %v", errBadRequest, err)
			}
		}
	}
	if saved == "" {
		return "", installForm{}, fmt.Errorf("%w: the form has no archive field: upload the pack's .tar.gz as \"archive\"", errBadRequest)
	}
	return saved, form, nil
}

// installConsent is the consent an install request's grant field gives:
// "all" grants everything the pack asks for, a list of capability names
// grants each of them whole (each must be asked for), none grants nothing.
func installConsent(grant []string) (app.Consent, error) {
	if len(grant) == 1 && grant[0] == "all" {
		return app.ConsentFunc(func(ctx context.Context, o app.Offer) ([]capability.UserGrant, error) {
			return app.Granting(o.Request.Names()...).Consent(ctx, o)
		}), nil
	}
	names := make([]capability.Name, 0, len(grant))
	for _, g := range grant {
		n, err := capability.ParseName(g)
		if err != nil {
			return nil, fmt.Errorf("%w: grant: %v, or \"all\"", errBadRequest, err)
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return app.Granting(names...), nil
}

// grant records a persistent grant of one capability (optionally a subset
// of its resources) to an installed pack.
func (s *Server) grant(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Capability string   `json:"capability"`
		Resources  []string `json:"resources"`
		Scope      string   `json:"scope"`
		Chat       string   `json:"chat"`
	}
	name := r.PathValue("name")
	if err := readJSON(w, r, &body); err != nil {
		s.fail(w, err)
		return
	}
	ip, err := s.cfg.App.Pack(r.Context(), name)
	inPlace := isNotInstalled(err) && s.cfg.InPlace != nil
	switch {
	case inPlace:
		err = nil
	case err != nil:
	case ip.Pack == nil:
		err = fmt.Errorf("%w: pack %s does not load (%s): reinstall it", errNotFound, name, ip.Status)
	case ip.Status != app.StatusOK:
		// Its skill.toml cannot be trusted, and packs.lock could not
		// mirror the grant: refuse before recording it.
		err = fmt.Errorf("%w: %s: its files no longer match packs.lock: reinstall it, then grant", packs.ErrModified, name)
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	n, err := capability.ParseName(body.Capability)
	if err != nil {
		s.fail(w, fmt.Errorf("%w: %v", errBadRequest, err))
		return
	}
	scope := capability.ScopePersistent
	if body.Scope != "" {
		if scope, err = capability.ParseScope(body.Scope); err != nil {
			s.fail(w, fmt.Errorf("%w: %v", errBadRequest, err))
			return
		}
	}
	if scope == capability.ScopeChat && body.Chat == "" {
		s.fail(w, fmt.Errorf("%w: a chat grant names its chat: {\"chat\": \"chat_...\"}", errBadRequest))
		return
	}
	u := capability.UserGrant{Capability: n, Resources: body.Resources, Scope: scope}
	if inPlace {
		// Bound to the folder's content now (GrantInPlace checks the
		// request too).
		if err := s.grantInPlace(r.Context(), name, body.Chat, u); err != nil {
			s.fail(w, err)
			return
		}
		s.getPack(w, r)
		return
	}
	if err := capability.CheckGrant(ip.Pack.Request(), u); err != nil {
		s.fail(w, err)
		return
	}
	// packs.db and packs.lock's mirror change together, as for packs grant.
	if _, err := s.cfg.App.Grant(r.Context(), name, body.Chat, []capability.UserGrant{u}); err != nil {
		s.fail(w, err)
		return
	}
	s.getPack(w, r)
}

// revoke withdraws every grant of one capability from a pack.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	n, err := capability.ParseName(r.PathValue("capability"))
	if err != nil {
		s.fail(w, fmt.Errorf("%w: %v", errBadRequest, err))
		return
	}
	if _, err := s.cfg.App.Pack(r.Context(), name); isNotInstalled(err) && s.cfg.InPlace != nil {
		if _, err := s.cfg.InPlace.App.RevokeInPlace(r.Context(), s.cfg.InPlace.WorkDir, name, n); err != nil {
			s.fail(w, err)
			return
		}
		s.getPack(w, r)
		return
	} else if err != nil {
		s.fail(w, err)
		return
	}
	// packs.db, where every check reads grants, is revoked; the lock entry
	// follows, as after packs revoke. A modified pack keeps its entry (it
	// does not run anyway): the revoke stands and the reply shows the
	// status.
	if _, err := s.cfg.App.RevokeGrant(r.Context(), name, n); err != nil {
		s.fail(w, err)
		return
	}
	s.getPack(w, r)
}
