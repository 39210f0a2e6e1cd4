package e2e

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPBPageServerBeforeAttach: page servers that started before
// webmcp-cdp attached — one in a tab (TabServerTransport), one in an iframe
// (IframeChildTransport) — said they were ready when nobody listened. The
// page script, coming into those live documents late, asks them again
// (mcp-check-ready), so their tools are listed and answer. In a new
// document it asks nothing: the servers say so themselves when they start
// (the conformance page crossorigin checks that no such message reaches a
// page).
func TestMCPBPageServerBeforeAttach(t *testing.T) {
	t.Parallel()
	const ready = `<script>addEventListener("load", () => { document.title = "ready"; });</script>`
	base := serveMCPB(t, mcpbShop, map[string]string{
		"shop.html":   `<!doctype html><title>loading</title><script src="bundle.js"></script>` + ready,
		"frame.js":    bundle(t, mcpbFrameServer),
		"frame.html":  `<!doctype html><title>widget</title><script src="frame.js"></script>`,
		"parent.html": `<!doctype html><title>loading</title><iframe src="frame.html"></iframe>` + ready,
	})
	browserURL, _ := startOwnChrome(t, false, base+"/shop.html", base+"/parent.html")
	waitReady(t, browserURL, "/shop.html", "/parent.html")
	c := start(t, "attach", "--browser-url", browserURL, "--backend", "polyfill", "--state-dir", "")
	tools := c.waitFor("both page servers' tools", func(m map[string]*mcp.Tool) bool {
		return len(toolWithSuffix(m, "add_to_cart")) == 1 && len(toolWithSuffix(m, "frame_echo")) == 1
	})
	if got := c.callOK(toolWithSuffix(tools, "add_to_cart")[0], map[string]any{"sku": "B2", "qty": 1}); got != "added 1 x B2" {
		t.Errorf("add_to_cart = %q", got)
	}
	if got := c.callOK(toolWithSuffix(tools, "frame_echo")[0], map[string]any{"text": "late"}); got != "frame: late" {
		t.Errorf("frame_echo = %q", got)
	}
}
