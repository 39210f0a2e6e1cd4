package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

const (
	origin = "http://127.0.0.1:8080"
	site   = "127_0_0_1_8080"
)

// ownTools are the server's own tools without Options.Tabs.
var ownTools = []string{"webmcp_call", "webmcp_list_tabs"}

// tabTools are the tools Options.Tabs adds.
var tabTools = []string{"webmcp_activate_tab", "webmcp_close_tab", "webmcp_open_tab", "webmcp_reload_tab"}

// ---- fakes --------------------------------------------------------------

type invocation struct {
	DocKey, Tool string
	Input        json.RawMessage
}

// fakeBrowser implements hub.Browser: it records calls and answers with a
// JSON object naming the document and tool and echoing the input.
type fakeBrowser struct {
	mu    sync.Mutex
	calls []invocation
}

func (b *fakeBrowser) Invoke(_ context.Context, docKey, tool string, input json.RawMessage) (core.Result, error) {
	b.mu.Lock()
	b.calls = append(b.calls, invocation{docKey, tool, append(json.RawMessage(nil), input...)})
	b.mu.Unlock()
	return core.Result{Kind: "json", Value: fmt.Sprintf(`{"doc":%q,"tool":%q,"input":%s}`, docKey, tool, input)}, nil
}

func (b *fakeBrowser) snapshot() []invocation {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]invocation(nil), b.calls...)
}

// fakeTabs implements mcpserver.Tabs and records what it was asked.
type fakeTabs struct {
	hub  *hub.Hub
	fail error
	// loadErr, when set, is the error of a page that could not load:
	// Open returns it with the tab's id, as the browser's Open does.
	loadErr error

	mu  sync.Mutex
	ops []string
}

func (f *fakeTabs) record(op string) error {
	f.mu.Lock()
	f.ops = append(f.ops, op)
	f.mu.Unlock()
	return f.fail
}

func (f *fakeTabs) Open(_ context.Context, url string) (string, error) {
	if err := f.record("open " + url); err != nil {
		return "", err
	}
	if f.loadErr != nil {
		f.hub.TabOpened("ERR", "chrome-error://chromewebdata/", "")
		return "ERR", f.loadErr
	}
	// The new tab's page registers a tool, as a browser would report it.
	f.hub.TabOpened("NEW", url, "New")
	f.hub.Update(core.Source{Key: "new-doc", Tab: "NEW", Frame: "F", Origin: origin, URL: url, Backend: "polyfill"},
		[]core.Tool{{Name: "fresh", Description: "a fresh tool"}}, nil)
	return "NEW", nil
}

func (f *fakeTabs) CloseTab(_ context.Context, tab string) error { return f.record("close " + tab) }
func (f *fakeTabs) ActivateTab(_ context.Context, tab string) error {
	return f.record("activate " + tab)
}
func (f *fakeTabs) Reload(_ context.Context, tab string) error { return f.record("reload " + tab) }

func (f *fakeTabs) snapshot() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ops...)
}

// ---- harness ------------------------------------------------------------

type env struct {
	hub      *hub.Hub
	browser  *fakeBrowser
	session  *mcp.ClientSession
	changed  atomic.Int64  // list_changed notifications received
	changedC chan struct{} // one token per notification, never blocks
}

// start connects a go-sdk client to a server over h in memory. When tabs is
// set, it becomes Options.Tabs and learns the hub.
func start(t *testing.T, tabs *fakeTabs) *env {
	t.Helper()
	return startOpts(t, tabs, mcpserver.Options{})
}

// startOpts is start with server options (Version and Logger are set).
func startOpts(t *testing.T, tabs *fakeTabs, opts mcpserver.Options) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e := &env{browser: &fakeBrowser{}, changedC: make(chan struct{}, 1000)}
	e.hub = hub.New(e.browser, hub.Options{})
	opts.Version, opts.Logger = "test", slog.New(slog.DiscardHandler)
	if tabs != nil {
		tabs.hub = e.hub
		opts.Tabs = tabs
	}
	srv := mcpserver.New(ctx, e.hub, opts)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		cancel()
		t.Fatalf("server connect: %v", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			e.changed.Add(1)
			select {
			case e.changedC <- struct{}{}:
			default:
			}
		},
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		cancel()
		t.Fatalf("client connect: %v", err)
	}
	e.session = cs
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
		cancel()
	})
	return e
}

