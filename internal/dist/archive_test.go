package dist

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tarEntry is one entry of a test archive. A regular file's size is its
// body's unless hdr.Size is set.
type tarEntry struct {
	hdr  tar.Header
	body string
}

func file(name, body string) tarEntry {
	return tarEntry{hdr: tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644}, body: body}
}

func dirEntry(name string) tarEntry {
	return tarEntry{hdr: tar.Header{Name: name, Typeflag: tar.TypeDir, Mode: 0o755}}
}

func symlink(name, target string) tarEntry {
	return tarEntry{hdr: tar.Header{Name: name, Typeflag: tar.TypeSymlink, Linkname: target}}
}

// tarBytes builds an uncompressed tar archive.
func tarBytes(t testing.TB, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := e.hdr
		if hdr.Typeflag == tar.TypeReg && hdr.Size == 0 {
			hdr.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(&hdr); err != nil {
			t.Fatalf("tar header %s: %v", hdr.Name, err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatalf("tar body %s: %v", hdr.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func tarGz(t testing.TB, entries ...tarEntry) []byte { return gz(t, tarBytes(t, entries...)) }

// listTree returns "path" for files, "path/" for folders and
// "path -> target" for symlinks, relative to dir, in walk order.
func listTree(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			out = append(out, rel+"/")
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out = append(out, rel+" -> "+target)
		default:
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestExtractTarGzAccepts(t *testing.T) {
	tests := []struct {
		name    string
		entries []tarEntry
		want    []string
		top     string
	}{{
		name: "single top-level folder is stripped",
		entries: []tarEntry{
			dirEntry("weather/"), file("weather/SKILL.md", "---\n"),
			dirEntry("weather/bin/"), file("weather/bin/tool.wasm", "\x00asm"),
		},
		want: []string{"SKILL.md", "bin/", "bin/tool.wasm"},
		top:  "weather",
	}, {
		name:    "top-level folder without its own entry is stripped",
		entries: []tarEntry{file("weather/SKILL.md", "x"), file("weather/docs/a.md", "y")},
		want:    []string{"SKILL.md", "docs/", "docs/a.md"},
		top:     "weather",
	}, {
		name:    "files at the top level are kept as they are",
		entries: []tarEntry{file("SKILL.md", "x"), file("docs/a.md", "y")},
		want:    []string{"SKILL.md", "docs/", "docs/a.md"},
	}, {
		name:    "a dot root and ./ prefixes",
		entries: []tarEntry{dirEntry("./"), file("./SKILL.md", "x"), dirEntry("./docs/"), file("./docs/a.md", "y")},
		want:    []string{"SKILL.md", "docs/", "docs/a.md"},
	}, {
		name:    "two top-level folders are kept",
		entries: []tarEntry{file("a/x", "1"), file("b/y", "2")},
		want:    []string{"a/", "a/x", "b/", "b/y"},
	}, {
		name: "symlinks inside the pack",
		entries: []tarEntry{
			file("p/SKILL.md", "x"), symlink("p/README.md", "SKILL.md"),
			file("p/docs/a.md", "y"), symlink("p/docs/up.md", "../SKILL.md"),
		},
		want: []string{"README.md -> SKILL.md", "SKILL.md", "docs/", "docs/a.md", "docs/up.md -> ../SKILL.md"},
		top:  "p",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "out")
			top, err := extractTarGz(bytes.NewReader(tarGz(t, tt.entries...)), dst, ArchiveLimits{})
			if err != nil {
				t.Fatal(err)
			}
			if got := listTree(t, dst); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("tree:\ngot  %q\nwant %q", got, tt.want)
			}
			if top != tt.top {
				t.Errorf("top: got %q, want %q", top, tt.top)
			}
			if left := listTree(t, filepath.Dir(dst)); len(left) != len(listTree(t, dst))+1 {
				t.Errorf("something besides out/ is left next to it: %q", left)
			}
		})
	}
}

func TestExtractTarGzModes(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "out")
	exe := file("run.sh", "#!/bin/sh\n")
	exe.hdr.Mode = 0o4775 // setuid and group write are dropped
	plain := file("data.txt", "x")
	plain.hdr.Mode = 0o666
	if err := ExtractTarGz(bytes.NewReader(tarGz(t, exe, plain)), dst, ArchiveLimits{}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]fs.FileMode{"run.sh": 0o755, "data.txt": 0o644} {
		fi, err := os.Stat(filepath.Join(dst, name))
		if err != nil {
			t.Fatal(err)
		}
		// The umask may remove bits; it never adds the ones we dropped.
		if got := fi.Mode().Perm(); got&^want != 0 || got&0o100 != want&0o100 {
			t.Errorf("%s: mode %v, want %v (less the umask)", name, got, want)
		}
	}
}

func TestExtractTarGzRejects(t *testing.T) {
	dev := tarEntry{hdr: tar.Header{Name: "p/null", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3}}
	block := tarEntry{hdr: tar.Header{Name: "p/sda", Typeflag: tar.TypeBlock, Devmajor: 8}}
	fifo := tarEntry{hdr: tar.Header{Name: "p/fifo", Typeflag: tar.TypeFifo}}
	hard := tarEntry{hdr: tar.Header{Name: "p/hard", Typeflag: tar.TypeLink, Linkname: "p/SKILL.md"}}
	big := file("p/big.bin", "")
	big.hdr.Size = 2 << 20
	big.body = strings.Repeat("\x00", 2<<20)
	small := ArchiveLimits{MaxBytes: 1000, MaxFiles: 10, MaxFileBytes: 1 << 20}
	var many []tarEntry
	for i := range 11 {
		many = append(many, file("p/f"+string(rune('a'+i)), "x"))
	}
	tests := []struct {
		name    string
		entries []tarEntry
		lim     ArchiveLimits
		want    error
	}{
		{"zip slip", []tarEntry{file("p/SKILL.md", "x"), file("../evil", "pwned")}, ArchiveLimits{}, ErrArchiveUnsafe},
		{"zip slip inside a path", []tarEntry{file("p/../../evil", "pwned")}, ArchiveLimits{}, ErrArchiveUnsafe},
		{"absolute path", []tarEntry{file("/tmp/evil", "pwned")}, ArchiveLimits{}, ErrArchiveUnsafe},
		{"drive letter", []tarEntry{file("C:/evil", "pwned")}, ArchiveLimits{}, ErrArchiveUnsafe},
		{"backslash", []tarEntry{file(`p\..\evil`, "pwned")}, ArchiveLimits{}, ErrArchiveUnsafe},
		{"symlink to /etc", []tarEntry{file("p/SKILL.md", "x"), symlink("p/etc", "/etc")}, ArchiveLimits{}, ErrArchiveUnsafe},
		{"symlink climbing out", []tarEntry{symlink("p/up", "../../etc/passwd")}, ArchiveLimits{}, ErrArchiveUnsafe},
		{"symlink leaving after the strip", []tarEntry{file("p/SKILL.md", "x"), symlink("p/sib", "../sibling")}, ArchiveLimits{}, ErrArchiveUnsafe},
		{"symlink through a symlinked root", []tarEntry{symlink("a", "."), symlink("b", "a/..")}, ArchiveLimits{}, ErrArchiveUnsafe},
		{"dangling symlink", []tarEntry{file("p/SKILL.md", "x"), symlink("p/gone", "nothing")}, ArchiveLimits{}, ErrArchiveUnsafe},
		{"write through a symlink", []tarEntry{dirEntry("p/sub/"), symlink("p/l", "sub"), file("p/l/x", "y")}, ArchiveLimits{}, ErrArchiveUnsafe},
		{"hard link", []tarEntry{file("p/SKILL.md", "x"), hard}, ArchiveLimits{}, ErrArchiveUnsafe},
		{"character device", []tarEntry{dev}, ArchiveLimits{}, ErrArchiveUnsafe},
		{"block device", []tarEntry{block}, ArchiveLimits{}, ErrArchiveUnsafe},
		{"fifo", []tarEntry{fifo}, ArchiveLimits{}, ErrArchiveUnsafe},
		{"duplicate file", []tarEntry{file("p/a", "1"), file("p/a", "2")}, ArchiveLimits{}, ErrArchiveUnsafe},
		{"too many files", many, small, ErrArchiveTooLarge},
		{"file over the per-file cap", []tarEntry{big}, ArchiveLimits{MaxFileBytes: 1 << 20}, ErrArchiveTooLarge},
		{"total over the cap", []tarEntry{file("p/a", strings.Repeat("a", 600)), file("p/b", strings.Repeat("b", 600))}, small, ErrArchiveTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := filepath.Join(t.TempDir(), "home")
			if err := os.Mkdir(parent, 0o700); err != nil {
				t.Fatal(err)
			}
			// "sibling" exists next to the output, so a link to it is not
			// merely dangling.
			if err := os.WriteFile(filepath.Join(parent, "sibling"), []byte("secret"), 0o600); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(parent, "out")
			err := ExtractTarGz(bytes.NewReader(tarGz(t, tt.entries...)), dst, tt.lim)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if got := listTree(t, filepath.Dir(parent)); strings.Join(got, ",") != "home/,home/sibling" {
				t.Errorf("left behind: %q", got)
			}
		})
	}
}

// TestExtractTarGzBomb feeds a gzip stream that expands 800-fold:
// the declared size stops it before any byte of the body is written.
func TestExtractTarGzBomb(t *testing.T) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	const size = 32 << 20 // twice the default per-file cap
	if err := tw.WriteHeader(&tar.Header{Name: "p/zeros", Typeflag: tar.TypeReg, Mode: 0o644, Size: size}); err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for range size / len(zeros) {
		tw.Write(zeros)
	}
	tw.Close()
	zw.Close()
	if buf.Len() > size/500 {
		t.Fatalf("the bomb compressed to %d bytes: not a bomb", buf.Len())
	}
	dst := filepath.Join(t.TempDir(), "out")
	if err := ExtractTarGz(&buf, dst, ArchiveLimits{}); !errors.Is(err, ErrArchiveTooLarge) {
		t.Fatalf("got %v, want ErrArchiveTooLarge", err)
	}
	if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("dst left behind: %v", err)
	}
}

