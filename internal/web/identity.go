package web

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/identity"
)

// The roles a route declares (route.roles). Every /v1 route declares one:
// TestEveryRouteHasARole fails for a route without.
const (
	admin   = identity.Admin
	member  = identity.Member
	auditor = identity.Auditor
	// people is admin or member: the chats' and the packs' readers.
	people = identity.Admin | identity.Member
	// public routes need no sign-in: they describe the server and hold no
	// data (the guard reads them from the table).
	public identity.Roles = 1 << 7
)

// personKey holds the Person of a request that carried the token, a
// signed-in session or a bearer JWT.
type personKey struct{}

// personOf returns who made r, and false for a request that carried no
// credential (a public one).
func personOf(r *http.Request) (identity.Person, bool) {
	p, ok := r.Context().Value(personKey{}).(identity.Person)
	return p, ok
}

func isAuthenticated(r *http.Request) bool {
	_, ok := personOf(r)
	return ok
}

func withPerson(r *http.Request, p identity.Person) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), personKey{}, p))
}

// owner is the chat owner a person's new chats get.
func owner(p identity.Person) chat.Owner { return chat.Owner{Issuer: p.Issuer, Subject: p.Subject} }

// allow wraps a route's handler with its declared roles and, for the
// routes that act on one chat (their pattern says which: see chatOfRoute),
// the chat's ownership: someone else's chat is answered as if it did not
// exist. An admin sees every chat.
func (s *Server) allow(rt route) http.HandlerFunc {
	if rt.roles == public {
		return rt.handler
	}
	chatOf := s.chatOfRoute(rt.pattern)
	return func(w http.ResponseWriter, r *http.Request) {
		p, _ := personOf(r)
		if !p.Roles.Has(rt.roles) {
			writeError(w, http.StatusForbidden, codeForbidden, "web: "+rt.pattern+" needs one of the roles "+rt.roles.String()+"; "+p.Name+" holds "+p.Roles.String()+": ask an admin, or have the policy's [roles] give it")
			return
		}
		if chatOf != nil {
			if id, ok := chatOf(r); ok && !s.canSee(r.Context(), p, id) {
				writeError(w, http.StatusNotFound, codeNotFound, "web: no "+strings.TrimSpace(r.PathValue("id"))+" of yours: it belongs to someone else, or does not exist")
				return
			}
		}
		rt.handler(w, r)
	}
}

// chatOfRoute returns, for a route that acts on one chat or on something
// waiting in one (a call, a question, a parameter form, a call an MCP
// session queued), how to find that
// chat from a request; nil for the other routes. false: nothing of that
// id exists (the handler says so).
func (s *Server) chatOfRoute(pattern string) func(*http.Request) (string, bool) {
	_, path, _ := strings.Cut(pattern, " ")
	switch {
	case strings.HasPrefix(path, "/v1/chats/{id}"):
		return func(r *http.Request) (string, bool) { return r.PathValue("id"), true }
	case path == "/v1/invocations/{id}/parameters":
		return func(r *http.Request) (string, bool) { return s.pending.q.chatOf(r.PathValue("id")) }
	case strings.HasPrefix(path, "/v1/invocations/{id}/"):
		return func(r *http.Request) (string, bool) { return s.pending.chatOf(r.PathValue("id")) }
	case strings.HasPrefix(path, "/v1/questions/{id}/"):
		return func(r *http.Request) (string, bool) { return s.questions.chatOf(r.PathValue("id")) }
	case strings.HasPrefix(path, "/v1/queue/{id}/"):
		return func(r *http.Request) (string, bool) {
			q, err := s.cfg.Chat.Store.Queued(r.Context(), r.PathValue("id"))
			return q.Chat, err == nil
		}
	}
	return nil
}

// canSee reports whether p may see chat id: theirs, or p is an admin. A
// chat that does not exist (or cannot be read) is no one's but an
// admin's: it answers 404 either way.
func (s *Server) canSee(ctx context.Context, p identity.Person, id string) bool {
	if p.Roles.Has(admin) {
		return true
	}
	s.mu.Lock()
	cs, open := s.chats[id]
	s.mu.Unlock()
	var o chat.Owner
	if open {
		o = cs.s.Owner()
	} else {
		var err error
		if o, err = chat.OwnerOf(ctx, s.cfg.App.DB, id); err != nil {
			return false
		}
	}
	return p.Owns(o.Issuer, o.Subject)
}

