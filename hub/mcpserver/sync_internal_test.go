package mcpserver

import (
	"log/slog"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// TestSyncRendersOnlyWhatChanged: a sync keeps the rendering of each tool
// the catalog change left as it was, and renders the tools that changed
// again.
func TestSyncRendersOnlyWhatChanged(t *testing.T) {
	h := hub.New(noBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	s := New(t.Context(), h, Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
	doc := func(key, tab, origin string) core.Source {
		return core.Source{Key: key, Tab: tab, Frame: "f-" + key, Origin: origin, URL: origin + "/", Backend: core.BackendPolyfill}
	}
	tools := func(desc string, names ...string) []core.Tool {
		out := make([]core.Tool, len(names))
		for i, n := range names {
			out[i] = core.Tool{Name: n, Description: desc + n}
		}
		return out
	}
	// synced returns where the rendering of each listed tool starts, by
	// routed name, once the hub's changes so far are listed (read from
	// the ToolSet's snapshot: the syncs run on a goroutine of their own).
	synced := func() map[string]*byte {
		t.Helper()
		if err := s.Synced(t.Context()); err != nil {
			t.Fatal(err)
		}
		out := map[string]*byte{}
		for _, e := range s.tools.cur.Load().tools {
			if len(e.JSON) == 0 || e.Handler == nil {
				t.Fatalf("%s is listed without its JSON or handler", e.Name)
			}
			out[e.Name] = &e.JSON[0]
		}
		return out
	}
	h.Update(doc("a", "T1", "http://a.test"), tools("does ", "search", "open"), nil)
	before := synced()
	h.Update(doc("b", "T2", "http://b.test"), tools("does ", "other"), nil)
	h.Update(doc("a", "T1", "http://a.test"), []core.Tool{{Name: "search", Description: "does search"}, {Name: "open", Description: "now opens"}}, nil)
	after := synced()
	if len(before) != 2 || len(after) != 3 {
		t.Fatalf("listed %d then %d tools, want 2 then 3", len(before), len(after))
	}
	for name, at := range before {
		changed := after[name] != at
		if want := name == "a_test_open"; changed != want {
			t.Errorf("%s rendered again: %v, want %v", name, changed, want)
		}
	}
}
