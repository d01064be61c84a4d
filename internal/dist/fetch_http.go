package dist

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"time"
)

// defaultHTTPClient downloads URL sources: bounded connection and header
// times (the body is bounded by its size cap and the context), at most five
// redirects, never from https down to http.
var defaultHTTPClient = &http.Client{
	Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   30 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
	},
	CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
			return fmt.Errorf("redirect from https to %s refused", req.URL.Scheme)
		}
		return nil
	},
}

// fetchURL downloads src's archive into tmp, at most the download cap,
// and checks its sha256 against src.Digest before anything reads it as an
// archive. It returns the file's path (named as in the URL, so Stage names
// the pack after it when it has no single top folder) and its digest.
func fetchURL(ctx context.Context, src Source, tmp string, lim ArchiveLimits, fo FetchOptions) (file, digest, signer string, err error) {
	fail := func(err error) (string, string, string, error) {
		return "", "", "", fmt.Errorf("packs: add %s: %w", src.Raw, err)
	}
	if src.Digest == "" && !fo.AllowUnpinned {
		return fail(fmt.Errorf("%w: the URL has no #sha256= digest, so nothing proves the download is the archive you meant", ErrUnpinned))
	}
	client := fo.HTTPClient
	if client == nil {
		client = defaultHTTPClient
	}
	capBytes := fo.MaxDownloadBytes
	if capBytes <= 0 {
		capBytes = lim.withDefaults().MaxBytes
	}
	resp, err := httpGet(ctx, client, src.URL)
	if err != nil {
		return fail(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail(fmt.Errorf("%w: the server answered %s", ErrFetch, resp.Status))
	}
	if resp.ContentLength > capBytes {
		return fail(fmt.Errorf("%w: the download is %d bytes, over %d", ErrArchiveTooLarge, resp.ContentLength, capBytes))
	}
	name := path.Base(resp.Request.URL.Path)
	if archiveBase(name) == "" || !validDirName(name) {
		name = "pack.tar.gz"
	}
	file = filepath.Join(tmp, name)
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fail(err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(resp.Body, capBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return fail(fmt.Errorf("%w: the download broke off after %d bytes: %w", ErrFetch, n, err))
	case n > capBytes:
		return fail(fmt.Errorf("%w: the download is over %d bytes", ErrArchiveTooLarge, capBytes))
	case resp.ContentLength >= 0 && n != resp.ContentLength:
		return fail(fmt.Errorf("%w: the download broke off after %d of %d bytes", ErrFetch, n, resp.ContentLength))
	}
	got := "sha256:" + hex.EncodeToString(h.Sum(nil))
	if src.Digest != "" && got != src.Digest {
		return fail(fmt.Errorf("%w: the download is %s, the URL pins %s: the file changed or was tampered with", ErrDigestMismatch, got, src.Digest))
	}
	sig, err := fetchSignature(ctx, client, src.URL+SignatureExt)
	if err != nil {
		return fail(err)
	}
	if signer, err = checkArchiveSignature(file, sig, fo.Trust); err != nil {
		return fail(err)
	}
	if sig != nil { // beside the archive, where keepOrigin looks
		if err := os.WriteFile(file+SignatureExt, sig, 0o600); err != nil {
			return fail(err)
		}
	}
	return file, got, signer, nil
}

func httpGet(ctx context.Context, client *http.Client, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSourceInvalid, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFetch, err)
	}
	return resp, nil
}

// fetchSignature downloads an archive's signature: nil when the server
// answers 404 (the archive is unsigned), an error for any other failure.
func fetchSignature(ctx context.Context, client *http.Client, u string) ([]byte, error) {
	resp, err := httpGet(ctx, client, u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return nil, nil
	default:
		return nil, fmt.Errorf("%w: the signature %s: the server answered %s", ErrFetch, path.Base(resp.Request.URL.Path), resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxSignatureBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: the signature: %w", ErrFetch, err)
	case len(b) > maxSignatureBytes:
		return nil, fmt.Errorf("%w: the signature is over %d bytes", ErrSignature, maxSignatureBytes)
	}
	return b, nil
}
