package web

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

const (
	// defaultMaxWorkspaceFile bounds one uploaded file.
	defaultMaxWorkspaceFile = 32 << 20
	// maxUploadRequest bounds one upload request, all files together.
	maxUploadRequest = 128 << 20
	// maxWorkspaceList bounds the files GET .../files lists.
	maxWorkspaceList = 2000
	// uploadPrefix names a file being uploaded; it is renamed when
	// complete, and never listed.
	uploadPrefix = ".upload-"
)

// fileJSON is one file of a chat's workspace.
type fileJSON struct {
	Path     string    `json:"path"` // relative to the workspace, with /
	Size     int64     `json:"size_bytes"`
	MIME     string    `json:"mime"`
	Modified time.Time `json:"modified"`
}

func (s *Server) maxWorkspaceFile() int64 {
	if s.cfg.MaxWorkspaceFile > 0 {
		return s.cfg.MaxWorkspaceFile
	}
	return defaultMaxWorkspaceFile
}

// listFiles lists the regular files of the chat's workspace, sorted by
// path, without following symbolic links, at most maxWorkspaceList.
func (s *Server) listFiles(w http.ResponseWriter, r *http.Request) {
	cs, err := s.chat(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	ws := cs.s.Workspace()
	items, truncated := []fileJSON{}, false
	err = filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == ws {
				return err
			}
			return nil // an unreadable folder is left out
		}
		if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), uploadPrefix) {
			return nil
		}
		if len(items) == maxWorkspaceList {
			truncated = true
			return filepath.SkipAll
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		rel, err := filepath.Rel(ws, p)
		if err != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		ct := mime.TypeByExtension(path.Ext(rel))
		if ct == "" {
			ct = "application/octet-stream"
		}
		items = append(items, fileJSON{Path: rel, Size: fi.Size(), MIME: ct, Modified: fi.ModTime().UTC()})
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "total": len(items), "truncated": truncated})
}

// uploadFiles puts the uploaded files (multipart form: "file", repeatable;
// "dir", optional, a folder relative to the workspace, before the files)
// into the chat's workspace, confined to it (os.Root: no "..", no
// absolute path, no symbolic link out). A file keeps only the last element
// of its name. Each is written under a temporary name and renamed when
// complete: a refused or cut upload leaves nothing.
func (s *Server) uploadFiles(w http.ResponseWriter, r *http.Request) {
	cs, err := s.chat(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "multipart/form-data" {
		s.fail(w, fmt.Errorf("%w: upload files as multipart/form-data, each in a \"file\" field", errBadRequest))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxUploadRequest)
	mr, err := r.MultipartReader()
	if err != nil {
		s.fail(w, fmt.Errorf("%w: %v", errBadRequest, err))
		return
	}
	root, err := os.OpenRoot(cs.s.Workspace())
	if err != nil {
		s.fail(w, err)
		return
	}
	defer root.Close()
	dir, saved := ".", []fileJSON{}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.fail(w, fmt.Errorf("%w: reading the upload: %v", errBadRequest, err))
			return
		}
		switch part.FormName() {
		case "dir":
			b, err := io.ReadAll(io.LimitReader(part, 4096))
			if err != nil {
				s.fail(w, fmt.Errorf("%w: %v", errBadRequest, err))
				return
			}
			dir = filepath.FromSlash(strings.TrimRight(strings.TrimSpace(string(b)), "/"))
			if dir == "" {
				dir = "."
			}
			if !filepath.IsLocal(dir) {
				s.fail(w, fmt.Errorf("%w: dir must be a folder inside the workspace, without ..: %q", errBadRequest, b))
				return
			}
			if err := root.MkdirAll(dir, 0o700); err != nil {
				s.fail(w, fmt.Errorf("%w: dir %q: %v", errBadRequest, b, err))
				return
			}
		case "file":
			f, err := s.saveFile(root, dir, part)
			if err != nil {
				s.fail(w, err)
				return
			}
			saved = append(saved, f)
		}
	}
	if len(saved) == 0 {
		s.fail(w, fmt.Errorf("%w: the form has no file: send each file in a \"file\" field", errBadRequest))
		return
	}
	cs.events.publish("files", map[string]any{"uploaded": saved})
	writeJSON(w, http.StatusCreated, map[string]any{"items": saved, "total": len(saved)})
}

// saveFile writes one uploaded file into dir under root.
func (s *Server) saveFile(root *os.Root, dir string, part io.Reader) (fileJSON, error) {
	fp, _ := part.(interface{ FileName() string })
	name := ""
	if fp != nil {
		name = path.Base(strings.ReplaceAll(fp.FileName(), `\`, "/"))
	}
	if name == "" || name == "." || name == "/" || !filepath.IsLocal(name) || strings.HasPrefix(name, uploadPrefix) ||
		strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fileJSON{}, fmt.Errorf("%w: each uploaded file needs a plain name", errBadRequest)
	}
	rel := filepath.Join(dir, name)
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, uploadPrefix+hex.EncodeToString(rnd[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fileJSON{}, fmt.Errorf("%w: %s: %v", errBadRequest, filepath.ToSlash(rel), err)
	}
	limit := s.maxWorkspaceFile()
	n, err := io.Copy(f, io.LimitReader(part, limit+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > limit {
		err = fmt.Errorf("%w: %s is over the %d MiB a file may have", errTooLarge, name, limit>>20)
		if limit < 1<<20 {
			err = fmt.Errorf("%w: %s is over the %d bytes a file may have", errTooLarge, name, limit)
		}
	}
	if err == nil {
		err = root.Rename(tmp, rel)
	}
	if err != nil {
		_ = root.Remove(tmp)
		if errors.Is(err, errTooLarge) {
			return fileJSON{}, err
		}
		return fileJSON{}, fmt.Errorf("%w: %s: %v", errBadRequest, filepath.ToSlash(rel), err)
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	return fileJSON{Path: filepath.ToSlash(rel), Size: n, MIME: ct, Modified: time.Now().UTC()}, nil
}
