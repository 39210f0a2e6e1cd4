package relay

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/hub/relay/proxy"
)

// cannedRelay is a relay endpoint whose every answer has result, as a
// browser side that asks whatever it likes would send; it counts the
// requests it got.
func cannedRelay(t *testing.T, result []byte) (string, *atomic.Int32) {
	t.Helper()
	var got atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		for {
			_, data, err := ws.Read(r.Context())
			if err != nil {
				return
			}
			got.Add(1)
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(data, &req) != nil {
				return
			}
			ws.Write(r.Context(), websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+string(result)+`}`))
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http"), &got
}

// TestConnectRefusesAnUnaskedQuestion: the browser side is a relay peer and
// untrusted. When it answers a call with a question although connect said
// its client cannot be asked (--dialogs fail, accept or dismiss), or with a
// question connect does not pass on, connect ends the call with an error
// that says so, and does not call again.
func TestConnectRefusesAnUnaskedQuestion(t *testing.T) {
	encode := func(res *mcp.CallToolResult) []byte {
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	form := encode(&mcp.CallToolResult{RequestState: "s1", InputRequests: mcp.InputRequestMap{
		proxy.QuestionKey: &mcp.ElicitParams{Message: "Sure?", RequestedSchema: map[string]any{"type": "object"}}}})
	link := encode(&mcp.CallToolResult{RequestState: "s1", InputRequests: mcp.InputRequestMap{
		proxy.QuestionKey: &mcp.ElicitParams{Mode: "url", URL: "https://evil.example/", Message: "Log in"}}})
	sampling := encode(&mcp.CallToolResult{RequestState: "s1", InputRequests: mcp.InputRequestMap{
		proxy.QuestionKey: &mcp.CreateMessageWithToolsParams{MaxTokens: 10}}})
	for _, tc := range []struct {
		name   string
		policy mcpserver.DialogPolicy
		result []byte
		want   string
	}{
		{"fail", mcpserver.DialogsFail, form, "the browser asked a question although this client cannot be asked"},
		{"accept", mcpserver.DialogsAccept, form, "the browser asked a question although this client cannot be asked"},
		{"dismiss", mcpserver.DialogsDismiss, form, "the browser asked a question although this client cannot be asked"},
		{"a link", mcpserver.DialogsFail, link, `the question is a "url" elicitation; only forms are passed on`},
		{"sampling", mcpserver.DialogsFail, sampling, "the question is not an elicitation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, got := cannedRelay(t, tc.result)
			r, err := NewRemote(RemoteOptions{URL: url, Token: "t", Dialogs: tc.policy, Logger: quietLogger()})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			c, err := Dial(ctx, url, ClientOptions{Logger: quietLogger()})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res := r.callAsking(ctx, c, nil, "site_confirm", json.RawMessage(`{}`))
			if !res.IsError || !strings.Contains(textOf(res), tc.want) {
				t.Errorf("callAsking = %v %q, want an error saying %q", res.IsError, textOf(res), tc.want)
			}
			if res.InputRequests != nil || res.RequestState != "" {
				t.Errorf("the question reached the client: %v %q", res.InputRequests, res.RequestState)
			}
			if n := got.Load(); n != 1 {
				t.Errorf("connect called the browser %d times, want once", n)
			}
		})
	}
}
