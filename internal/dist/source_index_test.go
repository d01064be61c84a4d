package dist

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseIndex(t *testing.T) {
	good := "version = 1\n[packs]\nweather = \"oci://reg.example/packs/weather:1\"\nclock = \"git+https://git.example/c.git#v1\"\n"
	m, err := ParseIndex("index.toml", []byte(good))
	if err != nil || len(m) != 2 || m["weather"] != "oci://reg.example/packs/weather:1" {
		t.Fatalf("ParseIndex = %v, %v", m, err)
	}
	for _, doc := range []string{
		"",
		"version = 2\n",
		"version = 1\nextra = 1\n",
		"version = 1\n[packs]\nWeather = \"oci://r.example/w:1\"\n",
		"version = 1\n[packs]\nweather = \"./weather\"\n",
		"version = 1\n[packs]\nweather = \"clock\"\n",
		"version = 1\n[packs]\nweather = \"ftp://x/y\"\n",
		"version = 1\n[packs]\nweather = 3\n",
	} {
		if _, err := ParseIndex("index.toml", []byte(doc)); !errors.Is(err, ErrIndex) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseIndex(%q) err = %v, want one line wrapping ErrIndex", doc, err)
		}
	}
}

func TestResolveIndex(t *testing.T) {
	doc := "version = 1\n[packs]\nweather = \"https://dl.example/w.tar.gz#sha256=" + strings.Repeat("a", 64) + "\"\n"
	file := filepath.Join(t.TempDir(), "index.toml")
	os.WriteFile(file, []byte(doc), 0o644)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/index.toml" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(doc))
	}))
	defer srv.Close()
	for _, index := range []string{file, srv.URL + "/index.toml"} {
		got, err := ResolveIndex(context.Background(), index, "weather", nil)
		if err != nil || !strings.HasPrefix(got, "https://dl.example/w.tar.gz#sha256=") {
			t.Errorf("%s: %q, %v", index, got, err)
		}
		if _, err := ResolveIndex(context.Background(), index, "clock", nil); !errors.Is(err, ErrIndex) || !strings.Contains(err.Error(), `does not list "clock"`) {
			t.Errorf("%s: unlisted name: %v", index, err)
		}
	}
	for _, index := range []string{filepath.Join(t.TempDir(), "none.toml"), srv.URL + "/missing.toml", "http://example.com/index.toml"} {
		if _, err := ResolveIndex(context.Background(), index, "weather", nil); !errors.Is(err, ErrIndex) {
			t.Errorf("%s: err = %v, want ErrIndex", index, err)
		}
	}
}

func FuzzParseIndex(f *testing.F) {
	f.Add([]byte("version = 1\n[packs]\nweather = \"oci://reg.example/packs/weather:1\"\n"))
	f.Add([]byte("version = 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseIndex("index.toml", data)
		if err != nil {
			return
		}
		for name, source := range m {
			if !IsPackName(name) {
				t.Fatalf("accepted name %q", name)
			}
			if src, err := ParseSource(source); err != nil || src.Kind == SourceLocal {
				t.Fatalf("accepted source %q", source)
			}
		}
	})
}
