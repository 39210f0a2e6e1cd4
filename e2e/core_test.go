package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestNotesApp: the demo app's five tools appear with provenance and
// annotations, and add_note then list_notes round-trips through the page.
func TestNotesApp(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	c := start(t, "launch", "--headless", base+"/notes/")
	tools := c.waitFor("the notes tools", hasSuffix("get_stats", 1))
	for _, n := range []string{"add_note", "list_notes", "search_notes", "delete_note", "get_stats"} {
		if got := toolWithSuffix(tools, n); len(got) != 1 {
			t.Fatalf("want one tool ending in _%s, got %v", n, got)
		}
	}
	stats := tools[toolWithSuffix(tools, "get_stats")[0]]
	if stats.Annotations == nil || !stats.Annotations.ReadOnlyHint {
		t.Errorf("get_stats lost readOnlyHint: %+v", stats.Annotations)
	}
	src := source(t, stats)
	if src["tool"] != "get_stats" || src["backend"] != "polyfill" || !strings.HasPrefix(src["url"].(string), base) || src["origin"] != base || src["tab"] != float64(1) {
		t.Errorf("provenance of get_stats = %v", src)
	}
	if !strings.HasPrefix(stats.Name, "127_0_0_1_") {
		t.Errorf("name %q does not start with the site", stats.Name)
	}

	add := toolWithSuffix(tools, "add_note")[0]
	if got := c.callOK(add, map[string]any{"title": "e2e", "content": "round trip", "tag": "t"}); got != "Added note #1: e2e" {
		t.Errorf("add_note = %q", got)
	}
	var notes []map[string]any
	if err := json.Unmarshal([]byte(c.callOK(toolWithSuffix(tools, "list_notes")[0], map[string]any{})), &notes); err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || notes[0]["title"] != "e2e" || notes[0]["content"] != "round trip" {
		t.Errorf("list_notes = %v", notes)
	}
	// delete_note asks through agent.requestUserInteraction, whose callback
	// calls confirm(). This client cannot be asked (no elicitation), so by
	// default (--dialogs fail) the call is an error that says so.
	res := c.call(toolWithSuffix(tools, "delete_note")[0], map[string]any{"id": 1})
	if !res.IsError || !strings.Contains(text(res), "needed a person") {
		t.Errorf("delete_note = %v %q, want an error saying a dialog needed a person", res.IsError, text(res))
	}
	// A throw from the page is isError with the page's message.
	res = c.call(add, map[string]any{"title": " ", "content": "x"})
	if !res.IsError || !strings.Contains(text(res), "title must not be empty") {
		t.Errorf("add_note with an empty title = %v %q", res.IsError, text(res))
	}
}

// TestCurrentAPI covers document.modelContext pages on the polyfill and the
// native backend: results (string verbatim, object as JSON and
// structuredContent), a throwing tool, and a tool removed by its signal.
func TestCurrentAPI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		backend string
		args    []string
	}{
		{"polyfill", "polyfill", []string{"--backend", "polyfill"}},
		{"native", "native", []string{"--backend", "native", "--chrome-arg=--enable-features=WebMCP"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := serveFixtures(t)
			c := start(t, append(append([]string{"launch", "--headless"}, tc.args...), base+"/current/")...)
			tools := c.waitFor("the current-API tools", hasSuffix("slow", 1))
			echo := toolWithSuffix(tools, "echo")[0]
			if src := source(t, tools[echo]); src["backend"] != tc.backend {
				t.Errorf("backend = %v, want %s", src["backend"], tc.backend)
			}
			if got := c.callOK(echo, map[string]any{"text": `{"looks":"like json"} but is a string`}); got != `{"looks":"like json"} but is a string` {
				t.Errorf("echo = %q", got)
			}
			res := c.call(toolWithSuffix(tools, "add")[0], map[string]any{"a": 2, "b": 3})
			if res.IsError || text(res) != `{"sum":5}` {
				t.Errorf("add = %v %q", res.IsError, text(res))
			}
			if sc, ok := res.StructuredContent.(map[string]any); !ok || sc["sum"] != float64(5) {
				t.Errorf("add structuredContent = %v", res.StructuredContent)
			}
			res = c.call(toolWithSuffix(tools, "fail")[0], map[string]any{})
			if !res.IsError || !strings.Contains(text(res), "fail tool failed on purpose") {
				t.Errorf("fail = %v %q, want isError with the page's message", res.IsError, text(res))
			}
		})
	}
}

