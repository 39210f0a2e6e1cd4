package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/bench"
)

// The agent surface (issue 19): what a model meets in tools/list, tool
// search, and --list active, through the real binary, Chromium and the
// go-sdk client. The pages are the shop (cart tools, on 127.0.0.1) and the
// weather widget (chart tools, on localhost: another site).

// startLogged is start with the client's transport logged into a recorder,
// so that a test can measure tools/list as it came over the wire.
func startLogged(t *testing.T, args ...string) (*client, *bench.ListRecorder) {
	t.Helper()
	c := &client{t: t, stderr: &syncBuffer{}, changes: make(chan struct{}, 1000)}
	c.cmd = exec.Command(binary, args...)
	c.cmd.Stderr = c.stderr
	log := &bench.ListRecorder{}
	cl := mcp.NewClient(&mcp.Implementation{Name: "e2e-agent", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case c.changes <- struct{}{}:
			default:
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := cl.Connect(ctx, &mcp.LoggingTransport{Transport: &mcp.CommandTransport{Command: c.cmd}, Writer: log}, nil)
	if err != nil {
		t.Fatalf("connecting to webmcp-cdp %v: %v\nstderr:\n%s", args, err, c.stderr.String())
	}
	c.cs = cs
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("webmcp-cdp stderr:\n%s", c.stderr.String())
		}
	})
	return c, log
}

// shopAndWidget serves the fixtures and returns the shop's and the
// widget's URLs, on two sites.
func shopAndWidget(t *testing.T) (shop, widget string) {
	base := serveFixtures(t)
	return base + "/shop/", strings.Replace(base, "127.0.0.1", "localhost", 1) + "/widget/"
}

