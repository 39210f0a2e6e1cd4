package e2e

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpbMetaShop is a page server (McpServer over TabServerTransport) whose
// tool carries a title, icons, an outputSchema and a _meta with keys a page
// may not set, and returns structuredContent and a _meta with such a key
// too; a tool whose result's _meta is 10 MB; and a second server, on a
// channel of its own, whose tool's _meta is 10 MB, so that its tools/list
// is over the bound of a page message.
const mcpbMetaShop = `
import { McpServer } from "@modelcontextprotocol/server";
import { TabServerTransport } from "@mcp-b/transports";
import { z } from "zod";

const server = new McpServer({ name: "meta-shop", version: "1.0.0" });
server.registerTool("cart_total", {
  title: "Cart total",
  description: "The cart's total",
  icons: [{ src: "https://shop.example/cart.png", mimeType: "image/png", sizes: ["48x48"] }],
  outputSchema: z.object({ total: z.number().int(), currency: z.string() }),
  _meta: {
    ui: { resourceUri: "ui://shop/cart.html", visibility: ["model", "app"] },
    "com.example/rev": 7,
    "io.modelcontextprotocol/x": "forged",
    "webmcp-cdp/source": { origin: "https://bank.example" },
  },
}, async () => ({
  content: [
    { type: "text", text: "3 EUR" },
    { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
    { type: "audio", data: "UklGRg==", mimeType: "audio/wav" },
    { type: "resource_link", uri: "ui://shop/cart.html", name: "cart view", mimeType: "text/html;profile=mcp-app" },
    { type: "resource", resource: { uri: "cart://current", mimeType: "application/json", text: "[]" } },
  ],
  structuredContent: { total: 3, currency: "EUR" },
  _meta: { "com.example/receipt": { id: "r-1", lines: [1, 2] }, "io.modelcontextprotocol/related-task": { taskId: "forged" } },
}));
server.registerTool("huge_result_meta", { description: "Returns a result whose _meta is 10 MB" },
  async () => ({ content: [{ type: "text", text: "big" }], _meta: { big: "x".repeat(10 << 20) } }));
server.connect(new TabServerTransport({ allowedOrigins: [window.location.origin] }));

const big = new McpServer({ name: "big-meta", version: "1.0.0" });
big.registerTool("huge_tool_meta", { description: "A tool whose _meta is 10 MB", _meta: { big: "x".repeat(10 << 20) } },
  async () => ({ content: [{ type: "text", text: "never listed" }] }));
big.connect(new TabServerTransport({ allowedOrigins: [window.location.origin], channelId: "big-meta" }));
`

// Pieces of mcpbMetaShop's cart_total as a client must see them.
var (
	metaIcons   = []mcp.Icon{{Source: "https://shop.example/cart.png", MIMEType: "image/png", Sizes: []string{"48x48"}}}
	metaReceipt = map[string]any{"id": "r-1", "lines": []any{1.0, 2.0}}
)

// TestPageServerMeta: a page server's tool title, icons, outputSchema and
// _meta, and its result's structuredContent, _meta and content of every
// type, reach go-sdk clients
// over HTTP (2025-11-25 and 2026-07-28) and stdio, and the TypeScript SDK's
// v1 (2025-11-25) and v2 (2026-07-28) clients (which check the
// structuredContent against the outputSchema), as the
// page gave them, less the _meta keys a page may not set: those are dropped
// and logged with the page. A result or a tools/list over the bound of a
// page message fails at once with the reason, and the page's other tools
// stay.
func TestPageServerMeta(t *testing.T) {
	t.Parallel()
	base := serveMCPB(t, mcpbMetaShop, nil)
	page := base + "/index.html"

	t.Run("http", func(t *testing.T) {
		t.Parallel()
		endpoint, stderr := startHTTPEnv(t, nil, "launch", "--headless", "--http", "127.0.0.1:0", page)
		for _, version := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(version, func(t *testing.T) {
				t.Parallel()
				checkMetaShop(t, httpClientWith(t, endpoint, "", nil, version), base)
			})
		}
		t.Run("typescript", func(t *testing.T) {
			t.Parallel()
			checkMetaNode(t, startNodeClient(t, "the TypeScript SDK v1 client", filepath.Join(npmDir(t), "meta-client.mjs"), endpoint, "_cart_total"), "2025-11-25", base)
		})
		t.Run("typescript-v2", func(t *testing.T) {
			t.Parallel()
			checkMetaNode(t, startNodeClient(t, "the TypeScript SDK v2 client", filepath.Join(tsClientV2Dir(t), "meta-client.mjs"), endpoint, "_cart_total"), "2026-07-28", base)
		})
		t.Run("logged", func(t *testing.T) {
			t.Parallel()
			checkMetaLog(t, stderr.waitFor, base)
		})
	})

	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		c := start(t, "launch", "--headless", page)
		checkMetaShop(t, c, base)
		checkMetaLog(t, c.stderr.waitFor, base)
	})
}

