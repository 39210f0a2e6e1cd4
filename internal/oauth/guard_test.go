package oauth

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestGuard(t *testing.T) {
	rs := newSigner(t, "rs-1", "RS256")
	iss := newFakeIssuer(t, rs)
	v := newTestVerifier(t, Config{Issuers: []string{iss.srv.URL}})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	g, err := NewGuard(v, GuardOptions{Resource: testResource, Scopes: []string{"webmcp:read", "webmcp:call"}, ChallengeScopes: []string{"webmcp:read"}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	const meta = `resource_metadata="https://hub.example.com/.well-known/oauth-protected-resource/mcp"`
	need := func(r *http.Request) (Need, error) {
		if r.Header.Get("X-Op") == "call" {
			return Need{Scopes: []string{"webmcp:call"}, Op: "tools/call x", Act: true}, nil
		}
		return Need{Scopes: []string{"webmcp:read"}, Op: "tools/list"}, nil
	}
	var seen *Principal
	needed := false
	h := g.Require(func(r *http.Request) (Need, error) { needed = true; return need(r) }, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = PrincipalFrom(r.Context())
		w.WriteHeader(http.StatusNoContent)
	}))
	now := time.Now()
	token := func(change func(c jwt.MapClaims)) string {
		c := goodClaims(iss.srv.URL, testResource, now)
		if change != nil {
			change(c)
		}
		return sign(t, rs, c, "at+jwt")
	}
	readOnly := token(func(c jwt.MapClaims) { c["scope"] = "webmcp:read" })

	tests := []struct {
		name      string
		auth, op  string
		target    string
		status    int
		challenge string // the WWW-Authenticate header, exactly ("" for none)
	}{
		{name: "valid", auth: "Bearer " + token(nil), status: http.StatusNoContent},
		{name: "valid call", auth: "Bearer " + token(nil), op: "call", status: http.StatusNoContent},
		{name: "trailing slash in aud", auth: "Bearer " + token(func(c jwt.MapClaims) { c["aud"] = testResource + "/" }), status: http.StatusNoContent},
		{name: "aud list", auth: "Bearer " + token(func(c jwt.MapClaims) { c["aud"] = []string{"other", testResource} }), status: http.StatusNoContent},
		{name: "no token", status: http.StatusUnauthorized, challenge: "Bearer " + meta + `, scope="webmcp:read"`},
		{name: "not bearer", auth: "Basic YTpi", status: http.StatusUnauthorized, challenge: "Bearer " + meta + `, error="invalid_token", error_description="the Authorization header is not 'Bearer TOKEN'", scope="webmcp:read"`},
		{name: "bad token", auth: "Bearer nope.nope.nope", status: http.StatusUnauthorized, challenge: "Bearer " + meta + `, error="invalid_token", error_description="the token is not a well-formed JWT", scope="webmcp:read"`},
		{name: "wrong audience", auth: "Bearer " + token(func(c jwt.MapClaims) { c["aud"] = "https://other.example.com/mcp" }), status: http.StatusUnauthorized,
			challenge: "Bearer " + meta + `, error="invalid_token", error_description="the token is not for this resource: its audience is ['https://other.example.com/mcp'], not 'https://hub.example.com/mcp' (ask the authorization server for a token with resource=https://hub.example.com/mcp)", scope="webmcp:read"`},
		{name: "audience a prefix", auth: "Bearer " + token(func(c jwt.MapClaims) { c["aud"] = "https://hub.example.com" }), status: http.StatusUnauthorized},
		{name: "expired", auth: "Bearer " + token(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Hour).Unix() }), status: http.StatusUnauthorized,
			challenge: "Bearer " + meta + `, error="invalid_token", error_description="the token has expired", scope="webmcp:read"`},
		{name: "read-only token calls", auth: "Bearer " + readOnly, op: "call", status: http.StatusForbidden,
			challenge: "Bearer " + meta + `, error="insufficient_scope", error_description="tools/call x needs the scope webmcp:call; the token has ['webmcp:read']", scope="webmcp:call"`},
		{name: "read-only token lists", auth: "Bearer " + readOnly, status: http.StatusNoContent},
		{name: "token in the query", target: "/mcp?access_token=" + token(nil), status: http.StatusBadRequest,
			challenge: "Bearer " + meta + `, error="invalid_request", error_description="send the access token in the Authorization header, never in the URL"`},
		{name: "token in the query and the header", auth: "Bearer " + token(nil), target: "/mcp?access_token=x", status: http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := tt.target
			if target == "" {
				target = "/mcp"
			}
			r := httptest.NewRequest(http.MethodPost, target, nil)
			if tt.auth != "" {
				r.Header.Set("Authorization", tt.auth)
			}
			if tt.op != "" {
				r.Header.Set("X-Op", tt.op)
			}
			seen, needed = nil, false
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			got := w.Header().Get("WWW-Authenticate")
			if tt.challenge != "" && got != tt.challenge {
				t.Fatalf("WWW-Authenticate:\n got %s\nwant %s", got, tt.challenge)
			}
			if tt.status == http.StatusNoContent {
				if got != "" || seen == nil || seen.Subject != "alice" {
					t.Fatalf("let in with challenge %q, principal %+v", got, seen)
				}
			} else if seen != nil {
				t.Fatal("a refused request reached the handler")
			}
			if needed != (tt.status == http.StatusNoContent || tt.status == http.StatusForbidden) {
				t.Fatalf("the request's needs were read (%v) for a %d", needed, tt.status)
			}
		})
	}
}

