package dist

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/packs-run/packs/packs"
	"oras.land/oras-go/v2/registry"
)

// Errors from fetching a remote source. Check them with errors.Is.
var (
	// ErrSourceInvalid: the source string is not one packs add understands.
	ErrSourceInvalid = errors.New("packs: invalid source")
	// ErrRefNotFound: a git source names a branch, tag or commit the
	// repository does not have.
	ErrRefNotFound = errors.New("packs: ref not found")
	// ErrFetch: the server could not be reached or answered with an error.
	ErrFetch = errors.New("packs: fetch failed")
	// ErrDigestMismatch: downloaded bytes do not have the pinned digest.
	ErrDigestMismatch = errors.New("packs: digest mismatch")
	// ErrUnpinned: a URL source has no #sha256= digest and the caller did
	// not allow that.
	ErrUnpinned = errors.New("packs: unpinned source")
)

// SourceKind tells how a source is fetched.
type SourceKind int

// The kinds of source.
const (
	SourceLocal SourceKind = iota // a folder or a .tar.gz/.tgz file on disk
	SourceGit                     // git+https://, git+http://, git+file://
	SourceURL                     // https:// (or http://) to a .tar.gz
	SourceOCI                     // oci://REGISTRY/REPO:TAG or @sha256:…
)

// Source is a parsed packs add SOURCE:
//
//	PATH                                   a folder or .tar.gz on disk
//	git+https://HOST/REPO[#REF][:SUBDIR]   git over smart HTTP(S)
//	git+file:///PATH[#REF][:SUBDIR]        a git repository on disk
//	https://HOST/…/x.tar.gz#sha256=HEX     an archive, pinned by digest
//
// REF is a branch, a tag or a commit (4 to 40 hex digits, always a commit
// even if a branch or tag has that name); without it
// the repository's HEAD. SUBDIR is the pack folder inside the repository.
type Source struct {
	Kind   SourceKind
	Raw    string // as given
	URL    string // for git, the repository URL without "git+", #REF and :SUBDIR; for URL, without the fragment
	Ref    string // git only
	Subdir string // git only; slash-separated, clean, relative
	Digest string // URL only: "sha256:" and 64 hex digits, or ""
}

