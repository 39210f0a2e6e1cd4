package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/relay/proxy"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// fakeHub is a Hub in memory: the browser side's unit tests run against it,
// with no catalog, no relay and no WebSocket.
type fakeHub struct {
	mu      sync.Mutex
	version uint64
	changed chan struct{}
	tools   []hub.RoutedTool
	tabs    []hub.TabInfo
	reads   []string // "version" and "tools", in the order they were read
	calls   []string // the tool calls, as "name args"
}

func newFakeHub(tabs ...hub.TabInfo) *fakeHub {
	return &fakeHub{version: 1, changed: make(chan struct{}), tabs: tabs}
}

// change applies mut as one change: the version moves and Changed fires.
func (f *fakeHub) change(mut func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	mut()
	f.version++
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeHub) Version() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = append(f.reads, "version")
	return f.version
}

func (f *fakeHub) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

func (f *fakeHub) Tools() []hub.RoutedTool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = append(f.reads, "tools")
	return append([]hub.RoutedTool(nil), f.tools...)
}

func (f *fakeHub) Call(_ context.Context, name string, args json.RawMessage) core.Outcome {
	f.mu.Lock()
	f.calls = append(f.calls, fmt.Sprintf("%s %s", name, args))
	f.mu.Unlock()
	if name == "broken" {
		return core.Errorf("the page threw")
	}
	return core.Text("ran " + name)
}

func (f *fakeHub) Tabs() []hub.TabInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]hub.TabInfo(nil), f.tabs...)
}

func (f *fakeHub) find(match func(hub.TabInfo) bool) (hub.TabInfo, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ti := range f.tabs {
		if match(ti) {
			return ti, true
		}
	}
	return hub.TabInfo{}, false
}

func (f *fakeHub) Tab(n int) (hub.TabInfo, bool) {
	return f.find(func(ti hub.TabInfo) bool { return ti.N == n })
}

func (f *fakeHub) TabOf(id string) (hub.TabInfo, bool) {
	return f.find(func(ti hub.TabInfo) bool { return ti.ID == id })
}

func (f *fakeHub) SetActive(id string) {
	f.change(func() {
		for i := range f.tabs {
			f.tabs[i].Active = f.tabs[i].ID == id
		}
	})
}

// TabOpened and TabClosed are how fakeActions reports tabs, as cdp does.
func (f *fakeHub) TabOpened(id, url, title string) {
	f.change(func() { f.tabs = append(f.tabs, hub.TabInfo{N: len(f.tabs) + 1, ID: id, URL: url, Title: title}) })
}

func (f *fakeHub) TabClosed(id string) {
	f.change(func() {
		for i, ti := range f.tabs {
			if ti.ID == id {
				f.tabs = append(f.tabs[:i], f.tabs[i+1:]...)
				return
			}
		}
	})
}

// silentActions reports no opened tab: a page that never shows up.
type silentActions struct{ fakeActions }

func (*silentActions) Open(context.Context, string) (string, error) { return "lost", nil }