// TestTabsPopupsReloadClose: a second tab and a window.open popup get their
// tools; a reload drops and restores tools with list_changed; closing a tab
// removes its tools.
func TestTabsPopupsReloadClose(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	c := start(t, "launch", "--headless", base+"/popup/")
	tools := c.waitFor("opener tools", hasSuffix("opener_ping", 1))

	// A second tab of another page, opened through our tab tool.
	c.callOK("webmcp_open_tab", map[string]any{"url": base + "/notes/"})
	c.waitFor("the second tab's tools", hasSuffix("add_note", 1))

	// A popup opened by the page with window.open.
	c.drainChanges()
	if got := c.callOK(toolWithSuffix(tools, "open_popup")[0], map[string]any{}); got != "opened" {
		t.Fatalf("open_popup = %q", got)
	}
	tools = c.waitFor("the popup's tools", hasSuffix("popup_ping", 1))
	if got := c.callOK(toolWithSuffix(tools, "popup_ping")[0], map[string]any{}); got != "pong from popup" {
		t.Errorf("popup_ping = %q", got)
	}
	c.waitChange("the popup registered its tool")

	tabs := c.tabs()
	if len(tabs) != 3 {
		t.Fatalf("want 3 tabs (opener, notes, popup), got %+v", tabs)
	}
	notesTab := 0
	for _, tb := range tabs {
		if strings.HasSuffix(tb.URL, "/notes/") {
			notesTab = tb.Tab
		}
	}

	// Reload the notes tab: its tools go and come back, with list_changed.
	add := toolWithSuffix(tools, "add_note")[0]
	c.callOK(add, map[string]any{"title": "before reload", "content": "x"})
	c.drainChanges()
	c.callOK("webmcp_reload_tab", map[string]any{"tab": notesTab})
	c.waitChange("the reload")
	c.waitFor("the notes tools after the reload", hasSuffix("add_note", 1))
	// The page state is new: the reload really replaced the document.
	if got := c.callOK(toolWithSuffix(c.tools(), "list_notes")[0], map[string]any{}); got != "[]" {
		t.Errorf("list_notes after reload = %q, want []", got)
	}

	// Close the notes tab: its tools go away, the others stay.
	c.drainChanges()
	c.callOK("webmcp_close_tab", map[string]any{"tab": notesTab})
	c.waitChange("closing a tab")
	tools = c.waitFor("the notes tools to go", func(m map[string]*mcp.Tool) bool { return len(toolWithSuffix(m, "add_note")) == 0 })
	if len(toolWithSuffix(tools, "opener_ping")) != 1 || len(toolWithSuffix(tools, "popup_ping")) != 1 {
		t.Errorf("closing one tab removed other tabs' tools: %v", names(tools))
	}
	// A client with an old list reaches it through webmcp_call: a clear error.
	res := c.call("webmcp_call", map[string]any{"name": add, "arguments": map[string]any{"title": "after close", "content": "x"}})
	if !res.IsError || !strings.Contains(text(res), "no open page has a tool named") {
		t.Errorf("calling a closed tab's tool = %v %q, want a clear isError", res.IsError, text(res))
	}
}

// TestSameToolTwoTabs: two tabs of one site with the same tool get tab-level
// names and keep a site-level one; each tab-level name reaches its own tab.
func TestSameToolTwoTabs(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	c := start(t, "launch", "--headless", base+"/notes/", base+"/notes/")
	tools := c.waitFor("two tabs of notes tools", hasSuffix("add_note", 3))
	var tabNames []string
	for _, n := range toolWithSuffix(tools, "add_note") {
		if strings.Contains(n, "_tab") {
			tabNames = append(tabNames, n)
		}
	}
	if len(tabNames) != 2 {
		t.Fatalf("want two tab-level add_note names, got %v", toolWithSuffix(tools, "add_note"))
	}
	for i, n := range tabNames {
		c.callOK(n, map[string]any{"title": "tab note", "content": strings.Repeat("x", i+1)})
	}
	for i, n := range tabNames {
		list := strings.Replace(n, "add_note", "list_notes", 1)
		got := c.callOK(list, map[string]any{})
		if !strings.Contains(got, `"content":"`+strings.Repeat("x", i+1)+`"`) || strings.Count(got, `"id"`) != 1 {
			t.Errorf("%s = %s: the call went to the wrong tab", list, got)
		}
	}
}
