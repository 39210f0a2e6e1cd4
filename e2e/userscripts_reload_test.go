package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// reloadScript is a userscript named name, on the legacy order page, that
// registers one tool.
func reloadScript(name, tool string) string {
	return fmt.Sprintf(`// ==UserScript==
// @name    %s
// @match   http://127.0.0.1:*/legacy/*
// @grant   none
// ==/UserScript==
document.modelContext.registerTool({
  name: %q,
  description: "A tool of the userscript %s.",
  inputSchema: { type: "object", properties: {} },
  execute: async () => %q,
});
`, name, tool, name, name)
}

// userscriptsSection returns the status page's Userscripts table.
func userscriptsSection(t *testing.T, status string) string {
	t.Helper()
	page := get(t, status, nil)
	i := strings.Index(page, `id="userscripts"`)
	if i < 0 {
		t.Fatalf("the status page has no Userscripts table:\n%s", page)
	}
	return page[i : i+strings.Index(page[i:], "</table>")]
}

// TestUserscriptsReload (issue 42): with --userscript DIR, SIGHUP reads the
// directory again instead of ending the session. A changed script, a new
// one and a removed one take effect in the documents loaded from then on
// (the tab reloaded lists the new tools, with list_changed, and no longer
// the removed script's); a file broken at the next SIGHUP is logged with
// its name and why, and the scripts in force stay. The status page lists
// each script in force with its file, patterns and the documents it ran
// in, also one that registered nothing. On both backends.
func TestUserscriptsReload(t *testing.T) {
	t.Parallel()
	for _, tc := range userscriptBackends {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testUserscriptsReload(t, tc.args)
		})
	}
}

// testUserscriptsReload is TestUserscriptsReload on the backend args
// choose.
func testUserscriptsReload(t *testing.T, backend []string) {
	base := serveFixtures(t)
	dir := t.TempDir()
	write := func(file, src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, file), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.user.js", reloadScript("Reload A", "reload_one"))
	write("b.user.js", reloadScript("Reload B", "reload_two"))
	write("quiet.user.js", "// ==UserScript==\n// @name Quiet\n// @match https://elsewhere.example/*\n// ==/UserScript==\n")
	args := append(append([]string{"launch", "--headless", "--http", "127.0.0.1:0", "--userscript", dir}, backend...), base+"/legacy/")
	endpoint, logs, pid := startHTTPProc(t, nil, args...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("webmcp-cdp stderr:\n%s", logs.String())
		}
	})
	status := strings.TrimSuffix(endpoint, "/mcp") + "/"
	c := httpClient(t, endpoint, "")
	c.waitFor("the first scripts' tools", func(m map[string]*mcp.Tool) bool {
		return hasSuffix("reload_one", 1)(m) && hasSuffix("reload_two", 1)(m)
	})
	sec := userscriptsSection(t, status)
	for _, want := range []string{"<code>Reload A</code>", filepath.Join(dir, "a.user.js"), "<code>http://127.0.0.1:*/legacy/*</code>", "1 document<br><code>" + base + "/legacy/</code>",
		"<code>Quiet</code>", "<code>https://elsewhere.example/*</code>", "none yet"} {
		if !strings.Contains(sec, want) {
			t.Errorf("the status page's Userscripts table lacks %q:\n%s", want, sec)
		}
	}

	hangup := func(what string, lines int) {
		t.Helper()
		if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		if !logs.waitForN("userscripts read again (SIGHUP)", lines, 20*time.Second) {
			t.Fatalf("no reload logged after SIGHUP (%s)", what)
		}
	}
	reloadTab := func() {
		t.Helper()
		c.drainChanges()
		c.callOK("webmcp_reload_tab", map[string]any{"tab": 1})
		c.waitChange("the tab reloaded")
	}

	// A changed, C added, B removed.
	write("a.user.js", reloadScript("Reload A", "reload_three"))
	write("c.user.js", reloadScript("Reload C", "reload_four"))
	os.Remove(filepath.Join(dir, "b.user.js"))
	hangup("a change", 1)
	if !logs.waitFor("userscripts in place", 20*time.Second) {
		t.Fatal("the new scripts were not put in place")
	}
	if log := logs.String(); !strings.Contains(log, "loaded=3 added=1 changed=1 removed=1 refused=0") {
		t.Errorf("the reload's line lacks its counts:\n%s", log)
	}
	reloadTab()
	c.waitFor("the new scripts' tools alone", func(m map[string]*mcp.Tool) bool {
		return hasSuffix("reload_three", 1)(m) && hasSuffix("reload_four", 1)(m) && !hasSuffix("reload_one", 1)(m) && !hasSuffix("reload_two", 1)(m)
	})
	sec = userscriptsSection(t, status)
	if !strings.Contains(sec, "<code>Reload C</code>") || strings.Contains(sec, "Reload B") {
		t.Errorf("after the reload the Userscripts table should list C and not B:\n%s", sec)
	}

	// A broken: refused, named, and the scripts in force stay.
	write("a.user.js", "console.log('the header is gone');\n")
	hangup("a broken file", 2)
	if log := logs.String(); !strings.Contains(log, "loaded=3 added=0 changed=0 removed=0 refused=1") ||
		!strings.Contains(log, "a userscript read again is refused") || !strings.Contains(log, filepath.Join(dir, "a.user.js")+" is not a userscript") {
		t.Errorf("the broken file is not logged with its name and why:\n%s", log)
	}
	reloadTab()
	tools := c.waitFor("the scripts in force after the broken reload", func(m map[string]*mcp.Tool) bool {
		return hasSuffix("reload_three", 1)(m) && hasSuffix("reload_four", 1)(m)
	})
	if got := c.callOK(toolWithSuffix(tools, "reload_three")[0], map[string]any{}); got != "Reload A" {
		t.Errorf("Reload A's tool answers %q after the broken reload", got)
	}
}