// fakeSide is a browser side on a fake hub, driven through handle.
func fakeSide(t *testing.T, fh *fakeHub, acts Actions) *BrowserSide {
	t.Helper()
	if acts == nil {
		acts = &fakeActions{hub: fh}
	}
	b, err := NewBrowserSide(BrowserSideOptions{URL: "ws://127.0.0.1:1/extension", Token: "t", Name: "n",
		Hub: fh, Actions: acts, Logger: quietLogger(), ActionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func tabs(infos ...hub.TabInfo) []hub.TabInfo { return infos }

// TestFakeHubTabResolution: a method without tabId acts on the
// connection's selected tab, else the active one, else the only one.
func TestFakeHubTabResolution(t *testing.T) {
	one := hub.TabInfo{N: 1, ID: "T1", URL: "http://one.example/"}
	two := hub.TabInfo{N: 2, ID: "T2", URL: "http://two.example/"}
	active := two
	active.Active = true
	tests := []struct {
		name        string
		tabs        []hub.TabInfo
		selectFirst string // a selectTab before the click, as params
		params      string
		want        string // the action, or "" for an error
		says        string // what the error says
	}{
		{name: "the only tab", tabs: tabs(one), params: `{"selector":"a"}`, want: "Click T1 a"},
		{name: "no tab", params: `{"selector":"a"}`, says: "No tab is open"},
		{name: "two tabs, none chosen", tabs: tabs(one, two), params: `{"selector":"a"}`, says: "2 tabs are open"},
		{name: "the active tab", tabs: tabs(one, active), params: `{"selector":"a"}`, want: "Click T2 a"},
		{name: "the selected tab beats the active one", tabs: tabs(one, active), selectFirst: `{"tabId":1}`, params: `{"selector":"a"}`, want: "Click T1 a"},
		{name: "tabId beats the selection", tabs: tabs(one, two), selectFirst: `{"tabId":1}`, params: `{"selector":"a","tabId":2}`, want: "Click T2 a"},
		{name: "an unknown tabId", tabs: tabs(one), params: `{"selector":"a","tabId":7}`, says: "No tab 7"},
		{name: "a point", tabs: tabs(one), params: `{"x":1,"y":2}`, want: "ClickAt T1 1 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fh := newFakeHub(tt.tabs...)
			acts := &fakeActions{hub: fh}
			b := fakeSide(t, fh, acts)
			ctx := context.Background()
			if tt.selectFirst != "" {
				if _, err := b.handle(ctx, "c1", "selectTab", json.RawMessage(tt.selectFirst)); err != nil {
					t.Fatal(err)
				}
			}
			_, err := b.handle(ctx, "c1", "click", json.RawMessage(tt.params))
			if tt.want == "" {
				if err == nil || !strings.Contains(err.Error(), tt.says) {
					t.Fatalf("error %v, want one saying %q", err, tt.says)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := acts.last(); got != tt.want {
				t.Fatalf("action %q, want %q", got, tt.want)
			}
		})
	}
}

// TestFakeHubToolsList: the version is read before the tools (so a change
// between the two reads is seen by the next wait), and each tool is listed
// as the local MCP server lists it.
func TestFakeHubToolsList(t *testing.T) {
	fh := newFakeHub()
	fh.tools = []hub.RoutedTool{{Name: "one_example_add", Tool: core.Tool{Name: "add", Description: "Add",
		InputSchema: json.RawMessage(`{"type":"object"}`)}, Source: core.Provenance{Tool: "add", Origin: "http://one.example"}}}
	b := fakeSide(t, fh, nil)
	res, err := b.handle(context.Background(), "c1", proxy.MethodToolsList, nil)
	if err != nil {
		t.Fatal(err)
	}
	list := res.(ToolsListResult)
	if len(list.Tools) != 1 || list.Tools[0].Name != "one_example_add" || list.Meta[proxy.VersionMetaKey] != uint64(1) {
		t.Fatalf("tools/list %+v", list)
	}
	if strings.Join(fh.reads, ",") != "version,tools" {
		t.Fatalf("reads %v, want the version first", fh.reads)
	}
}

// TestFakeHubToolsCall: tools/call hands name and arguments to the hub and
// renders its outcome; a failed call is a result with isError, not an error.
func TestFakeHubToolsCall(t *testing.T) {
	tests := []struct {
		params  string
		isError bool
		code    int
		call    string
	}{
		{params: `{"name":"a_b","arguments":{"x":1}}`, call: `a_b {"x":1}`},
		{params: `{"name":"broken"}`, isError: true, call: "broken "},
		{params: `{}`, code: proxy.CodeInvalidParams},
		{params: `[1]`, code: proxy.CodeInvalidParams},
	}
	for _, tt := range tests {
		fh := newFakeHub()
		b := fakeSide(t, fh, nil)
		res, err := b.handle(context.Background(), "c1", proxy.MethodToolsCall, json.RawMessage(tt.params))
		if tt.code != 0 {
			var rpcErr *proxy.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != tt.code {
				t.Errorf("%s: error %v, want code %d", tt.params, err, tt.code)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.params, err)
		}
		out, _ := json.Marshal(res)
		if strings.Contains(string(out), `"isError":true`) != tt.isError {
			t.Errorf("%s: result %s, want isError=%v", tt.params, out, tt.isError)
		}
		if len(fh.calls) != 1 || fh.calls[0] != tt.call {
			t.Errorf("%s: calls %q, want %q", tt.params, fh.calls, tt.call)
		}
	}
}

// TestFakeHubWaitForChanges: the long poll ends on the hub's Changed event,
// at once for an old version, at its timeout without a change, and when the
// request is cancelled.
func TestFakeHubWaitForChanges(t *testing.T) {
	tests := []struct {
		name    string
		since   uint64
		timeout int
		change  bool // a change while waiting
		cancel  bool // the request is cancelled while waiting
		want    uint64
	}{
		{name: "an old version answers at once", since: 0, timeout: 55000, want: 1},
		{name: "a change ends the wait", since: 1, timeout: 55000, change: true, want: 2},
		{name: "no change: the timeout", since: 1, timeout: 1, want: 1},
		{name: "cancelled", since: 1, timeout: 55000, cancel: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fh := newFakeHub()
			b := fakeSide(t, fh, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type answer struct {
				res any
				err error
			}
			got := make(chan answer, 1)
			go func() {
				res, err := b.handle(ctx, "c1", proxy.MethodWaitForChanges, json.RawMessage(fmt.Sprintf(`{"since":%d,"timeoutMs":%d}`, tt.since, tt.timeout)))
				got <- answer{res, err}
			}()
			// Either order is right: a change before the wait takes Changed
			// shows in the version it reads first.
			if tt.change {
				fh.change(func() {})
			}
			if tt.cancel {
				cancel()
			}
			var a answer
			select {
			case a = <-got:
			case <-time.After(10 * time.Second):
				t.Fatal("the wait did not end")
			}
			if tt.cancel {
				if !errors.Is(a.err, context.Canceled) {
					t.Fatalf("cancelled wait: %v %v", a.res, a.err)
				}
				return
			}
			if a.err != nil || a.res.(proxy.WaitResult).Version != tt.want {
				t.Fatalf("wait: %+v %v, want version %d", a.res, a.err, tt.want)
			}
		})
	}
}

// TestFakeHubCreateTab: createTab waits on Changed until the hub numbers the
// new tab, and fails when the action's deadline passes first.
func TestFakeHubCreateTab(t *testing.T) {
	fh := newFakeHub(hub.TabInfo{N: 1, ID: "T1"})
	acts := &fakeActions{hub: fh}
	b := fakeSide(t, fh, acts)
	res, err := b.handle(context.Background(), "c1", "createTab", json.RawMessage(`{"url":"http://new.example/"}`))
	if err != nil {
		t.Fatal(err)
	}
	if tr := res.(TabResult); tr.TabID != 2 || tr.URL != "http://new.example/" || !tr.Selected {
		t.Fatalf("createTab %+v", tr)
	}

	silent := newFakeHub()
	b = fakeSide(t, silent, &silentActions{fakeActions{hub: silent}})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := b.handle(ctx, "c1", "createTab", json.RawMessage(`{"url":"http://never.example/"}`)); err == nil || !strings.Contains(err.Error(), "showed no page") {
		t.Fatalf("a tab that never shows: %v", err)
	}
}

// TestFakeHubActivateTab: activateTab activates the tab in the browser,
// tells the hub, and selects it for the connection.
func TestFakeHubActivateTab(t *testing.T) {
	fh := newFakeHub(hub.TabInfo{N: 1, ID: "T1"}, hub.TabInfo{N: 2, ID: "T2"})
	acts := &fakeActions{hub: fh}
	b := fakeSide(t, fh, acts)
	res, err := b.handle(context.Background(), "c1", "activateTab", json.RawMessage(`{"tabId":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if tr := res.(TabResult); !tr.Active || !tr.Selected || acts.last() != "ActivateTab T2" {
		t.Fatalf("activateTab %+v, action %q", tr, acts.last())
	}
}
