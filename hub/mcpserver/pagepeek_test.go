package mcpserver_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// TestPageServerAnnotations: a page server's tool annotations reach the
// hub as the server gave them (keys MCP does not know kept, no hints
// added); annotations.cache counts only from a server that declares
// browser.cacheSupported, and then the tool outlives its session as a
// WebMCP cached tool does.
func TestPageServerAnnotations(t *testing.T) {
	const given = `{"cache":true,"custom":"x","destructiveHint":false}`
	tests := []struct {
		name           string
		cacheSupported bool
		annotations    string // injected into the listing of "find"; "" for none
		want           map[string]any
		cachedAfter    bool
	}{
		{"cache supported", true, given, map[string]any{"cache": true, "custom": "x", "destructiveHint": false}, true},
		{"cache not declared", false, given, map[string]any{"custom": "x", "destructiveHint": false}, false},
		{"no annotations", true, "", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h := hub.New(&fakeBrowser{}, hub.Options{})
			h.TabOpened("T1", origin+"/", "shop")
			mcpserver.New(ctx, h, mcpserver.Options{})
			srv := mcp.NewServer(&mcp.Implementation{Name: "finder", Version: "1"}, nil)
			mcp.AddTool(srv, &mcp.Tool{Name: "find", Description: "Finds"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{}, nil, nil
			})
			page := newMemPage(t, ctx, "t:mcp-default", srv)
			page.rewrite = func(m string) string {
				if tt.cacheSupported {
					m = strings.Replace(m, `"capabilities":{`, `"capabilities":{"browser":{"cacheSupported":true},`, 1)
				}
				if tt.annotations != "" {
					m = strings.Replace(m, `"name":"find"`, `"name":"find","annotations":`+tt.annotations, 1)
				}
				return m
			}
			h.PageServer(core.Source{Key: "doc#mcpb:t:mcp-default", Tab: "T1", Origin: origin, URL: origin + "/", Backend: core.BackendMCPB}, page)
			name := site + "_find"
			waitUntil(t, "the page server's tool", func() bool { _, ok := h.Tool(name); return ok })
			rt, _ := h.Tool(name)
			if got := rt.Tool.Annotations; !reflect.DeepEqual(got, tt.want) && (len(got) != 0 || len(tt.want) != 0) {
				t.Errorf("annotations in the hub = %v, want %v", got, tt.want)
			}
			page.Close() // the page went away
			waitUntil(t, "the session to end", func() bool { return len(h.PageServers()) == 0 })
			rt, ok := h.Tool(name)
			if listed := ok && rt.Source.Cached; listed != tt.cachedAfter {
				t.Errorf("after the session ended, listed as cached = %v, want %v", listed, tt.cachedAfter)
			}
		})
	}
}
