package e2e

import (
	"context"
	"encoding/json"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
// 2026-07-28, and over stdio): it is told the extension, lists the app
// tool with its view routed to the page's resource, reads the view with
// its mimeType and _meta.ui, lists the app-only tool, and calls it by the
// page server's own name, as a view would; views that are not ui:// or not
// the page's are dropped and logged with the page. A client that does not
// declare the extension lists plain tools without the app-only one.
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
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		caps := &mcp.ClientCapabilities{}
		caps.AddExtension("io.modelcontextprotocol/ui", nil)
		checkAppHost(t, startProto(t, &mcp.ClientOptions{Capabilities: caps}, "", "launch", "--headless", base+"/index.html"))
	})
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

// appsHost is the npm folder of the MCP Apps host test, installed once.
var appsHost struct {
	once sync.Once
	dir  string
	out  []byte
	err  error
}

func appsHostDir(t *testing.T) string {
	t.Helper()
	appsHost.once.Do(func() {
		appsHost.dir, appsHost.out, appsHost.err = installPinned(filepath.Join("testdata", "apps-host"), false)
	})
	if appsHost.err != nil {
		t.Fatalf("installing the pinned MCP Apps SDK in e2e/testdata/apps-host (npm ci) failed: %v\n%s\nThis test needs Node.js and npm with the npm registry reachable.", appsHost.err, appsHost.out)
	}
	return appsHost.dir
}

// appView is the view's script (the MCP Apps SDK's App): once connected to
// its host, it calls the app-only tool cart_items by its server's own name,
// shows the answer in its DOM, and logs what the DOM says to the host.
const appView = `
import { App } from "@modelcontextprotocol/ext-apps";
(async () => {
  const app = new App({ name: "cart-view", version: "1.0.0" });
  try {
    await app.connect();
    const r = await app.callServerTool({ name: "cart_items", arguments: {} });
    document.getElementById("out").textContent = r.isError ? "error: " + r.content?.[0]?.text : r.content?.[0]?.text;
    await app.sendLog({ level: "info", data: "view:" + document.getElementById("out").textContent });
  } catch (e) {
    await app.sendLog({ level: "error", data: "view-error:" + (e?.stack ?? e) });
  }
})();
`

// appServer is the page server, written with the MCP Apps SDK's server
// helpers; VIEW_HTML is replaced by the view's page.
const appServer = `
import { McpServer } from "@modelcontextprotocol/server";
import { TabServerTransport } from "@mcp-b/transports";
import { registerAppTool, registerAppResource, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/server";

const VIEW = "ui://shop/cart.html";
const server = new McpServer({ name: "app-shop", version: "1.0.0" });
registerAppTool(server, "show_cart", { description: "Show the cart", _meta: { ui: { resourceUri: VIEW } } },
  async () => ({ content: [{ type: "text", text: "the cart is shown" }] }));
registerAppTool(server, "cart_items", { description: "The cart's items, for the view", _meta: { ui: { resourceUri: VIEW, visibility: ["app"] } } },
  async () => ({ content: [{ type: "text", text: "2 x apples" }] }));
registerAppResource(server, "cart view", VIEW, { description: "The cart" }, async () => ({
  contents: [{ uri: VIEW, mimeType: RESOURCE_MIME_TYPE, text: VIEW_HTML, _meta: { ui: { prefersBorder: true } } }],
}));
server.connect(new TabServerTransport({ allowedOrigins: [window.location.origin] }));
`

