package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// maxKeys bounds the keys kept of one JWKS.
const maxKeys = 100

// keySet is an issuer's signing keys (its JWKS), cached. A token naming a
// key id the set lacks makes it refetch the JWKS, at most once every
// `every` (one fetch at a time; the others wait for it), so keys can rotate
// and a flood of made-up key ids costs the issuer one request per interval.
// When a refetch fails the keys known stay in use.
type keySet struct {
	uri    string
	client *http.Client
	every  time.Duration
	logger *slog.Logger
	now    func() time.Time

	mu        sync.Mutex
	keys      []jose.JSONWebKey // public signing keys
	fetched   time.Time         // last refetch tried
	fetches   int               // fetches tried, for tests and logs
	inFlight  chan struct{}     // closed when the fetch in flight ends; nil when none
	lastError error             // of the last fetch tried
}

func newKeySet(uri string, c *http.Client, every time.Duration, logger *slog.Logger, now func() time.Time) *keySet {
	return &keySet{uri: uri, client: c, every: every, logger: logger, now: now}
}

// load fetches the keys once, at start. It does not count against the
// refetch interval: a key rotated in just after the start is found.
func (k *keySet) load(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.fetches++
	keys, err := fetchKeys(ctx, k.client, k.uri)
	if err != nil {
		return err
	}
	k.keys = keys
	return nil
}

// fetchKeys reads a JWKS and keeps its public signing keys.
func fetchKeys(ctx context.Context, c *http.Client, uri string) ([]jose.JSONWebKey, error) {
	var set jose.JSONWebKeySet
	status, err := getJSON(ctx, c, uri, &set)
	if err != nil {
		return nil, fmt.Errorf("reading its keys: %w", err)
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("reading its keys at %s: HTTP status %d", uri, status)
	}
	var keys []jose.JSONWebKey
	for _, key := range set.Keys {
		if key.Use != "" && key.Use != "sig" {
			continue
		}
		switch key.Key.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
		case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
			key = key.Public()
		default:
			continue // symmetric keys never verify access tokens here
		}
		keys = append(keys, key)
		if len(keys) == maxKeys {
			break
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("its JWKS at %s has no public signing key", uri)
	}
	return keys, nil
}

// find returns the keys that may have signed a token with kid and alg: the
// one with that key id, or, for a token without a key id, every key fit
// for alg. An unknown key id makes the set refetch (rate bounded).
func (k *keySet) find(ctx context.Context, kid, alg string) ([]jwt.VerificationKey, error) {
	if keys := k.match(kid, alg); len(keys) > 0 || kid == "" {
		if len(keys) == 0 {
			return nil, fmt.Errorf("the token has no key id, and no key of its issuer fits %s", alg)
		}
		return keys, nil
	}
	if err := k.refetch(ctx); err != nil {
		return nil, fmt.Errorf("the token's key id %q is not among its issuer's keys, and they could not be read again: %w", kid, err)
	}
	if keys := k.match(kid, alg); len(keys) > 0 {
		return keys, nil
	}
	return nil, fmt.Errorf("the token's key id %q is not among its issuer's keys", kid)
}

// match returns the known keys for kid (any when kid is "") fit for alg.
func (k *keySet) match(kid, alg string) []jwt.VerificationKey {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []jwt.VerificationKey
	for _, key := range k.keys {
		if (kid == "" || key.KeyID == kid) && (key.Algorithm == "" || key.Algorithm == alg) {
			out = append(out, key.Key)
		}
	}
	return out
}

// errRecentFetch is refetch's answer within the interval.
var errRecentFetch = errors.New("they were read less than the refetch interval ago")

// refetch reads the JWKS again unless it was tried within the interval, in
// which case it says so. Concurrent callers share one fetch.
func (k *keySet) refetch(ctx context.Context) error {
	k.mu.Lock()
	if wait := k.inFlight; wait != nil {
		k.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		return k.lastError
	}
	if k.now().Sub(k.fetched) < k.every {
		k.mu.Unlock()
		return fmt.Errorf("%w (%s); try again later", errRecentFetch, k.every)
	}
	done := make(chan struct{})
	k.inFlight, k.fetched, k.fetches = done, k.now(), k.fetches+1
	k.mu.Unlock()

	// The fetch outlives a client that goes away: the others wait for it.
	keys, err := fetchKeys(context.WithoutCancel(ctx), k.client, k.uri)

	k.mu.Lock()
	defer k.mu.Unlock()
	k.inFlight, k.lastError = nil, err
	close(done)
	if err != nil {
		k.logger.Warn("cannot read the OAuth issuer's keys again; the keys known stay in use, and tokens signed with a new key are refused until it answers", "jwks_uri", k.uri, "err", err)
		return err
	}
	k.logger.Info("read the OAuth issuer's keys again (a token named a key id not known)", "jwks_uri", k.uri, "keys", len(keys))
	k.keys = keys
	return nil
}

// fetchCount is how many fetches were tried.
func (k *keySet) fetchCount() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.fetches
}
