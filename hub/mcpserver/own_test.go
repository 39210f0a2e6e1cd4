package mcpserver_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// ownBudget is the most bytes of tools/list JSON the server's own tools
// may take together (issue 19).
const ownBudget = 2048

// TestOwnToolsAreSmall: the server's own tools, as a client reads them,
// take at most ownBudget bytes, with no prefix, _meta or outputSchema, and
// every one keeps its arguments.
func TestOwnToolsAreSmall(t *testing.T) {
	e := start(t, &fakeTabs{})
	total := 0
	own := 0
	for name, tl := range e.list(t) {
		if !strings.HasPrefix(name, "webmcp_") {
			continue
		}
		own++
		raw, err := json.Marshal(tl)
		if err != nil {
			t.Fatal(err)
		}
		total += len(raw)
		if strings.Contains(tl.Description, "[webmcp-cdp]") || tl.Meta != nil || tl.OutputSchema != nil {
			t.Errorf("%s carries what a model does not need: %s", name, raw)
		}
		if len(tl.Description) > 200 {
			t.Errorf("%s: a %d-byte description", name, len(tl.Description))
		}
	}
	total += own + 1 // the commas and brackets of the list
	t.Logf("%d own tools in %d bytes", own, total)
	if own != len(ownTools)+len(tabTools)+1 || total > ownBudget {
		t.Errorf("%d own tools take %d bytes, want %d tools in at most %d", own, total, len(ownTools)+len(tabTools)+1, ownBudget)
	}
	// Arguments still work as before: the tab tools validate theirs.
	if r := e.call(t, "webmcp_activate_tab", map[string]any{"tab": "one"}); !r.IsError {
		t.Errorf("webmcp_activate_tab with a string tab: %+v, want an error", r)
	}
}

// TestUnknownToolsTeach: a call of a tool that does not exist, in the
// pages' namespace or the server's own, is an error result that says to
// call webmcp_list_tools and names the closest tools.
func TestUnknownToolsTeach(t *testing.T) {
	e := start(t, nil)
	e.hub.Update(mkDoc("a", "A"), []core.Tool{{Name: "view_cart", Description: "Show the cart."}}, nil)
	tests := []struct {
		name string
		want []string
	}{
		{"no_such_tool", []string{`"no_such_tool"`, "navigated away", "webmcp_list_tools"}},
		{site + "_view_carts", []string{"webmcp_list_tools", "closest names: " + site + "_view_cart"}},
		{"webmcp_no_such_tool", []string{`"webmcp_no_such_tool"`, "webmcp_list_tools"}},
		{"webmcp_cdp_toolset_dispatch", []string{"webmcp_list_tools"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.call(t, tt.name, map[string]any{})
			got := textOf(t, r)
			for _, w := range tt.want {
				if !r.IsError || !strings.Contains(got, w) {
					t.Errorf("result %v %q, want an error with %q", r.IsError, got, w)
				}
			}
		})
	}
}

// listEnv has two tabs: tab 1 with a and both (a tool tab 2 also has),
// tab 2 with b and both; plus a cached tool.
func listEnv(t *testing.T, p mcpserver.ListPolicy) *env {
	t.Helper()
	e := startOpts(t, &fakeTabs{}, mcpserver.Options{List: p})
	e.hub.TabOpened("ID-A", origin+"/a", "A")
	e.hub.Update(mkDoc("a", "ID-A"), []core.Tool{{Name: "a", Description: "tool a"}, {Name: "both", Description: "in both tabs"}}, nil)
	e.hub.TabOpened("ID-B", origin+"/b", "B")
	e.hub.Update(mkDoc("b", "ID-B"), []core.Tool{{Name: "b", Description: "tool b"}, {Name: "both", Description: "in both tabs"}}, nil)
	return e
}

// waitPageTools waits until the listed page tools are want.
func (e *env) waitPageTools(t *testing.T, want ...string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("page tools %q", want), func() (bool, string) {
		got := pageNames(e.list(t))
		return slices.Equal(got, want), fmt.Sprintf("listed %q", got)
	})
}