// waitFor polls cond until it holds, failing the test after a generous
// deadline with the last description cond gave.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ok, desc := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s: %s", what, desc)
		}
		// Poll interval: cond reads a state (a listing, a count of
		// notifications, a page server's), and no one event stands for
		// all of them.
		time.Sleep(10 * time.Millisecond)
	}
}

func (e *env) list(t *testing.T) map[string]*mcp.Tool {
	t.Helper()
	res, err := e.session.ListTools(context.Background(), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := make(map[string]*mcp.Tool, len(res.Tools))
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

// pageNames are the listed names that are not the server's own tools.
func pageNames(tools map[string]*mcp.Tool) []string {
	out := []string{}
	for n := range tools {
		if !strings.HasPrefix(n, "webmcp_") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func catalogNames(h *hub.Hub) []string {
	out := []string{}
	for _, rt := range h.Tools() {
		out = append(out, rt.Name)
	}
	return out
}

// waitListed waits until the page tools listed equal the hub's catalog.
func (e *env) waitListed(t *testing.T) map[string]*mcp.Tool {
	t.Helper()
	var tools map[string]*mcp.Tool
	waitFor(t, "tools/list to equal the catalog", func() (bool, string) {
		tools = e.list(t)
		got, want := pageNames(tools), catalogNames(e.hub)
		return reflect.DeepEqual(got, want), fmt.Sprintf("listed %q, catalog %q", got, want)
	})
	return tools
}

func (e *env) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := e.session.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

func textOf(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	var parts []string
	for _, c := range r.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("content is %T, want text", c)
		}
		parts = append(parts, tc.Text)
	}
	return strings.Join(parts, "\n")
}

// decode re-encodes v (as the client decoded it) into out.
func decode(t *testing.T, v any, out any) {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
}

func mkDoc(key, tab string) core.Source {
	return core.Source{Key: key, Tab: tab, Frame: "frame-" + key, Origin: origin, URL: origin + "/" + key, Backend: "native"}
}

// ---- tools/list ---------------------------------------------------------

func TestToolsListFollowsTheCatalog(t *testing.T) {
	e := start(t, nil)
	if got := pageNames(e.list(t)); len(got) != 0 {
		t.Fatalf("before any page, page tools %q are listed", got)
	}

	e.hub.Update(mkDoc("notes", "A"), []core.Tool{
		{
			Name: "add_note", Title: "Add a note", Description: "Adds a note.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
			Annotations: map[string]any{"readOnlyHint": true, "untrustedContentHint": true},
		},
		{Name: "reset", Description: "Clears the notes."}, // no schema, no annotations
	}, nil)
	tools := e.waitListed(t)

	add, reset := tools[site+"_add_note"], tools[site+"_reset"]
	if add == nil || reset == nil {
		t.Fatalf("listed %q, want %s_add_note and %s_reset", pageNames(tools), site, site)
	}

	var src map[string]any
	decode(t, add.Meta["webmcp-cdp/source"], &src)
	wantSrc := map[string]any{"tool": "add_note", "origin": origin, "url": origin + "/notes", "tab": float64(1), "frame": "frame-notes", "backend": "native"}
	if !reflect.DeepEqual(src, wantSrc) {
		t.Errorf(`_meta["webmcp-cdp/source"] = %v, want %v`, src, wantSrc)
	}
	if add.Annotations == nil || !add.Annotations.ReadOnlyHint {
		t.Errorf("annotations = %+v, want readOnlyHint", add.Annotations)
	}
	var extra map[string]any
	decode(t, add.Meta["webmcp-cdp/annotations"], &extra)
	if extra["untrustedContentHint"] != true {
		t.Errorf(`_meta["webmcp-cdp/annotations"] = %v, want untrustedContentHint`, extra)
	}
	if add.Title != "Add a note" || !strings.HasPrefix(add.Description, "["+site+" · tab 1] ") || !strings.HasSuffix(add.Description, "Adds a note.") {
		t.Errorf("title %q, description %q", add.Title, add.Description)
	}
	for _, tl := range []*mcp.Tool{add, reset} {
		var schema map[string]any
		decode(t, tl.InputSchema, &schema)
		if schema["type"] != "object" {
			t.Errorf("%s: inputSchema = %v, want type object", tl.Name, schema)
		}
	}
	var addSchema map[string]any
	decode(t, add.InputSchema, &addSchema)
	if _, ok := addSchema["properties"].(map[string]any)["text"]; !ok {
		t.Errorf("the page's schema is not carried over: %v", addSchema)
	}
	if reset.Annotations != nil {
		t.Errorf("reset has annotations %+v, the page gave none", reset.Annotations)
	}

	waitFor(t, "notifications/tools/list_changed", func() (bool, string) {
		return e.changed.Load() > 0, "no notification"
	})
}

func TestDropDocRemovesTools(t *testing.T) {
	e := start(t, nil)
	e.hub.Update(mkDoc("a", "A"), []core.Tool{{Name: "one", Description: "1"}, {Name: "two", Description: "2"}}, nil)
	e.hub.Update(mkDoc("b", "B"), []core.Tool{{Name: "three", Description: "3"}}, nil)
	if got, want := pageNames(e.waitListed(t)), []string{site + "_one", site + "_three", site + "_two"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("listed %q, want %q", got, want)
	}

	e.hub.DropDoc("a")
	tools := e.waitListed(t)
	if got, want := pageNames(tools), []string{site + "_three"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after DropDoc, listed %q, want %q", got, want)
	}
	for _, own := range ownTools {
		if tools[own] == nil {
			t.Errorf("own tool %s went away", own)
		}
	}

	e.hub.TabClosed("B")
	if got := pageNames(e.waitListed(t)); len(got) != 0 {
		t.Errorf("after the last tab closed, listed %q", got)
	}
	r, err := e.session.CallTool(context.Background(), &mcp.CallToolParams{Name: site + "_three"})
	if err == nil && !r.IsError {
		t.Errorf("a call to a removed tool gave %+v, want an error", r)
	}
}

func TestBurstOfUpdates(t *testing.T) {
	e := start(t, nil)
	e.hub.Update(mkDoc("a", "A"), []core.Tool{{Name: "keep", Description: "k"}}, nil)
	e.waitListed(t)
	waitFor(t, "the first notification", func() (bool, string) { return e.changed.Load() > 0, "none" })
	base := e.changed.Load()

	const burst = 100
	for i := range burst {
		e.hub.Update(mkDoc("a", "A"), []core.Tool{
			{Name: "keep", Description: "k"},
			{Name: fmt.Sprintf("v%d", i), Description: fmt.Sprintf("version %d", i)},
		}, nil)
	}
	want := []string{site + "_keep", site + fmt.Sprintf("_v%d", burst-1)}
	if got := catalogNames(e.hub); !reflect.DeepEqual(got, want) {
		t.Fatalf("catalog = %q, want %q", got, want)
	}
	tools := e.waitListed(t)
	if got := pageNames(tools); !reflect.DeepEqual(got, want) {
		t.Errorf("listed %q, want the final catalog %q", got, want)
	}
	if d := tools[want[1]].Description; !strings.HasSuffix(d, fmt.Sprintf("version %d", burst-1)) {
		t.Errorf("the last tool's description is %q, want the last version", d)
	}
	waitFor(t, "a notification for the burst", func() (bool, string) {
		return e.changed.Load() > base, "none"
	})
	if got := e.changed.Load() - base; got >= burst/2 {
		t.Errorf("%d updates gave %d list_changed notifications, want far fewer", burst, got)
	} else {
		t.Logf("%d updates gave %d list_changed notifications", burst, got)
	}
}

// ---- tools/call ---------------------------------------------------------

func TestCallPageTool(t *testing.T) {
	e := start(t, nil)
	e.hub.Update(mkDoc("calc", "A"), []core.Tool{{Name: "add", Description: "adds"}}, nil)
	e.waitListed(t)

	tests := []struct {
		name      string
		tool      string
		args      any
		wantInput map[string]any
	}{
		{"direct", site + "_add", map[string]any{"a": 1, "b": 2}, map[string]any{"a": float64(1), "b": float64(2)}},
		{"direct without arguments", site + "_add", nil, map[string]any{}},
		{"webmcp_call", "webmcp_call", map[string]any{"name": site + "_add", "arguments": map[string]any{"a": 5}}, map[string]any{"a": float64(5)}},
		{"webmcp_call without arguments", "webmcp_call", map[string]any{"name": site + "_add"}, map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(e.browser.snapshot())
			r := e.call(t, tt.tool, tt.args)
			if r.IsError {
				t.Fatalf("call failed: %s", textOf(t, r))
			}
			calls := e.browser.snapshot()
			if len(calls) != before+1 {
				t.Fatalf("the browser got %d calls, want 1", len(calls)-before)
			}
			got := calls[len(calls)-1]
			var input map[string]any
			if err := json.Unmarshal(got.Input, &input); err != nil {
				t.Fatalf("the browser got input %q: %v", got.Input, err)
			}
			if got.DocKey != "calc" || got.Tool != "add" || !reflect.DeepEqual(input, tt.wantInput) {
				t.Errorf("the browser got %s %s %s, want calc add %v", got.DocKey, got.Tool, got.Input, tt.wantInput)
			}
			// The page's result comes back: text and structured content.
			var sc struct {
				Doc, Tool string
				Input     map[string]any
			}
			decode(t, r.StructuredContent, &sc)
			if sc.Doc != "calc" || sc.Tool != "add" || !reflect.DeepEqual(sc.Input, tt.wantInput) {
				t.Errorf("structuredContent = %+v", r.StructuredContent)
			}
			if txt := textOf(t, r); !strings.Contains(txt, `"doc":"calc"`) {
				t.Errorf("text = %q, want the page's JSON", txt)
			}
		})
	}
}

func TestWebmcpCallReachesUnlistedTools(t *testing.T) {
	e := start(t, nil)
	// No waiting for tools/list: webmcp_call goes by the hub's catalog.
	e.hub.Update(mkDoc("late", "A"), []core.Tool{{Name: "late", Description: "late"}}, nil)
	r := e.call(t, "webmcp_call", map[string]any{"name": site + "_late", "arguments": map[string]any{"x": "y"}})
	if r.IsError {
		t.Fatalf("webmcp_call failed: %s", textOf(t, r))
	}
	if calls := e.browser.snapshot(); len(calls) != 1 || calls[0].DocKey != "late" || string(calls[0].Input) != `{"x":"y"}` {
		t.Errorf("browser calls = %+v", calls)
	}

	r = e.call(t, "webmcp_call", map[string]any{"name": "nope_tool"})
	if !r.IsError || !strings.Contains(textOf(t, r), `no open page has a tool named "nope_tool"`) {
		t.Errorf("webmcp_call of an unknown name gave %+v, want an error result", r)
	}
}

func TestListTabs(t *testing.T) {
	e := start(t, nil)
	e.hub.TabOpened("A", origin+"/a", "Notes")
	e.hub.Update(mkDoc("a", "A"), []core.Tool{{Name: "search", Description: "s"}}, nil)
	e.hub.Update(mkDoc("b", "B"), []core.Tool{{Name: "search", Description: "s"}}, nil)
	e.hub.SetActive("B")

	r := e.call(t, "webmcp_list_tabs", nil)
	if r.IsError {
		t.Fatalf("webmcp_list_tabs failed: %s", textOf(t, r))
	}
	var got struct {
		Tabs []map[string]any `json:"tabs"`
	}
	decode(t, r.StructuredContent, &got)
	want := []map[string]any{
		{"tab": float64(1), "url": origin + "/a", "title": "Notes", "tools": []any{site + "_search", site + "_tab1_search"}},
		{"tab": float64(2), "url": origin + "/b", "active": true, "tools": []any{site + "_search", site + "_tab2_search"}},
	}
	if !reflect.DeepEqual(got.Tabs, want) {
		t.Errorf("tabs =\n%v\nwant\n%v", got.Tabs, want)
	}
}

// ---- tab tools ----------------------------------------------------------

func TestNoTabToolsWithoutTabs(t *testing.T) {
	e := start(t, nil)
	tools := e.list(t)
	for _, n := range tabTools {
		if tools[n] != nil {
			t.Errorf("%s is listed without Options.Tabs", n)
		}
	}
	for _, n := range ownTools {
		if tools[n] == nil {
			t.Errorf("%s is not listed", n)
		}
	}
	r, err := e.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "webmcp_close_tab", Arguments: map[string]any{"tab": 1}})
	if err == nil && !r.IsError {
		t.Errorf("webmcp_close_tab answered %+v without Options.Tabs", r)
	}
}

