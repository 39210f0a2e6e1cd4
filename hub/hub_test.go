package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// ---- fake browser -------------------------------------------------------

// invocation is one call the hub made into the fake browser.
type invocation struct {
	DocKey, Tool string
	Input        json.RawMessage
}

// fakeBrowser implements hub.Browser. It records every call and answers with
// respond, or with a string naming the document and tool when respond is nil.
type fakeBrowser struct {
	respond func(ctx context.Context, in invocation) (core.Result, error)
	// started, when set, receives every call as it begins.
	started chan invocation

	mu    sync.Mutex
	calls []invocation
}

func (b *fakeBrowser) Invoke(ctx context.Context, docKey, tool string, input json.RawMessage) (core.Result, error) {
	in := invocation{DocKey: docKey, Tool: tool, Input: append(json.RawMessage(nil), input...)}
	b.mu.Lock()
	b.calls = append(b.calls, in)
	b.mu.Unlock()
	if b.started != nil {
		b.started <- in
	}
	if b.respond != nil {
		return b.respond(ctx, in)
	}
	return core.Result{Kind: "string", Value: docKey + " " + tool}, nil
}

// last returns the most recent call.
func (b *fakeBrowser) last(t *testing.T) invocation {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.calls) == 0 {
		t.Fatal("the browser was never called")
	}
	return b.calls[len(b.calls)-1]
}

func (b *fakeBrowser) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.calls)
}

// blockUntilDone answers only when the call's context ends.
func blockUntilDone(ctx context.Context, _ invocation) (core.Result, error) {
	<-ctx.Done()
	return core.Result{}, ctx.Err()
}

// ---- helpers ------------------------------------------------------------

const (
	origin = "http://127.0.0.1:8080"
	site   = "127_0_0_1_8080"
)

// mkDoc describes a document with key key in tab tab at origin o.
func mkDoc(key, tab, o string) core.Source {
	return core.Source{Key: key, Tab: tab, Frame: "frame-" + key, Origin: o, URL: o + "/page-" + key, Backend: "polyfill"}
}

// mkTools declares tools with the given names.
func mkTools(names ...string) []core.Tool {
	out := make([]core.Tool, len(names))
	for i, n := range names {
		out[i] = core.Tool{Name: n, Description: "does " + n}
	}
	return out
}

func names(h *hub.Hub) []string {
	var out []string
	for _, rt := range h.Tools() {
		out = append(out, rt.Name)
	}
	return out
}

// described is the description an MCP client sees: the provenance tag the
// MCP edge renders, then the page's description.
func described(rt hub.RoutedTool) string {
	return mcpserver.Tag(rt.Source) + " " + rt.Tool.Description
}

// jsonOf is v as JSON, as a client sees it in _meta (maps' keys sorted).
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m any
	json.Unmarshal(b, &m)
	b, _ = json.Marshal(m)
	return string(b)
}

// text returns the single text content of a result.
func text(t *testing.T, r core.Outcome) string {
	t.Helper()
	if len(r.Content) != 1 {
		t.Fatalf("result has %d content items, want 1: %+v", len(r.Content), r)
	}
	if b := r.Content[0]; b.Type != "text" {
		t.Fatalf("content is %q, want text", b.Type)
	}
	return r.Content[0].Text
}

// routedTo calls name and returns the document the browser was asked to run.
func routedTo(t *testing.T, h *hub.Hub, b *fakeBrowser, name string) string {
	t.Helper()
	before := b.count()
	r := h.Call(context.Background(), name, nil)
	if r.IsError {
		t.Fatalf("Call(%q) failed: %s", name, text(t, r))
	}
	if b.count() != before+1 {
		t.Fatalf("Call(%q) made %d browser calls, want 1", name, b.count()-before)
	}
	return b.last(t).DocKey
}

// ---- naming -------------------------------------------------------------

