package dist

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// ErrIndex: the pack index cannot be read, or does not list the name.
var ErrIndex = errors.New("packs: pack index")

// maxIndexBytes bounds an index file.
const maxIndexBytes = 1 << 20

var indexNameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// IsPackName reports whether s can name a pack in an index: a-z, 0-9 and
// inner '-'.
func IsPackName(s string) bool { return len(s) <= 64 && indexNameRE.MatchString(s) }

// ParseIndex reads a pack index, the TOML file an enterprise hosts or
// mirrors to name its packs:
//
//	version = 1
//	[packs]
//	weather = "oci://registry.example.com/packs/weather:1.2.0"
//	clock = "https://mirror.example.com/clock-0.5.tar.gz#sha256=…"
//
// Each value must be a remote source ParseSource reads (git, https, oci),
// never a local path, a repository on this machine (git+file://) or
// another name: an index names what everyone who reads it can fetch.
func ParseIndex(file string, data []byte) (map[string]string, error) {
	var doc struct {
		Version int               `toml:"version"`
		Packs   map[string]string `toml:"packs"`
	}
	if err := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields().Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w %s: %s", ErrIndex, file, strings.TrimPrefix(oneLineErr(err), "toml: "))
	}
	if doc.Version != 1 {
		return nil, fmt.Errorf("%w %s: version %d is not supported: write version = 1", ErrIndex, file, doc.Version)
	}
	for name, source := range doc.Packs {
		if !IsPackName(name) {
			return nil, fmt.Errorf("%w %s: %q is not a pack name", ErrIndex, file, name)
		}
		src, err := ParseSource(source)
		if err != nil || src.Kind == SourceLocal || src.Kind == SourceGit && strings.HasPrefix(src.URL, "file:") {
			return nil, fmt.Errorf("%w %s: pack %s: %q is not a remote git, https or oci source", ErrIndex, file, name, source)
		}
	}
	return doc.Packs, nil
}

func oneLineErr(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }

// ResolveIndex looks name up in the index at index: a file path, or an
// https:// URL (plain http only on loopback) read with client (nil: the
// default download client).
func ResolveIndex(ctx context.Context, index, name string, client *http.Client) (string, error) {
	var data []byte
	var err error
	if strings.HasPrefix(index, "https://") || strings.HasPrefix(index, "http://") {
		data, err = fetchIndex(ctx, index, client)
	} else {
		data, err = readIndexFile(index)
	}
	if err != nil {
		return "", fmt.Errorf("%w %s: %w", ErrIndex, index, err)
	}
	packs, err := ParseIndex(index, data)
	if err != nil {
		return "", err
	}
	source, ok := packs[name]
	if !ok {
		return "", fmt.Errorf("%w %s does not list %q", ErrIndex, index, name)
	}
	return source, nil
}

func readIndexFile(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCapped(f)
}

func readCapped(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxIndexBytes+1))
	if err == nil && len(data) > maxIndexBytes {
		err = fmt.Errorf("over %d bytes", maxIndexBytes)
	}
	return data, err
}

func fetchIndex(ctx context.Context, u string, client *http.Client) ([]byte, error) {
	if pu, err := url.Parse(u); err != nil || pu.Scheme == "http" && !loopbackHost(pu.Hostname()) {
		return nil, errors.New("an index over plain HTTP is accepted only on loopback: use https")
	}
	if client == nil {
		client = defaultHTTPClient
	}
	resp, err := httpGet(ctx, client, u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: the server answered %s", ErrFetch, resp.Status)
	}
	return readCapped(resp.Body)
}