var (
	sha256HexPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// a ref git would accept: no spaces, control characters, "..", "~^:?*[\".
	refPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/+-]*$`)
)

// ParseSource reads a packs add SOURCE. A string without "://" is a local
// path. Any other scheme is ErrSourceInvalid, with the forms that work.
func ParseSource(s string) (Source, error) {
	src := Source{Raw: s}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || strings.ContainsAny(scheme, `/\`) || scheme == "" {
		src.Kind = SourceLocal
		return src, nil
	}
	bad := func(format string, args ...any) (Source, error) {
		return Source{}, fmt.Errorf("%w: %s: %s", ErrSourceInvalid, s, fmt.Sprintf(format, args...))
	}
	switch strings.ToLower(scheme) {
	case "git+https", "git+http", "git+file":
		src.Kind = SourceGit
		transport := strings.TrimPrefix(strings.ToLower(scheme), "git+")
		// The subdir follows the last ':' after the host part; the ref is
		// between '#' and that ':'.
		body := rest
		hostEnd := strings.IndexByte(body, '/')
		if transport == "file" {
			hostEnd = 0
		}
		if hostEnd < 0 {
			return bad("no repository path after the host: write git+https://HOST/REPO")
		}
		if i := strings.LastIndexByte(body[hostEnd:], ':'); i >= 0 {
			src.Subdir, body = body[hostEnd+i+1:], body[:hostEnd+i]
			if src.Subdir == "" {
				return bad("empty subfolder after ':': name the pack folder or drop the ':'")
			}
		}
		if i := strings.IndexByte(body, '#'); i >= 0 {
			src.Ref, body = body[i+1:], body[:i]
			if !refPattern.MatchString(src.Ref) || strings.Contains(src.Ref, "..") {
				return bad("ref %q is not a branch, tag or commit name", src.Ref)
			}
		}
		if src.Subdir != "" {
			clean := path.Clean(src.Subdir)
			if !filepath.IsLocal(filepath.FromSlash(clean)) || clean == "." || strings.ContainsAny(clean, `\`) {
				return bad("subfolder %q must be a relative path inside the repository", src.Subdir)
			}
			src.Subdir = clean
		}
		u, err := url.Parse(transport + "://" + body)
		if err != nil || u.Path == "" || u.Path == "/" || u.RawQuery != "" || u.User != nil {
			return bad("not a repository URL: write %s://HOST/REPO[#REF][:SUBDIR] (no user, query or password)", scheme)
		}
		if transport == "file" && u.Host != "" {
			return bad("a file URL has no host: write git+file:///abs/path")
		}
		if transport != "file" && u.Host == "" {
			return bad("no host: write %s://HOST/REPO", scheme)
		}
		if transport == "http" && !loopbackHost(u.Hostname()) {
			return bad("git over plain HTTP is accepted only on loopback (anyone on the path could change the pack): use git+https")
		}
		src.URL = u.String()
		return src, nil
	case "https", "http":
		src.Kind = SourceURL
		u, err := url.Parse(s)
		if err != nil || u.Host == "" || u.User != nil {
			return bad("not a URL to a .tar.gz: write https://HOST/PATH/x.tar.gz#sha256=HEX")
		}
		if u.Fragment != "" {
			hex, ok := strings.CutPrefix(u.Fragment, "sha256=")
			if !ok || !sha256HexPattern.MatchString(hex) {
				return bad("fragment %q must be sha256= and 64 lower-case hex digits", u.Fragment)
			}
			src.Digest = "sha256:" + hex
		}
		if archiveBase(u.Path) == "" {
			return bad("the path must end in .tar.gz or .tgz (for a git repository write git+%s)", s)
		}
		u.Fragment, u.RawFragment = "", ""
		src.URL = u.String()
		return src, nil
	case "file":
		return bad("for a file on disk give its path; for a git repository write git+file:///PATH")
	case "oci":
		src.Kind = SourceOCI
		if rest == "" || strings.ContainsAny(rest, "#?") || strings.Contains(rest, "://") {
			return bad("write oci://REGISTRY/REPO:TAG or oci://REGISTRY/REPO@sha256:HEX")
		}
		if !strings.Contains(rest, "/") {
			return bad("no repository after the registry: write oci://REGISTRY/REPO:TAG")
		}
		ref, err := registry.ParseReference(rest)
		if err != nil || ref.Reference == "" {
			return bad("write oci://REGISTRY/REPO:TAG or oci://REGISTRY/REPO@sha256:HEX (a tag or digest is required)")
		}
		src.URL = rest
		return src, nil
	}
	return bad("unknown scheme %q: give a folder, a .tar.gz, git+https://HOST/REPO[#REF][:SUBDIR], git+file:///PATH or https://…/x.tar.gz#sha256=HEX", scheme)
}

// FetchOptions configure StageSource for remote sources.
type FetchOptions struct {
	// AllowUnpinned accepts an https:// archive without #sha256=.
	AllowUnpinned bool
	// HTTPClient downloads URL sources; nil means a client with timeouts
	// that follows at most 5 redirects, never from https to http.
	HTTPClient *http.Client
	// MaxDownloadBytes caps a downloaded archive; 0 means the expanded
	// limit (ArchiveLimits.MaxBytes), since gzip never makes a pack larger.
	MaxDownloadBytes int64
	// Trust decides which archive signatures are accepted. An archive's
	// signature is ARCHIVE.sig beside it (a file, or the URL plus ".sig");
	// when there is one it must verify and be by a trusted signer. A git
	// source or a folder has no signature: Trust.Require refuses them.
	Trust Trust
}

// String names the kind as the policy's [trust] require_signature does.
func (k SourceKind) String() string {
	switch k {
	case SourceGit:
		return "git"
	case SourceURL:
		return "https"
	case SourceOCI:
		return "oci"
	}
	return "local"
}

// StageSource is Stage for any source ParseSource reads: a remote source is
// fetched into a temporary folder first, then staged from there exactly as
// a local one, so the same validation, limits and atomic Commit apply. The
// Staged's Source is the source as given and Resolved pins what it named.
func (h *Home) StageSource(ctx context.Context, source string, opt StageOptions, fo FetchOptions) (*Staged, error) {
	src, err := ParseSource(source)
	if err != nil {
		return nil, err
	}
	if src.Kind == SourceLocal {
		return h.stageLocal(ctx, source, opt, fo.Trust)
	}
	if src.Kind == SourceGit && fo.Trust.Require {
		return nil, fmt.Errorf("packs: add %s: %w: a git source carries no signature packs can check: install a signed .tar.gz (packs pack, packs sign)", source, ErrSignatureRequired)
	}
	// Not under h.tmp(): OpenHome in another process cleans that folder of
	// whatever is not a locked stage. Stage copies from here into tmp/.
	tmp, err := os.MkdirTemp("", "packs-fetch-*")
	if err != nil {
		return nil, fmt.Errorf("packs: add %s: %w", source, err)
	}
	defer os.RemoveAll(tmp)
	var local, resolved, signer string
	switch src.Kind {
	case SourceGit:
		local, resolved, err = fetchGit(ctx, src, tmp, opt.Limits)
	case SourceURL:
		local, resolved, signer, err = fetchURL(ctx, src, tmp, opt.Limits, fo)
	case SourceOCI:
		local, resolved, signer, err = fetchOCI(ctx, src, tmp, opt.Limits, fo)
	}
	if err != nil {
		return nil, err
	}
	s, err := h.Stage(ctx, local, opt)
	if err != nil {
		var le *packs.LoadError
		if errors.As(err, &le) {
			return nil, &packs.LoadError{Findings: renameFindings(le.Findings, local, source)}
		}
		return nil, fmt.Errorf("%w (from %s)", err, source)
	}
	s.Source = source
	s.Resolved = resolved
	s.Signer = signer
	if src.Kind == SourceURL || src.Kind == SourceOCI {
		h.keepArchive(s, local)
	}
	s.Findings = renameFindings(s.Findings, local, source)
	return s, nil
}

// renameFindings shows the fetched copy's files under the source's name.
func renameFindings(in []packs.Finding, local, source string) []packs.Finding {
	out := make([]packs.Finding, len(in))
	for i, f := range in {
		if rest, ok := strings.CutPrefix(f.File, local); ok {
			f.File = source + rest
		}
		out[i] = f
	}
	return out
}

// stageLocal is Stage with the signature check of a local archive (a
// folder has no signature).
func (h *Home) stageLocal(ctx context.Context, source string, opt StageOptions, t Trust) (*Staged, error) {
	fi, err := os.Stat(source)
	if err != nil || !fi.Mode().IsRegular() {
		if err == nil && t.Require {
			return nil, fmt.Errorf("packs: add %s: %w: a folder carries no signature: install a signed .tar.gz (packs pack, packs sign)", source, ErrSignatureRequired)
		}
		return h.Stage(ctx, source, opt)
	}
	sig, err := readLocalSignature(source)
	if err != nil {
		return nil, fmt.Errorf("packs: add %s: %w", source, err)
	}
	signer, err := checkArchiveSignature(source, sig, t)
	if err != nil {
		return nil, fmt.Errorf("packs: add %s: %w", source, err)
	}
	s, err := h.Stage(ctx, source, opt)
	if err != nil {
		return nil, err
	}
	s.Signer = signer
	h.keepArchive(s, source)
	return s, nil
}

// keepArchive keeps the archive a pack is staged from (and its signature)
// for packs bundle export. It is best effort: without it, export packs the
// installed folder again, which loses only a signature over bytes that
// PackArchive does not reproduce.
func (h *Home) keepArchive(s *Staged, archive string) {
	if sig, err := readLocalSignature(archive); err == nil {
		h.keepOrigin(s.Integrity, archive, sig) //nolint:errcheck // best effort, as said
	}
}

// loopbackHost reports whether host is localhost or a loopback address.
func loopbackHost(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}
