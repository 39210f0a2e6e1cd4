package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// siteAndTabNames splits the names ending in _suffix into the site-level
// name and the tab-level names.
func siteAndTabNames(t *testing.T, tools map[string]*mcp.Tool, suffix string) (string, []string) {
	t.Helper()
	site := ""
	var tabs []string
	for _, n := range toolWithSuffix(tools, suffix) {
		if strings.Contains(n, "_tab") {
			tabs = append(tabs, n)
		} else {
			site = n
		}
	}
	if site == "" {
		t.Fatalf("no site-level name ends in _%s: %v", suffix, names(tools))
	}
	return site, tabs
}

// TestSiteLevelNameFollowsTheActiveTab: two tabs of one site with the same
// tools; both tab-level names reach their own tab, and the site-level name
// goes to whichever tab webmcp_activate_tab brought to the front, as its
// description says.
func TestSiteLevelNameFollowsTheActiveTab(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	c := start(t, "launch", "--headless", base+"/notes/", base+"/notes/")
	tools := c.waitFor("two tabs of notes tools", hasSuffix("list_notes", 3))
	_, tabAdds := siteAndTabNames(t, tools, "add_note")
	siteList, _ := siteAndTabNames(t, tools, "list_notes")
	if len(tabAdds) != 2 {
		t.Fatalf("want two tab-level add_note names, got %v", tabAdds)
	}
	noteOf := map[int]string{}
	for _, n := range tabAdds {
		tab := int(source(t, tools[n])["tab"].(float64))
		noteOf[tab] = "written in tab " + string(rune('0'+tab))
		c.callOK(n, map[string]any{"title": "note", "content": noteOf[tab]})
	}
	for _, tab := range []int{1, 2, 1} {
		c.callOK("webmcp_activate_tab", map[string]any{"tab": tab})
		got := c.callOK(siteList, map[string]any{})
		if !strings.Contains(got, noteOf[tab]) || strings.Count(got, `"id"`) != 1 {
			t.Errorf("with tab %d active, %s = %s; want tab %d's note", tab, siteList, got, tab)
		}
		want := "goes to tab " + string(rune('0'+tab)) + " (active)]"
		c.waitFor("the description to name the active tab", func(m map[string]*mcp.Tool) bool {
			return m[siteList] != nil && strings.Contains(m[siteList].Description, want)
		})
	}
}