// TestListActive: with --list active, tools/list holds the active tab's
// page tools (each once); with no tab made active, a call into another tab
// makes it the one listed, with list_changed; activating another tab sends
// list_changed and lists its tools, and the others stay callable and
// searchable.
func TestListActive(t *testing.T) {
	e := listEnv(t, mcpserver.ListPolicy{Mode: mcpserver.ListActive})
	drain := func() {
		for len(e.changedC) > 0 {
			<-e.changedC
		}
	}
	waitChanged := func(after string) {
		t.Helper()
		select {
		case <-e.changedC:
		case <-time.After(5 * time.Second):
			t.Fatalf("no list_changed after %s", after)
		}
	}
	// No tab made active yet: the most recently used (the last opened).
	e.waitPageTools(t, site+"_b", site+"_both")
	drain()
	// A call of tab 1's unlisted tool makes tab 1 the most recently used.
	if r := e.call(t, site+"_a", map[string]any{}); r.IsError {
		t.Fatalf("calling the unlisted %s_a: %s", site, textOf(t, r))
	}
	waitChanged("a call into tab 1")
	// Site-level "both" still goes to tab 2 (no tab is active): tab 1's is
	// its tab-level name.
	e.waitPageTools(t, site+"_a", site+"_tab1_both")
	// And one into tab 2 brings its tools back.
	drain()
	if r := e.call(t, site+"_b", map[string]any{}); r.IsError {
		t.Fatalf("calling the unlisted %s_b: %s", site, textOf(t, r))
	}
	waitChanged("a call into tab 2")
	e.waitPageTools(t, site+"_b", site+"_both")

	drain()
	if r := e.call(t, "webmcp_activate_tab", map[string]any{"tab": 1}); r.IsError {
		t.Fatalf("webmcp_activate_tab: %s", textOf(t, r))
	}
	waitChanged("webmcp_activate_tab")
	e.waitPageTools(t, site+"_a", site+"_both")
	// Tab 2's tool is not listed, and still answers by its name.
	if r := e.call(t, site+"_b", map[string]any{}); r.IsError {
		t.Errorf("calling the unlisted %s_b: %s", site, textOf(t, r))
	}
	var out struct {
		Tools []struct{ Name string } `json:"tools"`
		Note  string                  `json:"note"`
	}
	decode(t, e.call(t, "webmcp_list_tools", map[string]any{"query": "b"}).StructuredContent, &out)
	if len(out.Tools) == 0 || out.Tools[0].Name != site+"_b" || !strings.Contains(out.Note, "not in your tool list (--list active)") {
		t.Errorf("webmcp_list_tools query b = %+v, want %s_b first and a note on the unlisted tools", out, site)
	}
}

// TestMaxListedTools: --max-listed-tools keeps tools/list, own tools
// included, under the cap: the active tab's tools first.
func TestMaxListedTools(t *testing.T) {
	own := len(ownTools) + len(tabTools) + 1
	e := listEnv(t, mcpserver.ListPolicy{Mode: mcpserver.ListAll, Max: own + 2})
	e.call(t, "webmcp_activate_tab", map[string]any{"tab": 1})
	e.waitPageTools(t, site+"_a", site+"_both")
	if n := len(e.list(t)); n != own+2 {
		t.Errorf("%d tools listed, want %d", n, own+2)
	}
}