// TestExtractTarGzStreamBudget: data the extractor never writes (here
// PAX records, which tar consumes while reading headers) still counts
// against the bound on the decompressed stream.
func TestExtractTarGzStreamBudget(t *testing.T) {
	padded := func(name string) tarEntry {
		e := file(name, "") // empty: only the stream bound can trip
		e.hdr.PAXRecords = map[string]string{"comment": strings.Repeat("z", 900<<10)}
		return e
	}
	lim := ArchiveLimits{MaxBytes: 1, MaxFiles: 10, MaxFileBytes: 1}
	dst := filepath.Join(t.TempDir(), "out")
	err := ExtractTarGz(bytes.NewReader(tarGz(t, padded("p/a"), padded("p/b"))), dst, lim)
	if !errors.Is(err, ErrArchiveTooLarge) {
		t.Fatalf("got %v, want ErrArchiveTooLarge", err)
	}
}

func TestExtractTarGzInvalid(t *testing.T) {
	valid := tarGz(t, file("p/SKILL.md", strings.Repeat("x", 5000)))
	noise := make([]byte, 64<<10)
	for i := range noise {
		noise[i] = byte(i*7919>>3 ^ i)
	}
	midFile := tarGz(t, file("p/noise.bin", string(noise)))
	tests := []struct {
		name string
		data []byte
	}{
		{"truncated inside a file", midFile[:len(midFile)*3/4]},
		{"not gzip", []byte("PK\x03\x04 this is a zip")},
		{"gzip of not tar", gz(t, []byte(strings.Repeat("hello ", 200)))},
		{"truncated", valid[:len(valid)/2]},
		{"empty", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "out")
			err := ExtractTarGz(bytes.NewReader(tt.data), dst, ArchiveLimits{})
			if !errors.Is(err, ErrArchiveInvalid) {
				t.Fatalf("got %v, want ErrArchiveInvalid", err)
			}
			if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("dst left behind: %v", err)
			}
		})
	}
}

