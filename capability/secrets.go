package capability

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// RevealPrefix marks a secrets_access resource that lets the tool read the
// value itself ("reveal:NAME"), not only have the host inject it. A person
// grants it only by naming it: a bare secrets_access grant covers the
// injected names and never a reveal.
const RevealPrefix = "reveal:"

// SecretPlaceholder is how an injection's value template names its secret:
// "Bearer {{secret.GITHUB_TOKEN}}".
func SecretPlaceholder(name string) string { return "{{secret." + name + "}}" }

// ErrBadSecretName is wrapped by CheckSecretName's errors.
var ErrBadSecretName = errors.New("capability: invalid secret name")

// CheckSecretName reports whether name may name a secret: 1 to 128
// characters from A-Z, a-z, 0-9, '_', '-' and '.', starting with a letter
// or '_' (no ':', so "reveal:" stays unambiguous; no braces or spaces, so a
// placeholder reads one way).
func CheckSecretName(name string) error {
	if name == "" || len(name) > 128 {
		return fmt.Errorf("%w: %q must be 1 to 128 characters", ErrBadSecretName, name)
	}
	for i, r := range name {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case (r >= '0' && r <= '9' || r == '-' || r == '.') && i > 0:
		default:
			return fmt.Errorf("%w: %q: use letters, digits, '_', '-' and '.', starting with a letter or '_'", ErrBadSecretName, name)
		}
	}
	return nil
}

// secretName strips RevealPrefix from a secrets_access resource.
func secretName(resource string) (name string, reveal bool) {
	name, reveal = strings.CutPrefix(resource, RevealPrefix)
	return name, reveal
}

func checkSecretResource(s string) error {
	name, _ := secretName(s)
	return CheckSecretName(name)
}

// SecretInjection binds a requested secret to the requests of one host:
// the network host function sets Header (or the query parameter Query) to
// Value, with the placeholder replaced by the secret, on every request to
// Host, and on no other. The guest never sees the value.
type SecretInjection struct {
	Name   string // the secret, listed in secrets_access
	Host   string // "name" or "name:port" (an address literal is allowed); within the network request
	Header string // exactly one of Header and Query
	Query  string
	Value  string // holds SecretPlaceholder(Name) exactly once; empty means just the placeholder
}

// forbiddenInjectHeaders are headers the HTTP client owns.
var forbiddenInjectHeaders = []string{"Host", "Content-Length", "Transfer-Encoding", "Connection", "Upgrade", "Te", "Trailer", "Keep-Alive", "Proxy-Connection"}

// InjectionError is a binding that does not hold; Index is its position.
type InjectionError struct {
	Index  int
	Reason string
}

func (e *InjectionError) Error() string {
	return fmt.Sprintf("capability: secrets inject[%d]: %s", e.Index, e.Reason)
}

// check validates one binding against the compiled request.
func (in SecretInjection) check(c *compiled) error {
	if err := CheckSecretName(in.Name); err != nil {
		return err
	}
	if !slices.ContainsFunc(c.secrets, func(s string) bool { n, _ := secretName(s); return n == in.Name }) {
		return fmt.Errorf("secret %s is not in secrets_access", in.Name)
	}
	if _, _, err := parseDest(in.Host); err != nil {
		return err
	}
	if !slices.ContainsFunc(c.hosts, func(p HostPattern) bool { return p.Match(in.Host) }) {
		return fmt.Errorf("host %q is not within the pack's network request", in.Host)
	}
	switch {
	case (in.Header == "") == (in.Query == ""):
		return errors.New("set exactly one of header and query")
	case in.Header != "" && !httpguts.ValidHeaderFieldName(in.Header):
		return fmt.Errorf("header %q is not a valid header name", in.Header)
	case in.Header != "" && slices.Contains(forbiddenInjectHeaders, http.CanonicalHeaderKey(in.Header)):
		return fmt.Errorf("header %q is the HTTP client's own", in.Header)
	case in.Query != "" && strings.ContainsAny(in.Query, "&=#?% \t\r\n"):
		return fmt.Errorf("query parameter %q holds a reserved character", in.Query)
	}
	v := in.template()
	if strings.Count(v, SecretPlaceholder(in.Name)) != 1 || strings.Count(v, "{{") != 1 {
		return fmt.Errorf("value must hold %s exactly once and no other placeholder", SecretPlaceholder(in.Name))
	}
	if !httpguts.ValidHeaderFieldValue(v) {
		return errors.New("value holds a control character")
	}
	return nil
}

