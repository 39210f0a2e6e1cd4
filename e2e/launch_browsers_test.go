package e2e

import (
	"testing"
)

// TestLaunchBrowsers: launch --browsers 2 starts two local browsers,
// local1 and local2, served as one: the start page opens in the first, a
// tab opened in the second has its tools too, and each answers. Closing
// the client ends both (TestLaunchLeavesNoBrowser covers what is left).
func TestLaunchBrowsers(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	c := start(t, "launch", "--headless", "--browsers", "2", "--state-dir", "", base+"/current/")
	c.tools()
	c.callOK("webmcp_open_tab", map[string]any{"url": base + "/current/", "browser": "local2"})
	echo := echoByBrowser(t, c, "local1", "local2")
	for b, n := range echo {
		if got := c.callOK(n, map[string]any{"text": b}); got != b {
			t.Errorf("%s's echo returned %q", b, got)
		}
	}
}
