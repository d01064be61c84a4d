package hostfns

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	extism "github.com/extism/go-sdk"

	"github.com/packs-run/packs/capability"
)

// SecretsNamespace holds secret_get, the one host function that hands a
// secret's value to a guest. A module that imports it runs only under a
// grant that reveals (capability.Grant.Reveals); injecting a secret into a
// request needs no import at all.
const SecretsNamespace = "packs:host/secrets"

// ErrSecretUnavailable means a granted secret's value was not given to the
// call (WithSecrets): the runtime supplies every granted one or refuses the
// call before it starts.
var ErrSecretUnavailable = errors.New("hostfns: secret value not available to this call")

// Masked replaces a secret's value wherever it would leave the host.
const Masked = "[secret]"

// Secrets are the values of the secrets one call's grant holds, as the
// runtime read them from the store. The runtime builds it (NewSecrets) with
// the granted names only and passes it through the context (WithSecrets);
// nothing outside this package reads a value back, and nothing changes it.
type Secrets struct {
	vals map[string]string
	// masks lists each value in every form it can come back in
	// (wireForms), longest first, so a value inside another is masked by
	// the longer first; masker replaces them all in one pass (a value
	// inside Masked is not masked again).
	masks  []string
	masker *strings.Replacer
}

// NewSecrets copies vals (name to value). Empty values are dropped.
func NewSecrets(vals map[string][]byte) *Secrets {
	s := &Secrets{vals: make(map[string]string, len(vals))}
	seen := map[string]bool{}
	for n, v := range vals {
		if len(v) == 0 {
			continue
		}
		s.vals[n] = string(v)
		for _, m := range wireForms(string(v)) {
			if m != "" && !seen[m] {
				seen[m] = true
				s.masks = append(s.masks, m)
			}
		}
	}
	sort.Slice(s.masks, func(i, j int) bool { return len(s.masks[i]) > len(s.masks[j]) })
	pairs := make([]string, 0, 2*len(s.masks))
	for _, m := range s.masks {
		pairs = append(pairs, m, Masked)
	}
	s.masker = strings.NewReplacer(pairs...)
	return s
}

// wireForms lists the forms of v that can come back from a server or a
// tool: v as is; each encoding the host applies when it injects v
// (percent-encoding in a query parameter, as url.Values.Encode writes it
// with "+" for a space, and with "%20"; a header value, whose surrounding
// whitespace the server trims); and each of those escaped as inside a JSON
// string, with and without HTML escaping, since a server that echoes the
// request often answers in JSON. A header value holding a control
// character is refused by net/http before it is sent, so no folded form
// reaches a server.
func wireForms(v string) []string {
	query := url.QueryEscape(v)
	plain := []string{v, query, strings.ReplaceAll(query, "+", "%20"), strings.TrimSpace(v)}
	forms := slices.Clone(plain)
	for _, f := range plain {
		forms = append(forms, jsonEscape(f, true), jsonEscape(f, false))
	}
	return forms
}

// jsonEscape returns v as it appears between the quotes of a JSON string.
func jsonEscape(v string, html bool) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(html)
	e.Encode(v) // a string always encodes
	q := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	return string(q[1 : len(q)-1])
}

// Mask returns b with every value, in each form wireForms lists,
// replaced by Masked. A nil Secrets masks nothing.
func (s *Secrets) Mask(b []byte) []byte {
	if !s.Holds(b) {
		return b
	}
	return []byte(s.masker.Replace(string(b)))
}

// minCut is the shortest start of a value that MaskCut masks at the end of
// a cut text: shorter, a text's last letters would be masked too often.
const minCut = 4

// MaskCut is Mask for a text cut short (a body the timeout truncated): it
// also masks the start of a value that ends the text, which Mask cannot
// recognise.
func (s *Secrets) MaskCut(b []byte) []byte {
	b = s.Mask(b)
	if s == nil {
		return b
	}
	for _, m := range s.masks {
		for n := min(len(m)-1, len(b)); n >= minCut; n-- {
			if bytes.HasSuffix(b, []byte(m[:n])) {
				return append(b[:len(b)-n:len(b)-n], Masked...)
			}
		}
	}
	return b
}

// MaskString is Mask for a string.
func (s *Secrets) MaskString(v string) string {
	if s == nil || len(s.masks) == 0 {
		return v
	}
	return s.masker.Replace(v)
}

// Holds reports whether b holds any value, in any form wireForms lists.
func (s *Secrets) Holds(b []byte) bool {
	if s == nil {
		return false
	}
	for _, m := range s.masks {
		if bytes.Contains(b, []byte(m)) {
			return true
		}
	}
	return false
}

