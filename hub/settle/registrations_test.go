package settle

import (
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// TestRegistrationsSettle: a start tab settles --settle (1.5 s) after the later
// of its load and its last change of tools; a re-read with the same tools
// is not a registration; a tab not loaded yet holds the list.
func TestRegistrationsSettle(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type update struct {
		ms    int
		tab   string
		key   string
		tools []core.Tool
		isReg bool
	}
	for _, tc := range []struct {
		name    string
		updates []update
		loads   map[string]int // tab → ms of its load
		tabs    []string
		want    int // ms at which all settle; -1 while one has not loaded
	}{
		{"tools before load: quiet from the load", []update{{0, "A", "a1", toolList("x"), true}}, map[string]int{"A": 200}, []string{"A"}, 200 + 1500},
		{"a tool a second after load", []update{{0, "A", "a1", toolList("x"), true}, {1200, "A", "a1", toolList("x", "y"), true}}, map[string]int{"A": 200}, []string{"A"}, 1200 + 1500},
		{"a re-read with the same tools is not a registration", []update{{0, "A", "a1", toolList("x"), true}, {900, "A", "a1", toolList("x"), false}}, map[string]int{"A": 100}, []string{"A"}, 100 + 1500},
		{"an empty first read is not a registration", []update{{800, "A", "a1", nil, false}}, map[string]int{"A": 100}, []string{"A"}, 100 + 1500},
		{"the later of two pages", []update{{0, "A", "a1", toolList("x"), true}, {2500, "B", "b1", toolList("y"), true}}, map[string]int{"A": 100, "B": 1400}, []string{"A", "B"}, 2500 + 1500},
		{"one page not loaded", []update{{0, "A", "a1", toolList("x"), true}}, map[string]int{"A": 100}, []string{"A", "B"}, -1},
		{"another tab's registrations do not count", []update{{3000, "C", "c1", toolList("z"), true}}, map[string]int{"A": 100}, []string{"A"}, 100 + 1500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistrations(nil)
			for _, u := range tc.updates {
				if got := r.note(core.Source{Key: u.key, Tab: u.tab}, u.tools, nil, at(u.ms)); got != u.isReg {
					t.Errorf("update at %d ms: registration %v, want %v", u.ms, got, u.isReg)
				}
			}
			for tab, ms := range tc.loads {
				r.pageLoaded(tab, at(ms))
			}
			l := r.look(tc.tabs)
			got := l.Since.Add(1500 * time.Millisecond)
			switch {
			case tc.want < 0 && l.Loaded:
				t.Errorf("settled at %s with a tab not loaded", got.Sub(t0))
			case tc.want >= 0 && (!l.Loaded || !got.Equal(at(tc.want))):
				t.Errorf("settled at %s (%v), want %d ms", got.Sub(t0), l.Loaded, tc.want)
			}
		})
	}
	r := NewRegistrations(nil)
	r.Stop()
	if r.note(core.Source{Key: "a", Tab: "A"}, toolList("x"), nil, t0) {
		t.Error("a registration after the first list was answered was noted")
	}
	r.pageLoaded("A", t0) // must not write to the dropped maps
}