func TestNaming(t *testing.T) {
	type update struct {
		doc   core.Source
		tools []string
	}
	tests := []struct {
		name    string
		updates []update
		want    []string
	}{
		{
			name:    "one tab",
			updates: []update{{mkDoc("a", "A", origin), []string{"search", "add_note"}}},
			want:    []string{site + "_add_note", site + "_search"},
		},
		{
			name:    "default port is left out",
			updates: []update{{mkDoc("a", "A", "https://shop.example.com:443"), []string{"buy"}}},
			want:    []string{"shop_example_com_buy"},
		},
		{
			name: "two tabs share a tool",
			updates: []update{
				{mkDoc("a", "A", origin), []string{"search"}},
				{mkDoc("b", "B", origin), []string{"search", "only_b"}},
			},
			want: []string{site + "_only_b", site + "_search", site + "_tab1_search", site + "_tab2_search"},
		},
		{
			name: "two sites, same tool, no clash",
			updates: []update{
				{mkDoc("a", "A", origin), []string{"search"}},
				{mkDoc("b", "B", "https://example.com"), []string{"search"}},
			},
			want: []string{site + "_search", "example_com_search"},
		},
		{
			name: "a tab's other-site frame stays separate",
			updates: []update{
				{mkDoc("a", "A", origin), []string{"search"}},
				{mkDoc("a2", "A", "https://widget.example"), []string{"search"}},
			},
			want: []string{site + "_search", "widget_example_search"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hub.New(&fakeBrowser{}, hub.Options{})
			for _, u := range tt.updates {
				h.Update(u.doc, mkTools(u.tools...), nil)
			}
			want := append([]string(nil), tt.want...)
			sort.Strings(want)
			if got := names(h); !reflect.DeepEqual(got, want) {
				t.Errorf("names = %q, want %q", got, want)
			}
		})
	}
}

func TestTabNumbersSmallestFreeAndStable(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{})
	h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
	h.Update(mkDoc("b", "B", origin), mkTools("search"), nil)
	wantNums := func(ids map[string]int) {
		t.Helper()
		for id, n := range ids {
			ti, ok := h.TabOf(id)
			if !ok || ti.N != n {
				t.Errorf("TabOf(%q) = %+v, %v; want tab %d", id, ti, ok, n)
			}
		}
	}
	wantNums(map[string]int{"A": 1, "B": 2})

	h.TabClosed("A")
	if _, ok := h.TabOf("A"); ok {
		t.Error("closed tab A is still listed")
	}
	if got, want := names(h), []string{site + "_search"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after closing tab 1: names = %q, want %q", got, want)
	}

	h.TabOpened("C", origin+"/c", "C")
	h.Update(mkDoc("c", "C", origin), mkTools("search"), nil)
	wantNums(map[string]int{"B": 2, "C": 1})
	want := []string{site + "_search", site + "_tab1_search", site + "_tab2_search"}
	if got := names(h); !reflect.DeepEqual(got, want) {
		t.Errorf("after opening tab C: names = %q, want %q", got, want)
	}
}

func TestTabLevelNamesReachTheirTab(t *testing.T) {
	b := &fakeBrowser{}
	h := hub.New(b, hub.Options{})
	h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
	h.Update(mkDoc("b", "B", origin), mkTools("search"), nil)
	h.TabClosed("A")
	h.Update(mkDoc("c", "C", origin), mkTools("search"), nil)
	// C took number 1 again; B kept 2.
	for name, wantDoc := range map[string]string{
		site + "_tab1_search": "c",
		site + "_tab2_search": "b",
	} {
		if got := routedTo(t, h, b, name); got != wantDoc {
			t.Errorf("%s went to document %q, want %q", name, got, wantDoc)
		}
	}
}

func TestTwoFramesOfOneTab(t *testing.T) {
	b := &fakeBrowser{}
	h := hub.New(b, hub.Options{})
	h.Update(mkDoc("top", "A", origin), mkTools("search"), nil)
	h.Update(mkDoc("iframe", "A", origin), mkTools("search"), nil)

	// The first frame keeps the readable tab-level name; the second gets a
	// hash of its identity appended.
	frameName := regexp.MustCompile(`^` + site + `_tab1_search(_[0-9a-f]{6})?$`)
	var perFrame []string
	for _, n := range names(h) {
		switch {
		case n == site+"_search":
		case frameName.MatchString(n):
			perFrame = append(perFrame, n)
		default:
			t.Errorf("unexpected name %q", n)
		}
	}
	if len(perFrame) != 2 || perFrame[0] == perFrame[1] {
		t.Fatalf("frame-level names = %q, want two distinct names matching %s", perFrame, frameName)
	}
	reached := map[string]bool{}
	for _, n := range perFrame {
		reached[routedTo(t, h, b, n)] = true
	}
	if !reached["top"] || !reached["iframe"] {
		t.Errorf("the frame-level names reach %v, want both documents", reached)
	}
}

