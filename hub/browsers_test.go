package hub_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// inBrowser is mkDoc in a named browser, as cdp/multi reports it.
func inBrowser(browser, key, tab, o string) core.Source {
	src := mkDoc(browser+"/"+key, browser+"/"+tab, o)
	src.Browser = browser
	return src
}

// TestTabLost: the tools of a tab whose browser dropped stay listed as
// cached under their names, without annotations.cache too, and are never
// written to the state file; when a page has them again they are live
// under the same names, and a tab closed for real loses them.
func TestTabLost(t *testing.T) {
	dir := t.TempDir()
	h := hub.New(&fakeBrowser{}, hub.Options{StateDir: dir})
	h.Update(inBrowser("c", "d1", "T1", origin), mkTools("search", "buy"), nil)
	before := names(h)

	h.TabLost("c/T1")
	if got := names(h); !slices.Equal(got, before) {
		t.Fatalf("after TabLost the names are %v, want %v", got, before)
	}
	for _, rt := range h.Tools() {
		if !rt.Source.Cached {
			t.Errorf("%s is not cached after its browser dropped: %+v", rt.Name, rt.Source)
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if raw, err := os.ReadFile(filepath.Join(dir, "state.json")); err == nil && strings.Contains(string(raw), "search") {
		t.Errorf("a tool without annotations.cache went into the state file: %s", raw)
	}

	// The browser is back: a new connection, a new tab id.
	h.Update(inBrowser("c", "d2", "T9", origin), mkTools("search", "buy"), nil)
	if got := names(h); !slices.Equal(got, before) {
		t.Fatalf("back from the drop the names are %v, want %v", got, before)
	}
	for _, rt := range h.Tools() {
		if rt.Source.Cached || rt.Source.Browser != "c" {
			t.Errorf("%s back from the drop: %+v, want live in browser c", rt.Name, rt.Source)
		}
	}
	h.TabClosed("c/T9")
	if got := names(h); len(got) != 0 {
		t.Errorf("after the tab closed for real: %v, want none", got)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestTabNamesAcrossBrowsers: two browsers serving one site get the
// browser's name in their tab-level names; two tabs of one browser do not.
func TestTabNamesAcrossBrowsers(t *testing.T) {
	for _, tc := range []struct {
		name string
		docs []core.Source
		want []string
	}{
		{
			name: "one browser, two tabs",
			docs: []core.Source{inBrowser("a", "1", "A", origin), inBrowser("a", "2", "B", origin)},
			want: []string{site + "_search", site + "_tab1_search", site + "_tab2_search"},
		},
		{
			name: "two browsers",
			docs: []core.Source{inBrowser("a", "1", "A", origin), inBrowser("grid", "1", "A", origin)},
			want: []string{site + "_a_tab1_search", site + "_grid_tab2_search", site + "_search"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &fakeBrowser{}
			h := hub.New(b, hub.Options{})
			for _, d := range tc.docs {
				h.Update(d, mkTools("search"), nil)
			}
			got := names(h)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("names %v, want %v", got, tc.want)
			}
			for _, n := range got {
				if len(n) > hub.MaxNameLen {
					t.Errorf("%s is longer than %d", n, hub.MaxNameLen)
				}
			}
			if tc.docs[1].Browser != tc.docs[0].Browser {
				if doc := routedTo(t, h, b, site+"_grid_tab2_search"); doc != "grid/1" {
					t.Errorf("the grid tab's name went to %q", doc)
				}
			}
		})
	}
}
