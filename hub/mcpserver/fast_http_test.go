package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFastHTTPAnswersAsTheSDK sends each 2026-07-28 tools/call over HTTP
// once as the fast path takes it and once with a _meta key it leaves to
// the SDK (a log level, which changes no result), and wants the same
// JSON-RPC answer from both, for every kind of result; and it checks which
// requests the fast path takes.
func TestFastHTTPAnswersAsTheSDK(t *testing.T) {
	s := fastServer(t, Options{})
	if err := s.Synced(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Counts the tools/call requests of every session (the stateless ones
	// too) that reach the SDK.
	var sdkCalls atomic.Int64
	s.MCP().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				sdkCalls.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	handler, err := s.httpHandler(HTTPOptions{MaxBodyBytes: 1 << 20}, "127.0.0.1:8808", true, http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	const (
		meta    = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`
		sdkMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"info"}`
	)
	post := func(t *testing.T, body string, header ...string) (map[string]any, string) {
		t.Helper()
		r := httptest.NewRequestWithContext(t.Context(), "POST", "http://127.0.0.1:8808/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set(headerProtocolVersion, protocol20260728)
		r.Header.Set(headerMethod, "tools/call")
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, r)
		text := w.Body.String()
		if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
			for line := range strings.SplitSeq(text, "\n") {
				if d, ok := strings.CutPrefix(line, "data: "); ok && strings.TrimSpace(d) != "" {
					text = d
					break
				}
			}
		}
		var msg map[string]any
		if err := json.Unmarshal([]byte(text), &msg); err != nil {
			msg = map[string]any{"status": w.Code, "text": text}
		}
		return msg, w.Header().Get("Content-Type")
	}
	call := func(id, tool, meta, extra string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"s_test_` + tool + `","arguments":{"text":"x"}` + extra + `,"_meta":` + meta + `}}`
	}
	for _, tt := range []struct {
		name, id, tool, extra string
		header                []string
		fast                  bool // the fast path answers the first request
	}{
		{name: "text", id: "1", tool: "text", fast: true},
		{name: "json", id: `"abc"`, tool: "json", fast: true},
		{name: "html", id: "3", tool: "html", fast: true},
		{name: "throws", id: "4", tool: "throws", fast: true},
		{name: "image", id: "5", tool: "image", fast: true},
		{name: "undefined", id: "6", tool: "undefined", fast: true},
		{name: "result _meta", id: "7", tool: "result_meta", fast: true},
		{name: "bad arguments", id: "8", tool: "strict", extra: `,"arguments2":1`},
		{name: "unknown tool", id: "9", tool: "nope"},
		{name: "requestState", id: "10", tool: "text", extra: `,"requestState":"x"`},
		{name: "a non-canonical id", id: "1.5", tool: "text"},
		{name: "JSON answers only", id: "11", tool: "text", header: []string{"Accept", "application/json"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name := "s_test_" + tt.tool
			h := append([]string{headerName, name}, tt.header...)
			before := sdkCalls.Load()
			got, ctype := post(t, call(tt.id, tt.tool, meta, tt.extra), h...)
			if took := sdkCalls.Load() == before && ctype == "application/json"; took != tt.fast {
				t.Errorf("the fast path took it: %v, want %v (%s)", took, tt.fast, ctype)
			}
			want, _ := post(t, call(tt.id, tt.tool, sdkMeta, tt.extra), h...)
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("\n fast: %s\n  sdk: %s", g, w)
			}
		})
	}
	// A client that can be asked, and one whose _meta names another
	// version, go to the SDK.
	for _, m := range []string{
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":7}}`,
	} {
		before := sdkCalls.Load()
		msg, _ := post(t, call("20", "text", m, ""), headerName, "s_test_text")
		// The SDK refuses a _meta it cannot read before its tools/call
		// handling: an error, where the fast path would have run the tool.
		if sdkCalls.Load() == before && msg["error"] == nil {
			t.Errorf("_meta %s: the fast path took it: %v", m, msg)
		}
	}
}
