package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// latePage registers its tool 300 ms after it loaded, as pages that fetch
// their configuration first do.
const latePage = `<!DOCTYPE html><title>late</title><script>
setTimeout(() => navigator.modelContext.registerTool({
  name: "late_echo", description: "Echo the text.",
  inputSchema: {type: "object", properties: {text: {type: "string"}}},
  execute: ({text}) => text,
}), 300);
</script>`

// TestReliabilityReloadTab (issue 15, point 3): webmcp_reload_tab returns
// once the reloaded page's tools have settled, and reports them, so the next
// call reaches the new document. It used to return before the page was back:
// the next call failed with "the page navigated away" 5 times of 5.
func TestReliabilityReloadTab(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	late := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(latePage))
	}))
	t.Cleanup(late.Close)
	c := start(t, "launch", "--headless", base+"/notes/", late.URL+"/late")
	tools := c.waitFor("both pages' tools", func(m map[string]*mcp.Tool) bool {
		return len(toolWithSuffix(m, "list_notes")) == 1 && len(toolWithSuffix(m, "late_echo")) == 1
	})
	tabOf := func(suffix string) int {
		for _, tb := range c.tabs() {
			if strings.HasSuffix(tb.URL, suffix) {
				return tb.Tab
			}
		}
		t.Fatalf("no tab on %s: %+v", suffix, c.tabs())
		return 0
	}
	for _, tc := range []struct {
		page, tool string
		args       map[string]any
		want       string
	}{
		{"/notes/", "list_notes", map[string]any{}, "["},
		{"/late", "late_echo", map[string]any{"text": "back"}, "back"},
	} {
		t.Run(strings.Trim(tc.page, "/"), func(t *testing.T) {
			tab := tabOf(tc.page)
			name := toolWithSuffix(tools, tc.tool)[0]
			failed := 0
			const rounds = 5
			for i := range rounds {
				res := c.call("webmcp_reload_tab", map[string]any{"tab": tab})
				if res.IsError {
					t.Fatalf("webmcp_reload_tab: %s", text(res))
				}
				var out struct {
					Tab   int      `json:"tab"`
					Tools []string `json:"tools"`
				}
				b, _ := json.Marshal(res.StructuredContent)
				json.Unmarshal(b, &out)
				if out.Tab != tab || !slices.Contains(out.Tools, name) {
					t.Errorf("round %d: webmcp_reload_tab reported %s, want tab %d with %s", i, b, tab, name)
				}
				// At once, with no wait of our own.
				res = c.call(name, tc.args)
				if res.IsError || !strings.HasPrefix(text(res), tc.want) {
					failed++
					t.Logf("round %d: %s right after the reload: isError=%v %q", i, name, res.IsError, text(res))
				}
			}
			if failed > 0 {
				t.Errorf("%d of %d calls right after webmcp_reload_tab failed", failed, rounds)
			}
			reliabilityRow(t, "webmcp_reload_tab, then a call at once ("+tc.tool+")", fmt.Sprintf("%d of %d calls failed", failed, rounds))
		})
	}
}
