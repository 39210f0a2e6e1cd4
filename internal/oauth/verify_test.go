package oauth

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const testResource = "https://hub.example.com/mcp"

func newTestVerifier(t *testing.T, cfg Config) *Verifier {
	t.Helper()
	v, err := NewVerifier(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVerifyJWT(t *testing.T) {
	rs := newSigner(t, "rs-1", "RS256")
	es := newSigner(t, "es-1", "ES256")
	ed := newSigner(t, "ed-1", "EdDSA")
	iss := newFakeIssuer(t, rs, es, ed)
	foreign := newFakeIssuer(t, newSigner(t, "rs-1", "RS256"))
	now := time.Now()

	pub, err := x509.MarshalPKIXPublicKey(rs.key.Public())
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	hmacWithPublic := func(claims jwt.MapClaims) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
		tok.Header["kid"] = "rs-1"
		s, err := tok.SignedString(pubPEM)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	none := func(claims jwt.MapClaims) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodNone, claims)
		tok.Header["kid"] = "rs-1"
		s, err := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	with := func(change func(c jwt.MapClaims)) jwt.MapClaims {
		c := goodClaims(iss.srv.URL, testResource, now)
		change(c)
		return c
	}
	good := goodClaims(iss.srv.URL, testResource, now)

	tests := []struct {
		name    string
		token   string
		wantErr string // "" for a valid token
	}{
		{"RS256", sign(t, rs, good, "at+jwt"), ""},
		{"ES256", sign(t, es, good, "application/at+jwt"), ""},
		{"EdDSA", sign(t, ed, good, "JWT"), ""},
		{"no kid, one key fits the algorithm", sign(t, signer{alg: es.alg, key: es.key}, good, ""), ""},
		{"scp list", sign(t, rs, with(func(c jwt.MapClaims) { delete(c, "scope"); c["scp"] = []string{"webmcp:read"} }), ""), ""},
		{"expired within the skew", sign(t, rs, with(func(c jwt.MapClaims) { c["exp"] = now.Add(-10 * time.Second).Unix() }), ""), ""},
		{"expired", sign(t, rs, with(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Minute).Unix() }), ""), "has expired"},
		{"not valid yet", sign(t, rs, with(func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Minute).Unix() }), ""), "not valid yet"},
		{"no exp", sign(t, rs, with(func(c jwt.MapClaims) { delete(c, "exp") }), ""), "no exp"},
		{"wrong issuer", sign(t, foreign.keys[0], goodClaims(foreign.srv.URL, testResource, now), ""), "not one this server trusts"},
		{"trusted issuer named, foreign key", sign(t, foreign.keys[0], good, ""), "signature does not verify"},
		{"alg none", none(good), "algorithm is not allowed"},
		{"HS256 signed with the public key", hmacWithPublic(good), "algorithm is not allowed"},
		{"key of another algorithm", sign(t, signer{kid: "rs-1", alg: es.alg, key: es.key}, good, ""), "not among its issuer's keys"},
		{"not an access token type", sign(t, rs, good, "dpop+jwt"), "not an access token"},
		{"malformed", "abc.def.ghi", "not a well-formed JWT"},
		{"opaque without introspection", "opaque-token", "no introspection credentials"},
		{"too long", strings.Repeat("a", maxTokenBytes+1), "longer than"},
	}
	v := newTestVerifier(t, Config{Issuers: []string{iss.srv.URL}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := v.Verify(context.Background(), tt.token)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if p.Subject != "alice" || p.ClientID != "agent-1" || p.Issuer != iss.srv.URL || !p.HasAudience(testResource) || !p.HasScope("webmcp:read") {
					t.Fatalf("principal = %+v", p)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidToken) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Verify error = %v, want ErrInvalidToken with %q", err, tt.wantErr)
			}
		})
	}
}

