package httpguard

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// TokenBytes is how many random bytes NewToken draws: 256 bits, beyond
// guessing by anything that can reach the port.
const TokenBytes = 32

// MinTokenLen is the shortest token a server accepts, in bytes. A token a
// person configures is at least this long; NewToken's are 43.
const MinTokenLen = 32

// ErrWeakToken is returned by CheckToken for a token that is missing, too
// short, or holds characters a header or URL would mangle.
var ErrWeakToken = errors.New("httpguard: weak token")

// NewToken returns a fresh token: TokenBytes from crypto/rand, base64url
// without padding, so it goes into a URL, a cookie and a header as is.
func NewToken() (string, error) {
	b := make([]byte, TokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("httpguard: making a token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// CheckToken returns nil when token can guard a server: at least
// MinTokenLen printable ASCII characters, none of them a space, quote,
// semicolon or backslash (which a header, cookie or URL would mangle).
func CheckToken(token string) error {
	if len(token) < MinTokenLen {
		return fmt.Errorf("%w: it has %d characters, want at least %d", ErrWeakToken, len(token), MinTokenLen)
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; c <= ' ' || c >= 0x7f || strings.IndexByte(`"',;\`, c) >= 0 {
			return fmt.Errorf("%w: character %d is not printable ASCII or is one of \"',;\\", ErrWeakToken, i+1)
		}
	}
	return nil
}

// TokenMatches reports whether got is want, in time that depends on
// neither: both are hashed to SHA-256 first, so even their lengths do not
// show, and the digests are compared with crypto/subtle. An empty want
// matches nothing.
func TokenMatches(got, want string) bool {
	if want == "" {
		return false
	}
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// BearerToken returns the token of r's "Authorization: Bearer TOKEN"
// header (the scheme in any case), and whether there was one.
func BearerToken(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return "", false
	}
	return tok, true
}
