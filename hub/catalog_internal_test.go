package hub

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// TestSameToolOnce: a page server's tool is dropped only where a WebMCP
// document of the same frame has the same tool.
func TestSameToolOnce(t *testing.T) {
	mk := func(key, tab, frame string, b core.Backend) candidate {
		return candidate{doc: &doc{Source: core.Source{Key: key, Tab: tab, Frame: frame, Backend: b}}}
	}
	for _, tc := range []struct {
		name  string
		cands []candidate
		want  []string // the keys kept
	}{
		{"both faces of one frame", []candidate{mk("d", "T1", "F1", core.BackendPolyfill), mk("d#mcpb:1", "T1", "F1", core.BackendMCPB)}, []string{"d"}},
		{"native and a page server", []candidate{mk("n", "T1", "F1", core.BackendNative), mk("n#mcpb:1", "T1", "F1", core.BackendMCPB)}, []string{"n"}},
		{"no page server", []candidate{mk("d", "T1", "F1", core.BackendPolyfill), mk("e", "T2", "F1", core.BackendNative)}, []string{"d", "e"}},
		{"a page server alone", []candidate{mk("d#mcpb:1", "T1", "F1", core.BackendMCPB)}, []string{"d#mcpb:1"}},
		{"another frame's page server", []candidate{mk("d", "T1", "F1", core.BackendPolyfill), mk("e#mcpb:1", "T1", "F2", core.BackendMCPB)}, []string{"d", "e#mcpb:1"}},
		{"another tab's page server", []candidate{mk("d", "T1", "F1", core.BackendPolyfill), mk("e#mcpb:1", "T2", "F1", core.BackendMCPB)}, []string{"d", "e#mcpb:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range sameToolOnce(tc.cands) {
				got = append(got, c.doc.Key)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("kept %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("kept %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestSameProvenanceSeesEveryField changes each field of a provenance in
// turn: every change must make it differ, so a field added to
// core.Provenance and not to sameProvenance fails here.
func TestSameProvenanceSeesEveryField(t *testing.T) {
	base := core.Provenance{Tool: "t", Origin: "o", URL: "u", Tab: 1, Frame: "f", Backend: core.BackendPolyfill, Tabs: []int{1, 2}, Browser: "b", Site: "s", Holders: 2}
	if !sameProvenance(base, base) {
		t.Fatal("a provenance differs from itself")
	}
	if !sameProvenance(core.Provenance{}, core.Provenance{Tabs: []int{}}) {
		t.Error("no Tabs and an empty Tabs differ (both list no tabs)")
	}
	typ := reflect.TypeFor[core.Provenance]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		t.Run(f.Name, func(t *testing.T) {
			changed := base
			changed.Tabs = slices.Clone(base.Tabs)
			v := reflect.ValueOf(&changed).Elem().Field(i)
			switch v.Kind() {
			case reflect.String:
				v.SetString(v.String() + "x")
			case reflect.Int:
				v.SetInt(v.Int() + 1)
			case reflect.Bool:
				v.SetBool(!v.Bool())
			case reflect.Slice:
				v.Set(reflect.Append(v, reflect.ValueOf(9)))
			default:
				t.Fatalf("field %s of kind %s: teach this test to change it", f.Name, v.Kind())
			}
			if sameProvenance(base, changed) {
				t.Errorf("a provenance with another %s is the same", f.Name)
			}
		})
	}
}

func TestRoutedToolSame(t *testing.T) {
	base := RoutedTool{
		Name:   "site_echo",
		Tool:   core.Tool{Name: "echo", Description: "d", InputSchema: []byte(`{"type":"object"}`), Annotations: map[string]any{"readOnlyHint": true}},
		Source: core.Provenance{Tool: "echo", Origin: "o", Tabs: []int{1, 2}},
	}
	with := func(change func(*RoutedTool)) RoutedTool {
		rt := base
		rt.Tool.Annotations = maps.Clone(base.Tool.Annotations)
		rt.Source.Tabs = slices.Clone(base.Source.Tabs)
		change(&rt)
		return rt
	}
	for _, tc := range []struct {
		name  string
		other RoutedTool
		same  bool
	}{
		{"a copy", with(func(*RoutedTool) {}), true},
		{"no tabs", with(func(rt *RoutedTool) { rt.Source.Tabs = []int{} }), false},
		{"another name", with(func(rt *RoutedTool) { rt.Name = "site_echo_2" }), false},
		{"another description", with(func(rt *RoutedTool) { rt.Tool.Description = "e" }), false},
		{"another schema", with(func(rt *RoutedTool) { rt.Tool.InputSchema = []byte(`{}`) }), false},
		{"another annotation", with(func(rt *RoutedTool) { rt.Tool.Annotations["readOnlyHint"] = false }), false},
		{"one more tab", with(func(rt *RoutedTool) { rt.Source.Tabs = append(rt.Source.Tabs, 3) }), false},
		{"another tab called", with(func(rt *RoutedTool) { rt.Source.Tab = 2 }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := base.Same(tc.other); got != tc.same {
				t.Errorf("Same = %v, want %v", got, tc.same)
			}
		})
	}
}

// TestListingIsTheGroupsTools runs a hub through changes that rebuild some
// groups and not others, names that move, tabs that close and a document
// that goes, and checks after each that the listing is sorted, names each
// tool once, holds exactly the names of the groups, and is what a rebuild
// of every group from scratch lists.
func TestListingIsTheGroupsTools(t *testing.T) {
	const a, b = "http://a.test", "http://b.test"
	doc := func(key, tab, origin string) core.Source {
		return core.Source{Key: key, Tab: tab, Frame: "f-" + key, Origin: origin, URL: origin + "/" + key, Backend: core.BackendPolyfill}
	}
	tools := func(names ...string) []core.Tool {
		out := make([]core.Tool, len(names))
		for i, n := range names {
			out[i] = core.Tool{Name: n, Description: "does " + n}
		}
		return out
	}
	h := New(&nopBrowser{}, Options{})
	steps := []struct {
		name string
		do   func()
		n    int // names listed after it
	}{
		{"one document", func() { h.Update(doc("d1", "T1", a), tools("search", "open"), nil) }, 2},
		{"another site", func() { h.Update(doc("d2", "T2", b), tools("search"), nil) }, 3},
		{"the same tools in a second tab", func() {
			h.TabOpened("T3", a+"/d3", "")
			h.Update(doc("d3", "T3", a), tools("search", "open"), nil)
		}, 7},
		{"a tool changes its description", func() {
			h.Update(doc("d1", "T1", a), []core.Tool{{Name: "search", Description: "finds"}, {Name: "open", Description: "does open"}}, nil)
		}, 7},
		{"a tool gone from one tab", func() { h.Update(doc("d3", "T3", a), tools("search"), nil) }, 5},
		{"a third tab", func() {
			h.TabOpened("T4", a+"/d4", "")
			h.Update(doc("d4", "T4", a), tools("search", "close"), nil)
		}, 7},
		{"a tab closed", func() { h.TabClosed("T1") }, 5},
		{"a document dropped", func() { h.DropDoc("d2") }, 4},
		{"the last tools gone", func() { h.Update(doc("d4", "T4", a), nil, nil) }, 1},
	}
	for _, step := range steps {
		step.do()
		h.mu.Lock()
		list := h.list
		var want []string
		for _, g := range h.groups {
			want = append(want, g.names...)
		}
		slices.Sort(want)
		var got []string
		for _, rt := range list {
			got = append(got, rt.Name)
		}
		if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Errorf("%s: listing %q is not sorted with each name once", step.name, got)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: listing %q, groups' names %q", step.name, got, want)
		}
		if len(got) != step.n {
			t.Errorf("%s: listing %q, want %d names", step.name, got, step.n)
		}
		h.rebuildLocked(nil)
		full := h.list
		h.mu.Unlock()
		if !slices.EqualFunc(list, full, RoutedTool.Same) {
			t.Errorf("%s: listing\n%v\nrebuilt from scratch\n%v", step.name, list, full)
		}
	}
}