// TestCachedToolReopensItsPage: a tool with annotations.cache stays listed
// after its tab closes, calling it reopens its page and answers, and it is
// still there after a restart with the same --state-dir.
func TestCachedToolReopensItsPage(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	dir := t.TempDir()
	c := start(t, "launch", "--headless", "--state-dir", dir, base+"/hostile/cached.html")
	tools := c.waitFor("the cached tool", hasSuffix("remember", 1))
	name := toolWithSuffix(tools, "remember")[0]
	first := c.callOK(name, map[string]any{"text": "one"})
	if !strings.HasPrefix(first, "remembered: one") {
		t.Fatalf("%s = %q", name, first)
	}

	tabs := c.tabs()
	if len(tabs) != 1 {
		t.Fatalf("want one tab, got %+v", tabs)
	}
	c.callOK("webmcp_close_tab", map[string]any{"tab": tabs[0].Tab})
	c.waitFor("the tool listed as cached", func(m map[string]*mcp.Tool) bool {
		return m[name] != nil && strings.Contains(m[name].Description, "· cached]")
	})
	if src := source(t, c.tools()[name]); src["cached"] != true || !strings.HasSuffix(src["url"].(string), "/hostile/cached.html") {
		t.Errorf("provenance of the cached tool = %v", src)
	}

	second := c.callOK(name, map[string]any{"text": "two"})
	if !strings.HasPrefix(second, "remembered: two") || second[len("remembered: two"):] == first[len("remembered: one"):] {
		t.Errorf("after the tab closed, %s = %q; want an answer from a newly loaded page (first: %q)", name, second, first)
	}
	if tabs := c.tabs(); len(tabs) != 1 || !strings.HasSuffix(tabs[0].URL, "/hostile/cached.html") {
		t.Errorf("want the page reopened in one tab, got %+v", tabs)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil || !strings.Contains(string(raw), `"remember"`) {
		t.Fatalf("state file: %v\n%s", err, raw)
	}

	// A restart with the same state directory and no page open.
	c.cs.Close()
	c2 := start(t, "launch", "--headless", "--state-dir", dir)
	tools = c2.waitFor("the cached tool after a restart", func(m map[string]*mcp.Tool) bool { return m[name] != nil })
	if !strings.Contains(tools[name].Description, "· cached]") {
		t.Errorf("after a restart, the description is %q, want the cached tag", tools[name].Description)
	}
	if got := c2.callOK(name, map[string]any{"text": "three"}); !strings.HasPrefix(got, "remembered: three") {
		t.Errorf("after a restart, %s = %q", name, got)
	}
}

// TestReliabilityHostilePage: a page registers 3000 tools, a 2 MB description, a 5 MB
// result, a tool that never answers and one that throws. The process stays
// up, the limits apply, and a well-behaved tool on the same page and on
// another tab still answers.
func TestReliabilityHostilePage(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	c := start(t, "launch", "--headless", "--call-timeout", "3s", base+"/hostile/", base+"/notes/")
	tools := c.waitFor("the hostile page's and the notes app's tools", func(m map[string]*mcp.Tool) bool {
		// Every tool the test uses: the server adds them one by one, so a
		// list taken mid-way can hold some and not others.
		for _, n := range []string{"ok", "add_note", "huge_result", "never", "throws"} {
			if len(toolWithSuffix(m, n)) != 1 {
				return false
			}
		}
		return true
	})
	ok := toolWithSuffix(tools, "ok")[0]
	site := strings.TrimSuffix(ok, "_ok")
	hostile := 0
	for n := range tools {
		if strings.HasPrefix(n, site+"_") && !strings.Contains(n, "add_note") && source(t, tools[n])["url"] == base+"/hostile/" {
			hostile++
		}
	}
	if hostile > 200 {
		t.Errorf("%d tools of the hostile page are listed, want at most 200 (--max-tools-per-document)", hostile)
	}
	if len(toolWithSuffix(tools, "huge_description")) != 0 {
		t.Error("the tool with a 2 MB description is listed")
	}
	c.waitForLog(t, "refused a tool", "huge_description", "over the limit of 200 per document")

	// The tool that never answers holds a call while the others work.
	var wg sync.WaitGroup
	var never *mcp.CallToolResult
	wg.Add(1)
	go func() {
		defer wg.Done()
		never = c.call(toolWithSuffix(tools, "never")[0], map[string]any{})
	}()

	if got := c.callOK(ok, map[string]any{"text": "hi"}); got != "ok: hi" {
		t.Errorf("%s = %q", ok, got)
	}
	if res := c.call(ok, map[string]any{"text": 5}); !res.IsError || !strings.Contains(text(res), "at /text: got number, want string") {
		t.Errorf("%s with a number = %v %q, want the schema's complaint", ok, res.IsError, text(res))
	}
	res := c.call(toolWithSuffix(tools, "throws")[0], map[string]any{})
	if !res.IsError || !strings.Contains(text(res), "hostile tool threw on purpose") {
		t.Errorf("throws = %v %q", res.IsError, text(res))
	}
	if got := c.callOK(toolWithSuffix(tools, "lone_surrogate")[0], map[string]any{}); got != "a\uFFFDb" {
		t.Errorf("lone_surrogate = %q, want the lone surrogate as U+FFFD", got)
	}
	huge := c.callOK(toolWithSuffix(tools, "huge_result")[0], map[string]any{})
	if len(huge) > 1<<20+200 || !strings.Contains(huge, "[webmcp-cdp: the result was cut to") {
		t.Errorf("huge_result gave %d bytes ending %q, want at most 1 MiB and a notice", len(huge), huge[max(0, len(huge)-120):])
	}
	if got := c.callOK(toolWithSuffix(tools, "add_note")[0], map[string]any{"title": "calm", "content": "another tab"}); !strings.HasPrefix(got, "Added note") {
		t.Errorf("add_note on the other tab = %q", got)
	}

	wg.Wait()
	// A dialog whose message has a lone surrogate still reaches the policy
	// (here --dialogs fail, the default: dismissed, and the call says a
	// person was needed) rather than blocking the page until the call
	// timeout. (After never: a dialog goes to the oldest call in its tab.)
	if res := c.call(toolWithSuffix(tools, "surrogate_dialog")[0], map[string]any{}); !res.IsError || !strings.Contains(text(res), "needed a person") {
		t.Errorf("surrogate_dialog = %v %q, want the dialog dismissed by --dialogs fail", res.IsError, text(res))
	}
	if !never.IsError || !strings.Contains(text(never), "did not answer within 3s") {
		t.Errorf("never = %v %q, want the call timeout", never.IsError, text(never))
	}
	if c.cmd.ProcessState != nil {
		t.Fatalf("webmcp-cdp exited: %v", c.cmd.ProcessState)
	}
	if got := c.callOK(ok, map[string]any{"text": "still here"}); got != "ok: still here" {
		t.Errorf("after the abuse, %s = %q", ok, got)
	}
	reliabilityRow(t, "hostile page (thousands of tools, 2 MB description, huge result, a call that never answers, throws)",
		fmt.Sprintf("%d tools listed (limit 200), result cut to 1 MiB, never-answering call ended at the 3 s timeout, other tab unaffected", hostile))
}

// TestCallInterrupted: a call in flight when its page reloads, or its tab
// closes, ends at once with an error that says so.
func TestCallInterrupted(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	c := start(t, "launch", "--headless", "--call-timeout", "60s", base+"/hostile/")
	for _, tc := range []struct {
		action, tool, want string
	}{
		{"reload", "webmcp_reload_tab", "the page navigated away"},
		{"close", "webmcp_close_tab", "its tab was closed"},
	} {
		t.Run(tc.action, func(t *testing.T) {
			tools := c.waitFor("the hostile page's tools", func(m map[string]*mcp.Tool) bool {
				return len(toolWithSuffix(m, "never")) == 1 && len(toolWithSuffix(m, "never_calls")) == 1
			})
			never := toolWithSuffix(tools, "never")[0]
			tab := int(source(t, tools[never])["tab"].(float64))
			done := make(chan *mcp.CallToolResult, 1)
			go func() { done <- c.call(never, map[string]any{}) }()
			// The call reached the page when the page's never_calls says
			// so (the page tells the client nothing of its own).
			count := toolWithSuffix(tools, "never_calls")[0]
			for deadline := time.Now().Add(10 * time.Second); c.callOK(count, map[string]any{}) != "1"; {
				if time.Now().After(deadline) {
					t.Fatalf("the call of %s did not reach the page within 10 s", never)
				}
				time.Sleep(20 * time.Millisecond) // poll interval: the page signals nothing when a call arrives
			}
			c.callOK(tc.tool, map[string]any{"tab": tab})
			select {
			case res := <-done:
				if !res.IsError || !strings.Contains(text(res), tc.want) {
					t.Errorf("the interrupted call gave %v %q, want an error saying %q", res.IsError, text(res), tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("the call did not end within 10 s of the %s", tc.action)
			}
		})
	}
}

// waitForLog waits until stderr holds every one of parts.
func (c *client) waitForLog(t *testing.T, parts ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range parts {
		if !c.stderr.waitFor(p, time.Until(deadline)) {
			t.Fatalf("stderr never said %q", p)
		}
	}
}

// TestCatalogFlagErrors: bad catalog flags stop the command with a message
// that names the flag.
func TestCatalogFlagErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"origin pattern without a scheme", []string{"--allow-origin", "example.com"}, `--allow-origin "example.com": an origin pattern looks like https://*.example.com`},
		{"origin pattern with a path", []string{"--deny-origin", "https://a.example/x"}, `--deny-origin "https://a.example/x": an origin has no path`},
		{"name length over 128", []string{"--max-name-length", "129"}, "--max-name-length 129: WebMCP tool names are at most 128 characters"},
		{"no calls in flight", []string{"--max-inflight-per-tab", "0"}, "--max-inflight-per-tab 0: must be at least 1"},
		{"negative cache TTL", []string{"--cache-ttl", "-1h"}, "--cache-ttl -1h0m0s: must be positive"},
		{"a list cap below the own tools", []string{"--max-listed-tools", "5"}, "--max-listed-tools 5: must be 0 (no cap) or at least 7: the server's own 7 webmcp_* tools are always listed and count against the cap (3 with --no-tab-tools)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(binary, append([]string{"launch", "--headless"}, tt.args...)...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				t.Errorf("exit: %v, want status 1; stderr: %s", err, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr lacks %q: %s", tt.want, stderr.String())
			}
		})
	}
}

// TestDeniedOriginNeverEnters: with --deny-origin matching the fixtures'
// origin, the page's tools never reach the client, and the log says why.
func TestDeniedOriginNeverEnters(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	c := start(t, "launch", "--headless", "--deny-origin", "http://127.0.0.1:*", base+"/notes/")
	c.waitForLog(t, "ignoring the tools of a denied origin")
	for n := range c.tools() {
		if !strings.HasPrefix(n, "webmcp_") {
			t.Errorf("a tool of a denied origin is listed: %s", n)
		}
	}
}
