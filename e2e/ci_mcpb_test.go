package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mcpbMixedPage is a page with a WebMCP tool and an MCP-B page server (the
// shop of mcpbShop, bundled from the real npm packages).
const mcpbMixedPage = `<!doctype html><title>MCP-B shop with a WebMCP tool</title><body>
<script>
document.modelContext.registerTool({ name: "site_search", description: "Search the site by text.",
  execute: async () => "found" });
</script>
<script src="bundle.js"></script></body>`

// TestCIInspectPageServer: inspect lists an MCP-B page server's tools
// beside the page's WebMCP tools, each with its backend, and the server's
// resources, resource template and prompt, in JSON and text; test calls a
// page-server tool and its load case names the server's tools and prompts.
func TestCIInspectPageServer(t *testing.T) {
	t.Parallel()
	base := serveMCPB(t, mcpbShop, map[string]string{"mixed.html": mcpbMixedPage})
	page := base + "/mixed.html"
	// The page server's tools come after its initialize round trip: wait
	// for one of them, as a CI job would.
	rep := inspect(t, 0, "--wait-for-tool", "add_to_cart", page)
	backends := map[string]string{}
	for _, tl := range rep.Tools {
		backends[tl.Name] = tl.Backend
		if tl.Routed == "" {
			t.Errorf("%s has no routed name", tl.Name)
		}
	}
	for name, want := range map[string]string{"site_search": "webmcp", "add_to_cart": "mcp-b", "page_load": "mcp-b", "add_tool": "mcp-b"} {
		if backends[name] != want {
			t.Errorf("%s: backend %q, want %q (tools %v)", name, backends[name], want, backends)
		}
	}
	res := map[string]string{}
	for _, r := range rep.Resources {
		res[r.URI] = strings.Join([]string{r.Name, r.Description, r.MimeType, map[bool]string{true: "template"}[r.Template]}, "|")
		if !strings.HasPrefix(r.Routed, "webmcp://") || !strings.HasSuffix(r.Routed, "/"+r.URI) {
			t.Errorf("%s is routed as %q", r.URI, r.Routed)
		}
	}
	for uri, want := range map[string]string{
		"cart://current":  "cart|The cart|application/json|",
		"product://{sku}": "product|A product by SKU||template",
	} {
		if res[uri] != want {
			t.Errorf("resource %s: %q, want %q (resources %v)", uri, res[uri], want, res)
		}
	}
	if len(rep.Prompts) != 1 || rep.Prompts[0].Name != "checkout_help" || rep.Prompts[0].Description != "Help with checking out" ||
		!strings.HasSuffix(rep.Prompts[0].Routed, "_checkout_help") || len(rep.Prompts[0].Arguments) != 1 ||
		rep.Prompts[0].Arguments[0].Name != "item" || !rep.Prompts[0].Arguments[0].Required {
		t.Errorf("prompts %+v", rep.Prompts)
	}

	stdout, stderr, code := ciRun(t, "", "inspect", "--wait-for-tool", "add_to_cart", page)
	if code != 0 {
		t.Fatalf("inspect (text): exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Logf("inspect printed:\n%s", stdout)
	for _, want := range []string{
		"1 resource, 1 resource template, 1 prompt (settled",
		"add_to_cart  →  ", "  backend:      mcp-b\n", "  backend:      webmcp\n",
		"Resources (MCP-B page servers):", "cart://current  →  webmcp://", "(template)",
		"Prompts (MCP-B page servers):", "checkout_help  →  ", "argument:     item (required)\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the text lacks %q:\n%s", want, stdout)
		}
	}

	spec := filepath.Join(t.TempDir(), "spec.yaml")
	os.WriteFile(spec, []byte(`pages:
  - name: shop
    url: `+page+`
    tools: [site_search, add_to_cart]
    calls:
      - tool: add_to_cart
        args: {sku: A1, qty: 2}
        expect: {text: added 2 x A1}
`), 0o644)
	stdout, stderr, code = ciRun(t, "", "test", spec)
	if code != 0 {
		t.Fatalf("test: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Logf("test printed:\n%s", stdout)
	for _, want := range []string{"add_to_cart (mcp-b)", "site_search,", "prompt ", "_checkout_help"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("test's output lacks %q:\n%s", want, stdout)
		}
	}
}