// TestParseListPolicy: the flags' values, and a cap below the server's own
// tools refused with the minimum named.
func TestParseListPolicy(t *testing.T) {
	own := mcpserver.OwnToolCount(true)
	tests := []struct {
		mode    string
		max     int
		own     int
		want    mcpserver.ListPolicy
		wantErr string
	}{
		{"all", 0, own, mcpserver.ListPolicy{Mode: mcpserver.ListAll}, ""},
		{"active", 40, own, mcpserver.ListPolicy{Mode: mcpserver.ListActive, Max: 40}, ""},
		{"active+cached", 0, own, mcpserver.ListPolicy{Mode: mcpserver.ListActive, Cached: true}, ""},
		{"all", own, own, mcpserver.ListPolicy{Mode: mcpserver.ListAll, Max: own}, ""},
		{"some", 0, own, mcpserver.ListPolicy{}, "want all, active or active+cached"},
		{"all", -1, own, mcpserver.ListPolicy{}, "must be 0 (no cap) or at least 7"},
		{"all", 5, own, mcpserver.ListPolicy{}, "--max-listed-tools 5: must be 0 (no cap) or at least 7: the server's own 7 webmcp_* tools are always listed and count against the cap (3 with --no-tab-tools)"},
		{"all", 5, mcpserver.OwnToolCount(false), mcpserver.ListPolicy{Mode: mcpserver.ListAll, Max: 5}, ""},
		{"all", 2, mcpserver.OwnToolCount(false), mcpserver.ListPolicy{}, "at least 3: the server's own 3 webmcp_* tools are always listed and count against the cap"},
	}
	for _, tt := range tests {
		got, err := mcpserver.ParseListPolicy(tt.mode, tt.max, tt.own)
		switch {
		case tt.wantErr == "" && (err != nil || got != tt.want):
			t.Errorf("ParseListPolicy(%q, %d, %d) = %+v, %v; want %+v", tt.mode, tt.max, tt.own, got, err, tt.want)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ParseListPolicy(%q, %d, %d) = %v; want an error with %q", tt.mode, tt.max, tt.own, err, tt.wantErr)
		}
	}
	if own != len(ownTools)+len(tabTools)+1 {
		t.Errorf("OwnToolCount(true) = %d, want %d", own, len(ownTools)+len(tabTools)+1)
	}
}

// TestTagStaysShort: a tool in many tabs is tagged with their count (the
// numbers are in _meta), in few tabs with their numbers.
func TestTagStaysShort(t *testing.T) {
	tests := []struct {
		p    core.Provenance
		want string
	}{
		{core.Provenance{Site: "s", Tab: 2, Holders: 1, Active: true}, "[s · tab 2 · active]"},
		{core.Provenance{Site: "s", Tab: 2, Holders: 2, Tabs: []int{1, 2}}, "[s · tabs 1, 2 · goes to tab 2 (latest)]"},
		{core.Provenance{Site: "s", Tab: 7, Holders: 9, Tabs: []int{1, 2, 3, 4, 5, 6, 7, 8, 9}, Active: true}, "[s · 9 tabs · goes to tab 7 (active)]"},
		{core.Provenance{Site: "s", Cached: true}, "[s · cached]"},
	}
	for _, tt := range tests {
		if got := mcpserver.Tag(tt.p); got != tt.want {
			t.Errorf("Tag(%+v) = %q, want %q", tt.p, got, tt.want)
		}
	}
}

// loadError is an error with LoadFailure, as cdp.LoadError.
type loadError struct{ text string }

func (e *loadError) Error() string       { return "navigating tab ERR: the page could not load: " + e.text }
func (e *loadError) LoadFailure() string { return e.text }

// TestOpenTabLoadFails: a page that could not load has its tab closed, and
// webmcp_open_tab's error says why (as the browser put it) and what to do.
func TestOpenTabLoadFails(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		why  string
	}{
		{"a load error", &loadError{"net::ERR_CONNECTION_REFUSED"}, "net::ERR_CONNECTION_REFUSED"},
		{"another error with the tab", errors.New("the tab crashed"), "opening: the tab crashed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tabs := &fakeTabs{loadErr: fmt.Errorf("opening: %w", tt.err)}
			e := start(t, tabs)
			r := e.call(t, "webmcp_open_tab", map[string]any{"url": "http://127.0.0.1:9/"})
			want := "the page http://127.0.0.1:9/ could not load (" + tt.why + "), so its tab was closed; check the URL and that the site is up, then call webmcp_open_tab again"
			if got := textOf(t, r); !r.IsError || got != want {
				t.Errorf("webmcp_open_tab = %v %q, want an error %q", r.IsError, got, want)
			}
			if ops := tabs.snapshot(); !reflect.DeepEqual(ops, []string{"open http://127.0.0.1:9/", "close ERR"}) {
				t.Errorf("the browser was asked %q, want the open and the close of its tab", ops)
			}
		})
	}
}
