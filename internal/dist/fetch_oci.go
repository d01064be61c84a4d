package dist

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/errcode"
)

// The OCI media types of a pack artifact: an image manifest (OCI 1.1) whose
// artifactType is ArtifactType, with one layer holding the pack archive
// (as packs pack writes it) and, when signed, one holding its SSH
// signature. The config is the empty descriptor.
const (
	ArtifactType       = "application/vnd.packs.pack.v1"
	MediaTypeArchive   = "application/vnd.packs.pack.archive.v1.tar+gzip"
	MediaTypeSignature = "application/vnd.packs.pack.signature.v1.sshsig"
)

// maxOCIManifestBytes bounds a fetched OCI manifest.
const maxOCIManifestBytes = 4 << 20

// ErrArtifactType: the OCI reference names something that is not a pack.
var ErrArtifactType = errors.New("packs: not a pack artifact")

// ociRepository opens the repository of an oci:// source. Plain HTTP is
// used only for a registry on loopback (as docker does for localhost).
func ociRepository(src Source, client *http.Client) (*remote.Repository, error) {
	repo, err := remote.NewRepository(src.URL)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSourceInvalid, err)
	}
	host := repo.Reference.Host()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	repo.PlainHTTP = loopbackHost(host)
	if client != nil {
		repo.Client = client
	}
	return repo, nil
}

// ociError turns a registry error into one line wrapping ErrFetch.
func ociError(err error) error {
	var er *errcode.ErrorResponse
	switch {
	case errors.As(err, &er):
		return fmt.Errorf("%w: the registry answered %d %s", ErrFetch, er.StatusCode, http.StatusText(er.StatusCode))
	case errors.Is(err, errdef.ErrNotFound):
		return fmt.Errorf("%w: not found in the registry", ErrFetch)
	}
	return fmt.Errorf("%w: %w", ErrFetch, err)
}

// fetchOCI pulls the pack artifact src names into tmp: the manifest, then
// the archive layer (at most the download cap, digest checked as it is
// read) and the signature layer. It returns the archive's path, the
// manifest digest ("oci:sha256:…") and the signer.
func fetchOCI(ctx context.Context, src Source, tmp string, lim ArchiveLimits, fo FetchOptions) (string, string, string, error) {
	fail := func(err error) (string, string, string, error) {
		return "", "", "", fmt.Errorf("packs: add %s: %w", src.Raw, err)
	}
	repo, err := ociRepository(src, fo.HTTPClient)
	if err != nil {
		return fail(err)
	}
	mdesc, rc, err := repo.FetchReference(ctx, repo.Reference.Reference)
	if err != nil {
		return fail(ociError(err))
	}
	defer rc.Close()
	if mdesc.MediaType != ocispec.MediaTypeImageManifest || mdesc.Size > maxOCIManifestBytes {
		return fail(fmt.Errorf("%w: %s is a %s, not a pack (artifact type %s)", ErrArtifactType, src.URL, mdesc.MediaType, ArtifactType))
	}
	data, err := content.ReadAll(rc, mdesc)
	if err != nil {
		return fail(ociError(err))
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return fail(fmt.Errorf("%w: the manifest is not JSON: %v", ErrArtifactType, err))
	}
	if m.ArtifactType != ArtifactType {
		return fail(fmt.Errorf("%w: %s has artifact type %q, want %s (push packs with packs publish)", ErrArtifactType, src.URL, m.ArtifactType, ArtifactType))
	}
	capBytes := fo.MaxDownloadBytes
	if capBytes <= 0 {
		capBytes = lim.withDefaults().MaxBytes
	}
	var archive, sig *ocispec.Descriptor
	for i, l := range m.Layers {
		switch l.MediaType {
		case MediaTypeArchive:
			if archive != nil {
				return fail(fmt.Errorf("%w: more than one archive layer", ErrArtifactType))
			}
			archive = &m.Layers[i]
		case MediaTypeSignature:
			sig = &m.Layers[i]
		}
	}
	if archive == nil {
		return fail(fmt.Errorf("%w: no layer of type %s", ErrArtifactType, MediaTypeArchive))
	}
	if archive.Size > capBytes {
		return fail(fmt.Errorf("%w: the archive is %d bytes, over %d", ErrArchiveTooLarge, archive.Size, capBytes))
	}
	blob, err := fetchBlob(ctx, repo, *archive)
	if err != nil {
		return fail(err)
	}
	name := strings.TrimSuffix(filepath.Base(repo.Reference.Repository), ".tar.gz")
	if !validDirName(name + ".tar.gz") {
		name = "pack"
	}
	file := filepath.Join(tmp, name+".tar.gz")
	if err := os.WriteFile(file, blob, 0o600); err != nil {
		return fail(err)
	}
	var sigData []byte
	if sig != nil {
		if sig.Size > maxSignatureBytes {
			return fail(fmt.Errorf("%w: the signature layer is over %d bytes", ErrSignature, maxSignatureBytes))
		}
		if sigData, err = fetchBlob(ctx, repo, *sig); err != nil {
			return fail(err)
		}
		if err := os.WriteFile(file+SignatureExt, sigData, 0o600); err != nil {
			return fail(err)
		}
	}
	signer, err := checkArchiveSignature(file, sigData, fo.Trust)
	if err != nil {
		return fail(err)
	}
	return file, "oci:" + mdesc.Digest.String(), signer, nil
}

