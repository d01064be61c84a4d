package identity

import (
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
)

// minRefresh is the least time between two fetches of the issuer's keys.
// A token whose signature no known key checks makes the keys be fetched
// again (the issuer may have rotated them), but anyone can send such a
// token: without a bound, each would make packs fetch the issuer's keys.
const minRefresh = 30 * time.Second

// issuerKeys is the issuer's key set (its jwks_uri), fetched at most once
// per minRefresh. It implements oidc.KeySet.
type issuerKeys struct {
	url    string
	client *http.Client
	now    func() time.Time

	mu      sync.Mutex
	keys    oidc.StaticKeySet
	fetched time.Time // zero: never
}

// VerifySignature checks jwt against the keys held, and once more after
// fetching them again when none holds and minRefresh has passed.
func (k *issuerKeys) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	k.mu.Lock()
	held := k.keys
	k.mu.Unlock()
	payload, err := held.VerifySignature(ctx, jwt)
	if err == nil {
		return payload, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.fetched.IsZero() && k.now().Sub(k.fetched) < minRefresh {
		// Fetched a moment ago (perhaps while this call checked): check
		// against what is held now, and fetch no more.
		return k.keys.VerifySignature(ctx, jwt)
	}
	if ferr := k.fetch(ctx); ferr != nil {
		return nil, ferr
	}
	return k.keys.VerifySignature(ctx, jwt)
}

// fetch reads the key set. The caller holds k.mu.
func (k *issuerKeys) fetch(ctx context.Context) error {
	k.fetched = k.now()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return fmt.Errorf("identity: the issuer's keys: %w", err)
	}
	res, err := k.client.Do(req)
	if err != nil {
		return fmt.Errorf("identity: the issuer's keys: %w", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil || res.StatusCode != http.StatusOK {
		return fmt.Errorf("identity: the issuer's keys at %s: status %d %v", k.url, res.StatusCode, err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		return fmt.Errorf("identity: the issuer's keys at %s: %w", k.url, err)
	}
	var keys []crypto.PublicKey
	for _, key := range set.Keys {
		if key.Use == "" || key.Use == "sig" {
			keys = append(keys, key.Key)
		}
	}
	k.keys = oidc.StaticKeySet{PublicKeys: keys}
	return nil
}