func TestExtractTarGzExistingDst(t *testing.T) {
	dst := t.TempDir()
	err := ExtractTarGz(bytes.NewReader(tarGz(t, file("SKILL.md", "x"))), dst, ArchiveLimits{})
	if err == nil {
		t.Fatal("extracting into an existing folder succeeded")
	}
	if _, err := os.Stat(dst); err != nil {
		t.Fatalf("the existing folder was removed: %v", err)
	}
}

// FuzzExtractTarGz: whatever the input, extraction never panics, never
// writes outside dst, leaves nothing on failure, and on success every
// symlink resolves inside dst. Input that does not start with the gzip
// magic number is treated as a tar stream and compressed first, so the
// fuzzer reaches the tar layer.
func FuzzExtractTarGz(f *testing.F) {
	f.Add(tarBytes(f, dirEntry("p/"), file("p/SKILL.md", "---\nname: p\n---\n"), symlink("p/R.md", "SKILL.md")))
	f.Add(tarBytes(f, file("../evil", "x")))
	f.Add(tarBytes(f, symlink("a", "."), symlink("b", "a/..")))
	f.Add(tarBytes(f, tarEntry{hdr: tar.Header{Name: "h", Typeflag: tar.TypeLink, Linkname: "x"}}))
	f.Add(tarGz(f, file("SKILL.md", "x"), file("docs/a.md", "y")))
	f.Add([]byte{})
	base := f.TempDir() // one per worker: t.TempDir per input would dominate the time
	f.Fuzz(func(t *testing.T, data []byte) {
		if !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			data = gz(t, data)
		}
		parent, err := os.MkdirTemp(base, "x")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(parent)
		dst := filepath.Join(parent, "out")
		err = ExtractTarGz(bytes.NewReader(data), dst, ArchiveLimits{MaxBytes: 1 << 20, MaxFiles: 100, MaxFileBytes: 1 << 20})
		ents, rerr := os.ReadDir(parent)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err != nil {
			if len(ents) != 0 {
				t.Fatalf("failed with %v but left %d entries", err, len(ents))
			}
			return
		}
		if len(ents) != 1 || ents[0].Name() != "out" {
			t.Fatalf("succeeded but the parent holds %v", ents)
		}
		if err := checkLinks(dst); err != nil {
			t.Fatalf("succeeded with an unsafe link: %v", err)
		}
	})
}
