package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

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
