package dist

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/packs-run/packs/packs"
)

// packEpoch is every entry's modification time in a packed archive.
var packEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// PackArchive writes the pack folder dir to w as a reproducible .tar.gz and
// returns the archive's digest ("sha256:…"). The pack is loaded first and
// refused with a *LoadError when it has errors. Entries sit under one
// top-level folder named after the pack, in lexical order, holding what the
// pack ships (packs.WalkShipped: no .git folders, nothing its ignore files exclude); every entry has the same time (2000-01-01), owner 0:0 with no
// names, and mode 0755 (folders, executables) or 0644; the gzip header has
// no name and no time. The bytes depend only on the pack's names, content
// and execute bits, so packing a copy gives the same digest.
func PackArchive(dir string, w io.Writer) (string, error) {
	pk, err := packs.Load(dir, packs.LoadOptions{})
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if err := checkLinks(abs); err != nil {
		return "", fmt.Errorf("%w: %w", packs.ErrPathEscape, err)
	}
	h := sha256.New()
	gz, err := gzip.NewWriterLevel(io.MultiWriter(w, h), gzip.BestCompression)
	if err != nil {
		return "", err
	}
	tw := tar.NewWriter(gz)
	hdr := func(name string, typ byte, mode int64) *tar.Header {
		return &tar.Header{Name: name, Typeflag: typ, Mode: mode, ModTime: packEpoch, Format: tar.FormatPAX}
	}
	err = packs.WalkShipped(abs, func(p, rel string, d fs.DirEntry) error {
		name := path.Join(pk.Name, rel)
		switch mode := d.Type(); {
		case d.IsDir():
			return tw.WriteHeader(hdr(name+"/", tar.TypeDir, 0o755))
		case mode&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			h := hdr(name, tar.TypeSymlink, 0o777)
			h.Linkname = filepath.ToSlash(target)
			return tw.WriteHeader(h)
		case mode.IsRegular():
			return packFile(tw, p, name, hdr)
		default:
			return fmt.Errorf("%w: %s is a %s: a pack holds only files, folders and symlinks", packs.ErrUnsupportedFile, p, packs.FileKindName(mode))
		}
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	if err != nil {
		return "", fmt.Errorf("packs: pack %s: %w", dir, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// packFile writes one regular file: 0755 when any execute bit is set.
func packFile(tw *tar.Writer, p, name string, hdr func(string, byte, int64) *tar.Header) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	mode := int64(0o644)
	if fi.Mode()&0o111 != 0 {
		mode = 0o755
	}
	h := hdr(name, tar.TypeReg, mode)
	h.Size = fi.Size()
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	n, err := io.Copy(tw, f)
	if err == nil && n != h.Size {
		err = fmt.Errorf("%s changed while it was packed", p)
	}
	return err
}
