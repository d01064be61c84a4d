package dist

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
)

// startRegistry runs the distribution registry (Debian's docker-registry)
// on a loopback port with its storage in t.TempDir, and returns host:port.
func startRegistry(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		t.Skip("docker-registry is not installed (scripts/deps.sh installs it for the tests)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yml")
	os.WriteFile(config, []byte(fmt.Sprintf("version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n", filepath.Join(dir, "data"), addr)), 0o644)
	cmd := exec.Command(bin, "serve", config)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the registry did not start: %v\n%s", err, logs.String())
		}
	}
}

func TestOCIPublishAndAdd(t *testing.T) {
	reg := startRegistry(t)
	ctx := context.Background()
	data, _ := packBytes(t, writePack(t, t.TempDir(), "weather", "1.0.0"))
	key, pub := sshKey(t, t.TempDir(), "alice", "ed25519")
	sig := signWith(t, key, data)
	digest, err := PublishOCI(ctx, "oci://"+reg+"/packs/weather:1.0.0", data, sig, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = PublishOCI(ctx, "oci://"+reg+"/packs/weather:unsigned", data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Something else in the registry: an artifact of another type.
	repo, err := ociRepository(Source{URL: reg + "/other/thing"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	blob := []byte("not a pack")
	bd := content.NewDescriptorFromBytes("application/octet-stream", blob)
	if err := repo.Push(ctx, bd, bytes.NewReader(blob)); err != nil {
		t.Fatal(err)
	}
	md, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "application/vnd.example.thing", oras.PackManifestOptions{Layers: []ocispec.Descriptor{bd}})
	if err != nil {
		t.Fatal(err)
	}
	repo.Tag(ctx, md, "1")

	h := openTestHome(t, t.TempDir())
	trust := Trust{Signers: []string{pub}}
	alice, _ := NormalizeKey(pub)
	for _, ref := range []string{"oci://" + reg + "/packs/weather:1.0.0", "oci://" + reg + "/packs/weather@" + digest} {
		e, err := stageSource(t, h, ref, FetchOptions{Trust: trust})
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		if e.Name != "weather" || e.Resolved != "oci:"+digest || e.Signer != alice || e.Source != ref {
			t.Errorf("%s: got %+v", ref, e)
		}
	}
	old, _ := h.Entry("weather")

	// A proxy in front of the registry that fails on demand.
	target, _ := url.Parse("http://" + reg)
	rp := httputil.NewSingleHostReverseProxy(target)
	var mode string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		blobReq := strings.Contains(r.URL.Path, "/blobs/")
		switch {
		case mode == "401":
			w.WriteHeader(http.StatusUnauthorized)
		case mode == "500":
			http.Error(w, "boom", http.StatusInternalServerError)
		case mode == "cut" && blobReq && r.Method == http.MethodGet:
			w.Header().Set("Content-Length", fmt.Sprint(len(data)))
			w.Write(data[:len(data)/3])
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
		default:
			rp.ServeHTTP(w, r)
		}
	}))
	defer proxy.Close()
	via := strings.TrimPrefix(proxy.URL, "http://")
	tests := []struct {
		name, ref, mode string
		trust           Trust
		err             error
		says            string
	}{
		{"missing tag", "oci://" + reg + "/packs/weather:9.9.9", "", trust, ErrFetch, "not found"},
		{"missing repository", "oci://" + reg + "/packs/nothing:1", "", trust, ErrFetch, "not found"},
		{"another artifact type", "oci://" + reg + "/other/thing:1", "", trust, ErrArtifactType, "application/vnd.example.thing"},
		{"untrusted signer", "oci://" + reg + "/packs/weather:1.0.0", "", Trust{}, ErrUntrustedSigner, ""},
		{"unsigned, required", "oci://" + reg + "/packs/weather:unsigned", "", Trust{Signers: trust.Signers, Require: true}, ErrSignatureRequired, ""},
		{"401", "oci://" + via + "/packs/weather:1.0.0", "401", trust, ErrFetch, "401"},
		{"500", "oci://" + via + "/packs/weather:1.0.0", "500", trust, ErrFetch, "500"},
		{"closed mid-stream", "oci://" + via + "/packs/weather:1.0.0", "cut", trust, ErrFetch, ""},
	}
	for _, tt := range tests {
		mode = tt.mode
		_, err := stageSource(t, h, tt.ref, FetchOptions{Trust: tt.trust})
		if !errors.Is(err, tt.err) || !strings.Contains(fmt.Sprint(err), tt.says) {
			t.Errorf("%s: err = %v, want %v saying %q", tt.name, err, tt.err, tt.says)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: more than one line: %q", tt.name, err)
		}
	}
	if e, err := h.Entry("weather"); err != nil || !e.equal(old) {
		t.Errorf("old install changed: %+v %v", e, err)
	}
}
