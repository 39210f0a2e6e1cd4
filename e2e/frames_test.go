package e2e

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCrossOriginFrame: a cross-origin iframe (an out-of-process frame
// target) gets its tools into the catalog under its own origin, never the
// top page's, and calls reach the frame.
func TestCrossOriginFrame(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)                                    // http://127.0.0.1:PORT
	other := strings.Replace(base, "127.0.0.1", "localhost", 1) // another site
	c := start(t, "launch", "--headless", base+"/frames/cross.html?src="+other+"/current/")
	tools := c.waitFor("the top page's and the frame's tools", func(m map[string]*mcp.Tool) bool {
		return len(toolWithSuffix(m, "host_ping")) == 1 && len(toolWithSuffix(m, "echo")) == 1
	})
	echo := toolWithSuffix(tools, "echo")[0]
	src := source(t, tools[echo])
	if src["origin"] != other || !strings.HasPrefix(echo, "localhost_") {
		t.Errorf("the frame's tool %s is attributed to %v, want %s", echo, src["origin"], other)
	}
	if src["tab"] != source(t, tools[toolWithSuffix(tools, "host_ping")[0]])["tab"] {
		t.Errorf("the frame's tool is not in the top page's tab: %v", src)
	}
	if got := c.callOK(echo, map[string]any{"text": "into the frame"}); got != "into the frame" {
		t.Errorf("echo in the frame = %q", got)
	}
	if got := c.callOK(toolWithSuffix(tools, "host_ping")[0], map[string]any{}); got != "pong from the top page" {
		t.Errorf("host_ping = %q", got)
	}
}
