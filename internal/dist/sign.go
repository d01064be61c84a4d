package dist

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// SignatureNamespace is the SSH signature namespace of pack archives: what
// ssh-keygen -Y sign -n and -Y verify -n take. A signature made for another
// purpose (git commits use "git", files "file") never verifies as a pack's.
const SignatureNamespace = "packs"

// SignatureExt is appended to an archive's file name or URL to find its
// signature: weather.tar.gz.sig beside weather.tar.gz.
const SignatureExt = ".sig"

// maxSignatureBytes bounds a signature file; an armored ed25519 signature is
// under 400 bytes, an RSA-4096 one under 1.5 kB.
const maxSignatureBytes = 16 << 10

// Errors from signatures. Check them with errors.Is.
var (
	// ErrSignature: the signature is malformed, made for another namespace
	// or does not match the archive.
	ErrSignature = errors.New("packs: bad signature")
	// ErrUntrustedSigner: the signature is good but its key is not trusted.
	ErrUntrustedSigner = errors.New("packs: untrusted signer")
	// ErrSignerBlocked: the signature is by a key the policy blocks.
	ErrSignerBlocked = errors.New("packs: signer blocked")
	// ErrSignatureRequired: the source has no signature and one is required.
	ErrSignatureRequired = errors.New("packs: signature required")
)

// Trust says which archive signatures StageSource accepts. Keys are written
// as in authorized_keys or allowed_signers' key part: "ssh-ed25519 AAAA…"
// with an optional comment.
type Trust struct {
	Signers []string // keys whose signatures are accepted
	Blocked []string // keys whose signatures are refused, trusted or not
	Require bool     // refuse a source without a good, trusted signature
}

// SignArchive signs the archive read from r with the OpenSSH private key
// keyPEM (unencrypted; for a key with a passphrase use ssh-keygen -Y sign)
// and returns the armored signature, the same as
// ssh-keygen -Y sign -n packs -f KEY FILE writes to FILE.sig.
func SignArchive(r io.Reader, keyPEM []byte) ([]byte, error) {
	signer, err := ssh.ParsePrivateKey(keyPEM)
	if err != nil {
		var missing *ssh.PassphraseMissingError
		if errors.As(err, &missing) {
			return nil, fmt.Errorf("packs: sign: the key has a passphrase: sign with ssh-keygen -Y sign -n %s -f KEY FILE", SignatureNamespace)
		}
		return nil, fmt.Errorf("packs: sign: reading the private key: %w", err)
	}
	sig, err := sshsig.Sign(r, signer, sshsig.HashSHA512, SignatureNamespace)
	if err != nil {
		return nil, fmt.Errorf("packs: sign: %w", err)
	}
	return sshsig.Armor(sig), nil
}

// NormalizeKey parses an authorized_keys-style line and returns its key
// part, "TYPE BASE64", the form the lock and error messages use.
func NormalizeKey(line string) (string, error) {
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(line))
	if err != nil {
		return "", fmt.Errorf("packs: key %q: %w", shorten(line), err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))), nil
}

// VerifyArchive checks the armored SSH signature sig over the archive read
// from r against t and returns the signer's key ("TYPE BASE64"). The
// signature must be in namespace "packs"; its key must not be blocked and
// must be one of t.Signers.
func (t Trust) VerifyArchive(r io.Reader, sig []byte) (string, error) {
	s, err := sshsig.Unarmor(sig)
	if err != nil {
		return "", fmt.Errorf("%w: not an SSH signature (%v)", ErrSignature, err)
	}
	signer := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.PublicKey)))
	if s.Namespace != SignatureNamespace {
		return "", fmt.Errorf("%w: made for namespace %q, not %q", ErrSignature, s.Namespace, SignatureNamespace)
	}
	if err := sshsig.Verify(r, s, s.PublicKey, s.HashAlgorithm, SignatureNamespace); err != nil {
		return "", fmt.Errorf("%w: the signature by %s does not match the archive: it was changed after signing, or the signature is for another file", ErrSignature, shorten(signer))
	}
	if slices.Contains(normalizeAll(t.Blocked), signer) {
		return "", fmt.Errorf("%w: %s", ErrSignerBlocked, shorten(signer))
	}
	if !slices.Contains(normalizeAll(t.Signers), signer) {
		return "", fmt.Errorf("%w: the archive is signed by %s, which is not a trusted signer", ErrUntrustedSigner, shorten(signer))
	}
	return signer, nil
}

// normalizeAll is NormalizeKey of each line; lines that are not keys are
// dropped (callers validate their configuration when they read it).
func normalizeAll(lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if k, err := NormalizeKey(l); err == nil {
			out = append(out, k)
		}
	}
	return out
}

// shorten keeps a key recognizable in one line: type and the last 16
// characters of its base64.
func shorten(key string) string {
	typ, b64, ok := strings.Cut(strings.TrimSpace(key), " ")
	if !ok {
		if len(key) > 40 {
			return key[:40] + "…"
		}
		return key
	}
	b64, _, _ = strings.Cut(b64, " ")
	if len(b64) > 16 {
		b64 = "…" + b64[len(b64)-16:]
	}
	return typ + " " + b64
}

// checkArchiveSignature verifies the archive file against the signature
// bytes sig (nil when the source has none) under t, returning the signer.
func checkArchiveSignature(file string, sig []byte, t Trust) (string, error) {
	if sig == nil {
		if t.Require {
			return "", fmt.Errorf("%w: no signature (%s beside the archive): ask the author for a signed archive", ErrSignatureRequired, SignatureExt)
		}
		return "", nil
	}
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return t.VerifyArchive(f, sig)
}

// readLocalSignature reads file+".sig", or nil when there is none.
func readLocalSignature(file string) ([]byte, error) {
	f, err := os.Open(file + SignatureExt)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	if n, err := io.Copy(&b, io.LimitReader(f, maxSignatureBytes+1)); err != nil {
		return nil, err
	} else if n > maxSignatureBytes {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrSignature, file+SignatureExt, maxSignatureBytes)
	}
	return b.Bytes(), nil
}
