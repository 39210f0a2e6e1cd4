package mcpserver_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// appsPage is a page server with an MCP App: a view resource, a tool that
// shows it, an app-only tool, and tools whose views are wrong (not ui://,
// or a resource the page does not offer).
func appsPage(name string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	text := func(s string) mcp.ToolHandler {
		return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, nil
		}
	}
	obj := map[string]any{"type": "object"}
	srv.AddTool(&mcp.Tool{Name: "show_cart", Description: "Show the cart", InputSchema: obj,
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://shop/cart.html", "visibility": []any{"model", "app"}}, "ui/resourceUri": "ui://shop/cart.html"}},
		text("cart of "+name))
	srv.AddTool(&mcp.Tool{Name: "cart_items", Description: "The cart's items, for the view", InputSchema: obj,
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://shop/cart.html", "visibility": []any{"app"}}}},
		text("items of "+name))
	srv.AddTool(&mcp.Tool{Name: "web_view", Description: "A view that is not ui://", InputSchema: obj,
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "https://evil.example/x.html"}}}, text("web"))
	srv.AddTool(&mcp.Tool{Name: "lost_view", Description: "A view the page does not offer", InputSchema: obj,
		Meta: mcp.Meta{"ui/resourceUri": "ui://shop/missing.html"}}, text("lost"))
	srv.AddTool(&mcp.Tool{Name: "text_view", Description: "A view of the wrong type", InputSchema: obj,
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://shop/notes.txt"}}}, text("text"))
	srv.AddResource(&mcp.Resource{URI: "ui://shop/notes.txt", Name: "notes", MIMEType: "text/plain"},
		func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, MIMEType: "text/plain", Text: "notes"}}}, nil
		})
	srv.AddResource(&mcp.Resource{URI: "ui://shop/cart.html", Name: "cart view", MIMEType: mcpserver.AppMIMEType},
		func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, MIMEType: mcpserver.AppMIMEType, Text: "<p>cart</p>",
				Meta: mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": []any{"https://api.shop.example"}}, "prefersBorder": true, "domain": "shop.example"}}}}}, nil
		})
	return srv
}

// appsClient connects a client to s, declaring MCP Apps when apps is set.
func appsClient(t *testing.T, ctx context.Context, s *mcpserver.Server, apps bool) *mcp.ClientSession {
	t.Helper()
	caps := &mcp.ClientCapabilities{}
	if apps {
		caps.AddExtension(mcpserver.AppsExtension, map[string]any{"mimeTypes": []any{mcpserver.AppMIMEType}})
	}
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.MCP().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{Capabilities: caps}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func toolsOf(t *testing.T, ctx context.Context, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	out := map[string]*mcp.Tool{}
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[tl.Name] = tl
	}
	return out
}

func callText(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, " "), res.IsError
}