func TestLongNames(t *testing.T) {
	const longOrigin = "https://a-rather-long-subdomain.of-a-long-example-domain.example.com"
	tool1 := "create_a_calendar_event_with_attendees_and_reminders"
	tool2 := tool1 + "_2"
	b := &fakeBrowser{}
	h := hub.New(b, hub.Options{})
	h.Update(mkDoc("a", "A", longOrigin), mkTools(tool1, tool2), nil)
	h.Update(mkDoc("b", "B", longOrigin), mkTools(tool1, tool2), nil)

	valid := regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	got := names(h)
	if len(got) != 6 {
		t.Fatalf("got %d names %q, want 6 (2 tools × site + 2 tabs)", len(got), got)
	}
	seen := map[string]bool{}
	for _, n := range got {
		if len(n) > hub.MaxNameLen {
			t.Errorf("%q is %d characters, want at most %d", n, len(n), hub.MaxNameLen)
		}
		if !valid.MatchString(n) {
			t.Errorf("%q has characters outside [A-Za-z0-9_-]", n)
		}
		if seen[n] {
			t.Errorf("%q is listed twice", n)
		}
		seen[n] = true
	}
	// Each cut name still reaches its own tool.
	for _, rt := range h.Tools() {
		routedTo(t, h, b, rt.Name)
		if got := b.last(t).Tool; got != rt.Source.Tool {
			t.Errorf("%s ran tool %q, want %q", rt.Name, got, rt.Source.Tool)
		}
	}
}

func TestSourceAndDescription(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{})
	schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)
	d := core.Source{Key: "k1", Tab: "A", Frame: "F1", Origin: origin, URL: origin + "/notes", Backend: "native"}
	h.Update(d, []core.Tool{{
		Name: "search", Title: "Search", Description: "Finds notes.", InputSchema: schema,
		Annotations: map[string]any{"readOnlyHint": true},
	}}, nil)

	tools := h.Tools()
	if len(tools) != 1 {
		t.Fatalf("Tools() = %+v, want one tool", tools)
	}
	rt := tools[0]
	wantSource := map[string]any{"tool": "search", "origin": origin, "url": origin + "/notes", "tab": 1, "frame": "F1", "backend": "native"}
	if got, w := jsonOf(t, rt.Source), jsonOf(t, wantSource); got != w {
		t.Errorf("Source = %s, want %s", got, w)
	}
	if want := "[" + site + " · tab 1] Finds notes."; described(rt) != want {
		t.Errorf("Description = %q, want %q", described(rt), want)
	}
	if rt.Tool.Title != "Search" || string(rt.Tool.InputSchema) != string(schema) || rt.Tool.Annotations["readOnlyHint"] != true {
		t.Errorf("the page's definition is not carried over: %+v", rt.Tool)
	}

	// A site-level name shared by two tabs says so.
	h.Update(mkDoc("k2", "B", origin), mkTools("search"), nil)
	for _, rt := range h.Tools() {
		var wantPrefix string
		switch rt.Name {
		case site + "_search":
			wantPrefix = "[" + site + " · tabs 1, 2 · goes to tab 2 (latest)] "
		case site + "_tab1_search":
			wantPrefix = "[" + site + " · tab 1] "
		case site + "_tab2_search":
			wantPrefix = "[" + site + " · tab 2] "
		default:
			t.Errorf("unexpected name %q", rt.Name)
			continue
		}
		if !strings.HasPrefix(described(rt), wantPrefix) {
			t.Errorf("%s: Description = %q, want the prefix %q", rt.Name, described(rt), wantPrefix)
		}
		if rt.Source.Tab == 0 || rt.Source.Origin != origin || rt.Source.Tool != "search" {
			t.Errorf("%s: Source = %v lacks the provenance", rt.Name, rt.Source)
		}
	}
}

// ---- routing ------------------------------------------------------------

