package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// fakeIssuer is an authorization server for unit tests: metadata (at the
// RFC 8414 or the OpenID address), a JWKS of locally made keys, and an
// introspection endpoint answering from a table.
type fakeIssuer struct {
	t   testing.TB
	srv *httptest.Server

	mu        sync.Mutex
	keys      []signer          // published in the JWKS
	opaque    map[string]string // token → introspection JSON
	jwksDown  bool
	oidcOnly  bool   // metadata only at the OpenID address
	claimedID string // issuer named in the metadata ("" for its own)

	jwksFetches  atomic.Int32
	introspected atomic.Int32
}

// signer is a key pair with its key id and algorithm.
type signer struct {
	kid string
	alg jwt.SigningMethod
	key crypto.Signer
}

func newSigner(t testing.TB, kid, alg string) signer {
	t.Helper()
	var key crypto.Signer
	var err error
	switch alg {
	case "RS256", "PS256":
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	case "ES256":
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "EdDSA":
		_, key, err = ed25519.GenerateKey(rand.Reader)
	default:
		t.Fatalf("no key for %s", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return signer{kid: kid, alg: jwt.GetSigningMethod(alg), key: key}
}

func newFakeIssuer(t testing.TB, keys ...signer) *fakeIssuer {
	f := &fakeIssuer{t: t, keys: keys, opaque: map[string]string{}}
	mux := http.NewServeMux()
	meta := func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		id := f.claimedID
		f.mu.Unlock()
		if id == "" {
			id = f.srv.URL
		}
		json.NewEncoder(w).Encode(map[string]string{"issuer": id, "jwks_uri": f.srv.URL + "/jwks", "introspection_endpoint": f.srv.URL + "/introspect"})
	}
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		oidc := f.oidcOnly
		f.mu.Unlock()
		if oidc {
			http.NotFound(w, r)
			return
		}
		meta(w, r)
	})
	mux.HandleFunc("GET /.well-known/openid-configuration", meta)
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		f.jwksFetches.Add(1)
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.jwksDown {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		var set jose.JSONWebKeySet
		for _, k := range f.keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.key.Public(), KeyID: k.kid, Algorithm: k.alg.Alg(), Use: "sig"})
		}
		json.NewEncoder(w).Encode(set)
	})
	mux.HandleFunc("POST /introspect", func(w http.ResponseWriter, r *http.Request) {
		f.introspected.Add(1)
		if id, secret, ok := r.BasicAuth(); !ok || id != "rs" || secret != "rs-secret" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		f.mu.Lock()
		ans, ok := f.opaque[r.PostFormValue("token")]
		f.mu.Unlock()
		if !ok {
			ans = `{"active":false}`
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(ans))
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeIssuer) set(fn func(f *fakeIssuer)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// claims are a token's claims for tests: good ones for the fake issuer and
// resource, changed by each case.
func goodClaims(iss, aud string, now time.Time) jwt.MapClaims {
	return jwt.MapClaims{
		"iss":       iss,
		"sub":       "alice",
		"client_id": "agent-1",
		"aud":       aud,
		"scope":     "webmcp:read webmcp:call",
		"iat":       now.Unix(),
		"exp":       now.Add(time.Hour).Unix(),
		"jti":       "t-1",
	}
}

// sign makes a JWT with s's key and kid (no kid when s.kid is "").
func sign(t testing.TB, s signer, claims jwt.MapClaims, typ string) string {
	t.Helper()
	tok := jwt.NewWithClaims(s.alg, claims)
	if s.kid != "" {
		tok.Header["kid"] = s.kid
	}
	if typ != "" {
		tok.Header["typ"] = typ
	}
	str, err := tok.SignedString(s.key)
	if err != nil {
		t.Fatal(err)
	}
	return str
}
