package mcpserver_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
	"github.com/webmcp-cdp/webmcp-cdp/internal/oauth"
	"github.com/webmcp-cdp/webmcp-cdp/internal/oauth/oauthtest"
)

// fakeSpaces opens a space per person, each a Server over a hub of its own
// with one tab and one tool named after the person ("diary_<subject>"),
// up to max spaces; a person in fail gets that error instead.
type fakeSpaces struct {
	ctx  context.Context
	max  int
	fail map[string]error

	mu     sync.Mutex
	spaces map[mcpserver.Person]*mcpserver.Server
	asked  int
}

func (f *fakeSpaces) Space(_ context.Context, p mcpserver.Person) (*mcpserver.Server, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	if s, ok := f.spaces[p]; ok {
		return s, nil
	}
	if err := f.fail[p.Subject]; err != nil {
		return nil, err
	}
	if len(f.spaces) >= f.max {
		return nil, &mcpserver.SpacesFullError{Max: f.max, RetryAfter: 1500 * time.Millisecond}
	}
	h := hub.New(&fakeBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	o := "https://diary.example"
	h.Update(core.Source{Key: "doc-" + p.Subject, Tab: "tab-" + p.Subject, Frame: "f", Origin: o, URL: o + "/" + p.Subject, Backend: "polyfill"},
		[]core.Tool{{Name: "diary_" + p.Subject, Description: "Reads " + p.Subject + "'s diary.", InputSchema: []byte(`{"type":"object"}`)}}, nil)
	s := mcpserver.New(f.ctx, h, mcpserver.Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
	f.spaces[p] = s
	return s, nil
}

func (f *fakeSpaces) Count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.spaces)
}

func (f *fakeSpaces) askedSoFar() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked
}