// fetchBlob reads one blob, checking its size and digest.
func fetchBlob(ctx context.Context, repo *remote.Repository, d ocispec.Descriptor) ([]byte, error) {
	rc, err := repo.Fetch(ctx, d)
	if err != nil {
		return nil, ociError(err)
	}
	defer rc.Close()
	b, err := content.ReadAll(rc, d)
	if err != nil {
		return nil, fmt.Errorf("%w: the blob %s: %w", ErrFetch, d.Digest, err)
	}
	return b, nil
}

// PublishOCI pushes the pack archive (and its signature, when sig is not
// nil) to the oci:// reference ref as a pack artifact, tagging it with the
// reference's tag. It returns the manifest digest.
func PublishOCI(ctx context.Context, ref string, archive, sig []byte, client *http.Client) (string, error) {
	src, err := ParseSource(ref)
	if err != nil {
		return "", err
	}
	if src.Kind != SourceOCI {
		return "", fmt.Errorf("%w: %s: publish takes oci://REGISTRY/REPO:TAG", ErrSourceInvalid, ref)
	}
	repo, err := ociRepository(src, client)
	if err != nil {
		return "", err
	}
	tag := repo.Reference.Reference
	if tag == "" || strings.HasPrefix(tag, "sha256:") {
		return "", fmt.Errorf("%w: %s: name a tag to publish under, as oci://REGISTRY/REPO:TAG", ErrSourceInvalid, ref)
	}
	push := func(mediaType string, data []byte) (ocispec.Descriptor, error) {
		d := content.NewDescriptorFromBytes(mediaType, data)
		if err := repo.Push(ctx, d, bytes.NewReader(data)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
			return d, ociError(err)
		}
		return d, nil
	}
	var layers []ocispec.Descriptor
	d, err := push(MediaTypeArchive, archive)
	if err != nil {
		return "", fmt.Errorf("packs: publish %s: %w", ref, err)
	}
	layers = append(layers, d)
	if sig != nil {
		if d, err = push(MediaTypeSignature, sig); err != nil {
			return "", fmt.Errorf("packs: publish %s: %w", ref, err)
		}
		layers = append(layers, d)
	}
	m, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, ArtifactType, oras.PackManifestOptions{Layers: layers})
	if err != nil {
		return "", fmt.Errorf("packs: publish %s: %w", ref, ociError(err))
	}
	if err := repo.Tag(ctx, m, tag); err != nil {
		return "", fmt.Errorf("packs: publish %s: %w", ref, ociError(err))
	}
	return m.Digest.String(), nil
}
