package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpbAppShop is a page server with an MCP App, as
// @modelcontextprotocol/ext-apps/server's registerAppTool and
// registerAppResource declare one: a tool whose _meta.ui (and legacy
// ui/resourceUri) names its view, the view (text/html;profile=mcp-app,
// with a CSP and more in its contents' _meta.ui), an app-only tool the
// view calls, and tools whose view is not ui:// or is no resource of the
// page.
const mcpbAppShop = `
import { McpServer } from "@modelcontextprotocol/server";
import { TabServerTransport } from "@mcp-b/transports";

const VIEW = "ui://shop/cart.html";
const MIME = "text/html;profile=mcp-app";
const server = new McpServer({ name: "app-shop", version: "1.0.0" });
const text = (t) => async () => ({ content: [{ type: "text", text: t }] });
server.registerTool("show_cart", {
  description: "Show the cart in a view",
  _meta: { ui: { resourceUri: VIEW, visibility: ["model", "app"] }, "ui/resourceUri": VIEW },
}, text("the cart is shown"));
server.registerTool("cart_items", {
  description: "The cart's items, for the view only",
  _meta: { ui: { resourceUri: VIEW, visibility: ["app"] } },
}, text("2 x apples"));
server.registerTool("web_view", {
  description: "A view that is not ui://",
  _meta: { ui: { resourceUri: "https://evil.example/view.html" } },
}, text("web"));
server.registerTool("lost_view", {
  description: "A view the page does not offer",
  _meta: { ui: { resourceUri: "ui://shop/missing.html" } },
}, text("lost"));
server.registerResource("cart view", VIEW, { mimeType: MIME }, async (uri) => ({
  contents: [{ uri: uri.href, mimeType: MIME, text: "<!doctype html><p id=cart>cart</p>",
    _meta: { ui: { csp: { connectDomains: ["https://api.shop.example"] }, permissions: { clipboardWrite: {} }, domain: "shop.example", prefersBorder: true } } }],
}));
server.connect(new TabServerTransport({ allowedOrigins: [window.location.origin] }));
`

// TestApps: a real MCP-B page server's MCP App reaches a go-sdk client
// that declares io.modelcontextprotocol/ui (over HTTP, 2025-11-25 and
// 2026-07-28): it is told the extension, lists the app tool with its view
// routed to the page's resource, reads the view with its mimeType and
// _meta.ui, lists the app-only tool, and calls it by the page server's own
// name, as a view would; views that are not ui:// or not the page's are
// dropped and logged with the page. A client that does not declare the
// extension lists plain tools without the app-only one.
func TestApps(t *testing.T) {
	t.Parallel()
	base := serveMCPB(t, mcpbAppShop, nil)
	endpoint, stderr := startHTTPEnv(t, nil, "launch", "--headless", "--http", "127.0.0.1:0", base+"/index.html")
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			caps := &mcp.ClientCapabilities{}
			caps.AddExtension("io.modelcontextprotocol/ui", map[string]any{"mimeTypes": []any{"text/html;profile=mcp-app"}})
			host := httpClientWith(t, endpoint, "", &mcp.ClientOptions{Capabilities: caps}, version)
			checkAppHost(t, host)
			plain := httpClientWith(t, endpoint, "", nil, version)
			checkAppPlain(t, plain)
		})
	}
	t.Run("logged", func(t *testing.T) {
		t.Parallel()
		for _, want := range []string{"its resourceUri is not a ui:// URI", `lists no resource \"ui://shop/missing.html\"`, "url=" + base + "/ "} {
			if !stderr.waitFor(want, 60*time.Second) {
				t.Errorf("webmcp-cdp never logged %q: %s", want, stderr.buf.String())
			}
		}
	})
}