// spacesEndpoint serves sp in spaces mode, taking a test issuer's tokens;
// it returns the endpoint's /mcp URL and the issuer.
func spacesEndpoint(t *testing.T, sp *fakeSpaces) (string, *oauthtest.Issuer) {
	t.Helper()
	iss := oauthtest.New(t)
	v, err := oauth.NewVerifier(t.Context(), oauth.Config{Issuers: []string{iss.URL}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs, err := mcpserver.ServeSpaces(mcpserver.HTTPOptions{Addr: "127.0.0.1:0", Auth: &mcpserver.AuthOptions{Verifier: v}, Spaces: sp, StatusLink: func(string) {}},
		slog.New(slog.DiscardHandler), make(chan error, 1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hs.Close() })
	return "http://" + hs.Addr() + "/mcp", iss
}

// oauthRequest is one request to an endpoint in OAuth mode at url (its
// /mcp), with token when set: a POST of body to /mcp (in a session when
// session is set), or a GET of the status page when body is empty.
func oauthRequest(t *testing.T, url, token, session, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(url, "mcp"), nil)
	if body != "" {
		req, _ = http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

const (
	spacesInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"0"}}}`
	spacesList = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
)

// TestSpaces: each person reaches a Server of their own, chosen by their
// token: their own tools, sessions and status page; a session made in one
// space is unknown in another; a newcomer over the maximum gets 503 with
// Retry-After; a request without a token never reaches Spaces.
func TestSpaces(t *testing.T) {
	sp := &fakeSpaces{ctx: t.Context(), max: 2, spaces: map[mcpserver.Person]*mcpserver.Server{},
		fail: map[string]error{"dave": errors.New("the browser said no to dave's context")}}
	url, iss := spacesEndpoint(t, sp)
	token := func(who string) string { return iss.TokenFor(t, who, url, "webmcp:read webmcp:call") }
	sessions := map[string]string{}
	for _, who := range []string{"alice", "bob"} {
		resp, body := oauthRequest(t, url, token(who), "", spacesInit)
		if sessions[who] = resp.Header.Get("Mcp-Session-Id"); resp.StatusCode != http.StatusOK || sessions[who] == "" {
			t.Fatalf("%s's initialize: %s, session %q: %s", who, resp.Status, sessions[who], body)
		}
	}
	alice, bob := sessions["alice"], sessions["bob"]
	tests := []struct {
		name          string
		who, session  string // who "" sends no token
		body          string // "" GETs the status page
		code          int
		retryAfter    string
		want, wantNot []string
		reaches       bool
	}{
		{name: "alice lists her own tools", who: "alice", session: alice, body: spacesList, code: http.StatusOK,
			want: []string{"diary_alice"}, wantNot: []string{"diary_bob"}, reaches: true},
		{name: "bob lists his own tools", who: "bob", session: bob, body: spacesList, code: http.StatusOK,
			want: []string{"diary_bob"}, wantNot: []string{"diary_alice"}, reaches: true},
		{name: "alice's session is unknown in bob's space", who: "bob", session: alice, body: spacesList, code: http.StatusNotFound,
			wantNot: []string{"diary_"}, reaches: true},
		{name: "bob's session is unknown in alice's space", who: "alice", session: bob, body: spacesList, code: http.StatusNotFound,
			wantNot: []string{"diary_"}, reaches: true},
		{name: "a newcomer over the maximum", who: "carol", body: spacesInit, code: http.StatusServiceUnavailable, retryAfter: "2",
			want: []string{`"jsonrpc":"2.0"`, "the hub holds its maximum of 2 spaces", "try again in 2 s"}, reaches: true},
		{name: "a newcomer over the maximum, status page", who: "carol", code: http.StatusServiceUnavailable, retryAfter: "2",
			want: []string{"the hub holds its maximum of 2 spaces"}, reaches: true},
		{name: "a space that cannot open", who: "dave", body: spacesInit, code: http.StatusServiceUnavailable,
			want: []string{"could not open your space"}, wantNot: []string{"browser said no"}, reaches: true},
		{name: "no token", body: spacesInit, code: http.StatusUnauthorized},
		{name: "no token, status page", code: http.StatusUnauthorized},
		{name: "alice's status page", who: "alice", code: http.StatusOK,
			want:    []string{"diary_alice", alice[:12], `<span id="other-spaces">1</span>`},
			wantNot: []string{"diary_bob", bob[:12], "bob"}, reaches: true},
		{name: "bob's status page", who: "bob", code: http.StatusOK,
			want:    []string{"diary_bob", bob[:12], `<span id="other-spaces">1</span>`},
			wantNot: []string{"diary_alice", alice[:12], "alice"}, reaches: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := ""
			if tt.who != "" {
				tok = token(tt.who)
			}
			before := sp.askedSoFar()
			resp, body := oauthRequest(t, url, tok, tt.session, tt.body)
			if resp.StatusCode != tt.code {
				t.Errorf("%s, want %d: %s", resp.Status, tt.code, body)
			}
			if got := resp.Header.Get("Retry-After"); got != tt.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, tt.retryAfter)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("the answer lacks %q:\n%s", w, body)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(body, w) {
					t.Errorf("the answer has %q:\n%s", w, body)
				}
			}
			if reached := sp.askedSoFar() > before; reached != tt.reaches {
				t.Errorf("Spaces asked: %v, want %v", reached, tt.reaches)
			}
		})
	}
	if n := sp.Count(); n != 2 {
		t.Errorf("%d spaces open, want 2 (alice's and bob's)", n)
	}

	// A space's Server that closes its sessions (as when the space closes)
	// forgets them: its client is told so, and may start again.
	s, _ := sp.Space(t.Context(), mcpserver.Person{Issuer: iss.URL, Subject: "alice"})
	if n := s.CloseSessions(); n != 1 {
		t.Errorf("CloseSessions closed %d sessions, want alice's 1", n)
	}
	if resp, body := oauthRequest(t, url, token("alice"), alice, spacesList); resp.StatusCode != http.StatusNotFound {
		t.Errorf("alice's closed session: %s %s, want 404", resp.Status, body)
	}
	if resp, body := oauthRequest(t, url, token("bob"), bob, spacesList); resp.StatusCode != http.StatusOK || !strings.Contains(body, "diary_bob") {
		t.Errorf("bob's session after alice's closed: %s %s", resp.Status, body)
	}
}

// TestSpacesNeedOAuth: spaces are served by ServeSpaces, and only in OAuth
// mode, where a token names its person.
func TestSpacesNeedOAuth(t *testing.T) {
	sp := &fakeSpaces{ctx: t.Context(), spaces: map[mcpserver.Person]*mcpserver.Server{}}
	srv, _ := catalogServer(t)
	iss := oauthtest.New(t)
	v, err := oauth.NewVerifier(t.Context(), oauth.Config{Issuers: []string{iss.URL}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		serve func() (*mcpserver.HTTP, error)
		want  string
	}{
		{"ServeSpaces without OAuth", func() (*mcpserver.HTTP, error) {
			return mcpserver.ServeSpaces(mcpserver.HTTPOptions{Addr: "127.0.0.1:0", Spaces: sp}, nil, make(chan error, 1))
		}, "needs --oauth-issuer"},
		{"ServeSpaces with a static token", func() (*mcpserver.HTTP, error) {
			return mcpserver.ServeSpaces(mcpserver.HTTPOptions{Addr: "127.0.0.1:0", Spaces: sp, Token: "s"}, nil, make(chan error, 1))
		}, "needs --oauth-issuer"},
		{"ServeSpaces without spaces", func() (*mcpserver.HTTP, error) {
			return mcpserver.ServeSpaces(mcpserver.HTTPOptions{Addr: "127.0.0.1:0", Auth: &mcpserver.AuthOptions{Verifier: v}}, nil, make(chan error, 1))
		}, "needs HTTPOptions.Spaces"},
		{"ServeHTTP with spaces, without OAuth", func() (*mcpserver.HTTP, error) {
			return srv.ServeHTTP(mcpserver.HTTPOptions{Addr: "127.0.0.1:0", Spaces: sp}, make(chan error, 1))
		}, "needs --oauth-issuer"},
		{"ServeHTTP with spaces", func() (*mcpserver.HTTP, error) {
			return srv.ServeHTTP(mcpserver.HTTPOptions{Addr: "127.0.0.1:0", Spaces: sp, Auth: &mcpserver.AuthOptions{Verifier: v}}, make(chan error, 1))
		}, "served by mcpserver.ServeSpaces"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs, err := tt.serve()
			if err == nil {
				hs.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one that says %q", err, tt.want)
			}
		})
	}
}