func TestTabTools(t *testing.T) {
	tabs := &fakeTabs{}
	e := start(t, tabs)
	tools := e.list(t)
	for _, n := range append(append([]string(nil), ownTools...), tabTools...) {
		if tools[n] == nil {
			t.Errorf("%s is not listed with Options.Tabs", n)
		}
	}
	e.hub.TabOpened("ID-A", origin+"/a", "A")
	e.hub.TabOpened("ID-B", origin+"/b", "B")

	tests := []struct {
		tool    string
		tab     int
		wantOp  string // "" when the call must fail
		wantErr string
	}{
		{"webmcp_close_tab", 2, "close ID-B", ""},
		{"webmcp_close_tab", 1, "close ID-A", ""},
		{"webmcp_reload_tab", 1, "reload ID-A", ""},
		{"webmcp_activate_tab", 2, "activate ID-B", ""},
		{"webmcp_close_tab", 9, "", "no tab 9 is open"},
		{"webmcp_reload_tab", 0, "", "no tab 0 is open"},
		{"webmcp_activate_tab", 7, "", "no tab 7 is open"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %d", tt.tool, tt.tab), func(t *testing.T) {
			before := len(tabs.snapshot())
			r := e.call(t, tt.tool, map[string]any{"tab": tt.tab})
			ops := tabs.snapshot()[before:]
			if tt.wantOp == "" {
				if !r.IsError || !strings.Contains(textOf(t, r), tt.wantErr) {
					t.Errorf("result %+v, want an error containing %q", r, tt.wantErr)
				}
				if len(ops) != 0 {
					t.Errorf("the browser was asked %q", ops)
				}
				return
			}
			if r.IsError {
				t.Fatalf("call failed: %s", textOf(t, r))
			}
			if !reflect.DeepEqual(ops, []string{tt.wantOp}) {
				t.Errorf("the browser was asked %q, want %q", ops, tt.wantOp)
			}
			if txt := textOf(t, r); !strings.HasPrefix(txt, fmt.Sprintf("done: tab %d", tt.tab)) {
				t.Errorf("text = %q", txt)
			}
		})
	}
	// webmcp_activate_tab also makes the tab the active one in the hub.
	if ti, _ := e.hub.TabOf("ID-B"); !ti.Active {
		t.Errorf("after webmcp_activate_tab, tab B = %+v, want active", ti)
	}
}