func (in SecretInjection) template() string {
	if in.Value == "" {
		return SecretPlaceholder(in.Name)
	}
	return in.Value
}

// Render returns the header or query value with the secret put in.
func (in SecretInjection) Render(secret string) string {
	return strings.Replace(in.template(), SecretPlaceholder(in.Name), secret, 1)
}

// Matches reports whether the binding applies to a request to hostname
// (canonical, as ParseHost returns it) on port.
func (in SecretInjection) Matches(hostname string, port uint16) bool {
	h, p, err := parseDest(in.Host)
	if err != nil {
		return false
	}
	name := h.name
	if name == "" {
		name = h.ip.String()
	}
	_, _, hasPort, _ := splitPort(in.Host)
	return name == hostname && (!hasPort || p == port)
}

// Secret decides whether the pack may use the named secret: have the host
// inject it (a grant of NAME or of reveal:NAME).
func (g Grant) Secret(name string) Decision {
	if !g.Has(SecretsAccess) {
		return g.missing(SecretsAccess, name)
	}
	for _, s := range g.g.c.secrets {
		if n, _ := secretName(s); n == name {
			return allow(SecretsAccess, name, "granted secret")
		}
	}
	return g.outside(SecretsAccess, name, func(it item) bool { n, _ := secretName(it.raw); return n == name })
}

// SecretReveal decides whether the pack may read the named secret's value
// itself: only a grant of reveal:NAME allows it.
func (g Grant) SecretReveal(name string) Decision {
	res := RevealPrefix + name
	if !g.Has(SecretsAccess) {
		return g.missing(SecretsAccess, res)
	}
	if slices.Contains(g.g.c.secrets, res) {
		return allow(SecretsAccess, res, "granted reveal")
	}
	return g.outside(SecretsAccess, res, func(it item) bool { return it.raw == res })
}

// Reveals reports whether the grant lets the tool read any secret itself:
// only then does it get the secret_get host function.
func (g Grant) Reveals() bool {
	if !g.Has(SecretsAccess) {
		return false
	}
	return slices.ContainsFunc(g.g.c.secrets, func(s string) bool { return strings.HasPrefix(s, RevealPrefix) })
}

// SecretNames lists the names of the held secrets, each once: the values a
// call needs from the store.
func (g Grant) SecretNames() []string {
	if !g.Has(SecretsAccess) {
		return nil
	}
	var out []string
	for _, s := range g.g.c.secrets {
		out = appendUnique(out, strings.TrimPrefix(s, RevealPrefix))
	}
	return out
}

// holdsSecret reports whether the finished grant holds name, to inject.
func (g *grant) holdsSecret(name string) bool {
	return slices.ContainsFunc(g.c.secrets, func(s string) bool { n, _ := secretName(s); return n == name })
}

// Injections returns the bindings of the held secrets.
func (g Grant) Injections() []SecretInjection {
	if g.g == nil {
		return nil
	}
	var out []SecretInjection
	for _, in := range g.g.inject {
		if g.Has(SecretsAccess) && g.g.holdsSecret(in.Name) {
			out = append(out, in)
		}
	}
	return out
}

// Bindings returns every binding the pack's request makes, held or not:
// the network host function decides each use (Secret) and records a
// binding it may not use as a denial.
func (g Grant) Bindings() []SecretInjection {
	if g.g == nil {
		return nil
	}
	return slices.Clone(g.g.inject)
}

// DescribeSecret says in plain words what a secrets_access resource lets a
// tool do, for an approval card.
func DescribeSecret(resource string) string {
	if name, ok := secretName(resource); ok {
		return "reveals the secret " + name + " to the tool: the tool reads its value and could send it anywhere it can reach"
	}
	return "uses the secret " + resource + " in requests the host makes; the tool never sees its value"
}