func TestAlgorithmAllowList(t *testing.T) {
	for _, tt := range []struct {
		algs    []string
		wantErr bool
	}{
		{nil, false},
		{[]string{"ES256"}, false},
		{[]string{"HS256"}, true},
		{[]string{"none"}, true},
	} {
		_, err := checkAlgorithms(tt.algs)
		if (err != nil) != tt.wantErr {
			t.Errorf("checkAlgorithms(%v) = %v, want error %v", tt.algs, err, tt.wantErr)
		}
	}
	// An allowed-by-default algorithm left out of the list is refused.
	rs, es := newSigner(t, "rs-1", "RS256"), newSigner(t, "es-1", "ES256")
	iss := newFakeIssuer(t, rs, es)
	v := newTestVerifier(t, Config{Issuers: []string{iss.srv.URL}, Algorithms: []string{"ES256"}})
	claims := goodClaims(iss.srv.URL, testResource, time.Now())
	if _, err := v.Verify(context.Background(), sign(t, rs, claims, "")); err == nil {
		t.Error("an RS256 token was taken with only ES256 allowed")
	}
	if _, err := v.Verify(context.Background(), sign(t, es, claims, "")); err != nil {
		t.Errorf("an ES256 token was refused: %v", err)
	}
}

// TestUnknownKid checks key rotation and the bound on refetches: an unknown
// key id costs one JWKS fetch, and another within the interval none.
func TestUnknownKid(t *testing.T) {
	old := newSigner(t, "old", "ES256")
	iss := newFakeIssuer(t, old)
	clock := time.Now()
	var logs bytes.Buffer
	v := newTestVerifier(t, Config{Issuers: []string{iss.srv.URL}, RefetchInterval: time.Minute, Now: func() time.Time { return clock },
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()
	claims := goodClaims(iss.srv.URL, testResource, clock)
	if n := iss.jwksFetches.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times at start, want 1", n)
	}

	forged := newSigner(t, "forged-1", "ES256")
	if _, err := v.Verify(ctx, sign(t, forged, claims, "")); err == nil || !strings.Contains(err.Error(), `key id "forged-1" is not among`) {
		t.Fatalf("unknown kid: %v", err)
	}
	if n := iss.jwksFetches.Load(); n != 2 {
		t.Fatalf("JWKS fetched %d times after an unknown kid, want 2 (one refetch)", n)
	}
	for i := range 20 {
		forged := newSigner(t, "forged-more", "ES256")
		claims["jti"] = i
		if _, err := v.Verify(ctx, sign(t, forged, claims, "")); err == nil {
			t.Fatal("a forged kid was taken")
		}
	}
	if n := iss.jwksFetches.Load(); n != 2 {
		t.Fatalf("JWKS fetched %d times after a flood of unknown kids, want still 2", n)
	}

	// Rotation: the issuer publishes a new key; after the interval a token
	// signed with it makes one refetch and is taken.
	rotated := newSigner(t, "new", "ES256")
	iss.set(func(f *fakeIssuer) { f.keys = append(f.keys, rotated) })
	clock = clock.Add(2 * time.Minute)
	claims = goodClaims(iss.srv.URL, testResource, clock)
	if _, err := v.Verify(ctx, sign(t, rotated, claims, "")); err != nil {
		t.Fatalf("a token signed with the rotated-in key: %v", err)
	}
	if n := iss.jwksFetches.Load(); n != 3 {
		t.Fatalf("JWKS fetched %d times, want 3", n)
	}

	// The issuer goes down: known keys keep working, a new kid fails closed
	// with a log line.
	iss.set(func(f *fakeIssuer) { f.jwksDown = true })
	clock = clock.Add(2 * time.Minute)
	claims = goodClaims(iss.srv.URL, testResource, clock)
	if _, err := v.Verify(ctx, sign(t, old, claims, "")); err != nil {
		t.Fatalf("a token signed with a cached key while the issuer is down: %v", err)
	}
	if _, err := v.Verify(ctx, sign(t, newSigner(t, "newer", "ES256"), claims, "")); err == nil || !strings.Contains(err.Error(), "could not be read again") {
		t.Fatalf("a new kid while the issuer is down: %v", err)
	}
	if !strings.Contains(logs.String(), "cannot read the OAuth issuer's keys again") {
		t.Fatalf("no log line about the failed refetch:\n%s", logs.String())
	}
}

func TestIntrospection(t *testing.T) {
	iss := newFakeIssuer(t, newSigner(t, "rs-1", "RS256"))
	now := time.Now()
	exp := now.Add(time.Hour).Unix()
	iss.set(func(f *fakeIssuer) {
		f.opaque["good"] = `{"active":true,"scope":"webmcp:read","client_id":"agent-1","sub":"alice","aud":"` + testResource + `","exp":` + itoa(exp) + `}`
		f.opaque["other-iss"] = `{"active":true,"iss":"https://elsewhere.example","aud":"` + testResource + `"}`
		f.opaque["expired"] = `{"active":true,"aud":"` + testResource + `","exp":` + itoa(now.Add(-time.Hour).Unix()) + `}`
		f.opaque["aud-list"] = `{"active":true,"aud":["x","` + testResource + `"],"exp":` + itoa(exp) + `}`
	})
	v := newTestVerifier(t, Config{Issuers: []string{iss.srv.URL}, IntrospectionClientID: "rs", IntrospectionClientSecret: "rs-secret"})
	for _, tt := range []struct {
		token, wantErr string
	}{
		{"good", ""},
		{"aud-list", ""},
		{"revoked", "not active"},
		{"other-iss", "names the issuer"},
		{"expired", "has expired"},
	} {
		t.Run(tt.token, func(t *testing.T) {
			p, err := v.Verify(context.Background(), tt.token)
			if tt.wantErr == "" {
				if err != nil || !p.HasAudience(testResource) {
					t.Fatalf("Verify = %+v, %v", p, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidToken) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Verify error = %v, want %q", err, tt.wantErr)
			}
		})
	}
	// Answers are kept: asking again costs no introspection.
	n := iss.introspected.Load()
	v.Verify(context.Background(), "good")
	v.Verify(context.Background(), "revoked")
	if m := iss.introspected.Load(); m != n {
		t.Errorf("introspected %d more times for cached answers", m-n)
	}
	// Wrong credentials: the server cannot check, and says so.
	bad := newTestVerifier(t, Config{Issuers: []string{iss.srv.URL}, IntrospectionClientID: "rs", IntrospectionClientSecret: "wrong", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if _, err := bad.Verify(context.Background(), "good"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("with wrong introspection credentials: %v, want ErrUnavailable", err)
	}
	// A flood of made-up tokens is bounded by the rate.
	flood := newTestVerifier(t, Config{Issuers: []string{iss.srv.URL}, IntrospectionClientID: "rs", IntrospectionClientSecret: "rs-secret", IntrospectionRate: 1})
	before := iss.introspected.Load()
	limited := 0
	for i := range 20 {
		if _, err := flood.Verify(context.Background(), "made-up-"+itoa(int64(i))); errors.Is(err, ErrUnavailable) {
			limited++
		}
	}
	if got := iss.introspected.Load() - before; got > 4 || limited == 0 {
		t.Errorf("20 made-up tokens: %d introspections, %d refused for the rate", got, limited)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestDiscovery(t *testing.T) {
	iss := newFakeIssuer(t, newSigner(t, "rs-1", "RS256"))
	iss.set(func(f *fakeIssuer) { f.oidcOnly = true })
	if _, err := NewVerifier(context.Background(), Config{Issuers: []string{iss.srv.URL}}); err != nil {
		t.Errorf("OpenID discovery only: %v", err)
	}
	iss.set(func(f *fakeIssuer) { f.claimedID = "https://impostor.example" })
	for _, tt := range []struct {
		issuer, wantErr string
	}{
		{iss.srv.URL, "names the issuer"},
		{"http://login.example.com", "plain http is allowed for loopback"},
		{"ftp://login.example.com", "use https"},
		{iss.srv.URL + "/nothing-here", "no metadata found"},
		{"", "give its issuer URL"},
	} {
		_, err := NewVerifier(context.Background(), Config{Issuers: []string{tt.issuer}})
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("issuer %q: %v, want %q", tt.issuer, err, tt.wantErr)
		}
	}
}

func TestMetadataURLs(t *testing.T) {
	got, err := metadataURLs("https://login.example.com/realms/main")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"https://login.example.com/.well-known/oauth-authorization-server/realms/main",
		"https://login.example.com/.well-known/openid-configuration/realms/main",
		"https://login.example.com/realms/main/.well-known/openid-configuration",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("metadataURLs = %v, want %v", got, want)
	}
}
