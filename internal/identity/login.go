package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// SessionTTL is how long a web sign-in lasts. The issuer is asked again
// after it.
const SessionTTL = 8 * time.Hour

// flowTTL is how long a sign-in may take at the issuer.
const flowTTL = 10 * time.Minute

// maxFlows bounds the sign-ins under way: anyone can start one, so past
// it Start refuses (ErrBusy) until some finish or expire.
const maxFlows = 4096

// ErrBusy: too many sign-ins are under way; try again shortly.
var ErrBusy = errors.New("identity: too many sign-ins under way")

// Login is the web app's sign-in: the authorization code flow with PKCE
// (RFC 7636) and a nonce, and the sessions it opens. Sessions live in
// memory: a restarted server asks everyone to sign in again.
type Login struct {
	p *Provider

	mu       sync.Mutex
	flows    map[string]flow     // by state
	sessions map[[32]byte]opened // by the session id's SHA-256
}

type flow struct {
	verifier, nonce, redirect string
	started                   time.Time
}

type opened struct {
	person Person
	expiry time.Time
}

// NewLogin starts the web sign-in of p.
func (p *Provider) NewLogin() *Login {
	return &Login{p: p, flows: map[string]flow{}, sessions: map[[32]byte]opened{}}
}

// Start begins a sign-in that returns to redirectURL: it returns the
// issuer's address to send the browser to, and the state, which the
// browser must also carry back in a cookie (so that a sign-in started in
// one browser cannot be finished in another).
func (l *Login) Start(redirectURL string) (authURL, state string, err error) {
	f := flow{verifier: oauth2.GenerateVerifier(), nonce: rand.Text(), redirect: redirectURL, started: l.p.cfg.Now()}
	state = rand.Text()
	l.mu.Lock()
	l.sweep(f.started)
	full := len(l.flows) >= maxFlows
	if !full {
		l.flows[state] = f
	}
	l.mu.Unlock()
	if full {
		return "", "", ErrBusy
	}
	return l.p.OAuth2(redirectURL).AuthCodeURL(state, oauth2.S256ChallengeOption(f.verifier), oidc.Nonce(f.nonce)), state, nil
}

// Finish ends the sign-in of state with the code the issuer returned: the
// code is exchanged with the PKCE verifier, the ID token verified (issuer,
// audience, expiry, nonce) and a session opened. It returns the session's
// id, for a cookie.
func (l *Login) Finish(ctx context.Context, state, code string) (string, Person, error) {
	l.mu.Lock()
	f, ok := l.flows[state]
	delete(l.flows, state)
	l.mu.Unlock()
	now := l.p.cfg.Now()
	if !ok || now.Sub(f.started) > flowTTL {
		return "", Person{}, fmt.Errorf("%w: no sign-in %q is under way: start again", ErrUnauthenticated, state)
	}
	tok, err := l.p.OAuth2(f.redirect).Exchange(l.p.ctx(ctx), code, oauth2.VerifierOption(f.verifier))
	if err != nil {
		return "", Person{}, fmt.Errorf("%w: the code exchange: %w", ErrUnauthenticated, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return "", Person{}, fmt.Errorf("%w: the issuer returned no ID token", ErrUnauthenticated)
	}
	id, err := l.p.verifier.Verify(l.p.ctx(ctx), raw)
	if err != nil {
		return "", Person{}, fmt.Errorf("%w: the ID token: %w", ErrUnauthenticated, err)
	}
	if id.Nonce != f.nonce {
		return "", Person{}, fmt.Errorf("%w: the ID token's nonce is not this sign-in's", ErrUnauthenticated)
	}
	per, err := l.p.person(id)
	if err != nil {
		return "", Person{}, err
	}
	sid := rand.Text() + rand.Text()
	l.mu.Lock()
	l.sessions[sha256.Sum256([]byte(sid))] = opened{person: per, expiry: now.Add(SessionTTL)}
	l.mu.Unlock()
	return sid, per, nil
}

// Session returns the person of an open session.
func (l *Login) Session(sid string) (Person, bool) {
	k := sha256.Sum256([]byte(sid))
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.sessions[k]
	if !ok {
		return Person{}, false
	}
	if !l.p.cfg.Now().Before(s.expiry) {
		delete(l.sessions, k)
		return Person{}, false
	}
	return s.person, true
}

// End closes a session (sign out).
func (l *Login) End(sid string) {
	l.mu.Lock()
	delete(l.sessions, sha256.Sum256([]byte(sid)))
	l.mu.Unlock()
}

// sweep drops sign-ins that were never finished and expired sessions.
// The caller holds l.mu.
func (l *Login) sweep(now time.Time) {
	for k, f := range l.flows {
		if now.Sub(f.started) > flowTTL {
			delete(l.flows, k)
		}
	}
	for k, s := range l.sessions {
		if !now.Before(s.expiry) {
			delete(l.sessions, k)
		}
	}
}
