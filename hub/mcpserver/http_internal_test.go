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
