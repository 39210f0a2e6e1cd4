package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestWebMCPOutputSchema: a WebMCP tool's outputSchema, given to
// registerTool, reaches MCP clients, and its result is checked against it:
// a returned object that fits is the call's structuredContent; one that
// does not fit makes the call an error that says so
// (fixtures/legacy/report.html). That is the polyfill. Chromium 156's
// registerTool does not read outputSchema (nor does getTools() or CDP's
// WebMCP.Tool give one back): on native the tool is listed without one, a
// returned object is still the structuredContent, and nothing is checked.
func TestWebMCPOutputSchema(t *testing.T) {
	t.Parallel()
	onBothBackends(t, "/legacy/report.html", nil, func(t *testing.T, backend string, c *client) {
		tools := c.waitFor("the report's tools", func(m map[string]*mcp.Tool) bool {
			return hasSuffix("order_count", 1)(m) && hasSuffix("order_count_wrong", 1)(m)
		})
		count := toolWithSuffix(tools, "order_count")[0]
		var schema map[string]any
		b, _ := json.Marshal(tools[count].OutputSchema)
		json.Unmarshal(b, &schema)
		props, _ := schema["properties"].(map[string]any)
		native := backend == "native"
		switch {
		case native && tools[count].OutputSchema != nil:
			t.Errorf("order_count's outputSchema on native = %s: Chromium keeps it now; update this test and docs", b)
		case !native && (schema["type"] != "object" || props["count"] == nil || props["open"] == nil):
			t.Fatalf("order_count's outputSchema = %s, want the page's", b)
		}
		res := c.call(count, map[string]any{})
		got, _ := json.Marshal(res.StructuredContent)
		if res.IsError || string(got) != `{"count":2,"open":1}` {
			t.Errorf("order_count = isError %v, structuredContent %s (%q), want {\"count\":2,\"open\":1}", res.IsError, got, text(res))
		}
		wrong := c.call(toolWithSuffix(tools, "order_count_wrong")[0], map[string]any{})
		switch {
		case native && wrong.IsError:
			t.Errorf("order_count_wrong on native = error %q, want its value (no outputSchema to check it against)", text(wrong))
		case !native && (!wrong.IsError || !strings.Contains(text(wrong), "does not fit the tool's outputSchema")):
			t.Errorf("order_count_wrong = isError %v %q, want an error: the result does not fit the outputSchema", wrong.IsError, text(wrong))
		}
	})
}