// checkMetaNode checks what a TypeScript client script (meta-client.mjs)
// read of cart_total, over the protocol revision version (the v1 client
// prints none: it speaks 2025-11-25).
func checkMetaNode(t *testing.T, n *nodeClient, version, base string) {
	t.Helper()
	done := n.next(t, "done", 60*time.Second)
	var got struct {
		Version string `json:"version"`
		Tool    struct {
			Title        string         `json:"title"`
			Icons        []mcp.Icon     `json:"icons"`
			OutputSchema map[string]any `json:"outputSchema"`
			Meta         map[string]any `json:"_meta"`
		} `json:"tool"`
		Result struct {
			Content []struct {
				Type string `json:"type"`
			} `json:"content"`
			StructuredContent map[string]any `json:"structuredContent"`
			Meta              map[string]any `json:"_meta"`
			IsError           bool           `json:"isError"`
		} `json:"result"`
	}
	remarshal(t, done, &got)
	if got.Version != "" && got.Version != version {
		t.Errorf("%s spoke %s, want %s", n.name, got.Version, version)
	}
	checkMetaTool(t, n.name, got.Tool.Title, got.Tool.Icons, got.Tool.OutputSchema, got.Tool.Meta, base)
	checkMetaResult(t, n.name, got.Result.IsError, got.Result.StructuredContent, got.Result.Meta)
	var types []string
	for _, c := range got.Result.Content {
		types = append(types, c.Type)
	}
	if strings.Join(types, " ") != "text image audio resource_link resource" {
		t.Errorf("%s read content of types %v", n.name, types)
	}
}

// checkMetaShop checks cart_total's listing and result, and the bounds, as
// the go-sdk client c sees them.
func checkMetaShop(t *testing.T, c *client, base string) {
	t.Helper()
	tools := c.waitFor("the page server's tools", hasSuffix("huge_result_meta", 1))
	name := toolWithSuffix(tools, "cart_total")[0]
	tl := tools[name]
	schema, _ := tl.OutputSchema.(map[string]any)
	checkMetaTool(t, "the go-sdk client", tl.Title, tl.Icons, schema, tl.Meta, base)
	res := c.call(name, map[string]any{})
	sc, _ := res.StructuredContent.(map[string]any)
	checkMetaResult(t, "the go-sdk client", res.IsError, sc, res.Meta)
	if got := text(res); got != "3 EUR" {
		t.Errorf("the result's text = %q, want 3 EUR", got)
	}
	checkMetaContent(t, res.Content)

	// A result over the bound of a page message fails at once, with why.
	start := time.Now()
	huge := c.call(toolWithSuffix(tools, "huge_result_meta")[0], map[string]any{})
	if !huge.IsError || !strings.Contains(text(huge), "over the limit of 1048576 per message") {
		t.Errorf("a result with a 10 MB _meta = %q (isError %v), want an error that says it is over the limit", text(huge), huge.IsError)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the call over the bound took %v: it waited rather than failing at once", took)
	}
	// The server whose tools/list is over the bound lists nothing; this
	// one's tools stay.
	if n := toolWithSuffix(c.tools(), "huge_tool_meta"); len(n) != 0 {
		t.Errorf("a tool with a 10 MB _meta is listed: %v", n)
	}
	if got := c.callOK(name, map[string]any{}); got != "3 EUR" {
		t.Errorf("cart_total after the bounds = %q", got)
	}
}

