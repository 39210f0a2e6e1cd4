package mcpserver_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/oauth"
	"github.com/webmcp-cdp/webmcp-cdp/internal/oauth/oauthtest"
)

// TestMetricsBehindTheGuard: GET /metrics of the HTTP endpoint is behind
// the same guard as /mcp: open on loopback without one, the bearer token
// with --token, and a token with the read scope in OAuth mode.
func TestMetricsBehindTheGuard(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "webmcp_cdp_tabs 1\n") })
	iss := oauthtest.New(t)
	v, err := oauth.NewVerifier(context.Background(), oauth.Config{Issuers: []string{iss.URL}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	serve := func(opts mcpserver.HTTPOptions) string {
		srv, _ := catalogServer(t)
		opts.Addr, opts.Metrics = "127.0.0.1:0", metrics
		hs, err := srv.ServeHTTP(opts, make(chan error, 1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { hs.Close() })
		return "http://" + hs.Addr()
	}
	get := func(url, token string) int {
		req, _ := http.NewRequest(http.MethodGet, url+"/metrics", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	open := serve(mcpserver.HTTPOptions{})
	withToken := serve(mcpserver.HTTPOptions{Token: "s3cret"})
	withOAuth := serve(mcpserver.HTTPOptions{Auth: &mcpserver.AuthOptions{Verifier: v}})
	tests := []struct {
		name, url, token string
		want             int
	}{
		{"loopback, no guard", open, "", http.StatusOK},
		{"token missing", withToken, "", http.StatusUnauthorized},
		{"token wrong", withToken, "nope", http.StatusUnauthorized},
		{"token", withToken, "s3cret", http.StatusOK},
		{"oauth, no token", withOAuth, "", http.StatusUnauthorized},
		{"oauth, call scope only", withOAuth, iss.Token(t, withOAuth+"/mcp", "webmcp:call"), http.StatusForbidden},
		{"oauth, read scope", withOAuth, iss.Token(t, withOAuth+"/mcp", "webmcp:read"), http.StatusOK},
	}
	for _, tt := range tests {
		if got := get(tt.url, tt.token); got != tt.want {
			t.Errorf("%s: GET /metrics = %d, want %d", tt.name, got, tt.want)
		}
	}
}