// checkAppHost checks what a client that declares MCP Apps sees.
func checkAppHost(t *testing.T, c *client) {
	t.Helper()
	if ext := c.cs.InitializeResult().Capabilities.Extensions; ext["io.modelcontextprotocol/ui"] == nil {
		t.Errorf("the server did not advertise io.modelcontextprotocol/ui: %v", ext)
	}
	tools := c.waitFor("the app tools, the view routed", func(m map[string]*mcp.Tool) bool {
		show := toolWithSuffix(m, "show_cart")
		if len(show) != 1 || len(toolWithSuffix(m, "lost_view")) != 1 || len(toolWithSuffix(m, "web_view")) != 1 || len(toolWithSuffix(m, "cart_items")) != 1 {
			return false
		}
		ui, _ := m[show[0]].Meta["ui"].(map[string]any)
		return strings.HasPrefix(asString(ui["resourceUri"]), "webmcp://")
	})
	show := tools[toolWithSuffix(tools, "show_cart")[0]]
	ui, _ := show.Meta["ui"].(map[string]any)
	view := asString(ui["resourceUri"])
	if !strings.HasSuffix(view, "/tab1/ui://shop/cart.html") || show.Meta["ui/resourceUri"] != view {
		t.Errorf("show_cart's view = %q, legacy %v: want the routed URI of the page's ui://shop/cart.html", view, show.Meta["ui/resourceUri"])
	}
	items := tools[toolWithSuffix(tools, "cart_items")[0]]
	if iu, _ := items.Meta["ui"].(map[string]any); iu["resourceUri"] != view || !slices.Equal(anyStrings(iu["visibility"]), []string{"app"}) {
		t.Errorf("the app-only tool as an apps client lists it: %v", items.Meta)
	}
	if wu, _ := tools[toolWithSuffix(tools, "web_view")[0]].Meta["ui"].(map[string]any); wu["resourceUri"] != nil {
		t.Errorf("a view that is not ui:// is listed: %v", wu)
	}
	if lu, _ := tools[toolWithSuffix(tools, "lost_view")[0]].Meta["ui"].(map[string]any); lu["resourceUri"] != nil {
		t.Errorf("a view the page does not offer is listed: %v", lu)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rr, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: view})
	if err != nil {
		t.Fatalf("reading the view %s: %v", view, err)
	}
	if len(rr.Contents) != 1 {
		t.Fatalf("the view has %d contents", len(rr.Contents))
	}
	rc := rr.Contents[0]
	cu, _ := rc.Meta["ui"].(map[string]any)
	csp, _ := cu["csp"].(map[string]any)
	if rc.MIMEType != "text/html;profile=mcp-app" || rc.URI != view || !strings.Contains(rc.Text, "id=cart") ||
		cu["prefersBorder"] != true || cu["domain"] != "shop.example" || cu["permissions"] == nil ||
		!slices.Equal(anyStrings(csp["connectDomains"]), []string{"https://api.shop.example"}) {
		t.Errorf("the view read = %+v, _meta %v", rc, rc.Meta)
	}

	if got := c.callOK(items.Name, map[string]any{}); got != "2 x apples" {
		t.Errorf("the app-only tool by its routed name = %q", got)
	}
	if got := c.callOK("cart_items", map[string]any{}); got != "2 x apples" {
		t.Errorf("the app-only tool by the page server's own name = %q", got)
	}
}

// checkAppPlain checks what a client that does not declare MCP Apps sees.
func checkAppPlain(t *testing.T, c *client) {
	t.Helper()
	if ext := c.cs.InitializeResult().Capabilities.Extensions; ext["io.modelcontextprotocol/ui"] != nil {
		t.Errorf("the server advertised io.modelcontextprotocol/ui to a client that does not declare it: %v", ext)
	}
	tools := c.waitFor("the page's tools", hasSuffix("show_cart", 1))
	if n := toolWithSuffix(tools, "cart_items"); len(n) != 0 {
		t.Errorf("a client without MCP Apps lists the app-only tool %v", n)
	}
	show := tools[toolWithSuffix(tools, "show_cart")[0]]
	if show.Meta["ui"] != nil || show.Meta["ui/resourceUri"] != nil {
		t.Errorf("a client without MCP Apps lists show_cart with ui keys: %v", show.Meta)
	}
	if res := c.call("cart_items", map[string]any{}); !res.IsError {
		t.Errorf("a client without MCP Apps reached a tool by a page server's own name: %q", text(res))
	}
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}

func anyStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