// appHostPage is the host (the MCP Apps SDK's AppBridge and the TypeScript
// MCP client over HTTP, at /mcp of its own origin): its WebMCP tool
// run_host lists the app tool, reads its view, renders it in a sandboxed
// frame bridged to webmcp-cdp, calls the tool, and answers with what the
// view logged of its DOM.
const appHostPage = `
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

async function run(steps) {
  // Each step is logged with its time, so that a failure says how far the
  // host got and what took long.
  const t0 = performance.now();
  const at = (what) => steps.push("@" + Math.round(performance.now() - t0) + "ms " + what);
  at("connect");
  const client = new Client({ name: "apps-host", version: "1.0.0" },
    { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } } });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.href)));
  at("listTools");
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name.endsWith("_show_cart"));
  if (!tool) throw new Error("no show_cart: " + tools.map((t) => t.name).join(", "));
  const uri = tool._meta?.ui?.resourceUri;
  steps.push("uri:" + uri);
  steps.push("app-only listed:" + tools.some((t) => t.name.endsWith("_cart_items")));
  at("readResource");
  const res = await client.readResource({ uri });
  const view = res.contents[0];
  steps.push("mime:" + view.mimeType);
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  document.body.appendChild(frame);
  const bridge = new AppBridge(client, { name: "apps-host", version: "1.0.0" }, { serverTools: {}, logging: {} });
  const logged = new Promise((resolve) => { bridge.onloggingmessage = ({ data }) => resolve(String(data)); });
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  at("bridge");
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = view.text;
  await initialized;
  at("callTool");
  const result = await client.callTool({ name: tool.name, arguments: {} });
  await bridge.sendToolInput({ arguments: {} });
  await bridge.sendToolResult(result);
  steps.push("tool:" + result.content?.[0]?.text);
  at("the view's log");
  steps.push(await logged);
  at("done");
  return steps.join("\n");
}

document.modelContext.registerTool({
  name: "run_host",
  description: "Run the MCP Apps host once and say what it saw",
  execute: async () => {
    const steps = [];
    try { return await run(steps); } catch (e) { return steps.join("\n") + "\nhost-error: " + (e?.stack ?? e); }
  },
});
`

// TestAppsHost: a real MCP Apps host (the MCP Apps SDK's AppBridge and the
// TypeScript MCP client over HTTP, in a page in Chromium) lists a page
// server's app tool (written with registerAppTool and registerAppResource),
// reads its view through webmcp-cdp, renders it in a sandboxed frame,
// calls the tool, and the view, through the bridge, calls the app-only
// tool by its server's own name and shows the answer in its DOM.
func TestAppsHost(t *testing.T) {
	t.Parallel()
	dir := appsHostDir(t)
	viewHTML := `<!doctype html><meta charset=utf-8><title>cart</title><p id=out>loading</p><script>` + bundleIn(t, dir, appView, "--minify") + `</script>`
	quoted, err := json.Marshal(viewHTML)
	if err != nil {
		t.Fatal(err)
	}
	server := strings.Replace(appServer, "VIEW_HTML", string(quoted), 1)
	files := map[string]string{
		"index.html": `<!doctype html><title>app shop</title><body><script src="shop.js"></script></body>`,
		"shop.js":    bundleIn(t, dir, server),
		"host.html":  `<!doctype html><title>apps host</title><body><script src="host.js"></script></body>`,
		"host.js":    bundleIn(t, dir, appHostPage),
	}
	www := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(www, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// /mcp of the pages' origin goes to webmcp-cdp, once it listens.
	var target atomic.Pointer[url.URL]
	// What went through /mcp, said when the test fails.
	var proxyBuf syncBuffer
	proxyLog := log.New(&proxyBuf, "", log.Lmicroseconds)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("what went through /mcp:\n%s", proxyBuf.String())
		}
	})
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(www)))
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		u := target.Load()
		if u == nil {
			http.Error(w, "webmcp-cdp is not listening yet", http.StatusServiceUnavailable)
			return
		}
		p := &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(u)
				pr.Out.URL.Path = u.Path
				pr.Out.Host = u.Host
				pr.Out.Header.Del("Origin")
			},
			FlushInterval: -1,
		}
		// Full duplex: Go's HTTP/1 server drains and closes a request body
		// the handler has not read to its end when the response begins,
		// and the proxy's transport, checking the body for bytes past its
		// length after the answer's headers came back (a fast answer),
		// then fails to write the request and closes the connection to
		// webmcp-cdp under the answer (golang/go#40747: "ReverseProxy read
		// error during body copy: use of closed network connection"). The
		// client never gets that answer and times out after 60 s.
		if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
			t.Errorf("the proxy to webmcp-cdp: %v", err)
		}
		start := time.Now()
		proxyLog.Printf("%s /mcp %s", r.Method, r.Header.Get("Mcp-Method"))
		defer func() {
			proxyLog.Printf("%s /mcp %s ended after %v", r.Method, r.Header.Get("Mcp-Method"), time.Since(start))
		}()
		p.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	// run_host is a whole host session inside one call (a client over
	// HTTP, a view of about a megabyte rendered in a frame, two calls
	// through it): 5 s alone, over the default 30 s call bound once at
	// load 12-23. The bound is for a hang, so it is wider here.
	endpoint, _ := startHTTPEnv(t, nil, "launch", "--headless", "--http", "127.0.0.1:0", "--call-timeout", "2m", srv.URL+"/index.html", srv.URL+"/host.html")
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	target.Store(u)
	c := httpClientWith(t, endpoint, "", nil, "")
	tools := c.waitFor("the host's run_host and the shop's show_cart", func(m map[string]*mcp.Tool) bool {
		return len(toolWithSuffix(m, "run_host")) == 1 && len(toolWithSuffix(m, "show_cart")) == 1
	})
	// (The two pages open at once: the shop may be tab 1 or tab 2.)
	res := c.callWithin(toolWithSuffix(tools, "run_host")[0], map[string]any{}, 2*time.Minute)
	got := text(res)
	if res.IsError {
		t.Fatalf("run_host returned isError: %s", got)
	}
	for _, want := range []string{"uri:webmcp://", "/ui://shop/cart.html\n", "app-only listed:true", "mime:text/html;profile=mcp-app", "tool:the cart is shown", "view:2 x apples"} {
		if !strings.Contains(got, want) {
			t.Errorf("the host saw:\n%s\nwant %q", got, want)
		}
	}
}

