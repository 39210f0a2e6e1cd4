package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// httpEnv is a server over a fake browser, served over HTTP on loopback.
type httpEnv struct {
	hub     *hub.Hub
	browser *fakeBrowser
	url     string
}

func startHTTP(t *testing.T) *httpEnv {
	t.Helper()
	return startHTTPOpts(t, mcpserver.Options{})
}

// startHTTPOpts is startHTTP with server options (Version and Logger are
// set).
func startHTTPOpts(t *testing.T, opts mcpserver.Options) *httpEnv {
	t.Helper()
	e := &httpEnv{browser: &fakeBrowser{}}
	logger := slog.New(slog.DiscardHandler)
	e.hub = hub.New(e.browser, hub.Options{Logger: logger})
	opts.Version, opts.Logger = "test", logger
	srv := mcpserver.New(t.Context(), e.hub, opts)
	h, err := srv.ServeHTTP(mcpserver.HTTPOptions{Addr: "127.0.0.1:0"}, make(chan error, 1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	e.url = "http://" + h.Addr() + "/mcp"
	return e
}

// meta2026 is the per-request _meta of a 2026-07-28 client.
const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// post sends body to url with headers (name, value pairs) and returns the
// status, the headers and the JSON-RPC message of the answer (the data of
// its first event, for an event stream).
func post(t *testing.T, method, url, body string, headers ...string) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %.80s: %v", method, body, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	text := string(raw)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for line := range strings.SplitSeq(text, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok && strings.TrimSpace(d) != "" {
				text = d
				break
			}
		}
	}
	var msg map[string]any
	if json.Unmarshal([]byte(text), &msg) != nil {
		msg = map[string]any{"text": text}
	}
	return resp.StatusCode, resp.Header, msg
}

