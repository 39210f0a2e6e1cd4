package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpbShop is a page server built the MCP-B way: McpServer from the MCP
// TypeScript SDK over TabServerTransport, with tools, a resource, a
// resource template, a prompt, a tool that adds a tool (list_changed), a
// tool that waits for its cancellation, one that reports progress, and a
// cached one (annotations.cache, with the browser.cacheSupported capability
// MCP-B adds to initialize).
const mcpbShop = `
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/server";
import { TabServerTransport } from "@mcp-b/transports";
import { z } from "zod";

const load = Math.random().toString(36).slice(2);
const cart = [];
let aborted = false;
const subscribed = new Set();
const server = new McpServer({ name: "shop", version: "1.0.0" });
server.registerTool("add_to_cart", {
  description: "Add an item to the cart",
  inputSchema: z.object({ sku: z.string(), qty: z.number().int().min(1) }),
}, async ({ sku, qty }) => {
  cart.push({ sku, qty });
  if (subscribed.has("cart://current")) server.server.sendResourceUpdated({ uri: "cart://current" });
  return { content: [{ type: "text", text: "added " + qty + " x " + sku }] };
});
server.registerTool("page_load", { description: "Which load of the page this is" },
  async () => ({ content: [{ type: "text", text: load }] }));
server.registerTool("wait_for_cancel", { description: "Waits until the call is cancelled" },
  async (ctx) => {
    const abort = new Promise((resolve) => ctx.mcpReq.signal.addEventListener("abort", resolve));
    // Given a progress token, it says that the call reached it.
    const token = ctx.mcpReq._meta?.progressToken;
    if (token !== undefined) await ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, progress: 1, message: "waiting" } });
    await abort;
    aborted = true;
    return { content: [{ type: "text", text: "cancelled" }] };
  });
server.registerTool("was_cancelled", { description: "Says whether wait_for_cancel saw its abort" },
  async () => ({ content: [{ type: "text", text: String(aborted) }] }));
server.registerTool("report_progress", { description: "Reports three steps of progress" }, async (ctx) => {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return { content: [{ type: "text", text: "no token" }] };
  for (let i = 1; i <= 3; i++) {
    await ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, progress: i, total: 3, message: "step " + i } });
  }
  return { content: [{ type: "text", text: "reported" }] };
});
server.registerTool("shop_hours", {
  description: "The shop's opening hours",
  annotations: { readOnlyHint: true, cache: true },
}, async () => ({ content: [{ type: "text", text: "9-17 " + load }] }));
server.server.registerCapabilities({ browser: { cacheSupported: true } });
server.registerTool("add_tool", { description: "Adds the tool late_tool" }, async () => {
  server.registerTool("late_tool", { description: "Came later" },
    async () => ({ content: [{ type: "text", text: "late" }] }));
  return { content: [{ type: "text", text: "ok" }] };
});
server.registerResource("cart", "cart://current", { description: "The cart", mimeType: "application/json" },
  async (uri) => ({ contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(cart) }] }));
server.registerResource("product", new ResourceTemplate("product://{sku}", { list: undefined }),
  { description: "A product by SKU" },
  async (uri, { sku }) => ({ contents: [{ uri: uri.href, text: "product " + sku }] }));
server.registerTool("add_resource", { description: "Adds the resource notes://today" }, async () => {
  server.registerResource("notes", "notes://today", { description: "Notes" },
    async (uri) => ({ contents: [{ uri: uri.href, text: "notes" }] }));
  return { content: [{ type: "text", text: "ok" }] };
});
// McpServer leaves subscriptions to the site: this one takes them.
server.server.registerCapabilities({ resources: { subscribe: true, listChanged: true } });
server.server.setRequestHandler("resources/subscribe", async (req) => { subscribed.add(req.params.uri); return {}; });
server.server.setRequestHandler("resources/unsubscribe", async (req) => { subscribed.delete(req.params.uri); return {}; });
server.registerPrompt("checkout_help", {
  description: "Help with checking out",
  argsSchema: z.object({ item: z.string() }),
}, ({ item }) => ({ messages: [{ role: "user", content: { type: "text", text: "Help me buy " + item } }] }));
server.connect(new TabServerTransport({ allowedOrigins: [window.location.origin] }));
`

