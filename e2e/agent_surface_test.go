package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/internal/bench"
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
	shop, widget := shopAndWidget(t)
	c, log := startLogged(t, "launch", "--headless", shop, widget)
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
// page tools; webmcp_activate_tab switches it (with list_changed), and the
// other tab's tools still answer by name and through search.
func TestAgentListActive(t *testing.T) {
	shop, widget := shopAndWidget(t)
	c := start(t, "launch", "--headless", "--list", "active", shop, widget)
	// The start pages open in order: the widget's tab is the most recent.
	tools := c.waitFor("the widget's tools alone", func(m map[string]*mcp.Tool) bool {
		return len(toolWithSuffix(m, "update_chart")) == 1 && len(toolWithSuffix(m, "view_cart")) == 0
	})
	chart := toolWithSuffix(tools, "update_chart")[0]
	widgetSite := strings.TrimSuffix(chart, "_update_chart")
	for name := range tools {
		if !strings.HasPrefix(name, "webmcp_") && !strings.HasPrefix(name, widgetSite+"_") {
			t.Errorf("--list active lists %s, not the active tab's", name)
		}
	}
	shopTab := 0
	for _, tab := range c.tabs() {
		if strings.HasSuffix(tab.URL, "/shop/") {
			shopTab = tab.Tab
		}
	}
	if shopTab == 0 {
		t.Fatalf("no shop tab in %+v", c.tabs())
	}
	hidden := c.search(map[string]any{"query": "view cart"})
	if len(hidden.Tools) == 0 || !strings.HasSuffix(hidden.Tools[0].Name, "_view_cart") || !strings.Contains(hidden.Note, "not in your tool list") {
		t.Fatalf("webmcp_list_tools view cart = %+v, want the shop's view_cart and a note on unlisted tools", hidden)
	}
	viewCart := hidden.Tools[0].Name
	if got := c.callOK(viewCart, map[string]any{}); !strings.Contains(got, `"items"`) {
		t.Errorf("the unlisted %s = %s", viewCart, got)
	}

	c.drainChanges()
	c.callOK("webmcp_activate_tab", map[string]any{"tab": shopTab})
	c.waitChange("webmcp_activate_tab")
	tools = c.waitFor("the shop's tools alone", func(m map[string]*mcp.Tool) bool {
		return m[viewCart] != nil && len(toolWithSuffix(m, "update_chart")) == 0
	})
	page := 0
	for name := range tools {
		if !strings.HasPrefix(name, "webmcp_") {
			page++
		}
	}
	if page != 5 {
		t.Errorf("with the shop's tab active, %d page tools are listed, want the shop's 5: %v", page, names(tools))
	}
	// The widget's tool, now unlisted, still answers by its name.
	if got := c.callOK(chart, map[string]any{"style": "line"}); got != "chart drawn as line" {
		t.Errorf("the unlisted %s = %q", chart, got)
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
