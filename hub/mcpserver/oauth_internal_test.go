package mcpserver

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/internal/oauth"
	"github.com/webmcp-cdp/webmcp-cdp/internal/oauth/oauthtest"
)

// TestOAuthNeeds: the scope each JSON-RPC body needs, read as the go-sdk
// reads it.
func TestOAuthNeeds(t *testing.T) {
	e := &oauthEdge{read: "r", call: "c", maxBody: 1 << 20}
	tests := []struct {
		name, body string
		scopes     string
		act        bool
	}{
		{"initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, "r", false},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "r", false},
		{"tools/list", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "r", false},
		{"resources/read", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"x"}}`, "r", false},
		{"discover", `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, "r", false},
		{"a response", `{"jsonrpc":"2.0","id":1,"result":{}}`, "r", false},
		{"own read tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"webmcp_list_tabs"}}`, "r", false},
		{"own list tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"webmcp_list_tools","arguments":{"query":"x"}}}`, "r", false},
		{"page tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"shop_add","arguments":{}}}`, "c", true},
		{"open a tab", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"webmcp_open_tab","arguments":{"url":"x"}}}`, "c", true},
		{"webmcp_call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"webmcp_call"}}`, "c", true},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"tasks/run"}`, "c", true},
		{"tools/call without a name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}`, "c", true},
		// The go-sdk matches member names exactly: "Method" is no method to
		// it, and none here (the body is refused there, acting on nothing).
		{"member names differ in case", `{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{"name":"shop_add"}}`, "r", false},
		{"tool name in another case", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"webmcp_list_tabs","name":"shop_add"}}`, "c", true},
		{"escaped method", `{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"shop_add"}}`, "c", true},
		{"duplicate name: the last wins, as in the go-sdk", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"webmcp_list_tabs","name":"shop_add"}}`, "c", true},
		{"batch with a call", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shop_add"}}]`, "c", true},
		{"batch of reads", ` [{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, "r", false},
		{"not JSON", `{"jsonrpc":`, "r", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := e.needOfBody([]byte(tt.body))
			if got := strings.Join(n.Scopes, " "); got != tt.scopes || n.Act != tt.act {
				t.Errorf("needs %q (act %v), want %q (act %v); op %q", got, n.Act, tt.scopes, tt.act, n.Op)
			}
		})
	}
}

// BenchmarkOAuthGuard is OAuth mode's own work on a tools/call, without the
// network and the MCP server: the token check (cached after the first
// request), the body peek for the scope, and the go-sdk's TokenInfo.
func BenchmarkOAuthGuard(b *testing.B) {
	iss := oauthtest.New(b)
	v, err := oauth.NewVerifier(context.Background(), oauth.Config{Issuers: []string{iss.URL}})
	if err != nil {
		b.Fatal(err)
	}
	const url = "http://127.0.0.1:8808/mcp"
	e, err := newOAuthEdge(slog.New(slog.DiscardHandler), HTTPOptions{MaxBodyBytes: 4 << 20, Auth: &AuthOptions{Verifier: v, PublicURL: url}})
	if err != nil {
		b.Fatal(err)
	}
	h := e.mcp(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	auth := "Bearer " + iss.Token(b, url, "webmcp:read webmcp:call")
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shop_add_to_cart","arguments":{"query":"x"}}}`
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header.Set("Authorization", auth)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code, w.Body)
		}
	}
}