// mcpbOtherApp is a second page server, on an origin of its own, that
// really offers the view mcpbAppShop's lost_view names
// (ui://shop/missing.html), with its own tool other_view showing it.
const mcpbOtherApp = `
import { McpServer } from "@modelcontextprotocol/server";
import { TabServerTransport } from "@mcp-b/transports";

const VIEW = "ui://shop/missing.html";
const MIME = "text/html;profile=mcp-app";
const server = new McpServer({ name: "other-shop", version: "1.0.0" });
server.registerTool("other_view", {
  description: "Show the other page's view",
  _meta: { ui: { resourceUri: VIEW }, "ui/resourceUri": VIEW },
}, async () => ({ content: [{ type: "text", text: "other" }] }));
server.registerResource("other view", VIEW, { mimeType: MIME }, async (uri) => ({
  contents: [{ uri: uri.href, mimeType: MIME, text: "<!doctype html><p id=other>the other page's view</p>" }],
}));
server.connect(new TabServerTransport({ allowedOrigins: [window.location.origin] }));
`

// TestAppsOtherPage (issue 39): a tool's view that names a ui:// resource
// another page server really offers is never routed there. mcpbAppShop's
// lost_view names ui://shop/missing.html, which a second page (another
// origin, another tab) offers: lost_view is listed without a view and the
// drop is logged with its page, while the second page's own other_view
// gets the routed URI of its own resource, which reads as that page's
// view. With --tool-names short, where the second page's resource keeps
// its bare ui:// URI, lost_view must not get that URI either.
func TestAppsOtherPage(t *testing.T) {
	t.Parallel()
	shop, other := serveMCPB(t, mcpbAppShop, nil), serveMCPB(t, mcpbOtherApp, nil)
	for _, tc := range []struct {
		name  string
		args  []string
		names func(m map[string]*mcp.Tool, own string) []string
		view  func(other string) func(string) bool // the routed URI of the other page's view
	}{
		{"site", nil, toolWithSuffix, func(other string) func(string) bool {
			return func(u string) bool {
				return strings.HasPrefix(u, "webmcp://"+siteOfURL(other)+"/tab") && strings.HasSuffix(u, "/ui://shop/missing.html")
			}
		}},
		{"short", []string{"--tool-names", "short"}, func(m map[string]*mcp.Tool, own string) []string {
			if m[own] == nil {
				return nil
			}
			return []string{own}
		}, func(string) func(string) bool {
			return func(u string) bool { return u == "ui://shop/missing.html" }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			caps := &mcp.ClientCapabilities{}
			caps.AddExtension("io.modelcontextprotocol/ui", nil)
			args := append(append([]string{"launch", "--headless"}, tc.args...), shop+"/index.html", other+"/index.html")
			c := startProto(t, &mcp.ClientOptions{Capabilities: caps}, "", args...)
			isOtherView := tc.view(other)
			viewOf := func(tl *mcp.Tool) (ui map[string]any, uri string) {
				ui, _ = tl.Meta["ui"].(map[string]any)
				return ui, asString(ui["resourceUri"])
			}
			// Once the other page's tool has its view, the catalog knows the
			// other page's resource: every tool's view was resolved against
			// it (a tool with ui keys is rendered again when what its views
			// resolve to changes).
			tools := c.waitFor("both pages' tools, other_view's view routed", func(m map[string]*mcp.Tool) bool {
				ov, lost := tc.names(m, "other_view"), tc.names(m, "lost_view")
				if len(ov) != 1 || len(lost) != 1 || len(tc.names(m, "show_cart")) != 1 {
					return false
				}
				_, uri := viewOf(m[ov[0]])
				return isOtherView(uri)
			})
			ov := tools[tc.names(tools, "other_view")[0]]
			_, view := viewOf(ov)
			if ov.Meta["ui/resourceUri"] != view {
				t.Errorf("other_view's legacy ui/resourceUri = %v, want %q as its _meta.ui", ov.Meta["ui/resourceUri"], view)
			}
			lost := tools[tc.names(tools, "lost_view")[0]]
			if ui, uri := viewOf(lost); ui == nil || uri != "" || lost.Meta["ui/resourceUri"] != nil {
				t.Errorf("lost_view, whose view only another page offers, is listed with _meta %v: want _meta.ui without a resourceUri", lost.Meta)
			}
			if _, uri := viewOf(tools[tc.names(tools, "show_cart")[0]]); uri == "" || uri == view || !strings.HasSuffix(uri, "ui://shop/cart.html") {
				t.Errorf("show_cart's view = %q, want its own page's ui://shop/cart.html", uri)
			}

			rr, err := c.cs.ReadResource(ctxFor(t, 30*time.Second), &mcp.ReadResourceParams{URI: view})
			if err != nil {
				t.Fatalf("reading other_view's view %s: %v", view, err)
			}
			if len(rr.Contents) != 1 || rr.Contents[0].MIMEType != "text/html;profile=mcp-app" || !strings.Contains(rr.Contents[0].Text, "id=other") {
				t.Errorf("other_view's view %s reads as %+v, want the other page's view", view, rr.Contents)
			}
			// The drop is logged with the tool and its page (other_view may
			// have been dropped too, while its page's resources were not yet
			// known: only lost_view's line is looked for).
			drop := `lists no resource \"ui://shop/missing.html\"`
			for n := 1; ; n++ {
				if !c.stderr.waitForN(drop, n, 30*time.Second) {
					t.Fatalf("no log line drops lost_view's view with its page %s: %s", shop, c.stderr.String())
				}
				logged := false
				for line := range strings.Lines(c.stderr.String()) {
					logged = logged || strings.Contains(line, drop) && strings.Contains(line, "lost_view") && strings.Contains(line, "url="+shop+"/ ")
				}
				if logged {
					break
				}
			}
		})
	}
}