func TestTabToolErrors(t *testing.T) {
	tabs := &fakeTabs{fail: errors.New("the browser said no")}
	e := start(t, tabs)
	e.hub.TabOpened("ID-A", origin+"/a", "A")
	for _, tt := range []struct {
		tool string
		args map[string]any
	}{
		{"webmcp_close_tab", map[string]any{"tab": 1}},
		{"webmcp_activate_tab", map[string]any{"tab": 1}},
		{"webmcp_open_tab", map[string]any{"url": "http://x"}},
	} {
		r := e.call(t, tt.tool, tt.args)
		if !r.IsError || !strings.Contains(textOf(t, r), "the browser said no") {
			t.Errorf("%s: result %+v, want the browser's error", tt.tool, r)
		}
	}
	if ti, _ := e.hub.TabOf("ID-A"); ti.Active {
		t.Error("a failed activation still made the tab active")
	}
}

func TestOpenTab(t *testing.T) {
	tabs := &fakeTabs{}
	e := start(t, tabs)
	r := e.call(t, "webmcp_open_tab", map[string]any{"url": origin + "/new", "wait_ms": 3000})
	if r.IsError {
		t.Fatalf("webmcp_open_tab failed: %s", textOf(t, r))
	}
	if ops := tabs.snapshot(); !reflect.DeepEqual(ops, []string{"open " + origin + "/new"}) {
		t.Errorf("the browser was asked %q", ops)
	}
	var ti struct {
		Tab   int      `json:"tab"`
		URL   string   `json:"url"`
		Tools []string `json:"tools"`
	}
	decode(t, r.StructuredContent, &ti)
	if ti.Tab != 1 || ti.URL != origin+"/new" || !reflect.DeepEqual(ti.Tools, []string{site + "_fresh"}) {
		t.Errorf("webmcp_open_tab described %+v, want tab 1 with %s_fresh", ti, site)
	}
}
