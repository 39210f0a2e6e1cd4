package mcpserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestKeepsAwake: which requests keep a space from idling while in
// flight, and that the body is put back whole for the handler.
func TestKeepsAwake(t *testing.T) {
	tests := []struct {
		name, method, body string
		want               bool
	}{
		{"a tool call", http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, true},
		{"a first list", http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, true},
		{"a listen stream", http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}`, false},
		{"a batch with a listen and a call", http.MethodPost, `[{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen"},{"jsonrpc":"2.0","id":2,"method":"tools/call"}]`, true},
		{"a batch of listens", http.MethodPost, `[{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen"}]`, false},
		{"a response", http.MethodPost, `{"jsonrpc":"2.0","id":1,"result":{}}`, true},
		{"a body that does not parse", http.MethodPost, `{`, true},
		{"the event stream", http.MethodGet, ``, false},
		{"the end of a session", http.MethodDelete, ``, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/mcp", strings.NewReader(tt.body))
			if got := keepsAwake(r, 1<<20); got != tt.want {
				t.Errorf("keepsAwake = %v, want %v", got, tt.want)
			}
			if b, _ := io.ReadAll(r.Body); string(b) != tt.body {
				t.Errorf("the handler reads %q, want %q", b, tt.body)
			}
		})
	}
	// A body over the bound is put back whole too.
	long := strings.Repeat("x", 100)
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(long))
	if !keepsAwake(r, 10) {
		t.Error("a body over the bound does not keep the space awake")
	}
	if b, _ := io.ReadAll(r.Body); string(b) != long {
		t.Errorf("the handler reads %d bytes, want %d", len(b), len(long))
	}
}