// TestApps: a client that declares MCP Apps is told the extension, lists a
// page server's tool with its view's URI routed to the page's resource
// (and reads the view with its mimeType and _meta.ui), lists app-only
// tools, and calls a tool by its server's own name; a view that is not
// ui:// or names no resource of the page is dropped and logged with the
// page. A client that does not declare it lists plain tools, without the
// app-only ones. With a second page server that has the same tool, a call
// by the own name is refused with the routed names to use.
func TestApps(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := &lockedLog{}
	h := hub.New(&fakeBrowser{}, hub.Options{Logger: slog.New(slog.NewTextHandler(log, nil))})
	h.TabOpened("T1", origin+"/", "shop")
	s := mcpserver.New(ctx, h, mcpserver.Options{Logger: slog.New(slog.NewTextHandler(log, nil))})
	h.PageServer(core.Source{Key: "doc#mcpb:t:mcp-default", Tab: "T1", Origin: origin, URL: origin + "/", Backend: core.BackendMCPB},
		newMemPage(t, ctx, "t:mcp-default", appsPage("one")))
	host := appsClient(t, ctx, s, true)
	plain := appsClient(t, ctx, s, false)

	if ext := host.InitializeResult().Capabilities.Extensions; ext[mcpserver.AppsExtension] == nil {
		t.Errorf("the host was not told the extension: %v", ext)
	}
	if ext := plain.InitializeResult().Capabilities.Extensions; ext[mcpserver.AppsExtension] != nil {
		t.Errorf("a client without the extension was told it: %v", ext)
	}

	view := "webmcp://" + site + "/tab1/ui://shop/cart.html"
	show, items := site+"_show_cart", site+"_cart_items"
	var tools map[string]*mcp.Tool
	waitUntil(t, "the view's routed URI in the host's list", func() bool {
		tools = toolsOf(t, ctx, host)
		if tools[show] == nil || tools[items] == nil || tools[site+"_web_view"] == nil || tools[site+"_lost_view"] == nil || tools[site+"_text_view"] == nil {
			return false
		}
		ui, _ := tools[show].Meta["ui"].(map[string]any)
		return ui["resourceUri"] == view
	})
	if got := tools[show].Meta["ui/resourceUri"]; got != view {
		t.Errorf("legacy ui/resourceUri = %v, want %s", got, view)
	}
	if ui, _ := tools[items].Meta["ui"].(map[string]any); ui == nil || ui["resourceUri"] != view || !slices.Equal(asJSON(t, ui["visibility"]).([]any), []any{"app"}) {
		t.Errorf("the app-only tool as the host lists it: %+v", tools[items])
	}
	if ui, _ := tools[site+"_web_view"].Meta["ui"].(map[string]any); ui == nil || ui["resourceUri"] != nil {
		t.Errorf("a view that is not ui:// kept its resourceUri: %v", tools[site+"_web_view"].Meta)
	}
	if m := tools[site+"_lost_view"].Meta; m["ui/resourceUri"] != nil {
		t.Errorf("a view the page does not offer kept its URI: %v", m)
	}
	if ui, _ := tools[site+"_text_view"].Meta["ui"].(map[string]any); ui == nil || ui["resourceUri"] != nil {
		t.Errorf("a view of the wrong type kept its resourceUri: %v", tools[site+"_text_view"].Meta)
	}
	for _, want := range []string{"its resourceUri is not a ui:// URI", `lists no resource \"ui://shop/missing.html\"`, `lists \"ui://shop/notes.txt\" as text/plain, not text/html;profile=mcp-app`} {
		if l := log.String(); !strings.Contains(l, want) || !strings.Contains(l, "url="+origin+"/") {
			t.Errorf("the log does not say %q with the page: %s", want, l)
		}
	}

	plainTools := toolsOf(t, ctx, plain)
	if _, ok := plainTools[items]; ok {
		t.Errorf("a client without the extension lists the app-only tool")
	}
	if m := plainTools[show].Meta; m == nil || m["ui"] != nil || m["ui/resourceUri"] != nil || m["webmcp-cdp/source"] == nil {
		t.Errorf("a client without the extension lists %s with _meta %v, want ours without ui keys", show, m)
	}

	rr, err := host.ReadResource(ctx, &mcp.ReadResourceParams{URI: view})
	if err != nil {
		t.Fatal(err)
	}
	c := rr.Contents[0]
	ui, _ := c.Meta["ui"].(map[string]any)
	if c.MIMEType != mcpserver.AppMIMEType || c.Text != "<p>cart</p>" || c.URI != view || ui["prefersBorder"] != true || ui["domain"] != "shop.example" || ui["csp"] == nil {
		t.Errorf("the view read: %+v (_meta %v)", c, c.Meta)
	}

	if text, isErr := callText(t, ctx, host, items); isErr || text != "items of one" {
		t.Errorf("the app-only tool by its routed name: %q (error %v)", text, isErr)
	}
	if text, isErr := callText(t, ctx, host, "cart_items"); isErr || text != "items of one" {
		t.Errorf("the view's call by the server's own name: %q (error %v)", text, isErr)
	}
	if text, isErr := callText(t, ctx, plain, "cart_items"); !isErr || !strings.Contains(text, "no open page has a tool named") {
		t.Errorf("a client without the extension, by the own name: %q (error %v), want the unknown-tool error", text, isErr)
	}

	if text, isErr := callText(t, ctx, host, "webmcp_list_tools"); isErr || strings.Contains(text, items) || !strings.Contains(text, show) {
		t.Errorf("webmcp_list_tools (the model's search) = %q (error %v), want show_cart and not the app-only tool", text, isErr)
	}

	// A second page server, in another tab, with the same tools.
	h.TabOpened("T2", origin+"/other", "shop 2")
	h.PageServer(core.Source{Key: "doc2#mcpb:t:mcp-default", Tab: "T2", Origin: origin, URL: origin + "/other", Backend: core.BackendMCPB},
		newMemPage(t, ctx, "t:mcp-default", appsPage("two")))
	tab2 := site + "_tab2_cart_items"
	waitForTool(t, ctx, h, s, tab2)
	text, isErr := callText(t, ctx, host, "cart_items")
	if !isErr || !strings.Contains(text, "2 page servers have a tool named") || !strings.Contains(text, site+"_tab1_cart_items") || !strings.Contains(text, tab2) {
		t.Errorf("a call by an own name two pages have: %q (error %v), want the routed names", text, isErr)
	}
	waitUntil(t, "tab 2's view routed to tab 2's resource", func() bool {
		tl := toolsOf(t, ctx, host)[site+"_tab2_show_cart"]
		if tl == nil {
			return false
		}
		ui, _ := tl.Meta["ui"].(map[string]any)
		return ui["resourceUri"] == "webmcp://"+site+"/tab2/ui://shop/cart.html"
	})
}
