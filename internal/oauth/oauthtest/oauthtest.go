// Package oauthtest is an authorization server for unit tests and
// benchmarks of code that takes OAuth tokens: it serves RFC 8414 metadata
// and a JWKS of a locally made key, and signs access tokens with it. The
// e2e tests use a real authorization server instead.
package oauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// Issuer is a running test authorization server with one ES256 key.
type Issuer struct {
	// URL is its issuer identifier (http on loopback).
	URL string
	key *ecdsa.PrivateKey
}

// New starts an issuer, stopped when the test ends.
func New(tb testing.TB) *Issuer {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	is := &Issuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": is.URL, "jwks_uri": is.URL + "/jwks"})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	})
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	is.URL = srv.URL
	return is
}

// Token signs an at+jwt access token for audience with scope, good for an
// hour, for subject "alice" and client "agent-1".
func (is *Issuer) Token(tb testing.TB, audience, scope string) string {
	tb.Helper()
	return is.TokenFor(tb, "alice", audience, scope)
}

// TokenFor is Token for another subject.
func (is *Issuer) TokenFor(tb testing.TB, subject, audience, scope string) string {
	tb.Helper()
	now := time.Now()
	t := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{
		"iss": is.URL, "sub": subject, "client_id": "agent-1", "aud": audience, "scope": scope,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	})
	t.Header["kid"], t.Header["typ"] = "k1", "at+jwt"
	s, err := t.SignedString(is.key)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}
