package e2e

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestOneToolOneName: a page embedding a partner's frame (delegated the
// tools feature) lists each of the partner's tools once, on the polyfill and
// on native Chromium, whether the partner is another site (an out-of-process
// frame, its own CDP target) or the same site on another port (another
// origin in the page's process), and a call reaches the frame.
func TestOneToolOneName(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	partners := map[string]string{
		"other-site": strings.Replace(base, "127.0.0.1", "localhost", 1),
		"same-site":  serveFixtures(t), // 127.0.0.1 on another port
	}
	for _, be := range []struct{ name string }{{"polyfill"}, {"native"}} {
		for kind, other := range partners {
			t.Run(be.name+"/"+kind, func(t *testing.T) {
				t.Parallel()
				args := []string{"launch", "--headless", "--backend", be.name}
				if be.name == "native" {
					args = append(args, "--chrome-arg=--enable-features=WebMCP")
				}
				c := start(t, append(args, base+"/frames/cross.html?src="+other+"/current/")...)
				tools := c.waitFor("the page's and the partner's tools", func(m map[string]*mcp.Tool) bool {
					return len(toolWithSuffix(m, "host_ping")) >= 1 && len(toolWithSuffix(m, "echo")) >= 1 && len(toolWithSuffix(m, "add")) >= 1
				})
				c.drainChanges()
				tools = c.tools() // once more: a second copy may come late
				for _, name := range []string{"host_ping", "echo", "add", "fail", "slow"} {
					if got := toolWithSuffix(tools, name); len(got) != 1 {
						t.Errorf("%s is listed %d times: %v", name, len(got), got)
					}
				}
				echo := toolWithSuffix(tools, "echo")
				if len(echo) > 0 {
					if got := c.callOK(echo[0], map[string]any{"text": "to the partner"}); got != "to the partner" {
						t.Errorf("echo in the partner frame = %q", got)
					}
				}
			})
		}
	}
}
