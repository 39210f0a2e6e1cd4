package e2e

import (
	"os"
	"strings"
	"testing"
	"time"
)

// mcpbHostilePage is the hand-written wire page, served beside the bundles.
func mcpbHostilePage(t *testing.T) string {
	t.Helper()
	page, err := os.ReadFile("../fixtures/pageserver/hostile.html")
	if err != nil {
		t.Fatal(err)
	}
	return string(page)
}

// testHostileWire (a subtest of TestMCPBPageServer, in a tab of its own): a
// hand-written page server abuses the MCP-B wire
// (fixtures/pageserver/hostile.html). A second server that never answers
// initialize does not hold up the first; an iframe's forged answer to a
// call in flight is ignored; a notification flood, an oversized message and
// malformed messages are dropped and refused with a reason, and the session
// goes on, as do the other tabs' servers.
func testHostileWire(t *testing.T, c *client, base, otherTool string) {
	c.callOK("webmcp_open_tab", map[string]any{"url": base + "/hostile.html"})
	tools := c.waitFor("the wire server's tools", hasSuffix("slowly", 1))
	if got := c.callOK(toolWithSuffix(tools, "ping")[0], map[string]any{}); got != "pong" {
		t.Errorf("ping = %q", got)
	}
	// The iframe answers the call first, on the server's channel and on the
	// default one; only the server's own answer counts.
	if got := c.callOK(toolWithSuffix(tools, "slowly")[0], map[string]any{}); got != "slow pong" {
		t.Errorf("slowly = %q, want the server's answer, not the iframe's forgery", got)
	}
	if got := c.callOK(toolWithSuffix(tools, "flood")[0], map[string]any{}); got != "done" {
		t.Errorf("flood = %q", got)
	}
	// The page script drops a flood at its rate limit, or, when Go reads
	// the page more slowly than the flood comes (a loaded machine: seen
	// in CI), at its bounded queue of waiting messages first: either is
	// the flood refused with its reason.
	if !c.stderr.waitForAny([]string{"messages dropped: over the rate", "messages dropped: more than the queue"}, 30*time.Second) {
		t.Error("the notification flood was not refused with a reason")
	}
	if got := c.callOK(toolWithSuffix(tools, "abuse")[0], map[string]any{}); got != "done" {
		t.Errorf("abuse = %q", got)
	}
	for _, want := range []string{"over the size limit of 1 MiB", "not MCP-B messages (malformed)"} {
		if !c.stderr.waitFor(want, 10*time.Second) {
			t.Errorf("no refusal saying %q", want)
		}
	}
	// After all that, the session still answers.
	if got := c.callOK(toolWithSuffix(tools, "ping")[0], map[string]any{}); got != "pong" {
		t.Errorf("ping after the abuse = %q", got)
	}
	if got := c.callOK(otherTool, map[string]any{}); got == "" {
		t.Errorf("the first tab's page server did not answer after the abuse")
	}
	if strings.Contains(c.stderr.String(), "panic") {
		t.Error("the process panicked")
	}
}
