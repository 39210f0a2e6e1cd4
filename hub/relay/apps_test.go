package relay

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/relay/proxy"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// TestToolsListPlain: the browser side lists a page server's tools as a
// client that does not declare MCP Apps sees them (the relay serves no
// resources, so no view): without their ui keys, and without the tools
// visible to views alone; other _meta keys stay.
func TestToolsListPlain(t *testing.T) {
	t.Parallel()
	fh := newFakeHub()
	tool := func(name, meta string) hub.RoutedTool {
		return hub.RoutedTool{Name: "one_example_" + name, Tool: core.Tool{Name: name, Description: name,
			InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(meta)},
			Source: core.Provenance{Tool: name, Origin: "http://one.example", Backend: core.BackendMCPB}}
	}
	fh.tools = []hub.RoutedTool{
		tool("items", `{"ui":{"resourceUri":"ui://a","visibility":["app"]}}`),
		tool("show", `{"ui":{"resourceUri":"ui://a"},"ui/resourceUri":"ui://a","com.example/n":1}`),
	}
	b := fakeSide(t, fh, nil)
	res, err := b.handle(context.Background(), "c1", proxy.MethodToolsList, nil)
	if err != nil {
		t.Fatal(err)
	}
	list := res.(ToolsListResult)
	if len(list.Tools) != 1 || list.Tools[0].Name != "one_example_show" {
		t.Fatalf("tools/list %+v, want show alone", list.Tools)
	}
	m := list.Tools[0].Meta
	if m["ui"] != nil || m["ui/resourceUri"] != nil || m["com.example/n"] == nil || m["webmcp-cdp/source"] == nil {
		t.Errorf("show's _meta = %v, want no ui keys, the page's com.example/n and ours", m)
	}
}