func (s *Secrets) get(name string) (string, bool) {
	if s == nil {
		return "", false
	}
	v, ok := s.vals[name]
	return v, ok
}

type secretsKey struct{}

// WithSecrets returns a context under which the host functions of calls
// started with it inject (and, where the grant reveals, return) the values
// in s. Like WithReserved, only the host's Go code sets it.
func WithSecrets(ctx context.Context, s *Secrets) context.Context {
	return context.WithValue(ctx, secretsKey{}, s)
}

func secretsFrom(ctx context.Context) *Secrets {
	s, _ := ctx.Value(secretsKey{}).(*Secrets)
	return s
}

// injectable reports whether a secret may travel to u at all: over https,
// or over plain http only to a loopback address or localhost (the same
// machine), so no binding ever sends a credential in the clear across a
// network.
func injectable(scheme, hostname string) bool {
	if scheme == "https" {
		return true
	}
	if hostname == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(hostname, "[]"))
	return err == nil && ip.IsLoopback()
}

// inject adds the grant's bindings for the host of req to a copy of req:
// each use is decided (capability.Grant.Secret) and recorded with the
// secret's name and the host as its resource; a binding of a secret not
// granted is recorded as a denial and the request goes without it. The host of req was already
// decided by name (decideURL, checkRedirect); the dial is decided when the
// transport connects, before a byte of the request is sent. A redirect is
// a new request and gets only its own host's bindings: none when the host
// changed.
func inject(req *http.Request) (*http.Request, error) {
	c, ok := CallFrom(req.Context())
	if !ok {
		return nil, ErrNoCall
	}
	binds := c.Grant.Bindings()
	if len(binds) == 0 {
		return req, nil
	}
	hostname := req.URL.Hostname()
	port := uint16(80)
	if req.URL.Scheme == "https" {
		port = 443
	}
	if p := req.URL.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("%w: bad port %q", ErrInvalidRequest, p)
		}
		port = uint16(n)
	}
	if name, ip, err := capability.ParseHost(hostname); err == nil && name == "" {
		hostname = ip.String()
	}
	var out *http.Request
	for _, b := range binds {
		if !b.Matches(hostname, port) {
			continue
		}
		resource := b.Name + "@" + hostPort(hostname, port)
		d := c.Grant.Secret(b.Name)
		ex := d.Record(c.Pack, c.Tool, c.Invocation)
		ex.Resource = resource
		if d.Allowed() && !injectable(req.URL.Scheme, hostname) {
			ex.Allowed, ex.Layer, ex.Reason = false, capability.LayerRequest, "a secret travels only over https, or plain http to this machine"
		}
		if err := c.record(ex); err != nil {
			return nil, err
		}
		if !d.Allowed() {
			// Not granted: recorded, and the request goes without it.
			continue
		}
		if !ex.Allowed {
			return nil, &capability.DeniedError{Capability: capability.SecretsAccess, Resource: resource, Layer: ex.Layer, Reason: ex.Reason, Cause: capability.ErrNotRequested}
		}
		v, ok := secretsFrom(req.Context()).get(b.Name)
		if !ok {
			return nil, fmt.Errorf("%w: %s", ErrSecretUnavailable, b.Name)
		}
		if out == nil {
			out = req.Clone(req.Context())
		}
		if b.Header != "" {
			out.Header.Set(b.Header, b.Render(v))
			continue
		}
		q := out.URL.Query()
		q.Set(b.Query, b.Render(v))
		out.URL.RawQuery = q.Encode()
	}
	if out == nil {
		return req, nil
	}
	return out, nil
}

func hostPort(hostname string, port uint16) string {
	if strings.Contains(hostname, ":") {
		hostname = "[" + hostname + "]"
	}
	return hostname + ":" + strconv.Itoa(int(port))
}

// injecting is a transport that adds a call's secret bindings to each
// request it sends, first and every redirect hop alike.
type injecting struct{ next http.RoundTripper }

func (t injecting) RoundTrip(req *http.Request) (*http.Response, error) {
	r, err := inject(req)
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return t.next.RoundTrip(r)
}

// secretGet is secret_get(name) -> value: the value of a secret the grant
// reveals (capability.Grant.SecretReveal), decided and recorded; a denial
// or a secret the runtime did not supply traps.
func secretGet(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
	c := mustCall(ctx)
	name := mustRead(p, stack[0])
	if err := c.decide(c.Grant.SecretReveal(name)); err != nil {
		panic(err)
	}
	v, ok := secretsFrom(ctx).get(name)
	if !ok {
		panic(fmt.Errorf("%w: %s", ErrSecretUnavailable, name))
	}
	stack[0] = mustWrite(p, []byte(v))
}