// policy shows the enterprise policy in effect: an admin's view.
func (s *Server) policy(w http.ResponseWriter, r *http.Request) {
	pol := s.cfg.Chat.Pipeline.Policy()
	text, err := pol.Format()
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"source": pol.Source(), "effective": text})
}

// signin is the web sign-in of one Handler: its login flows and the
// names of its cookies, which carry the bound address so that two servers
// on one host keep apart.
type signin struct {
	login                      *identity.Login // nil without --oidc-issuer
	loginCookie, sessionCookie string
	log                        *slog.Logger
}

// signIn starts the web sign-in: the browser goes to the issuer, with the
// sign-in's state in a cookie too, so that only this browser can finish it.
func (a signin) signIn(w http.ResponseWriter, r *http.Request) {
	if a.login == nil {
		writeError(w, http.StatusNotFound, codeNotFound, "web: sign-in is not configured: start packs serve with --oidc-issuer, or open the address it printed")
		return
	}
	to, state, err := a.login.Start(callbackURL(r))
	if err != nil {
		w.Header().Set("Retry-After", "60")
		writeError(w, http.StatusTooManyRequests, codeBadRequest, "web: "+err.Error()+": try again in a minute")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: a.loginCookie, Value: state, Path: "/auth/", MaxAge: 600, HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// callbackURL is where the issuer sends the browser back: this server, at
// the Host the browser used (the guard allowed it).
func callbackURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/auth/callback"
}

// signedIn finishes the sign-in: the code is exchanged (with the PKCE
// verifier), the ID token verified, and the session's id set in an
// HttpOnly, SameSite=Strict cookie.
func (a signin) signedIn(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if a.login == nil {
		writeError(w, http.StatusNotFound, codeNotFound, "web: sign-in is not configured")
		return
	}
	q := r.URL.Query()
	c, err := r.Cookie(a.loginCookie)
	http.SetCookie(w, &http.Cookie{Name: a.loginCookie, Path: "/auth/", MaxAge: -1, HttpOnly: true})
	switch {
	case q.Get("error") != "":
		writeError(w, http.StatusUnauthorized, codeUnauthorized, "web: the issuer refused the sign-in: "+q.Get("error")+" "+q.Get("error_description"))
		return
	case err != nil || c.Value != q.Get("state"):
		writeError(w, http.StatusUnauthorized, codeUnauthorized, "web: this sign-in was not started in this browser: open /auth/login again")
		return
	}
	sid, p, err := a.login.Finish(r.Context(), q.Get("state"), q.Get("code"))
	if err != nil {
		a.log.Warn("web: sign-in refused", "err", err)
		code := http.StatusUnauthorized
		if errors.Is(err, identity.ErrNoRole) {
			code = http.StatusForbidden
		}
		writeError(w, code, codeUnauthorized, "web: sign-in refused: "+err.Error())
		return
	}
	a.log.Info("web: signed in", "subject", p.Subject, "name", p.Name, "roles", p.Roles.String())
	http.SetCookie(w, &http.Cookie{Name: a.sessionCookie, Value: sid, Path: "/", MaxAge: int(identity.SessionTTL.Seconds()), HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// signOut ends the session of the request.
func (a signin) signOut(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(a.sessionCookie); err == nil && a.login != nil {
		a.login.End(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: a.sessionCookie, Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	writeJSON(w, http.StatusOK, map[string]bool{"signed_out": true})
}

// sessionCookieName is the cookie of a signed-in session; like the
// token's, it carries the port.
func sessionCookieName(boundAddr string) string {
	_, port, _ := net.SplitHostPort(boundAddr)
	return "packs_session_" + port
}

// personJSON is who the status says is signed in.
type personJSON struct {
	Name    string   `json:"name"`
	Subject string   `json:"subject,omitempty"`
	Issuer  string   `json:"issuer,omitempty"`
	Roles   []string `json:"roles"`
}
