package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
)

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
		{"a refusal alone", func() { h.Update(mkDoc("a", "A", origin), mkTools("x", "bad name"), nil) }},
		{"a tab without tools closed", func() { h.TabOpened("B", origin+"/b", ""); h.TabClosed("B") }},
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

// TestHookCalls: each hook added with HookCalls (or given in
// Options.Hooks) is told of each call before Call returns: a Detail hook
// with the page's name of the tool, the tab's URL, the arguments, the schema
// and the result, and not of a name no page has; a Record hook of every
// call. An unhooked hook is told of nothing more.
func TestHookCalls(t *testing.T) {
	var fromOptions []hub.CallRecord
	h := hub.New(&fakeBrowser{}, hub.Options{Hooks: hub.Hooks{Calls: hub.CallHooks{Record: func(r hub.CallRecord) { fromOptions = append(fromOptions, r) }}}})
	tools := mkTools("x")
	tools[0].InputSchema = json.RawMessage(`{"type":"object"}`)
	h.Update(mkDoc("a", "A", origin), tools, nil)
	h.TabOpened("A", origin+"/page?q=1", "A page")
	var got []hub.CallDetail
	var recs []hub.CallRecord
	unhook := h.HookCalls(hub.CallHooks{
		Detail: func(d hub.CallDetail) { got = append(got, d) },
		Record: func(r hub.CallRecord) { recs = append(recs, r) },
	})
	res := h.Call(context.Background(), site+"_x", json.RawMessage(`{"k":1}`))
	if len(got) != 1 {
		t.Fatalf("%d details before Call returned", len(got))
	}
	d := got[0]
	if d.Page != "x" || d.URL != origin+"/page?q=1" || d.Tab != 1 || string(d.Args) != `{"k":1}` || string(d.Schema) != `{"type":"object"}` || !reflect.DeepEqual(d.Result, res) || d.Tool != site+"_x" {
		t.Errorf("detail %+v", d)
	}
	h.Call(context.Background(), "nope_nothing", nil)
	unhook()
	h.Call(context.Background(), site+"_x", nil)
	if len(got) != 1 {
		t.Errorf("%d details: a name no page has, or a call after unhook, was told", len(got))
	}
	if len(recs) != 2 || recs[0] != d.CallRecord || recs[1].Tool != "nope_nothing" || recs[1].OK {
		t.Errorf("records %+v, want the call's and the unknown name's", recs)
	}
	if len(fromOptions) != 3 {
		t.Errorf("the hook of Options.Hooks was told of %d calls, want 3", len(fromOptions))
	}
}
