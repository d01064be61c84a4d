package dist

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/packs-run/packs/packs"
	"github.com/pelletier/go-toml/v2"
)

// ErrBundleInvalid: a bundle file is not one packs bundle export wrote, or
// its content does not match its own records.
var ErrBundleInvalid = errors.New("packs: invalid bundle")

// bundleVersion is the format of bundle.toml.
const bundleVersion = 1

// A bundle is an uncompressed tar file holding, in this order:
//
//	bundle.toml               version and, per pack, its archive's digest
//	packs.lock                the packs' lock entries, as in packs.lock
//	packs/NAME.tar.gz         each pack's archive
//	packs/NAME.tar.gz.sig     its SSH signature, when it was installed signed
type bundleManifest struct {
	Version int          `toml:"version"`
	Packs   []bundlePack `toml:"packs"`
}

type bundlePack struct {
	Name    string `toml:"name"`
	Archive string `toml:"archive"` // sha256:… of packs/NAME.tar.gz
}

// maxBundleMeta bounds bundle.toml, packs.lock and a signature in a bundle.
const maxBundleMeta = 1 << 20

// originDir keeps the archive (and signature) a pack was installed from,
// by integrity, so a bundle carries the signed bytes themselves.
// They belong to this state directory, so they stay in its own cache/
// when compiled modules are kept elsewhere (HomeOptions.ModuleCache).
func (h *Home) originDir() string { return filepath.Join(h.dir, cacheDir, "origins") }

// keepOrigin stores the archive file and its signature for integrity.
func (h *Home) keepOrigin(integrity, archive string, sig []byte) error {
	hexDigest := strings.TrimPrefix(integrity, "sha256:")
	if err := os.MkdirAll(h.originDir(), 0o700); err != nil {
		return err
	}
	data, err := os.ReadFile(archive)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(h.originDir(), hexDigest+".tar.gz"), data); err != nil {
		return err
	}
	if sig == nil {
		return nil
	}
	return writeFileAtomic(filepath.Join(h.originDir(), hexDigest+".tar.gz"+SignatureExt), sig)
}

// origin returns the kept archive and signature for integrity, or nil.
func (h *Home) origin(integrity string) ([]byte, []byte) {
	base := filepath.Join(h.originDir(), strings.TrimPrefix(integrity, "sha256:")+".tar.gz")
	data, err := os.ReadFile(base)
	if err != nil {
		return nil, nil
	}
	sig, _ := os.ReadFile(base + SignatureExt)
	return data, sig
}

// ExportBundle writes the installed packs names (all when empty) to w as
// one bundle: for each, the archive it was installed from when packs kept
// it (so its signature still verifies), else the installed folder packed
// with PackArchive; its signature; and its lock entry. A pack whose files
// no longer match its lock entry is refused. It returns the entries.
func (h *Home) ExportBundle(ctx context.Context, w io.Writer, names []string) ([]LockEntry, error) {
	// One stable view: packs.lock read once, each folder checked against
	// the entry read, nothing installed or removed meanwhile.
	unlock, err := h.lock(ctx, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	lf, err := h.ReadLock()
	if err != nil {
		return nil, err
	}
	var entries []LockEntry
	if len(names) == 0 {
		entries = lf.Packs
	}
	for _, n := range names {
		e, ok := lf.Entry(n)
		if !ok {
			return nil, fmt.Errorf("packs: bundle export: %w: %s", ErrNotInstalled, n)
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("packs: bundle export: %w: no packs are installed", ErrNotInstalled)
	}
	man := bundleManifest{Version: bundleVersion}
	type file struct {
		name string
		data []byte
	}
	var files []file
	sub := &Lockfile{}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if _, err := h.verifyEntry(nil, e); err != nil {
			return nil, fmt.Errorf("packs: bundle export: %w", err)
		}
		data, sig := h.origin(e.Integrity)
		if data == nil {
			dir, err := h.PackDir(e.Name)
			if err != nil {
				return nil, err
			}
			var b bytes.Buffer
			if _, err := PackArchive(dir, &b); err != nil {
				return nil, fmt.Errorf("packs: bundle export %s: %w", e.Name, err)
			}
			data = b.Bytes()
		}
		sum := sha256.Sum256(data)
		man.Packs = append(man.Packs, bundlePack{Name: e.Name, Archive: "sha256:" + hex.EncodeToString(sum[:])})
		files = append(files, file{"packs/" + e.Name + ".tar.gz", data})
		if sig != nil {
			files = append(files, file{"packs/" + e.Name + ".tar.gz" + SignatureExt, sig})
		}
		sub.put(e)
	}
	manData, err := toml.Marshal(man)
	if err != nil {
		return nil, err
	}
	files = append([]file{{"bundle.toml", manData}, {"packs.lock", sub.Marshal()}}, files...)
	tw := tar.NewWriter(w)
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(f.data)), ModTime: packEpoch, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return sub.Packs, nil
}

// BundlePack is one pack of a bundle, staged for installing.
type BundlePack struct {
	Staged *Staged
	Entry  LockEntry // its entry in the bundle: the grants it had there
}