func TestGuardMetadata(t *testing.T) {
	iss := newFakeIssuer(t, newSigner(t, "rs-1", "RS256"))
	v := newTestVerifier(t, Config{Issuers: []string{iss.srv.URL}})
	for _, tt := range []struct {
		resource  string
		paths     []string
		metaURL   string
		wantError bool
	}{
		{"https://hub.example.com/mcp", []string{MetadataPath, MetadataPath + "/mcp"}, "https://hub.example.com/.well-known/oauth-protected-resource/mcp", false},
		{"http://127.0.0.1:8808/mcp", []string{MetadataPath, MetadataPath + "/mcp"}, "http://127.0.0.1:8808/.well-known/oauth-protected-resource/mcp", false},
		{"https://corp.example.com/browser/mcp", []string{MetadataPath, MetadataPath + "/browser/mcp"}, "https://corp.example.com/.well-known/oauth-protected-resource/browser/mcp", false},
		{"https://hub.example.com/", []string{MetadataPath}, "https://hub.example.com/.well-known/oauth-protected-resource", false},
		{"https://hub.example.com/mcp?x=1", nil, "", true},
		{"hub.example.com/mcp", nil, "", true},
	} {
		g, err := NewGuard(v, GuardOptions{Resource: tt.resource, Scopes: []string{"webmcp:read", "webmcp:call"}})
		if tt.wantError {
			if err == nil {
				t.Errorf("NewGuard(%q) took it", tt.resource)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(g.MetadataPaths(), " ") != strings.Join(tt.paths, " ") || g.MetadataURL() != tt.metaURL {
			t.Errorf("%s: paths %v, URL %s; want %v, %s", tt.resource, g.MetadataPaths(), g.MetadataURL(), tt.paths, tt.metaURL)
		}
		w := httptest.NewRecorder()
		g.MetadataHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, g.MetadataPaths()[0], nil))
		var m map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m["resource"] != tt.resource || m["authorization_servers"].([]any)[0] != iss.srv.URL ||
			m["bearer_methods_supported"].([]any)[0] != "header" || len(m["scopes_supported"].([]any)) != 2 {
			t.Errorf("metadata %s", w.Body)
		}
		if w.Header().Get("Access-Control-Allow-Origin") != "*" {
			t.Error("the metadata is not readable cross-origin")
		}
	}
}

// TestGuardUnavailable: a token that cannot be checked now (the
// introspection endpoint refuses this server) gets 503 with Retry-After,
// not a 401 that would send the client for a new token.
func TestGuardUnavailable(t *testing.T) {
	iss := newFakeIssuer(t, newSigner(t, "rs-1", "RS256"))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	v := newTestVerifier(t, Config{Issuers: []string{iss.srv.URL}, IntrospectionClientID: "rs", IntrospectionClientSecret: "wrong", Logger: quiet})
	g, err := NewGuard(v, GuardOptions{Resource: testResource, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	h := g.Require(func(*http.Request) (Need, error) { return Need{}, nil }, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("an unchecked token was let in")
	}))
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set("Authorization", "Bearer opaque-token")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" || w.Header().Get("WWW-Authenticate") != "" {
		t.Fatalf("%d, Retry-After %q, WWW-Authenticate %q: %s", w.Code, w.Header().Get("Retry-After"), w.Header().Get("WWW-Authenticate"), w.Body)
	}
}