func TestSiteLevelRouting(t *testing.T) {
	// Tabs A (1) and B (2) have "search"; tab C (3) does not.
	tests := []struct {
		name   string
		setup  func(h *hub.Hub)
		wantTo string
	}{
		{"latest update wins", func(h *hub.Hub) {}, "b"},
		{"latest update wins after a re-update", func(h *hub.Hub) { h.Update(mkDoc("a", "A", origin), mkTools("search"), nil) }, "a"},
		{"active tab wins", func(h *hub.Hub) { h.SetActive("A") }, "a"},
		{"active tab wins over a later update", func(h *hub.Hub) {
			h.SetActive("B")
			h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
		}, "b"},
		{"active tab without the tool: latest", func(h *hub.Hub) { h.SetActive("C") }, "b"},
		{"closed active tab: latest", func(h *hub.Hub) {
			h.SetActive("A")
			h.TabClosed("A")
		}, "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeBrowser{}
			h := hub.New(b, hub.Options{})
			h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
			h.Update(mkDoc("b", "B", origin), mkTools("search"), nil)
			h.Update(mkDoc("c", "C", origin), mkTools("other"), nil)
			tt.setup(h)
			if got := routedTo(t, h, b, site+"_search"); got != tt.wantTo {
				t.Errorf("%s_search went to %q, want %q", site, got, tt.wantTo)
			}
			// Tab-level names ignore the active tab and the update order.
			if _, ok := h.TabOf("A"); ok {
				if got := routedTo(t, h, b, site+"_tab1_search"); got != "a" {
					t.Errorf("tab1 name went to %q, want a", got)
				}
				if got := routedTo(t, h, b, site+"_tab2_search"); got != "b" {
					t.Errorf("tab2 name went to %q, want b", got)
				}
			}
		})
	}
}

