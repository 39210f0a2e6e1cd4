package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// TestStatusPageRefusals: the status page shows the hub's refusals, newest
// first, with reason code, tool, origin and detail, escaped, and at most
// statusRefusals of them.
func TestStatusPageRefusals(t *testing.T) {
	tests := []struct {
		name     string
		refusals int // handed over by the browser, besides the hub's own
		want     []string
		wantNot  []string
	}{
		{name: "none", want: []string{"<h2>Refused tools</h2>", `<td colspan="5" class="muted">none</td>`}},
		{name: "a few", refusals: 2, want: []string{
			"<code>schema</code>", "<code>list_input</code>", "<code>http://s.test</code>",
			"<code>page</code>", "<code>&lt;img src=x&gt;0</code>", "could not read it 0",
			"<code>too-many</code>", `<span class="muted">several</span>`,
		}, wantNot: []string{"<img src=x>", "the last"}},
		{name: "more than the page shows", refusals: statusRefusals + 5, want: []string{
			fmt.Sprintf("the last %d of %d", statusRefusals, statusRefusals+7),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hub.New(noBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler), Limits: hub.Limits{ToolsPerDocument: 1}})
			s := New(t.Context(), h, Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
			if tt.refusals > 0 {
				doc := core.Source{Key: "d", Tab: "T", Frame: "F", Origin: "http://s.test", URL: "http://s.test/", Backend: "polyfill"}
				var refused []core.Refusal
				for i := range tt.refusals {
					refused = append(refused, core.Refusal{Reason: core.ReasonPage, Tool: fmt.Sprintf("<img src=x>%d", i), Detail: fmt.Sprintf("could not read it %d", i)})
				}
				h.Update(doc, []core.Tool{
					{Name: "list_input", Description: "Take a list.", InputSchema: []byte(`{"type":"array"}`)},
					{Name: "ok", Description: "Fine."},
					{Name: "over", Description: "One too many."},
				}, refused)
			}
			rec := httptest.NewRecorder()
			s.statusPage(rec, httptest.NewRequestWithContext(context.Background(), "GET", "/", nil))
			body := rec.Body.String()
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("the status page lacks %q", w)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(body, w) {
					t.Errorf("the status page has %q", w)
				}
			}
			if tt.refusals > 0 && tt.refusals < statusRefusals {
				// Newest first: the hub's own refusals came after the browser's.
				if strings.Index(body, "<code>too-many</code>") > strings.Index(body, "<code>page</code>") {
					t.Error("the refusals are not newest first")
				}
			}
			if t.Failed() {
				t.Logf("status page:\n%s", body)
			}
		})
	}
}

// TestOriginPolicy: an Origin is the server's own with its scheme, host and
// port; --allowed-host entries add a name (the server's port or the default
// port), a name:port or an exact origin.
func TestOriginPolicy(t *testing.T) {
	loop, err := newSitePolicy("127.0.0.1:8808", true, []string{"mcp.example.test", "proxy.test:9000", "https://app.example.test:8443"})
	if err != nil {
		t.Fatal(err)
	}
	wild, err := newSitePolicy("0.0.0.0:8808", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		p      *sitePolicy
		origin string
		want   string // "" accepted, else a part of the reason
	}{
		{loop, "http://127.0.0.1:8808", ""},
		{loop, "http://LOCALHOST:8808", ""},
		{loop, "http://[::1]:8808", ""},
		{loop, "http://127.0.0.1:9999", "port 8808, not port 9999"},
		{loop, "http://127.0.0.1", "not port 80"},
		{loop, "https://127.0.0.1:8808", "http, not https"},
		{loop, "http://evil.example:8808", `host "evil.example"`},
		{loop, "null", "not an http or https origin"},
		{loop, "file://", "not an http or https origin"},
		{loop, "https://mcp.example.test", ""},
		{loop, "http://mcp.example.test", ""},
		{loop, "http://mcp.example.test:8808", ""},
		{loop, "http://mcp.example.test:9999", "not port 9999"},
		{loop, "http://proxy.test:9000", ""},
		{loop, "https://proxy.test:9000", ""},
		{loop, "http://proxy.test:8808", "port 9000, not port 8808"},
		{loop, "https://app.example.test:8443", ""},
		{loop, "https://app.example.test", "not port 443"},
		{loop, "http://app.example.test:8443", "not http"},
		{wild, "http://127.0.0.1:8808", `host "127.0.0.1"`},
	}
	for _, tt := range tests {
		got := tt.p.checkOrigin(tt.origin)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("checkOrigin(%q) = %q, want %q", tt.origin, got, tt.want)
		}
	}
	for _, bad := range []string{"https://x.test/path", "ftp://x.test", "x.test:port", "a b", ""} {
		if err := CheckAllowedHosts([]string{bad}); err == nil {
			t.Errorf("--allowed-host %q accepted", bad)
		}
	}
}
