package bench

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestForwardHandlerWithTheGoSDKClient connects the go-sdk client to the
// HTTP forwarder's handler, answering as application/json and as an event
// stream, of the older revisions and (stateless) of 2026-07-28, and checks
// the version the client settles on, that it lists echo_0 and that one
// tools/call makes exactly one call into the page (here a counting func),
// whose error comes back as a tool error.
func TestForwardHandlerWithTheGoSDKClient(t *testing.T) {
	for _, mode := range []ForwardHTTPMode{{}, {SSE: true}, {Stateless: true}, {SSE: true, Stateless: true}} {
		name := map[bool]string{false: "json", true: "event stream"}[mode.SSE]
		if mode.Stateless {
			name += ", stateless"
		}
		t.Run(name, func(t *testing.T) {
			testForwardHandlerWithTheGoSDKClient(t, mode)
		})
	}
}

func testForwardHandlerWithTheGoSDKClient(t *testing.T, mode ForwardHTTPMode) {
	var calls atomic.Int64
	var fail atomic.Bool
	call := func(context.Context) error {
		calls.Add(1)
		if fail.Load() {
			return errors.New("the page went away")
		}
		return nil
	}
	var initialized atomic.Int64 // initialize requests
	handler := forwardHandler(call, mode)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "" && r.Header.Get("Mcp-Protocol-Version") == "" {
			initialized.Add(1) // only initialize goes without both
		}
		handler.ServeHTTP(w, r)
	}))
	defer srv.Close()
	cs, err := newClient(make(chan struct{}, 1)).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("connecting the go-sdk client: %v", err)
	}
	defer cs.Close()
	want, wantInit := "2025-11-25", int64(1) // what the client falls back to with a stateful go-sdk server
	if mode.Stateless {
		want, wantInit = "2026-07-28", 0
	}
	if v := cs.InitializeResult().ProtocolVersion; v != want {
		t.Errorf("negotiated protocol %q, want %s", v, want)
	}
	if n := initialized.Load(); n != wantInit {
		t.Errorf("the client sent %d initialize requests, want %d", n, wantInit)
	}
	if si := cs.InitializeResult().ServerInfo; si == nil || si.Name != "webmcp-cdp-bench-forwarder" {
		t.Errorf("the client has server info %+v, want the forwarder's", si)
	}
	tools, err := listAll(t.Context(), cs)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name != "echo_0" {
		t.Fatalf("tools/list gave %v, want the one tool echo_0", tools)
	}
	for _, tc := range []struct {
		name    string
		fail    bool
		isError bool
		text    string
	}{
		{"a call", false, false, "x"},
		{"a failing call", true, true, "the page went away"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fail.Store(tc.fail)
			before := calls.Load()
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo_0", Arguments: map[string]any{"text": "x"}})
			if err != nil {
				t.Fatalf("tools/call: %v", err)
			}
			if res.IsError != tc.isError || text(res) != tc.text {
				t.Errorf("tools/call gave isError %v, text %q; want %v, %q", res.IsError, text(res), tc.isError, tc.text)
			}
			if n := calls.Load() - before; n != 1 {
				t.Errorf("one tools/call made %d calls into the page, want 1", n)
			}
		})
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "nope"}); err == nil {
		t.Error("tools/call of a tool the forwarder does not have succeeded")
	}
}

// TestForwardHandlerRejectsOddInput posts what no MCP client sends and
// checks the status and the answer, and that the page is never called.
func TestForwardHandlerRejectsOddInput(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(forwardHandler(func(context.Context) error { calls.Add(1); return nil }, ForwardHTTPMode{}))
	defer srv.Close()
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		answer                   string // a part of the answer's body
	}{
		{"not JSON", "POST", "/mcp", "{not json", 400, `"code":-32700`},
		{"a batch", "POST", "/mcp", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, 400, `"code":-32700`},
		{"too large", "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", maxForwardBody) + `"}}`, 413, `"code":-32700`},
		{"no jsonrpc", "POST", "/mcp", `{"id":1,"method":"tools/call","params":{"name":"echo_0"}}`, 400, `"code":-32600`},
		{"an object id", "POST", "/mcp", `{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{"name":"echo_0"}}`, 400, `"code":-32600`},
		{"a null id", "POST", "/mcp", `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"echo_0"}}`, 400, `"code":-32600`},
		{"params not an object", "POST", "/mcp", `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":[1]}`, 200, `{"jsonrpc":"2.0","id":"a","error":{"code":-32602`},
		{"an unknown method", "POST", "/mcp", `{"jsonrpc":"2.0","id":7,"method":"resources/list\u0007"}`, 200, `{"jsonrpc":"2.0","id":7,"error":{"code":-32601`},
		{"a notification", "POST", "/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202, ""},
		{"the event stream", "GET", "/mcp", "", 405, ""},
		{"another path", "POST", "/other", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.answer) {
				t.Errorf("got %d %s, want %d and an answer containing %s", resp.StatusCode, body, tc.status, tc.answer)
			}
			if tc.answer != "" && !json.Valid(body) {
				t.Errorf("the answer is not JSON: %s", body)
			}
		})
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("odd input made %d calls into the page, want none", n)
	}
}