// checkMetaContent checks that every content type of cart_total's result
// arrived as the page gave it.
func checkMetaContent(t *testing.T, content []mcp.Content) {
	t.Helper()
	if len(content) != 5 {
		t.Fatalf("content = %d blocks, want the page's 5", len(content))
	}
	img, ok1 := content[1].(*mcp.ImageContent)
	audio, ok2 := content[2].(*mcp.AudioContent)
	link, ok3 := content[3].(*mcp.ResourceLink)
	res, ok4 := content[4].(*mcp.EmbeddedResource)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		t.Fatalf("content types = %T %T %T %T, want image, audio, resource_link, resource", content[1], content[2], content[3], content[4])
	}
	if img.MIMEType != "image/png" || len(img.Data) != 8 || audio.MIMEType != "audio/wav" || len(audio.Data) != 4 ||
		link.URI != "ui://shop/cart.html" || link.Name != "cart view" || res.Resource == nil || res.Resource.URI != "cart://current" || res.Resource.Text != "[]" {
		t.Errorf("content = %+v %+v %+v %+v", img, audio, link, res.Resource)
	}
}

// checkMetaTool checks what who read of cart_total's definition.
func checkMetaTool(t *testing.T, who, title string, icons []mcp.Icon, schema, meta map[string]any, base string) {
	t.Helper()
	if title != "Cart total" {
		t.Errorf("%s: title = %q, want Cart total", who, title)
	}
	if !reflect.DeepEqual(icons, metaIcons) {
		t.Errorf("%s: icons = %+v, want %+v", who, icons, metaIcons)
	}
	props, _ := schema["properties"].(map[string]any)
	total, _ := props["total"].(map[string]any)
	currency, _ := props["currency"].(map[string]any)
	if schema["type"] != "object" || total["type"] != "integer" || currency["type"] != "string" {
		t.Errorf("%s: outputSchema = %v, want zod's object of total (integer) and currency (string)", who, schema)
	}
	// These clients do not declare MCP Apps: the page's ui key is left out
	// (e2e/apps_test.go has clients that do).
	if meta["ui"] != nil || meta["com.example/rev"] != 7.0 {
		t.Errorf("%s: _meta = %v, want the page's com.example/rev and no ui", who, meta)
	}
	if _, ok := meta["io.modelcontextprotocol/x"]; ok {
		t.Errorf("%s: the forged io.modelcontextprotocol/x reached the client: %v", who, meta)
	}
	if src, _ := meta["webmcp-cdp/source"].(map[string]any); src["origin"] != base || src["backend"] != "mcp-b" {
		t.Errorf("%s: _meta[webmcp-cdp/source] = %v, want ours (origin %s)", who, meta["webmcp-cdp/source"], base)
	}
}

// checkMetaResult checks what who read of cart_total's result.
func checkMetaResult(t *testing.T, who string, isError bool, structured, meta map[string]any) {
	t.Helper()
	if isError {
		t.Errorf("%s: cart_total returned an error", who)
	}
	if !reflect.DeepEqual(structured, map[string]any{"total": 3.0, "currency": "EUR"}) {
		t.Errorf("%s: structuredContent = %v", who, structured)
	}
	if !reflect.DeepEqual(meta["com.example/receipt"], metaReceipt) {
		t.Errorf("%s: the result's _meta = %v, want the page's com.example/receipt", who, meta)
	}
	if task, ok := meta["io.modelcontextprotocol/related-task"]; ok {
		t.Errorf("%s: the forged io.modelcontextprotocol/related-task reached the client: %v", who, task)
	}
}

// checkMetaLog checks that the forged keys were logged with the page, and
// the refusal of the tools/list over the bound.
func checkMetaLog(t *testing.T, waitFor func(string, time.Duration) bool, base string) {
	t.Helper()
	for _, want := range []string{"io.modelcontextprotocol/x", "io.modelcontextprotocol/related-task", "url=" + base + "/", "over the limit of 1048576 per message"} {
		if !waitFor(want, 60*time.Second) {
			t.Errorf("webmcp-cdp never logged %q", want)
		}
	}
}

// remarshal decodes v (JSON decoded into maps) into out.
func remarshal(t *testing.T, v any, out any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}
