package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/oauth"
	"github.com/webmcp-cdp/webmcp-cdp/internal/oauth/oauthtest"
)

// oauthServer serves a catalog over HTTP in OAuth mode, taking the tokens
// of a test issuer, and returns its /mcp URL.
func oauthServer(tb testing.TB) (string, *oauthtest.Issuer, string) {
	tb.Helper()
	iss := oauthtest.New(tb)
	v, err := oauth.NewVerifier(context.Background(), oauth.Config{Issuers: []string{iss.URL}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	srv, h := catalogServer(tb)
	hs, err := srv.ServeHTTP(mcpserver.HTTPOptions{Addr: "127.0.0.1:0", Auth: &mcpserver.AuthOptions{Verifier: v}}, make(chan error, 1))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { hs.Close() })
	return "http://" + hs.Addr() + "/mcp", iss, h.Tools()[0].Name
}

// bearerTransport sends a fixed bearer token.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connectWith(t *testing.T, url, token string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	return c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{token}}, DisableStandaloneSSE: true}, nil)
}

// TestOAuthMode: metadata, the challenges, and the scopes per operation
// through a go-sdk client; the spec's 401 for a client without a token.
func TestOAuthMode(t *testing.T) {
	url, iss, page := oauthServer(t)

	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if meta["resource"] != url || meta["authorization_servers"].([]any)[0] != iss.URL {
		t.Fatalf("metadata %v", meta)
	}

	resp, err = http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	want := `Bearer resource_metadata="` + strings.TrimSuffix(url, "/mcp") + `/.well-known/oauth-protected-resource/mcp", scope="webmcp:read"`
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != want {
		t.Fatalf("without a token: %s, WWW-Authenticate %q; want 401, %q", resp.Status, resp.Header.Get("WWW-Authenticate"), want)
	}

	if _, err := connectWith(t, url, iss.Token(t, "http://elsewhere/mcp", "webmcp:read webmcp:call")); err == nil {
		t.Fatal("a token for another audience was taken")
	}

	reader, err := connectWith(t, url, iss.Token(t, url, "webmcp:read"))
	if err != nil {
		t.Fatalf("a read-only token: %v", err)
	}
	defer reader.Close()
	if _, err := reader.ListTools(t.Context(), nil); err != nil {
		t.Fatalf("listing with a read-only token: %v", err)
	}
	if _, err := reader.CallTool(t.Context(), &mcp.CallToolParams{Name: "webmcp_list_tabs"}); err != nil {
		t.Fatalf("webmcp_list_tabs with a read-only token: %v", err)
	}
	_, err = reader.CallTool(t.Context(), &mcp.CallToolParams{Name: page, Arguments: map[string]any{"query": "x"}})
	if err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Fatalf("a page tool with a read-only token: %v, want 403", err)
	}

	caller, err := connectWith(t, url, iss.Token(t, url, "webmcp:read webmcp:call"))
	if err != nil {
		t.Fatal(err)
	}
	defer caller.Close()
	res, err := caller.CallTool(t.Context(), &mcp.CallToolParams{Name: page, Arguments: map[string]any{"query": "x"}})
	if err != nil || res.IsError {
		t.Fatalf("a page tool with webmcp:call: %v %v", err, res)
	}

	// The status page needs the read scope, and names who called. The
	// call log is fed by a watcher goroutine: look again for up to 5 s.
	status := func(token string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(url, "mcp"), nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, _ := status(""); code != http.StatusUnauthorized {
		t.Errorf("the status page without a token: %d", code)
	}
	read := iss.Token(t, url, "webmcp:read")
	// Poll interval: the watcher that feeds the call log tells no one.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		code, body := status(read)
		if code == http.StatusOK && strings.Contains(body, "by alice (agent-1)") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the status page (%d) does not name the caller:\n%s", code, body)
		}
	}
}

// TestOAuthSessionStaysWithItsPrincipal: a session opened with one
// subject's token is not usable with another subject's (the go-sdk checks
// the TokenInfo this mode hands it).
func TestOAuthSessionStaysWithItsPrincipal(t *testing.T) {
	url, iss, _ := oauthServer(t)
	post := func(token, session, body string) (*http.Response, string) {
		return oauthRequest(t, url, token, session, body)
	}
	alice := iss.TokenFor(t, "alice", url, "webmcp:read webmcp:call")
	resp, _ := post(alice, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"a","version":"0"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %s, session %q", resp.Status, session)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if resp, body := post(alice, session, list); resp.StatusCode != http.StatusOK {
		t.Fatalf("alice in her session: %s %s", resp.Status, body)
	}
	if resp, body := post(iss.TokenFor(t, "bob", url, "webmcp:read webmcp:call"), session, list); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("bob in alice's session: %s %s, want 403", resp.Status, body)
	}
}

// TestOAuthExclusive: a static token and OAuth are never both taken.
func TestOAuthExclusive(t *testing.T) {
	iss := oauthtest.New(t)
	v, err := oauth.NewVerifier(context.Background(), oauth.Config{Issuers: []string{iss.URL}})
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := catalogServer(t)
	_, err = srv.ServeHTTP(mcpserver.HTTPOptions{Addr: "127.0.0.1:0", Token: "s", Auth: &mcpserver.AuthOptions{Verifier: v}}, make(chan error, 1))
	if err == nil || !strings.Contains(err.Error(), "both set") {
		t.Fatalf("ServeHTTP with --token and OAuth: %v", err)
	}
}

// BenchmarkCallHTTPAuth is one tools/call of a page tool over streamable
// HTTP (raw client, its own session) with no auth and with a JWT in OAuth
// mode: the difference is the call path's cost of OAuth (the token check,
// cached after the first request, and the body peek for the scope). It
// reports the median besides the mean:
//
//	go test ./hub/mcpserver -run '^$' -bench CallHTTPAuth -count 5
func BenchmarkCallHTTPAuth(b *testing.B) {
	for _, mode := range []string{"none", "jwt"} {
		b.Run(mode, func(b *testing.B) {
			var url, auth, page string
			if mode == "jwt" {
				var iss *oauthtest.Issuer
				url, iss, page = oauthServer(b)
				auth = "Bearer " + iss.Token(b, url, "webmcp:read webmcp:call")
			} else {
				srv, h := catalogServer(b)
				hs, err := srv.ServeHTTP(mcpserver.HTTPOptions{Addr: "127.0.0.1:0"}, make(chan error, 1))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { hs.Close() })
				url, page = "http://"+hs.Addr()+"/mcp", h.Tools()[0].Name
			}
			c := newRawHTTPClientWith(b, url, auth)
			body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + page + `","arguments":{"query":"x"}}}`
			var took []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				if _, data := c.post(body); strings.Contains(string(data), `"isError":true`) {
					b.Fatalf("%s", data)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds())/1e3, "p50-µs")
		})
	}
}