// searchResult is webmcp_list_tools's structured answer.
type searchResult struct {
	Tools []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"inputSchema"`
	} `json:"tools"`
	More int    `json:"more"`
	Note string `json:"note"`
}

// search calls webmcp_list_tools with args.
func (c *client) search(args map[string]any) searchResult {
	c.t.Helper()
	res := c.call("webmcp_list_tools", args)
	if res.IsError {
		c.t.Fatalf("webmcp_list_tools %v: %s", args, text(res))
	}
	var out searchResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		c.t.Fatalf("webmcp_list_tools gave %s: %v", b, err)
	}
	return out
}

// TestAgentSurface: the server's own tools take at most 2 KB of the
// tools/list a real client reads, page tools keep their provenance, and a
// search for "cart" finds the shop's cart tools, not the widget's chart
// tools, callable through webmcp_call.
func TestAgentSurface(t *testing.T) {
	t.Parallel()
	shop, widget := shopAndWidget(t)
	c, log := startLogged(t, "launch", "--headless", "--state-dir", "", shop, widget)
	tools := c.waitFor("the shop's and the widget's tools", func(m map[string]*mcp.Tool) bool {
		return len(toolWithSuffix(m, "view_cart")) == 1 && len(toolWithSuffix(m, "update_chart")) == 1
	})
	viewCart, chart := toolWithSuffix(tools, "view_cart")[0], toolWithSuffix(tools, "update_chart")[0]
	shopSite := strings.TrimSuffix(viewCart, "_view_cart")

	t.Run("own tools in 2 KB", func(t *testing.T) {
		pages := log.Pages()
		if len(pages) == 0 {
			t.Fatal("the client read no tools/list")
		}
		own, all, n, err := bench.ListBytes(pages[len(pages)-1])
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("tools/list: own tools %d B, whole list %d B, %d tools", own, all, n)
		if own == 0 || own > 2048 {
			t.Errorf("the own tools take %d bytes of tools/list, want at most 2048", own)
		}
		for name, tl := range tools {
			if strings.HasPrefix(name, "webmcp_") {
				if tl.Meta != nil || tl.OutputSchema != nil || strings.Contains(tl.Description, "[webmcp-cdp]") {
					t.Errorf("own tool %s carries _meta, an outputSchema or a prefix: %+v", name, tl)
				}
				continue
			}
			// Page tools keep their provenance: _meta and the origin/tab tag.
			src := source(t, tl)
			if src["origin"] == "" || !strings.HasPrefix(tl.Description, "[") || !strings.Contains(tl.Description, "tab ") {
				t.Errorf("page tool %s lost its provenance: %q %v", name, tl.Description, src)
			}
		}
	})

	t.Run("search cart", func(t *testing.T) {
		got := c.search(map[string]any{"query": "cart"})
		var names []string
		for _, tl := range got.Tools {
			names = append(names, tl.Name)
			if !strings.HasPrefix(tl.Name, shopSite+"_") {
				t.Errorf("a search for cart found %s, not a shop tool", tl.Name)
			}
		}
		want := []string{shopSite + "_add_to_cart", shopSite + "_remove_from_cart", shopSite + "_view_cart"}
		if len(names) < 3 || !slices.Equal(sortedCopy(names[:3]), want) {
			t.Errorf("a search for cart found %q, want the shop's cart tools %q first", names, want)
		}
		if slices.Contains(names, chart) {
			t.Errorf("a search for cart found the widget's %s", chart)
		}
		// Several words, with schemas.
		got = c.search(map[string]any{"query": "add item to cart", "schema": true, "limit": 1})
		if len(got.Tools) != 1 || got.Tools[0].Name != shopSite+"_add_to_cart" || got.Tools[0].InputSchema == nil || got.More == 0 {
			t.Errorf("add item to cart (limit 1, schema) = %+v, want add_to_cart with its schema and more", got)
		}
		// What the search found is called through webmcp_call.
		res := c.call("webmcp_call", map[string]any{"name": shopSite + "_add_to_cart", "arguments": map[string]any{"product": "tea", "quantity": 2}})
		if res.IsError || !strings.Contains(text(res), `"qty":2`) {
			t.Errorf("webmcp_call add_to_cart = %v %s", res.IsError, text(res))
		}
	})
}

// TestAgentListActive: with --list active, tools/list holds one tab's
// page tools; the unlisted tab's tools still answer by name and through
// search, and a call of one (no tab made active yet) switches the list to
// its tab, as webmcp_activate_tab switches it back (each with
// list_changed).
func TestAgentListActive(t *testing.T) {
	t.Parallel()
	shop, widget := shopAndWidget(t)
	c := start(t, "launch", "--headless", "--list", "active", shop, widget)
	// Which tab comes first is the most recently used one: either.
	pageTools := func(m map[string]*mcp.Tool) (sites map[string]int) {
		sites = map[string]int{}
		for name := range m {
			if !strings.HasPrefix(name, "webmcp_") {
				sites[siteOf(name)]++
			}
		}
		return sites
	}
	oneTab := func(m map[string]*mcp.Tool) bool {
		sites := pageTools(m)
		for _, n := range sites {
			return len(sites) == 1 && (n == 5 && len(toolWithSuffix(m, "view_cart")) == 1 || n == 4 && len(toolWithSuffix(m, "update_chart")) == 1)
		}
		return false
	}
	// Both pages must have registered first: until then the list may
	// follow the one that did.
	c.waitTabsWithTools(2)
	tools := c.waitFor("one tab's tools alone", oneTab)
	first := "shop"
	if len(toolWithSuffix(tools, "update_chart")) == 1 {
		first = "widget"
	}
	other := map[string]string{"shop": "widget", "widget": "shop"}[first]
	// The other tab's tools are found by search and answer by name.
	probe := map[string][2]string{"shop": {"view cart", "_view_cart"}, "widget": {"forecast chart", "_update_chart"}}[other]
	query, want := probe[0], probe[1]
	hidden := c.search(map[string]any{"query": query})
	if len(hidden.Tools) == 0 || !strings.HasSuffix(hidden.Tools[0].Name, want) || !strings.Contains(hidden.Note, "not in your tool list") {
		t.Fatalf("webmcp_list_tools %q = %+v, want the %s's %s first and a note on unlisted tools", query, hidden, other, want)
	}
	unlisted := hidden.Tools[0].Name
	if tools[unlisted] != nil {
		t.Fatalf("%s is listed with the %s's tab active", unlisted, first)
	}
	firstTools := pageNamesOf(tools)
	// A call of it by name works, and (no tab was made active) makes its
	// tab the most recently used: the list switches to that tab's tools,
	// with list_changed.
	c.drainChanges()
	if res := c.call(unlisted, map[string]any{}); res.IsError {
		t.Errorf("the unlisted %s: %s", unlisted, text(res))
	}
	c.waitChange("a call into the " + other + "'s tab")
	c.waitFor("the "+other+"'s tools alone after a call", func(m map[string]*mcp.Tool) bool { return m[unlisted] != nil && oneTab(m) })

	// webmcp_activate_tab brings the first tab's tools back.
	c.drainChanges()
	c.callOK("webmcp_activate_tab", map[string]any{"tab": c.tabOf(first)})
	c.waitChange("webmcp_activate_tab")
	tools = c.waitFor("the "+first+"'s tools alone", func(m map[string]*mcp.Tool) bool { return oneTab(m) && slices.Equal(pageNamesOf(m), firstTools) })
	if n := len(pageTools(tools)); n != 1 {
		t.Errorf("after webmcp_activate_tab, page tools of %d sites are listed: %v", n, names(tools))
	}
}

// tabOf is the number of the tab whose URL ends in /page/.
func (c *client) tabOf(page string) int {
	c.t.Helper()
	for _, tab := range c.tabs() {
		if strings.HasSuffix(tab.URL, "/"+page+"/") {
			return tab.Tab
		}
	}
	c.t.Fatalf("no %s tab in %+v", page, c.tabs())
	return 0
}

// pageNamesOf is the sorted names of the page tools in m.
func pageNamesOf(m map[string]*mcp.Tool) []string {
	var out []string
	for name := range m {
		if !strings.HasPrefix(name, "webmcp_") {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// waitTabsWithTools waits until n open tabs have tools, and returns each
// tab's tool names by the last path segment of its URL ("shop").
func (c *client) waitTabsWithTools(n int) map[string][]string {
	c.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		byPage := map[string][]string{}
		for _, tab := range c.tabs() {
			if len(tab.Tools) > 0 {
				byPage[path.Base(strings.TrimSuffix(tab.URL, "/"))] = tab.Tools
			}
		}
		if len(byPage) == n {
			return byPage
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%d tabs did not all get their tools: %+v", n, c.tabs())
		}
		// Poll interval: webmcp_list_tabs has no push, and a tab's tools
		// can come with no list_changed (over --max-listed-tools).
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAgentMaxListedTools: --max-listed-tools keeps tools/list, the own
// tools included, at the cap over three tabs: the active tab's tools
// first, then those of the most recently used tab (a call moves its tab
// up, with list_changed); webmcp_list_tools says that more tools exist and
// finds them, and they answer by name.
func TestAgentMaxListedTools(t *testing.T) {
	t.Parallel()
	shop, widget := shopAndWidget(t)
	notes := strings.TrimSuffix(shop, "/shop/") + "/notes/"
	// 7 own tools, the widget's 4 and one other tab's 5 (shop or notes).
	const limit = 7 + 4 + 5
	c := start(t, "launch", "--headless", "--max-listed-tools", strconv.Itoa(limit), shop, widget, notes)
	byPage := c.waitTabsWithTools(3)
	if len(byPage["shop"]) != 5 || len(byPage["widget"]) != 4 || len(byPage["notes"]) != 5 {
		t.Fatalf("tools by page %v, want the shop's 5, the widget's 4 and the notes' 5", byPage)
	}
	listedAre := func(pages ...string) func(map[string]*mcp.Tool) bool {
		var want []string
		for _, p := range pages {
			want = append(want, byPage[p]...)
		}
		slices.Sort(want)
		return func(m map[string]*mcp.Tool) bool { return len(m) == limit && slices.Equal(pageNamesOf(m), want) }
	}
	viewCart := byPage["shop"][slices.IndexFunc(byPage["shop"], func(n string) bool { return strings.HasSuffix(n, "_view_cart") })]
	listNotes := byPage["notes"][slices.IndexFunc(byPage["notes"], func(n string) bool { return strings.HasSuffix(n, "_list_notes") })]

	// The shop used last, then the widget made active: the widget's tools,
	// then the shop's.
	c.callOK(viewCart, map[string]any{})
	c.drainChanges()
	c.callOK("webmcp_activate_tab", map[string]any{"tab": c.tabOf("widget")})
	c.waitChange("webmcp_activate_tab")
	tools := c.waitFor("the widget's and the shop's tools", listedAre("widget", "shop"))
	for _, name := range byPage["notes"] {
		if tools[name] != nil {
			t.Errorf("the notes' %s is listed over the cap", name)
		}
	}

	// webmcp_list_tools says that more exist, and finds them.
	got := c.search(map[string]any{"query": "notes"})
	wantNote := "5 page tools are not in your tool list (--list all --max-listed-tools " + strconv.Itoa(limit) + ")"
	if !strings.Contains(got.Note, wantNote) || !strings.Contains(got.Note, "webmcp_call") {
		t.Errorf("webmcp_list_tools note %q, want %q and how to call them", got.Note, wantNote)
	}
	found := false
	for _, tl := range got.Tools {
		found = found || tl.Name == listNotes
	}
	if !found {
		t.Errorf("webmcp_list_tools notes = %+v, want the unlisted %s", got.Tools, listNotes)
	}

	// A call of an unlisted notes tool by its name works, and makes the
	// notes tab the most recently used: its tools take the shop's place
	// behind the active widget's.
	c.drainChanges()
	c.callOK(listNotes, map[string]any{})
	c.waitChange("a call into the notes tab")
	c.waitFor("the widget's and the notes' tools", listedAre("widget", "notes"))
}

// siteOf is the site part of a page tool's routed name: the shop's and the
// widget's tool names are known.
func siteOf(name string) string {
	for _, tool := range []string{"search_products", "add_to_cart", "remove_from_cart", "view_cart", "checkout",
		"get_forecast", "update_chart", "set_units", "open_full_forecast"} {
		if site, ok := strings.CutSuffix(name, "_"+tool); ok {
			return site
		}
	}
	return name
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