// TestTwoRevisionsOneEndpoint (issue 26, points 1 to 3): 2026-07-28
// requests are served without a session, older clients keep theirs, and
// every request that breaks the new revision's rules gets the spec's error.
func TestTwoRevisionsOneEndpoint(t *testing.T) {
	e := startHTTP(t)
	e.hub.Update(mkDoc("d1", "tab1"), []core.Tool{
		{Name: "echo", Description: "Echo.", InputSchema: []byte(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}`)},
		{Name: "broken", Description: "Header on an object.", InputSchema: []byte(`{"type":"object","properties":{"o":{"type":"object","x-mcp-header":"O"}}}`)},
	}, nil)
	tool := site + "_echo"
	call := func(args string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `,` + meta2026 + `}}`
	}
	v26 := []string{"MCP-Protocol-Version", "2026-07-28"}
	hdr := func(method, name string, more ...string) []string {
		h := append(append([]string{}, v26...), "Mcp-Method", method)
		if name != "" {
			h = append(h, "Mcp-Name", name)
		}
		return append(h, more...)
	}
	tests := []struct {
		name       string
		method     string
		body       string
		headers    []string
		wantStatus int
		wantCode   float64 // the JSON-RPC error's, or 0 for a result
		want       string  // in the answer (parts joined by " && ")
	}{
		{name: "GET without a session", method: "GET", wantStatus: 405},
		{name: "DELETE without a session", method: "DELETE", wantStatus: 405},
		{name: "GET with a new-revision header", method: "GET", headers: v26, wantStatus: 405},
		{name: "discover lists both revisions", body: `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta2026 + `}}`,
			headers: hdr("server/discover", ""), wantStatus: 200, want: `"supportedVersions":["2026-07-28","2025-11-25"`},
		{name: "discover may be cached", body: `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta2026 + `}}`,
			headers: hdr("server/discover", ""), wantStatus: 200, want: `"ttlMs":300000 && "cacheScope":"private"`},
		{name: "lists are never fresh", body: `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta2026 + `}}`,
			headers: hdr("tools/list", ""), wantStatus: 200, want: `"ttlMs":0} && "cacheScope":"private"`},
		{name: "a tool with a bad x-mcp-header is not listed", body: `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta2026 + `}}`,
			headers: hdr("tools/list", ""), wantStatus: 200, want: `"name":"` + tool + `"`},
		{name: "new revision with a stale session id is served", body: `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta2026 + `}}`,
			headers: hdr("tools/list", "", "Mcp-Session-Id", "gone"), wantStatus: 200, want: `"tools":[`},
		{name: "_meta alone, without the header", body: `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta2026 + `}}`,
			wantStatus: 400, wantCode: -32020},
		{name: "unsupported version", body: `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			headers: []string{"MCP-Protocol-Version", "2099-01-01", "Mcp-Method", "tools/list"}, wantStatus: 400, wantCode: -32022, want: "2026-07-28"},
		{name: "header and _meta disagree", body: `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			headers: hdr("tools/list", ""), wantStatus: 400, wantCode: -32020},
		{name: "Mcp-Method disagrees", body: `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + meta2026 + `}}`,
			headers: hdr("prompts/list", ""), wantStatus: 400, wantCode: -32020},
		{name: "unknown method", body: `{"jsonrpc":"2.0","id":3,"method":"tools/frobnicate","params":{` + meta2026 + `}}`,
			headers: hdr("tools/frobnicate", ""), wantStatus: 404, wantCode: -32601},
		{name: "Mcp-Name disagrees", body: call(`{"region":"eu"}`),
			headers: hdr("tools/call", "other", "Mcp-Param-Region", "eu"), wantStatus: 400, wantCode: -32020},
		{name: "param headers match", body: call(`{"region":"eu","n":3}`),
			headers: hdr("tools/call", tool, "Mcp-Param-Region", "eu", "Mcp-Param-N", "3"), wantStatus: 200, want: `\"region\":\"eu\"`},
		{name: "param header in base64", body: call(`{"region":"Zoë"}`),
			headers: hdr("tools/call", tool, "Mcp-Param-Region", "=?base64?Wm/Dqw==?="), wantStatus: 200, want: `Zo`},
		{name: "param header missing", body: call(`{"region":"eu"}`),
			headers: hdr("tools/call", tool), wantStatus: 400, wantCode: -32020, want: "Mcp-Param-Region is missing"},
		{name: "param header differs", body: call(`{"region":"eu"}`),
			headers: hdr("tools/call", tool, "Mcp-Param-Region", "us"), wantStatus: 400, wantCode: -32020, want: `Mcp-Param-Region is \"us\"`},
		{name: "param header for an absent argument", body: call(`{}`),
			headers: hdr("tools/call", tool, "Mcp-Param-N", "1"), wantStatus: 400, wantCode: -32020, want: "absent"},
		{name: "old revision: stale session", body: `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}`,
			headers: []string{"MCP-Protocol-Version", "2025-11-25", "Mcp-Session-Id", "gone"}, wantStatus: 404},
		{name: "old revision: initialize gets a session", body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
			wantStatus: 200, want: `"protocolVersion":"2025-11-25"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.method
			if m == "" {
				m = "POST"
			}
			status, h, msg := post(t, m, e.url, tt.body, tt.headers...)
			raw, _ := json.Marshal(msg)
			if status != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", status, tt.wantStatus, raw)
			}
			if status == 405 && h.Get("Allow") != "POST" {
				t.Errorf("405 with Allow %q, want POST", h.Get("Allow"))
			}
			if tt.wantCode != 0 {
				errObj, _ := msg["error"].(map[string]any)
				if code, _ := errObj["code"].(float64); code != tt.wantCode {
					t.Errorf("error code %v, want %v: %s", errObj["code"], tt.wantCode, raw)
				}
			} else if status == 200 && msg["result"] == nil {
				t.Errorf("no result: %s", raw)
			}
			for part := range strings.SplitSeq(tt.want, " && ") {
				if !strings.Contains(string(raw), part) {
					t.Errorf("answer %s lacks %s", raw, part)
				}
			}
			if strings.Contains(tt.name, "not listed") && strings.Contains(string(raw), site+"_broken") {
				t.Errorf("the tool with a bad annotation is listed: %s", raw)
			}
		})
	}
	if calls := e.browser.snapshot(); len(calls) != 2 {
		t.Errorf("the page ran %d calls, want the 2 whose headers matched: %+v", len(calls), calls)
	}
	refusals, _ := e.hub.Refusals(0)
	if len(refusals) != 1 || refusals[0].Tool != "broken" || !strings.Contains(refusals[0].Detail, "x-mcp-header") {
		t.Errorf("refusals %+v, want one of broken for its x-mcp-header", refusals)
	}
}

// TestGoClientsOfBothRevisions: the go-sdk client negotiates 2026-07-28
// over HTTP and gets list_changed through subscriptions/listen; a client
// that asks for 2025-11-25 gets a session and list_changed on its stream.
func TestGoClientsOfBothRevisions(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} {
		name := version
		if name == "" {
			name = "latest"
		}
		t.Run(name, func(t *testing.T) {
			e := startHTTP(t)
			changed := make(chan struct{}, 16)
			client := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "1"}, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
			})
			cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: e.url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			want := version
			if want == "" {
				want = "2026-07-28"
			}
			if got := cs.InitializeResult().ProtocolVersion; got != want {
				t.Fatalf("negotiated %s, want %s", got, want)
			}
			e.hub.Update(mkDoc("d1", "tab1"), []core.Tool{{Name: "add_note", Description: "Add a note."}}, nil)
			select {
			case <-changed:
			case <-time.After(5 * time.Second):
				t.Fatal("no tools/list_changed within 5 s of a page registering a tool")
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: site + "_add_note", Arguments: map[string]any{"text": "hi"}})
			if err != nil || res.IsError {
				t.Fatalf("tools/call: %v %+v", err, res)
			}
			if got := textOf(t, res); !strings.Contains(got, `"tool":"add_note"`) {
				t.Errorf("result %s, want the page's answer", got)
			}
		})
	}
}

// TestInputRequestsOverStatelessHTTP: with --confirm writes, a 2026-07-28
// call over HTTP comes back as an input request with a signed
// requestState; the retry that carries the answer runs the tool, and a
// forged, misdirected or replayed state is an invalid request (400,
// -32602) that runs nothing. A client without elicitation is told it
// cannot be asked.
func TestInputRequestsOverStatelessHTTP(t *testing.T) {
	e := startHTTPOpts(t, mcpserver.Options{Confirm: mcpserver.ConfirmWrites})
	e.hub.Update(mkDoc("d1", "tab1"), []core.Tool{{Name: "add_note", Description: "Add a note."}, {Name: "other", Description: "Other."}}, nil)
	const withElicit = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	tool := site + "_add_note"
	callWith := func(t *testing.T, name, meta, extra string) (int, map[string]any) {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":{"text":"hi"},` + meta + extra + `}}`
		status, _, msg := post(t, "POST", e.url, body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", name)
		return status, msg
	}
	errCode := func(msg map[string]any) float64 {
		eo, _ := msg["error"].(map[string]any)
		c, _ := eo["code"].(float64)
		return c
	}
	ask := func(t *testing.T) (string, string) {
		t.Helper()
		status, msg := callWith(t, tool, withElicit, "")
		res, _ := msg["result"].(map[string]any)
		reqs, _ := res["inputRequests"].(map[string]any)
		state, _ := res["requestState"].(string)
		if status != 200 || res["resultType"] != "input_required" || len(reqs) != 1 || state == "" {
			t.Fatalf("first call: %d %v, want an input request with a requestState", status, msg)
		}
		for k := range reqs {
			return k, state
		}
		return "", ""
	}
	answer := func(key, state string) string {
		return `,"requestState":"` + state + `","inputResponses":{"` + key + `":{"action":"accept","content":{}}}`
	}

	key, state := ask(t)
	for _, tt := range []struct{ name, tool, state string }{
		{"altered", tool, state + "x"},
		{"forged", tool, "0123456789abcdef01234567.00"},
		{"for another tool", site + "_other", state},
	} {
		status, msg := callWith(t, tt.tool, withElicit, answer(key, tt.state))
		if status != 400 || errCode(msg) != -32602 {
			t.Errorf("%s state: %d %v, want 400 with -32602", tt.name, status, msg)
		}
	}
	if n := len(e.browser.snapshot()); n != 0 {
		t.Fatalf("the page ran %d calls before any good answer", n)
	}
	status, msg := callWith(t, tool, withElicit, answer(key, state))
	res, _ := msg["result"].(map[string]any)
	if status != 200 || res["resultType"] != "complete" || res["isError"] == true {
		t.Fatalf("answered retry: %d %v, want the tool's result", status, msg)
	}
	if n := len(e.browser.snapshot()); n != 1 {
		t.Fatalf("the page ran %d calls, want 1", n)
	}
	if status, msg := callWith(t, tool, withElicit, answer(key, state)); status != 400 || errCode(msg) != -32602 {
		t.Errorf("replayed state: %d %v, want 400 with -32602", status, msg)
	}
	status, msg = callWith(t, tool, meta2026, "")
	res, _ = msg["result"].(map[string]any)
	if raw, _ := json.Marshal(res); status != 200 || res["isError"] != true || !strings.Contains(string(raw), "cannot be asked") {
		t.Errorf("a client without elicitation: %d %s, want an error result saying it cannot be asked", status, raw)
	}
	if n := len(e.browser.snapshot()); n != 1 {
		t.Errorf("the page ran %d calls, want still 1", n)
	}
}