// StageBundle reads the bundle file and stages each pack in it, checking
// everything before anything is installed: each archive's digest against
// bundle.toml, its signature under t (an entry that records a signer must
// come with a signature by that signer), the archive limits, validation,
// and that the staged content has the integrity its lock entry records.
// It needs no network. The Staged keep the bundle entry's source and
// resolved pin, so packs update works later where the source is reachable.
// On error nothing stays staged. Commit or Discard each result.
func (h *Home) StageBundle(ctx context.Context, file string, opt StageOptions, t Trust) ([]BundlePack, error) {
	fail := func(err error) ([]BundlePack, error) {
		return nil, fmt.Errorf("packs: bundle %s: %w", file, err)
	}
	tmp, err := os.MkdirTemp("", "packs-bundle-*")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	man, lock, err := readBundle(file, tmp, opt.Limits)
	if err != nil {
		return fail(err)
	}
	var out []BundlePack
	discard := func() {
		for _, p := range out {
			p.Staged.Discard()
		}
	}
	for _, p := range man.Packs {
		e, ok := lock.Entry(p.Name)
		if !ok {
			discard()
			return fail(fmt.Errorf("%w: %s has no entry in packs.lock", ErrBundleInvalid, p.Name))
		}
		archive := filepath.Join(tmp, p.Name+".tar.gz")
		data, err := os.ReadFile(archive)
		if err != nil {
			discard()
			return fail(fmt.Errorf("%w: %s has no archive", ErrBundleInvalid, p.Name))
		}
		if sum := sha256.Sum256(data); "sha256:"+hex.EncodeToString(sum[:]) != p.Archive {
			discard()
			return fail(fmt.Errorf("%w: %s's archive does not have the digest bundle.toml records", ErrDigestMismatch, p.Name))
		}
		pt := t
		if e.Signer != "" {
			pt.Require = true
		}
		s, err := h.stageLocal(ctx, archive, opt, pt)
		if err != nil {
			discard()
			return fail(fmt.Errorf("%s: %w", p.Name, err))
		}
		out = append(out, BundlePack{Staged: s, Entry: e})
		switch {
		case s.Name() != e.Name:
			discard()
			return fail(fmt.Errorf("%w: archive %s holds pack %q", ErrBundleInvalid, p.Name, s.Name()))
		case s.Integrity != e.Integrity:
			discard()
			return fail(fmt.Errorf("%w: %s unpacks to %s, its lock entry records %s", ErrDigestMismatch, p.Name, s.Integrity, e.Integrity))
		case e.Signer != "" && s.Signer != e.Signer:
			discard()
			return fail(fmt.Errorf("%w: %s is signed by %s, its lock entry records %s", ErrSignature, p.Name, shorten(s.Signer), shorten(e.Signer)))
		}
		s.Source, s.Resolved = e.Source, e.Resolved
	}
	return out, nil
}

// readBundle extracts the bundle's pack archives and signatures into dir
// as NAME.tar.gz[.sig] and returns its manifest and lock entries. Every
// entry must be one the format names, each archive at most lim's
// expanded size (gzip does not make a pack larger).
func readBundle(file, dir string, lim ArchiveLimits) (*bundleManifest, *Lockfile, error) {
	lim = lim.withDefaults()
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	var manData, lockData []byte
	seen := map[string]bool{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrBundleInvalid, err)
		}
		name := hdr.Name
		if hdr.Typeflag != tar.TypeReg || seen[name] {
			return nil, nil, fmt.Errorf("%w: unexpected entry %q", ErrBundleInvalid, name)
		}
		seen[name] = true
		limit := int64(maxBundleMeta)
		var to string
		switch base, ok := strings.CutPrefix(name, "packs/"); {
		case name == "bundle.toml" || name == "packs.lock":
		case ok && path.Base(base) == base && validDirName(base) && strings.HasSuffix(base, ".tar.gz"+SignatureExt):
			to = filepath.Join(dir, base)
		case ok && path.Base(base) == base && validDirName(base) && strings.HasSuffix(base, ".tar.gz"):
			to, limit = filepath.Join(dir, base), lim.MaxBytes
		default:
			return nil, nil, fmt.Errorf("%w: unexpected entry %q", ErrBundleInvalid, name)
		}
		if hdr.Size > limit {
			return nil, nil, fmt.Errorf("%w: %s is %d bytes, over %d", ErrArchiveTooLarge, name, hdr.Size, limit)
		}
		data, err := io.ReadAll(io.LimitReader(tr, limit))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %s: %v", ErrBundleInvalid, name, err)
		}
		switch name {
		case "bundle.toml":
			manData = data
		case "packs.lock":
			lockData = data
		default:
			if err := os.WriteFile(to, data, 0o600); err != nil {
				return nil, nil, err
			}
		}
	}
	if manData == nil || lockData == nil {
		return nil, nil, fmt.Errorf("%w: no bundle.toml or packs.lock: not a file packs bundle export wrote", ErrBundleInvalid)
	}
	var man bundleManifest
	if err := toml.NewDecoder(bytes.NewReader(manData)).DisallowUnknownFields().Decode(&man); err != nil {
		return nil, nil, fmt.Errorf("%w: bundle.toml: %v", ErrBundleInvalid, err)
	}
	if man.Version != bundleVersion {
		return nil, nil, fmt.Errorf("%w: bundle version %d (this packs reads %d)", ErrBundleInvalid, man.Version, bundleVersion)
	}
	for _, p := range man.Packs {
		if !validDirName(p.Name) || !packs.ValidDigest(p.Archive) || !seen["packs/"+p.Name+".tar.gz"] {
			return nil, nil, fmt.Errorf("%w: bundle.toml names %q without its archive", ErrBundleInvalid, p.Name)
		}
	}
	lock, err := ParseLock("packs.lock (in the bundle)", lockData)
	if err != nil {
		return nil, nil, err
	}
	return &man, lock, nil
}
