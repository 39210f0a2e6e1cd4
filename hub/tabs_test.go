package hub_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
)

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

	// A tab without tools that loaded before we attached has the note,
	// read alone as in the list.
	h.TabLoadedBefore("E", true)
	if ti, _ := h.TabOf("E"); ti.Note != hub.NoteReload || !reflect.DeepEqual(ti, h.Tabs()[2]) {
		t.Errorf("TabOf(E) after TabLoadedBefore = %+v, want the note and %+v", ti, h.Tabs()[2])
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

// TestTabOrder: the active tab first, then the most recently used
// (opened, activated, called); WatchUse signals when a call or an
// activation changes the tab used last, and only then.
func TestTabOrder(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{})
	used, stop := h.WatchUse()
	defer stop()
	h.TabOpened("A", origin+"/a", "A")
	h.TabOpened("B", origin+"/b", "B")
	h.TabOpened("C", origin+"/c", "C")
	h.Update(mkDoc("a", "A", origin), mkTools("x"), nil)
	h.Update(mkDoc("c", "C", origin), mkTools("y"), nil)
	steps := []struct {
		what       string
		do         func()
		want       []int
		wantSignal bool
	}{
		{"opened in order", func() {}, []int{3, 2, 1}, false},
		{"a call into tab 1", func() { h.Call(t.Context(), site+"_x", nil) }, []int{1, 3, 2}, true},
		{"another call into tab 1", func() { h.Call(t.Context(), site+"_x", nil) }, []int{1, 3, 2}, false},
		{"a call into tab 3", func() { h.Call(t.Context(), site+"_y", nil) }, []int{3, 1, 2}, true},
		{"tab 2 made active", func() { h.SetActive("B") }, []int{2, 3, 1}, true},
		{"a call into tab 1 keeps the active tab first", func() { h.Call(t.Context(), site+"_x", nil) }, []int{2, 1, 3}, true},
		{"the active tab closed", func() { h.TabClosed("B") }, []int{1, 3}, false},
	}
	for _, s := range steps {
		s.do()
		if got := h.TabOrder(); !reflect.DeepEqual(got, s.want) {
			t.Errorf("after %s: TabOrder = %v, want %v", s.what, got, s.want)
		}
		if got := pending(used); got != s.wantSignal {
			t.Errorf("after %s: WatchUse signalled %v, want %v", s.what, got, s.wantSignal)
		}
	}
}

// ---- concurrency --------------------------------------------------------