// mcpbFrameServer is a page server in an iframe: McpServer over
// IframeChildTransport, which answers only its parent window, with a tool,
// a resource and a prompt.
const mcpbFrameServer = `
import { McpServer } from "@modelcontextprotocol/server";
import { IframeChildTransport } from "@mcp-b/transports";
import { z } from "zod";

const server = new McpServer({ name: "widget", version: "1.0.0" });
server.registerTool("frame_echo", {
  description: "Echoes its text from inside the iframe",
  inputSchema: z.object({ text: z.string() }),
}, async ({ text }) => ({ content: [{ type: "text", text: "frame: " + text }] }));
server.registerResource("state", "widget://state", { description: "The widget's state" },
  async (uri) => ({ contents: [{ uri: uri.href, text: "widget ready" }] }));
server.registerPrompt("widget_help", { description: "Help with the widget" },
  () => ({ messages: [{ role: "user", content: { type: "text", text: "How do I use the widget?" } }] }));
server.connect(new IframeChildTransport({ allowedOrigins: [window.location.origin] }));
`

// serveMCPB bundles the page server src into bundle.js, served with
// index.html that loads it and the other files given; it returns the base
// URL.
func serveMCPB(t *testing.T, src string, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"bundle.js":  bundle(t, src),
		"index.html": `<!doctype html><title>MCP-B shop</title><body><script src="bundle.js"></script></body>`,
	}
	for k, v := range extra {
		files[k] = v
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return srv.URL
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestMCPBPageServer: a page server's tools, resources and prompts reach a
// real MCP client with no extension, in one catalog; list_changed,
// cancellation and a reload work through the page-server session.
func TestMCPBPageServer(t *testing.T) {
	t.Parallel()
	base := serveMCPB(t, mcpbShop, map[string]string{
		"frame.js":     bundle(t, mcpbFrameServer),
		"frame.html":   `<!doctype html><title>widget</title><script src="frame.js"></script>`,
		"parent.html":  `<!doctype html><title>host</title><iframe src="frame.html"></iframe>`,
		"hostile.html": mcpbHostilePage(t),
	})
	updated := make(chan string, 16)
	resChanged := make(chan struct{}, 16)
	progress := make(chan *mcp.ProgressNotificationParams, 16)
	// 2025-11-25: resources/subscribe is a request answered after the
	// subscription is in place (2026-07-28's subscriptions/listen stream
	// gives the client no such point, so an update right after it can be
	// missed).
	c := startProto(t, &mcp.ClientOptions{
		ResourceUpdatedHandler:      func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { progress <- r.Params },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			select {
			case resChanged <- struct{}{}:
			default:
			}
		},
	}, "2025-11-25", "launch", "--headless", "--state-dir", t.TempDir(), base+"/index.html")
	tools := c.waitFor("the page server's tools", hasSuffix("add_to_cart", 1))
	add := toolWithSuffix(tools, "add_to_cart")[0]
	src := source(t, tools[add])
	if src["backend"] != "mcp-b" || src["origin"] != base || src["tool"] != "add_to_cart" {
		t.Errorf("provenance of %s = %v, want backend mcp-b and origin %s", add, src, base)
	}
	if got := c.callOK(add, map[string]any{"sku": "A1", "qty": 2}); got != "added 2 x A1" {
		t.Errorf("add_to_cart = %q", got)
	}
	// The hub validates against the server's schema before the page sees it.
	if res := c.call(add, map[string]any{"sku": "A1", "qty": 0}); !res.IsError {
		t.Errorf("add_to_cart with qty 0 did not fail: %s", text(res))
	}

	t.Run("resources", func(t *testing.T) {
		ctx := ctxFor(t, 10*time.Second)
		site := strings.ReplaceAll(strings.TrimPrefix(base, "http://"), ".", "_")
		site = strings.ReplaceAll(site, ":", "_")
		want := "webmcp://" + site + "/tab1/cart://current"
		var found *mcp.Resource
		for r, err := range c.cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			if r.URI == want {
				found = r
			}
		}
		if found == nil {
			t.Fatalf("resources/list has no %s", want)
		}
		if m, _ := found.Meta["webmcp-cdp/source"].(map[string]any); m["backend"] != "mcp-b" || m["name"] != "cart://current" {
			t.Errorf("the resource's provenance = %v", found.Meta)
		}
		res, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: want})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Contents) != 1 || res.Contents[0].URI != want || !strings.Contains(res.Contents[0].Text, `"sku":"A1"`) {
			b, _ := json.Marshal(res)
			t.Errorf("resources/read = %s", b)
		}
		var tpl string
		for rt, err := range c.cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			tpl = rt.URITemplate
		}
		if tpl != "webmcp://"+site+"/tab1/product://{sku}" {
			t.Errorf("resource template = %q", tpl)
		}
		res, err = c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "webmcp://" + site + "/tab1/product://B7"})
		if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "product B7" {
			t.Errorf("reading through the template = %v, %v", res, err)
		}
		if _, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "webmcp://" + site + "/tab9/cart://current"}); err == nil {
			t.Errorf("a URI of a tab with no page server was read")
		}

		// resources/subscribe reaches the page server; its updated comes
		// back with the routed URI.
		if err := c.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: want}); err != nil {
			t.Fatal(err)
		}
		c.callOK(add, map[string]any{"sku": "C3", "qty": 1})
		select {
		case got := <-updated:
			if got != want {
				t.Errorf("resources/updated for %q, want %q", got, want)
			}
		case <-ctx.Done():
			t.Error("no notifications/resources/updated after the subscribed resource changed")
		}

		// A resource the page adds comes with resources/list_changed.
		for len(resChanged) > 0 {
			<-resChanged
		}
		c.callOK(toolWithSuffix(tools, "add_resource")[0], map[string]any{})
		select {
		case <-resChanged:
		case <-ctx.Done():
			t.Fatal("no notifications/resources/list_changed after the page added a resource")
		}
		notes := "webmcp://" + site + "/tab1/notes://today"
		if res, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: notes}); err != nil || res.Contents[0].Text != "notes" {
			t.Errorf("reading the new resource: %v, %v", res, err)
		}
	})

	t.Run("prompts", func(t *testing.T) {
		ctx := ctxFor(t, 10*time.Second)
		var name string
		for p, err := range c.cs.Prompts(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(p.Name, "_tab1_checkout_help") {
				name = p.Name
			}
		}
		if name == "" {
			t.Fatal("prompts/list has no checkout_help")
		}
		res, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: map[string]string{"item": "a lamp"}})
		if err != nil {
			t.Fatal(err)
		}
		if tc, ok := res.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Help me buy a lamp" {
			t.Errorf("prompts/get = %+v", res.Messages[0].Content)
		}
	})

	t.Run("list_changed", func(t *testing.T) {
		c.drainChanges()
		c.callOK(toolWithSuffix(tools, "add_tool")[0], map[string]any{})
		c.waitChange("the page server added a tool")
		late := c.waitFor("late_tool", hasSuffix("late_tool", 1))
		if got := c.callOK(toolWithSuffix(late, "late_tool")[0], map[string]any{}); got != "late" {
			t.Errorf("late_tool = %q", got)
		}
	})

	t.Run("cancellation", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		params := &mcp.CallToolParams{Name: toolWithSuffix(tools, "wait_for_cancel")[0], Arguments: map[string]any{}}
		params.SetProgressToken("e2e-cancel")
		go func() {
			_, err := c.cs.CallTool(ctx, params)
			done <- err
		}()
		// The page server's progress says the call reached it; cancel then.
		select {
		case n := <-progress:
			if n.ProgressToken != "e2e-cancel" {
				t.Fatalf("progress %+v, want wait_for_cancel's, token e2e-cancel", n)
			}
		case <-time.After(10 * time.Second):
			cancel()
			t.Fatal("wait_for_cancel never said that the call reached it")
		}
		cancel()
		<-done
		deadline := time.Now().Add(10 * time.Second)
		for c.callOK(toolWithSuffix(tools, "was_cancelled")[0], map[string]any{}) != "true" {
			if time.Now().After(deadline) {
				t.Fatal("the page server's tool never saw the client's cancellation")
			}
			time.Sleep(50 * time.Millisecond) // poll interval: the page server tells no one that it saw the abort
		}
	})

	t.Run("progress", func(t *testing.T) {
		// The client's token reaches the page's tools/call as one of ours;
		// the page's notifications/progress come back with the client's.
		ctx := ctxFor(t, 10*time.Second)
		params := &mcp.CallToolParams{Name: toolWithSuffix(tools, "report_progress")[0], Arguments: map[string]any{}}
		params.SetProgressToken("e2e-progress")
		res, err := c.cs.CallTool(ctx, params)
		if err != nil || res.IsError || text(res) != "reported" {
			t.Fatalf("report_progress with a progress token = %v, %v (the page saw no token?)", res, err)
		}
		for i := 1; i <= 3; i++ {
			select {
			case n := <-progress:
				if n.ProgressToken != "e2e-progress" || n.Progress != float64(i) || n.Total != 3 || n.Message != fmt.Sprintf("step %d", i) {
					t.Errorf("progress %d = %+v, want token e2e-progress, %d of 3, \"step %d\"", i, n, i, i)
				}
			case <-ctx.Done():
				t.Fatalf("progress notification %d of 3 never reached the client", i)
			}
		}
	})

	t.Run("reload", func(t *testing.T) {
		load := toolWithSuffix(tools, "page_load")[0]
		before := c.callOK(load, map[string]any{})
		c.callOK("webmcp_reload_tab", map[string]any{"tab": 1})
		deadline := time.Now().Add(15 * time.Second)
		for {
			res := c.call(load, map[string]any{})
			if !res.IsError && text(res) != before {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after a reload the page server's tool still answers from the old session (%s)", text(res))
			}
			// Poll interval: the new session's tools keep their names, so no
			// event says which session answers them.
			time.Sleep(50 * time.Millisecond)
		}
		// The new page has not added late_tool: the old session's tools are gone.
		c.waitFor("late_tool gone with the old page", func(m map[string]*mcp.Tool) bool { return len(toolWithSuffix(m, "late_tool")) == 0 })
	})
	t.Run("iframe", func(t *testing.T) {
		c.callOK("webmcp_open_tab", map[string]any{"url": base + "/parent.html"})
		m := c.waitFor("the iframe server's tool", hasSuffix("frame_echo", 1))
		echo := toolWithSuffix(m, "frame_echo")[0]
		if src := source(t, m[echo]); src["backend"] != "mcp-b" || src["origin"] != base {
			t.Errorf("provenance of %s = %v", echo, src)
		}
		if got := c.callOK(echo, map[string]any{"text": "hi"}); got != "frame: hi" {
			t.Errorf("frame_echo = %q", got)
		}
		ctx := ctxFor(t, 10*time.Second)
		var uri string
		for r, err := range c.cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(r.URI, "/widget://state") {
				uri = r.URI
			}
		}
		if !strings.Contains(uri, "-f") {
			t.Fatalf("resources/list has no widget://state under a frame segment (got %q)", uri)
		}
		if res, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "widget ready" {
			t.Errorf("reading the iframe server's resource %s = %v, %v", uri, res, err)
		}
		var prompt string
		for p, err := range c.cs.Prompts(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(p.Name, "_widget_help") {
				prompt = p.Name
			}
		}
		if prompt == "" {
			t.Fatal("prompts/list has no widget_help of the iframe server")
		}
		res, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt})
		if err != nil {
			t.Fatal(err)
		}
		if tc, ok := res.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "How do I use the widget?" {
			t.Errorf("prompts/get %s = %+v", prompt, res.Messages[0].Content)
		}
	})

	t.Run("hostile", func(t *testing.T) {
		testHostileWire(t, c, base, toolWithSuffix(tools, "page_load")[0])
	})

	// Last: it closes the shop's tab. A cached page-server tool stays
	// listed, its annotations as the page gave them, and a call reopens
	// the page, whose new server session answers.
	t.Run("cached", func(t *testing.T) {
		hours := toolWithSuffix(tools, "shop_hours")[0]
		listed := c.tools()[hours]
		if extra, _ := listed.Meta["webmcp-cdp/annotations"].(map[string]any); extra["cache"] != true || listed.Annotations == nil || !listed.Annotations.ReadOnlyHint {
			t.Errorf("the page's annotations did not reach the listing: %+v, _meta %v", listed.Annotations, listed.Meta)
		}
		first := c.callOK(hours, map[string]any{})
		closed := 0
		for _, tab := range c.tabs() {
			// http.FileServer serves index.html at "/".
			if tab.URL == base+"/" || tab.URL == base+"/index.html" {
				c.callOK("webmcp_close_tab", map[string]any{"tab": tab.Tab})
				closed++
			}
		}
		if closed != 1 {
			t.Fatalf("closed %d tabs of the shop, want 1: %+v", closed, c.tabs())
		}
		c.waitFor("shop_hours listed as cached", func(m map[string]*mcp.Tool) bool {
			return m[hours] != nil && strings.Contains(m[hours].Description, "· cached]")
		})
		if src := source(t, c.tools()[hours]); src["cached"] != true || src["backend"] != "mcp-b" {
			t.Errorf("provenance of the cached tool = %v", src)
		}
		second := c.callOK(hours, map[string]any{})
		if !strings.HasPrefix(second, "9-17 ") || second == first {
			t.Errorf("after its tab closed, shop_hours = %q; want an answer from a newly loaded page (first %q)", second, first)
		}
	})
}
