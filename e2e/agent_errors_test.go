package e2e

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// errorTable reads the table of docs/errors.md: each row's id and its
// message as a regexp (a <placeholder> matches any text).
func errorTable(t *testing.T) map[string]*regexp.Regexp {
	t.Helper()
	b, err := os.ReadFile("../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| [^|]+ \\| `([^`]+)` \\|$")
	placeholder := regexp.MustCompile(`<[^>]+>`)
	out := map[string]*regexp.Regexp{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		parts := placeholder.Split(m[2], -1)
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		out[m[1]] = regexp.MustCompile(`(?s)^` + strings.Join(parts, `.+`) + `$`)
	}
	if len(out) == 0 {
		t.Fatal("docs/errors.md has no table of errors")
	}
	return out
}

// TestAgentErrors triggers every error of docs/errors.md's table through a
// real client and checks its wording against the table. One browser: the
// current-API page (slow, fail, echo), the shop (whose add_to_cart has a
// schema over --max-schema-bytes 160, so it is refused), the widget
// (whose open_full_forecast navigates during its call), a loopback port
// where nothing listens, and the fixtures' index (no tools).
func TestAgentErrors(t *testing.T) {
	t.Parallel()
	table := errorTable(t)
	shop, widget := shopAndWidget(t)
	current := strings.TrimSuffix(shop, "/shop/") + "/current/"
	c := start(t, "launch", "--headless", "--call-timeout", "4s", "--max-inflight-per-tab", "1", "--max-schema-bytes", "160", current, shop, widget)
	tools := c.waitFor("the three pages' tools", func(m map[string]*mcp.Tool) bool {
		return len(toolWithSuffix(m, "slow_stats")) == 1 && len(toolWithSuffix(m, "view_cart")) == 1 && len(toolWithSuffix(m, "open_full_forecast")) == 1
	})
	one := func(suffix string) string { return toolWithSuffix(tools, suffix)[0] }
	shopSite := strings.TrimSuffix(one("view_cart"), "_view_cart")
	slow, stats := one("slow"), one("slow_stats")
	currentTab := int(source(t, tools[slow])["tab"].(float64))

	checked := map[string]bool{}
	check := func(id string, res *mcp.CallToolResult, alsoHas string) {
		t.Helper()
		checked[id] = true
		re := table[id]
		if re == nil {
			t.Errorf("docs/errors.md has no row %s", id)
			return
		}
		got := text(res)
		if !res.IsError || !re.MatchString(got) || !strings.Contains(got, alsoHas) {
			t.Errorf("%s: got isError=%v %q; want it to match docs/errors.md (%s) and contain %q", id, res.IsError, got, re, alsoHas)
		}
	}

	check("unknown-tool", c.call("no_such_tool", map[string]any{}), "webmcp_list_tools")
	check("unknown-tool-closest", c.call(shopSite+"_view_carts", map[string]any{}), "closest names: "+shopSite+"_view_cart")
	check("refused-tool", c.call(shopSite+"_add_to_cart", map[string]any{"product": "tea"}), "--max-schema-bytes")
	check("no-tab", c.call("webmcp_activate_tab", map[string]any{"tab": 99}), "no tab 99")
	check("bad-arguments", c.call(one("echo"), map[string]any{"text": 5}), "at /text")
	check("page-exception", c.call(one("fail"), map[string]any{}), "fail tool failed on purpose")

	// A call that runs until its tab closes; while it runs, the tab is at
	// its one in-flight call. (The probe may take the slot first, and the
	// slow call is then refused: it is started again.)
	slowDone := make(chan *mcp.CallToolResult, 1)
	startSlow := func() { go func() { slowDone <- c.call(slow, map[string]any{"ms": 60000}) }() }
	startSlow()
	var busy *mcp.CallToolResult
	for deadline := time.Now().Add(15 * time.Second); busy == nil; {
		if r := c.call(stats, map[string]any{}); r.IsError {
			busy = r
			continue
		}
		select {
		case r := <-slowDone:
			if !strings.Contains(text(r), "already runs") {
				t.Fatalf("the slow call ended: %v %s", r.IsError, text(r))
			}
			startSlow()
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow call never took the tab's one in-flight slot")
		}
	}
	check("busy-tab", busy, "tab "+strconv.Itoa(currentTab)+" already runs 1 calls")
	c.callOK("webmcp_close_tab", map[string]any{"tab": currentTab})
	select {
	case r := <-slowDone:
		check("tab-closed", r, "webmcp_open_tab (url "+current)
	case <-time.After(20 * time.Second):
		t.Fatal("the call into the closed tab did not end")
	}

	// The page again, in a new tab, and a call longer than --call-timeout.
	c.callOK("webmcp_open_tab", map[string]any{"url": current})
	tools = c.waitFor("the reopened page's tools", hasSuffix("slow", 1))
	check("timeout", c.call(toolWithSuffix(tools, "slow")[0], map[string]any{"ms": 60000}), "within 4s")

	check("navigated", c.call(one("open_full_forecast"), map[string]any{}), "navigated away")

	// webmcp_open_tab on an address where nothing listens: the error page's
	// tab is closed again.
	dead := closedPort(t)
	check("open-failed", c.call("webmcp_open_tab", map[string]any{"url": dead}), "(net::ERR_CONNECTION_REFUSED)")
	c.waitTabsWithout(dead, "chrome-error://")

	// A tab closed while webmcp_open_tab waits for its page's tools (the
	// fixtures' index has none, so it would wait the whole wait_ms).
	home := strings.TrimSuffix(current, "current/")
	opened := make(chan *mcp.CallToolResult, 1)
	go func() { opened <- c.call("webmcp_open_tab", map[string]any{"url": home, "wait_ms": 25000}) }()
	homeTab := 0
	for deadline := time.Now().Add(15 * time.Second); homeTab == 0; {
		for _, tab := range c.tabs() {
			if tab.URL == home {
				homeTab = tab.Tab
			}
		}
		if homeTab == 0 && time.Now().After(deadline) {
			t.Fatalf("the tab opened on %s never showed in webmcp_list_tabs", home)
		}
	}
	c.callOK("webmcp_close_tab", map[string]any{"tab": homeTab})
	select {
	case r := <-opened:
		check("open-tab-closed", r, home)
	case <-time.After(20 * time.Second):
		t.Fatal("webmcp_open_tab did not end when its tab closed")
	}

	for id := range table {
		if !checked[id] {
			t.Errorf("docs/errors.md's %s is not triggered by this test", id)
		}
	}
}

// waitTabsWithout waits until no open tab's URL starts with any of
// prefixes (a tab that closes leaves webmcp_list_tabs when the browser
// says it closed).
func (c *client) waitTabsWithout(prefixes ...string) {
	c.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		var left []string
		for _, tab := range c.tabs() {
			for _, p := range prefixes {
				if strings.HasPrefix(tab.URL, p) {
					left = append(left, tab.URL)
				}
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("tabs still open: %q", left)
		}
		time.Sleep(50 * time.Millisecond) // poll interval: webmcp_list_tabs has no push
	}
}
