package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// logBuffer collects a hub's log for tests that check what was logged.
type logBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{} // closed and replaced on each write (made on demand)
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wrote != nil {
		close(l.wrote)
		l.wrote = nil
	}
	return l.b.Write(p)
}

// waitFor waits until the log holds s, waking on each write; it fails the
// test if that takes longer than 5 s.
func (l *logBuffer) waitFor(t *testing.T, s string) {
	t.Helper()
	guard := time.NewTimer(5 * time.Second)
	defer guard.Stop()
	for {
		l.mu.Lock()
		if strings.Contains(l.b.String(), s) {
			l.mu.Unlock()
			return
		}
		if l.wrote == nil {
			l.wrote = make(chan struct{})
		}
		wrote := l.wrote
		l.mu.Unlock()
		select {
		case <-wrote:
		case <-guard.C:
			t.Fatalf("the log never said %q; log: %s", s, l.String())
		}
	}
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,48}$`)

// checkCatalog checks that every listed name is well formed, unique and
// outside the reserved prefix, and that each reaches the document and tool
// its _meta names.
func checkCatalog(t *testing.T, h *hub.Hub, b *fakeBrowser) {
	t.Helper()
	seen := map[string]bool{}
	for _, rt := range h.Tools() {
		if !validName.MatchString(rt.Name) {
			t.Errorf("%q is not 1-48 characters of [A-Za-z0-9_-]", rt.Name)
		}
		if strings.HasPrefix(strings.ToLower(rt.Name), hub.ReservedPrefix) {
			t.Errorf("%q takes the reserved prefix %s", rt.Name, hub.ReservedPrefix)
		}
		if seen[rt.Name] {
			t.Errorf("%q is listed twice", rt.Name)
		}
		seen[rt.Name] = true
		if rt.Source.Cached {
			continue
		}
		routedTo(t, h, b, rt.Name)
		got := b.last(t)
		if got.Tool != rt.Source.Tool {
			t.Errorf("%s ran tool %q, want %q", rt.Name, got.Tool, rt.Source.Tool)
		}
	}
}

// toolAt finds the listed tool whose _meta says it is tool of origin in tab
// (0: any tab) and whose name is site-level (shared false) or tab-level.
func toolAt(h *hub.Hub, origin, tool string, tab int, tabLevel bool) (hub.RoutedTool, bool) {
	for _, rt := range h.Tools() {
		if rt.Source.Origin != origin || rt.Source.Tool != tool {
			continue
		}
		isTab := strings.Contains(rt.Name, "_tab")
		if tab != 0 && rt.Source.Tab != tab {
			continue
		}
		if isTab == tabLevel || !tabLevel && rt.Source.Tabs != nil {
			return rt, true
		}
	}
	return hub.RoutedTool{}, false
}

func TestNameCollisions(t *testing.T) {
	type update struct {
		doc   core.Source
		tools []string
	}
	tests := []struct {
		name    string
		updates []update
		want    int // routed names
	}{
		{
			name: "a tool named like a tab-level name",
			updates: []update{
				{mkDoc("a", "A", origin), []string{"search", "tab1_search"}},
				{mkDoc("b", "B", origin), []string{"search"}},
			},
			want: 4, // search, tab1_search (the page's), and two tab-level search
		},
		{
			name: "the tab-level name came first",
			updates: []update{
				{mkDoc("a", "A", origin), []string{"search"}},
				{mkDoc("b", "B", origin), []string{"search"}},
				{mkDoc("c", "C", origin), []string{"tab1_search"}},
			},
			want: 4,
		},
		{
			name: "site and tool join the same way",
			updates: []update{
				{mkDoc("a", "A", "http://localhost"), []string{"8080_x"}},
				{mkDoc("b", "B", "http://localhost:8080"), []string{"x"}},
			},
			want: 2,
		},
		{
			name: "http and https of one host",
			updates: []update{
				{mkDoc("a", "A", "http://example.com"), []string{"pay"}},
				{mkDoc("b", "B", "https://example.com"), []string{"pay"}},
			},
			want: 2,
		},
		{
			name: "dots and underscores in tool names",
			updates: []update{
				{mkDoc("a", "A", origin), []string{"a.b", "a_b", "a-b"}},
			},
			want: 3,
		},
		{
			name: "long names cut to the same prefix",
			updates: []update{
				{mkDoc("a", "A", "https://a-very-long-subdomain-name.example.com"), []string{
					"create_calendar_event_with_reminders_1", "create_calendar_event_with_reminders_2",
				}},
				{mkDoc("b", "B", "https://a-very-long-subdomain-name.example.com"), []string{"create_calendar_event_with_reminders_1"}},
			},
			want: 4,
		},
		{
			name: "IPv6 hosts and ports",
			updates: []update{
				{mkDoc("a", "A", "http://[::1]:8080"), []string{"x"}},
				{mkDoc("b", "B", "http://[::1]"), []string{"8080_x"}},
				{mkDoc("c", "C", "http://127.0.0.1:8080"), []string{"x"}},
			},
			want: 3,
		},
		{
			name: "punycode and file pages",
			updates: []update{
				{mkDoc("a", "A", "https://xn--bcher-kva.example"), []string{"find"}},
				{mkDoc("b", "B", "file://"), []string{"find"}},
				{mkDoc("c", "C", "file://"), []string{"find"}},
			},
			want: 4,
		},
		{
			name: "a page that tries to take the server's own names",
			updates: []update{
				{mkDoc("a", "A", "http://webmcp"), []string{"call", "list_tabs"}},
				{mkDoc("b", "B", "http://WebMCP:80"), []string{"open_tab"}},
			},
			want: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeBrowser{}
			h := hub.New(b, hub.Options{})
			for _, u := range tt.updates {
				h.Update(u.doc, mkTools(u.tools...), nil)
			}
			if got := names(h); len(got) != tt.want {
				t.Errorf("names = %q, want %d of them", got, tt.want)
			}
			checkCatalog(t, h, b)
		})
	}
}

func TestNamesStayForATabsLife(t *testing.T) {
	b := &fakeBrowser{}
	h := hub.New(b, hub.Options{})
	h.Update(mkDoc("a1", "A", "http://localhost:8080"), mkTools("x", "search"), nil)
	h.Update(mkDoc("b1", "B", "http://localhost:8080"), mkTools("search"), nil)
	before := names(h)

	// Tab A reloads: its document goes, and in the moment before the new one
	// registers, another site registers a tool whose readable name is A's.
	h.DropDoc("a1")
	h.Update(mkDoc("c1", "C", "http://localhost"), mkTools("8080_x"), nil)
	h.Update(mkDoc("a2", "A", "http://localhost:8080"), mkTools("x", "search"), nil)

	after := map[string]bool{}
	for _, n := range names(h) {
		after[n] = true
	}
	for _, n := range before {
		if !after[n] {
			t.Errorf("%q went away although its tab lives: before %q, after %q", n, before, names(h))
		}
	}
	if !after["localhost_8080_x"] {
		t.Errorf("tab A's x lost its name: %q", names(h))
	}
	if rt, ok := toolAt(h, "http://localhost", "8080_x", 0, false); !ok || rt.Name == "localhost_8080_x" {
		t.Errorf("the newcomer's tool is listed as %q (found %v), want a name of its own", rt.Name, ok)
	}
	checkCatalog(t, h, b)
}

func TestProvenanceTags(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(h *hub.Hub)
		tool   string
		prefix string
	}{
		{"one tab", func(h *hub.Hub) {}, site + "_only_a", "[" + site + " · tab 1] "},
		{"one tab, active", func(h *hub.Hub) { h.SetActive("A") }, site + "_only_a", "[" + site + " · tab 1 · active] "},
		{"shared, latest", func(h *hub.Hub) {}, site + "_search", "[" + site + " · tabs 1, 2 · goes to tab 2 (latest)] "},
		{"shared, active", func(h *hub.Hub) { h.SetActive("A") }, site + "_search", "[" + site + " · tabs 1, 2 · goes to tab 1 (active)] "},
		{"tab level, active", func(h *hub.Hub) { h.SetActive("B") }, site + "_tab2_search", "[" + site + " · tab 2 · active] "},
		{"tab level, other tab active", func(h *hub.Hub) { h.SetActive("B") }, site + "_tab1_search", "[" + site + " · tab 1] "},
		{"two frames of one tab", func(h *hub.Hub) {
			h.Update(mkDoc("a-frame", "A", origin), mkTools("only_a"), nil)
		}, site + "_only_a", "[" + site + " · tab 1 (2 frames) · goes to the latest] "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hub.New(&fakeBrowser{}, hub.Options{})
			h.Update(mkDoc("a", "A", origin), mkTools("search", "only_a"), nil)
			h.Update(mkDoc("b", "B", origin), mkTools("search"), nil)
			tt.setup(h)
			for _, rt := range h.Tools() {
				if rt.Name == tt.tool {
					if !strings.HasPrefix(described(rt), tt.prefix) {
						t.Errorf("description %q, want the prefix %q", described(rt), tt.prefix)
					}
					return
				}
			}
			t.Errorf("%s is not listed: %q", tt.tool, names(h))
		})
	}
}

func TestSetActiveRebuildsTheListing(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{})
	h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
	h.Update(mkDoc("b", "B", origin), mkTools("search"), nil)
	changes, stop := h.Watch()
	defer stop()

	source := func() core.Provenance {
		for _, rt := range h.Tools() {
			if rt.Name == site+"_search" {
				return rt.Source
			}
		}
		t.Fatalf("%s_search is not listed", site)
		return core.Provenance{}
	}
	if got := source().Tab; got != 2 {
		t.Fatalf("before SetActive the site-level name goes to tab %v, want 2 (the latest)", got)
	}
	h.SetActive("A")
	if got := source(); got.Tab != 1 || !reflect.DeepEqual(got.Tabs, []int{1, 2}) {
		t.Errorf("after SetActive(A), _meta source = %v, want tab 1 of tabs [1 2]", got)
	}
	if !pending(changes) {
		t.Errorf("SetActive did not tell subscribers")
	}
	h.SetActive("A")
	if pending(changes) {
		t.Errorf("SetActive of the active tab told subscribers again")
	}
}

func TestToolsReturnsACopy(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{})
	h.Update(mkDoc("a", "A", origin), mkTools("x", "y"), nil)
	got := h.Tools()
	got[0].Name = "changed"
	got = append(got[:0], got[1:]...)
	if n := names(h); !reflect.DeepEqual(n, []string{site + "_x", site + "_y"}) {
		t.Errorf("changing the slice Tools returned changed the catalog: %q", n)
	}
}

// TestUpdateDuringCall re-registers a document's tools while a call into it
// runs; run with -race.
func TestUpdateDuringCall(t *testing.T) {
	release := make(chan struct{})
	b := &fakeBrowser{started: make(chan invocation, 1), respond: func(ctx context.Context, in invocation) (core.Result, error) {
		<-release
		return core.Result{Kind: "string", Value: "done"}, nil
	}}
	h := hub.New(b, hub.Options{})
	d := mkDoc("a", "A", origin)
	h.Update(d, mkTools("slow"), nil)
	done := make(chan string, 1)
	go func() { done <- text(t, h.Call(context.Background(), site+"_slow", json.RawMessage(`{}`))) }()
	<-b.started
	for i := range 50 {
		d.URL = origin + "/page" + string(rune('a'+i%26))
		h.Update(d, mkTools("slow", "other"), nil)
	}
	close(release)
	if got := <-done; got != "done" {
		t.Errorf("the call gave %q", got)
	}
}

func TestToolByName(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{})
	h.Update(mkDoc("a", "A", origin), mkTools("x", "y", "z"), nil)
	for _, name := range []string{site + "_x", site + "_y", site + "_z"} {
		if rt, ok := h.Tool(name); !ok || rt.Name != name {
			t.Errorf("Tool(%q) = %q, %v", name, rt.Name, ok)
		}
	}
	if _, ok := h.Tool(site + "_w"); ok {
		t.Error("Tool found a name that is not listed")
	}
}

// TestSharedToolsIsNeverWrittenInto: the listing SharedTools hands out
// stays as it was through every kind of change (a tool added, a second
// tab with the same tools, one gone), since the hub replaces its listing
// rather than writing into it.
func TestSharedToolsIsNeverWrittenInto(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{})
	h.Update(mkDoc("a", "T1", origin), mkTools("search", "open"), nil)
	for _, change := range []struct {
		name string
		do   func()
	}{
		{"a tool added", func() { h.Update(mkDoc("a", "T1", origin), mkTools("search", "open", "close"), nil) }},
		{"a second tab with the same tools", func() { h.Update(mkDoc("b", "T2", origin), mkTools("search", "open", "close"), nil) }},
		{"a tool gone", func() { h.Update(mkDoc("a", "T1", origin), mkTools("search"), nil) }},
	} {
		t.Run(change.name, func(t *testing.T) {
			shared := h.SharedTools()
			want := h.Tools()
			if !reflect.DeepEqual(shared, want) {
				t.Fatalf("SharedTools %v, Tools %v: not the same listing", shared, want)
			}
			change.do()
			if !reflect.DeepEqual(shared, want) {
				t.Errorf("the listing handed out changed under its reader:\nnow  %v\nwas  %v", shared, want)
			}
			if reflect.DeepEqual(h.Tools(), want) {
				t.Errorf("the change left the listing as it was: %v", want)
			}
		})
	}
}

// TestProvenanceNamesTheUserscript: a tool a userscript registered carries
// the script's name in its provenance, from the document a call goes to;
// the page's own tool carries none; the same tool registered by the page
// instead (a new document) lists anew without it.
func TestProvenanceNamesTheUserscript(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{})
	tools := mkTools("find_order", "own")
	tools[0].Userscript = "Legacy orders"
	h.Update(mkDoc("a", "A", origin), tools, nil)
	by := map[string]core.Provenance{}
	for _, rt := range h.Tools() {
		by[rt.Name] = rt.Source
	}
	if got := by[site+"_find_order"].Userscript; got != "Legacy orders" {
		t.Errorf("find_order's provenance names userscript %q, want \"Legacy orders\"", got)
	}
	if got := by[site+"_own"].Userscript; got != "" {
		t.Errorf("the page's own tool names userscript %q", got)
	}
	if b, _ := json.Marshal(by[site+"_find_order"]); !strings.Contains(string(b), `"userscript":"Legacy orders"`) {
		t.Errorf("the provenance's JSON lacks the userscript: %s", b)
	}
	if b, _ := json.Marshal(by[site+"_own"]); strings.Contains(string(b), "userscript") {
		t.Errorf("the page's own tool's provenance JSON names a userscript: %s", b)
	}
	h.Update(mkDoc("a2", "A", origin), mkTools("find_order"), nil)
	h.DropDoc("a")
	for _, rt := range h.Tools() {
		if rt.Name == site+"_find_order" && rt.Source.Userscript != "" {
			t.Errorf("after the page registered find_order itself, it still names userscript %q", rt.Source.Userscript)
		}
	}
}