func TestCallArguments(t *testing.T) {
	tests := []struct {
		name string
		args json.RawMessage
		want string
	}{
		{"nil", nil, `{}`},
		{"empty", json.RawMessage{}, `{}`},
		{"null", json.RawMessage(`null`), `{}`},
		{"object", json.RawMessage(`{"q":"milk","n":2}`), `{"q":"milk","n":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeBrowser{}
			h := hub.New(b, hub.Options{})
			h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
			if r := h.Call(context.Background(), site+"_search", tt.args); r.IsError {
				t.Fatalf("Call failed: %s", text(t, r))
			}
			got := b.last(t)
			if string(got.Input) != tt.want || got.DocKey != "a" || got.Tool != "search" {
				t.Errorf("browser got %s %s %s, want a search %s", got.DocKey, got.Tool, got.Input, tt.want)
			}
		})
	}
}

// ---- catalog changes ----------------------------------------------------

func TestChangesAndVersion(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{})
	changes, stop := h.Watch()
	defer stop()

	steps := []struct {
		name      string
		do        func()
		wantNames []string
		changed   bool
	}{
		{"empty update of an unknown doc", func() { h.Update(mkDoc("a", "A", origin), nil, nil) }, nil, false},
		{"drop of an unknown doc", func() { h.DropDoc("nope") }, nil, false},
		{"close of an unknown tab", func() { h.TabClosed("nope") }, nil, false},
		{"first tools", func() { h.Update(mkDoc("a", "A", origin), mkTools("x", "y"), nil) }, []string{site + "_x", site + "_y"}, true},
		{"replace the tools", func() { h.Update(mkDoc("a", "A", origin), mkTools("y"), nil) }, []string{site + "_y"}, true},
		{"another doc in the tab", func() { h.Update(mkDoc("a2", "A", "https://example.com"), mkTools("z"), nil) }, []string{site + "_y", "example_com_z"}, true},
		{"DropDoc", func() { h.DropDoc("a") }, []string{"example_com_z"}, true},
		{"DropDoc again", func() { h.DropDoc("a") }, []string{"example_com_z"}, false},
		{"a doc in tab B", func() { h.Update(mkDoc("b", "B", origin), mkTools("x"), nil) }, []string{site + "_x", "example_com_z"}, true},
		{"empty update of a known doc", func() { h.Update(mkDoc("b", "B", origin), nil, nil) }, []string{"example_com_z"}, true},
		{"TabClosed", func() { h.TabClosed("A") }, nil, true},
		{"TabClosed with no tools left", func() { h.TabClosed("B") }, nil, false},
	}
	for _, s := range steps {
		v := h.Version()
		s.do()
		wantV := v
		if s.changed {
			wantV = v + 1
		}
		if got := h.Version(); got != wantV {
			t.Errorf("%s: Version = %d, want %d", s.name, got, wantV)
		}
		if got := pending(changes); got != s.changed {
			t.Errorf("%s: the watcher was signalled: %v, want %v", s.name, got, s.changed)
		}
		want := append([]string(nil), s.wantNames...)
		sort.Strings(want)
		if got := names(h); !reflect.DeepEqual(got, want) && (len(got) != 0 || len(want) != 0) {
			t.Errorf("%s: names = %q, want %q", s.name, got, want)
		}
	}
	if tabs := h.Tabs(); len(tabs) != 0 {
		t.Errorf("after closing every tab, Tabs() = %+v", tabs)
	}
}

// pending reports whether a signal waits on ch, and takes it.
func pending(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A watcher that never reads holds nothing up: changes fold into one
// pending signal, and a stopped watch gets no more.
func TestWatchNeverBlocksTheHub(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{})
	idle, stopIdle := h.Watch()
	changes, stop := h.Watch()
	for i := range 100 {
		h.Update(mkDoc("a", "A", origin), mkTools(fmt.Sprint("x", i)), nil)
	}
	if !pending(changes) || pending(changes) {
		t.Error("100 changes did not fold into exactly one pending signal")
	}
	stop()
	h.Update(mkDoc("a", "A", origin), mkTools("y"), nil)
	if pending(changes) {
		t.Error("a stopped watch was signalled")
	}
	if !pending(idle) {
		t.Error("the idle watcher lost its signal")
	}
	stopIdle()
}

// Changed is closed by a change of the catalog and by a tab that opens.
func TestChanged(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{})
	for _, step := range []struct {
		name string
		do   func()
	}{
		{"tab opened", func() { h.TabOpened("A", origin+"/", "") }},
		{"title changed", func() { h.TabOpened("A", origin+"/", "Title") }},
		{"tools", func() { h.Update(mkDoc("a", "A", origin), mkTools("x"), nil) }},
	} {
		ch := h.Changed()
		step.do()
		select {
		case <-ch:
		default:
			t.Errorf("%s: Changed was not closed", step.name)
		}
	}
	ch := h.Changed()
	h.TabOpened("A", origin+"/", "Title")
	select {
	case <-ch:
		t.Error("Changed was closed though nothing changed")
	default:
	}
}

func TestWatchCalls(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{})
	h.Update(mkDoc("a", "A", origin), mkTools("x"), nil)
	recs, stop := h.WatchCalls(1)
	h.Call(context.Background(), site+"_x", nil)
	h.Call(context.Background(), site+"_x", nil) // finds the buffer full: dropped
	if r := <-recs; r.Tool != site+"_x" || !r.OK || r.Tab != 1 {
		t.Errorf("record %+v", r)
	}
	select {
	case r := <-recs:
		t.Errorf("a record over the buffer was kept: %+v", r)
	default:
	}
	stop()
	h.Call(context.Background(), site+"_x", nil)
	select {
	case r := <-recs:
		t.Errorf("a stopped watch got %+v", r)
	default:
	}
}

// ---- errors -------------------------------------------------------------

func TestCallResults(t *testing.T) {
	tests := []struct {
		name       string
		call       string
		res        core.Result
		err        error
		wantError  bool
		wantText   string // a substring
		wantStruct map[string]any
	}{
		{name: "unknown name", call: "nope_search", wantError: true, wantText: `no open page has a tool named "nope_search"`},
		{name: "invoke error", call: site + "_search", err: errors.New("the bridge broke"), wantError: true, wantText: site + "_search failed: the bridge broke"},
		{name: "page throws", call: site + "_search", res: core.Result{Err: "boom"}, wantError: true, wantText: "boom"},
		{name: "string", call: site + "_search", res: core.Result{Kind: "string", Value: "found 3"}, wantText: "found 3"},
		{name: "json object", call: site + "_search", res: core.Result{Kind: "json", Value: `{"sum":3}`}, wantText: `{"sum":3}`, wantStruct: map[string]any{"sum": float64(3)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeBrowser{respond: func(context.Context, invocation) (core.Result, error) { return tt.res, tt.err }}
			h := hub.New(b, hub.Options{})
			h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
			r := h.Call(context.Background(), tt.call, json.RawMessage(`{}`))
			if r.IsError != tt.wantError {
				t.Errorf("IsError = %v, want %v", r.IsError, tt.wantError)
			}
			if got := text(t, r); !strings.Contains(got, tt.wantText) {
				t.Errorf("text = %q, want it to contain %q", got, tt.wantText)
			}
			if tt.wantStruct == nil {
				if r.Structured != nil {
					t.Errorf("Structured = %s, want none", r.Structured)
				}
			} else {
				var got any
				if err := json.Unmarshal(r.Structured, &got); err != nil || !reflect.DeepEqual(got, tt.wantStruct) {
					t.Errorf("Structured = %s, want %#v", r.Structured, tt.wantStruct)
				}
			}
			if tt.name == "unknown name" && b.count() != 0 {
				t.Errorf("an unknown name reached the browser %d times", b.count())
			}
		})
	}
}

func TestCallResultIsCapped(t *testing.T) {
	b := &fakeBrowser{respond: func(context.Context, invocation) (core.Result, error) {
		return core.Result{Kind: "string", Value: strings.Repeat("x", 100)}, nil
	}}
	h := hub.New(b, hub.Options{MaxResultBytes: 10})
	h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
	got := text(t, h.Call(context.Background(), site+"_search", nil))
	if !strings.HasPrefix(got, strings.Repeat("x", 10)+"\n") || !strings.Contains(got, "cut to 10 of 100") {
		t.Errorf("text = %q, want 10 x's and a notice of the cut", got)
	}
}

func TestCallTimeout(t *testing.T) {
	b := &fakeBrowser{respond: blockUntilDone}
	h := hub.New(b, hub.Options{CallTimeout: 50 * time.Millisecond})
	h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
	r := h.Call(context.Background(), site+"_search", nil)
	if !r.IsError {
		t.Fatal("a call that never answers is not an error")
	}
	if got, want := text(t, r), site+"_search did not answer within 50ms"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
}

func TestCallerCancels(t *testing.T) {
	b := &fakeBrowser{respond: blockUntilDone, started: make(chan invocation, 1)}
	h := hub.New(b, hub.Options{})
	h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan core.Outcome, 1)
	go func() { done <- h.Call(ctx, site+"_search", nil) }()
	<-b.started
	cancel()
	r := <-done
	if want := "the call to " + site + "_search was cancelled by the client"; !r.IsError || text(t, r) != want {
		t.Errorf("a cancelled call gave %+v, want the error %q", r, want)
	}
}

func TestMaxInflightPerTab(t *testing.T) {
	b := &fakeBrowser{
		started: make(chan invocation, 10),
		respond: func(ctx context.Context, in invocation) (core.Result, error) {
			if string(in.Input) == `{"block":true}` {
				return blockUntilDone(ctx, in)
			}
			return core.Result{Kind: "string", Value: "ok " + in.DocKey}, nil
		},
	}
	h := hub.New(b, hub.Options{MaxInflightPerTab: 1})
	h.Update(mkDoc("a", "A", origin), mkTools("slow", "fast"), nil)
	h.Update(mkDoc("b", "B", "https://example.com"), mkTools("fast"), nil)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan core.Outcome, 1)
	go func() { done <- h.Call(ctx, site+"_slow", json.RawMessage(`{"block":true}`)) }()
	if in := <-b.started; in.Tool != "slow" {
		t.Fatalf("first call ran %q, want slow", in.Tool)
	}

	r := h.Call(context.Background(), site+"_fast", nil)
	if !r.IsError || !strings.Contains(text(t, r), "tab 1 already runs 1 calls") {
		t.Errorf("second call to the busy tab gave %+v, want a refusal", r)
	}
	if got := b.count(); got != 1 {
		t.Errorf("the refused call reached the browser (%d calls)", got)
	}
	r = h.Call(context.Background(), "example_com_fast", nil)
	if r.IsError || text(t, r) != "ok b" {
		t.Errorf("a call to another tab gave %+v, want ok b", r)
	}
	<-b.started

	cancel()
	if r := <-done; !r.IsError {
		t.Errorf("the cancelled call gave %+v, want an error", r)
	}
	// The slot is free again.
	r = h.Call(context.Background(), site+"_fast", nil)
	if r.IsError || text(t, r) != "ok a" {
		t.Errorf("after the slow call ended, a call to tab 1 gave %+v, want ok a", r)
	}
}

// ---- tabs ---------------------------------------------------------------

func TestTabs(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{})
	h.TabOpened("A", origin+"/a", "Tab A")
	h.Update(mkDoc("a", "A", origin), mkTools("search", "only_a"), nil)
	h.Update(mkDoc("b", "B", origin), mkTools("search"), nil) // B never opened: its URL comes from the doc
	h.TabOpened("E", "about:blank", "")                       // a tab without tools
	h.SetActive("A")

	want := []hub.TabInfo{
		{N: 1, ID: "A", URL: origin + "/a", Title: "Tab A", Active: true, Tools: []string{site + "_only_a", site + "_search", site + "_tab1_search"}},
		{N: 2, ID: "B", URL: origin + "/page-b", Tools: []string{site + "_search", site + "_tab2_search"}},
		{N: 3, ID: "E", URL: "about:blank", Tools: []string{}},
	}
	if got := h.Tabs(); !reflect.DeepEqual(got, want) {
		t.Errorf("Tabs() =\n%+v\nwant\n%+v", got, want)
	}

	lookups := []struct {
		name   string
		get    func() (hub.TabInfo, bool)
		wantN  int
		wantOK bool
	}{
		{"Tab(2)", func() (hub.TabInfo, bool) { return h.Tab(2) }, 2, true},
		{"Tab(1)", func() (hub.TabInfo, bool) { return h.Tab(1) }, 1, true},
		{"Tab(9)", func() (hub.TabInfo, bool) { return h.Tab(9) }, 0, false},
		{"TabOf(B)", func() (hub.TabInfo, bool) { return h.TabOf("B") }, 2, true},
		{"TabOf(E)", func() (hub.TabInfo, bool) { return h.TabOf("E") }, 3, true},
		{"TabOf(nope)", func() (hub.TabInfo, bool) { return h.TabOf("nope") }, 0, false},
	}
	for _, l := range lookups {
		ti, ok := l.get()
		if ok != l.wantOK || ti.N != l.wantN {
			t.Errorf("%s = %+v, %v; want tab %d, %v", l.name, ti, ok, l.wantN, l.wantOK)
		}
		if ok && !reflect.DeepEqual(ti, want[l.wantN-1]) {
			t.Errorf("%s = %+v, want %+v", l.name, ti, want[l.wantN-1])
		}
	}

	// TabOpened updates the URL and title of a known tab without renumbering it.
	h.TabOpened("B", origin+"/moved", "Moved")
	if ti, _ := h.TabOf("B"); ti.N != 2 || ti.URL != origin+"/moved" || ti.Title != "Moved" {
		t.Errorf("after TabOpened again, tab B = %+v", ti)
	}

	// The JSON form carries the number as "tab" and hides the browser id.
	raw, err := json.Marshal(want[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m["tab"] != float64(1) || m["active"] != true || m["ID"] != nil || m["id"] != nil {
		t.Errorf("TabInfo JSON = %s", raw)
	}
}

// ---- concurrency --------------------------------------------------------

// TestConcurrentUse runs the hub's methods from many goroutines; run it with
// -race. Each worker owns one document key and alternates Update with
// DropDoc. (TestUpdateDuringCall re-registers a document while a call to it
// runs.)
func TestConcurrentUse(t *testing.T) {
	b := &fakeBrowser{respond: func(_ context.Context, in invocation) (core.Result, error) {
		return core.Result{Kind: "json", Value: fmt.Sprintf(`{"doc":%q}`, in.DocKey)}, nil
	}}
	h := hub.New(b, hub.Options{MaxInflightPerTab: 64})
	changes, stop := h.Watch()
	defer stop()

	const workers, rounds = 8, 100
	var okCalls, goneCalls atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan string, workers*rounds)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("doc%d", w)
			tab := fmt.Sprintf("T%d", w%3)
			for i := range rounds {
				h.Update(mkDoc(key, tab, origin), mkTools("ping", fmt.Sprintf("w%d", w)), nil)
				for _, name := range []string{site + "_ping", fmt.Sprintf("%s_w%d", site, w)} {
					r := h.Call(context.Background(), name, json.RawMessage(`{"i":1}`))
					switch {
					case !r.IsError:
						okCalls.Add(1)
						var sc struct{ Doc *string }
						if json.Unmarshal(r.Structured, &sc) != nil || sc.Doc == nil {
							errs <- fmt.Sprintf("call %s: result %+v has no doc", name, r)
						}
					case strings.Contains(r.Content[0].Text, "no open page has a tool named"):
						goneCalls.Add(1)
					default:
						errs <- fmt.Sprintf("call %s: %s", name, r.Content[0].Text)
					}
				}
				for _, rt := range h.Tools() {
					if rt.Name == "" || rt.Source.Tool == "" {
						errs <- fmt.Sprintf("bad routed tool %+v", rt)
					}
				}
				_ = h.Tabs()
				_ = h.Version()
				switch i % 10 {
				case 3:
					h.SetActive(tab)
				case 7:
					h.TabOpened(tab, origin+"/t", "t")
				case 9:
					h.TabClosed(fmt.Sprintf("T%d", (w+1)%3))
				}
				h.DropDoc(key)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got := h.Tools(); len(got) != 0 {
		t.Errorf("after every document was dropped, Tools() = %+v", got)
	}
	if okCalls.Load() == 0 {
		t.Error("no call succeeded")
	}
	if int64(b.count()) != okCalls.Load() {
		t.Errorf("the browser ran %d calls, but %d calls succeeded", b.count(), okCalls.Load())
	}
	if !pending(changes) || h.Version() == 0 {
		t.Errorf("the watcher was not signalled, or Version is %d", h.Version())
	}
	t.Logf("%d calls ran, %d found their tool gone, %d changes", okCalls.Load(), goneCalls.Load(), h.Version())
}

func TestCallErrorWording(t *testing.T) {
	fail := func(err string, before func(h *hub.Hub)) func(h *hub.Hub) func(context.Context, invocation) (core.Result, error) {
		return func(h *hub.Hub) func(context.Context, invocation) (core.Result, error) {
			return func(context.Context, invocation) (core.Result, error) {
				before(h)
				return core.Result{}, errors.New(err)
			}
		}
	}
	block := func(*hub.Hub) func(context.Context, invocation) (core.Result, error) { return blockUntilDone }
	tests := []struct {
		name    string
		timeout time.Duration // the hub's
		client  time.Duration // the caller's deadline, 0 for none
		respond func(h *hub.Hub) func(context.Context, invocation) (core.Result, error)
		want    string
	}{
		{"our timeout", 50 * time.Millisecond, 0, block, site + "_search did not answer within 50ms"},
		{"the client's deadline", time.Minute, 50 * time.Millisecond, block, "the client's deadline passed before " + site + "_search answered"},
		{"the page navigated", time.Minute, 0, fail("Execution context was destroyed", func(h *hub.Hub) {
			h.DropDoc("a")
		}), site + "_search did not finish: the page navigated away"},
		{"the page navigated and came back", time.Minute, 0, fail("Inspected target navigated or closed", func(h *hub.Hub) {
			h.DropDoc("a")
			h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
		}), site + "_search did not finish: the page navigated away"},
		{"the tab closed", time.Minute, 0, fail("the page navigated away", func(h *hub.Hub) {
			h.DropDoc("a")
			go func() {
				time.Sleep(50 * time.Millisecond) // the detach comes a moment later
				h.TabClosed("A")
			}()
		}), site + "_search did not finish: the tab was closed"},
		{"another failure", time.Minute, 0, fail("the page script failed: boom", func(*hub.Hub) {}),
			site + "_search failed: the page script failed: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeBrowser{}
			h := hub.New(b, hub.Options{CallTimeout: tt.timeout})
			b.respond = tt.respond(h)
			h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
			ctx := context.Background()
			if tt.client > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.client)
				defer cancel()
			}
			r := h.Call(ctx, site+"_search", nil)
			if !r.IsError || !strings.HasPrefix(text(t, r), tt.want) {
				t.Errorf("result %v %q, want the error %q", r.IsError, text(t, r), tt.want)
			}
		})
	}
}

func TestUntrustedContentIsMarked(t *testing.T) {
	b := &fakeBrowser{respond: func(context.Context, invocation) (core.Result, error) {
		return core.Result{Kind: "string", Value: "a post"}, nil
	}}
	h := hub.New(b, hub.Options{})
	h.Update(mkDoc("a", "A", origin), []core.Tool{
		{Name: "read", Description: "reads posts", Annotations: map[string]any{"untrustedContentHint": true}},
		{Name: "own", Description: "own data"},
	}, nil)
	r := h.Call(context.Background(), site+"_read", nil)
	if len(r.Content) != 2 || r.Meta[hub.UntrustedMetaKey] == nil {
		t.Errorf("untrusted result = %+v, want a notice and _meta", r)
	}
	r = h.Call(context.Background(), site+"_own", nil)
	if len(r.Content) != 1 || r.Meta[hub.UntrustedMetaKey] != nil {
		t.Errorf("plain result = %+v, want no notice", r)
	}
}
