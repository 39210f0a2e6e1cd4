package hub_test

import (
	"reflect"
	"sort"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// step is one change to a hub in the short-name tests: a document's tools
// (tools nil drops the document), a tab closing, or a tab activated.
type step struct {
	doc    string // key; the tab is the key in upper case
	origin string
	tools  []string
	close  string // a tab to close instead
}

func (s step) apply(h *hub.Hub) {
	switch {
	case s.close != "":
		h.TabClosed(s.close)
	case s.tools == nil:
		h.DropDoc(s.doc)
	default:
		h.Update(mkDoc(s.doc, upper(s.doc), s.origin), mkTools(s.tools...), nil)
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

const other = "https://example.com"

func TestShortToolNames(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
		want  []string
		// routes: a listed name and the document it reaches.
		routes map[string]string
	}{
		{
			name:   "one site keeps the page's names",
			steps:  []step{{doc: "a", origin: origin, tools: []string{"add_note", "search"}}},
			want:   []string{"add_note", "search"},
			routes: map[string]string{"add_note": "a"},
		},
		{
			name: "two tabs of one site: the own name and the tab-level names",
			steps: []step{
				{doc: "a", origin: origin, tools: []string{"search"}},
				{doc: "b", origin: origin, tools: []string{"search"}},
			},
			want:   []string{"search", site + "_tab1_search", site + "_tab2_search"},
			routes: map[string]string{site + "_tab1_search": "a", site + "_tab2_search": "b"},
		},
		{
			name: "a clash: both fall back to the site's names",
			steps: []step{
				{doc: "a", origin: origin, tools: []string{"search", "add_note"}},
				{doc: "b", origin: other, tools: []string{"search"}},
			},
			want:   []string{"add_note", site + "_search", "example_com_search"},
			routes: map[string]string{site + "_search": "a", "example_com_search": "b"},
		},
		{
			name: "the clash goes away: the names stay while their tabs live",
			steps: []step{
				{doc: "a", origin: origin, tools: []string{"search"}},
				{doc: "b", origin: other, tools: []string{"search"}},
				{close: "B"},
			},
			want:   []string{site + "_search"},
			routes: map[string]string{site + "_search": "a"},
		},
		{
			name: "the first holder's tab closes: the second does not take the own name",
			steps: []step{
				{doc: "a", origin: origin, tools: []string{"search"}},
				{doc: "b", origin: other, tools: []string{"search"}},
				{close: "A"},
			},
			want: []string{"example_com_search"},
		},
		{
			name: "a tool that left a living tab keeps its own name from another site",
			steps: []step{
				{doc: "a", origin: origin, tools: []string{"search", "x"}},
				{doc: "a", origin: origin, tools: []string{"x"}},
				{doc: "b", origin: other, tools: []string{"search"}},
			},
			want: []string{"example_com_search", "x"},
		},
		{
			name: "after every holder's tab closed, the own name is free again",
			steps: []step{
				{doc: "a", origin: origin, tools: []string{"search"}},
				{doc: "b", origin: other, tools: []string{"search"}},
				{close: "A"},
				{close: "B"},
				{doc: "c", origin: other, tools: []string{"search"}},
			},
			want:   []string{"search"},
			routes: map[string]string{"search": "c"},
		},
		{
			name: "http and https of one host are two origins",
			steps: []step{
				{doc: "a", origin: "http://example.com", tools: []string{"search"}},
				{doc: "b", origin: "https://example.com", tools: []string{"search"}},
			},
			want: []string{"example_com_search", "example_com_search_" + "*"},
		},
		{
			name:  "the reserved prefix is never an own name",
			steps: []step{{doc: "a", origin: origin, tools: []string{"webmcp_call", "WebMCP_x"}}},
			want:  []string{site + "_WebMCP_x", site + "_webmcp_call"},
		},
		{
			name: "an own name another site's tool already has",
			steps: []step{
				{doc: "a", origin: origin, tools: []string{"search"}},
				{doc: "b", origin: other, tools: []string{"search"}},
				{doc: "c", origin: "https://c.example", tools: []string{site + "_search"}},
			},
			want: []string{"c_example_" + site + "_search", site + "_search", "example_com_search"},
		},
		{
			name:  "characters outside the set get a hash, as in site names",
			steps: []step{{doc: "a", origin: origin, tools: []string{"notes.add"}}},
			want:  []string{"notes_add_*"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeBrowser{}
			h := hub.New(b, hub.Options{Names: hub.NamesShort})
			for _, s := range tt.steps {
				s.apply(h)
			}
			checkCatalog(t, h, b)
			got := names(h)
			want := append([]string(nil), tt.want...)
			sort.Strings(want)
			if !matchNames(got, want) {
				t.Errorf("names = %q, want %q", got, want)
			}
			for name, doc := range tt.routes {
				if d := routedTo(t, h, b, name); d != doc {
					t.Errorf("%s reached document %q, want %q", name, d, doc)
				}
			}
		})
	}
}

// matchNames compares sorted names, where a want ending in "*" matches any
// name with that beginning (a hash follows).
func matchNames(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	rest := append([]string(nil), got...)
	for _, w := range want {
		i := -1
		for j, g := range rest {
			if g == w || w[len(w)-1] == '*' && len(g) > len(w)-1 && g[:len(w)-1] == w[:len(w)-1] {
				i = j
				break
			}
		}
		if i < 0 {
			return false
		}
		rest = append(rest[:i], rest[i+1:]...)
	}
	return true
}

// TestShortToolNamesSiteStyle: the default style is today's names.
func TestShortToolNamesSiteStyle(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{})
	h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
	if got, want := names(h), []string{site + "_search"}; !reflect.DeepEqual(got, want) {
		t.Errorf("names = %q, want %q", got, want)
	}
}

func TestParseNameStyle(t *testing.T) {
	for in, want := range map[string]hub.NameStyle{"": hub.NamesSite, "site": hub.NamesSite, "short": hub.NamesShort} {
		if got, err := hub.ParseNameStyle(in); err != nil || got != want {
			t.Errorf("ParseNameStyle(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := hub.ParseNameStyle("Short"); err == nil {
		t.Error(`ParseNameStyle("Short") did not fail`)
	}
}

// TestShortNamesOfCachedTools: a cached tool's short name is saved; a
// restart gives it back while its origin is alone with the tool, and the
// site name in the default style or beside a cached tool of another
// origin.
func TestShortNamesOfCachedTools(t *testing.T) {
	dir := t.TempDir()
	h := hub.New(&fakeBrowser{}, hub.Options{StateDir: dir, Names: hub.NamesShort})
	h.Update(mkDoc("a", "A", origin), []core.Tool{cachedTool("find")}, nil)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		style hub.NameStyle
		want  []string
	}{
		{hub.NamesShort, []string{"find"}},
		{hub.NamesSite, []string{site + "_find"}},
	} {
		// Each hub is closed before the next starts: an open one may
		// still write the state file.
		hh := hub.New(&fakeBrowser{}, hub.Options{StateDir: dir, Names: tt.style})
		if got := names(hh); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s after a restart: names = %q, want %q", tt.style, got, tt.want)
		}
		if err := hh.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// Another origin caches the same tool: both fall back, now and after
	// a restart.
	h = hub.New(&fakeBrowser{}, hub.Options{StateDir: dir, Names: hub.NamesShort})
	h.Update(mkDoc("b", "B", other), []core.Tool{cachedTool("find")}, nil)
	want := []string{site + "_find", "example_com_find"}
	if got := names(h); !reflect.DeepEqual(got, want) {
		t.Errorf("with a second origin: names = %q, want %q", got, want)
	}
	h.TabClosed("B")
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if got := names(hub.New(&fakeBrowser{}, hub.Options{StateDir: dir, Names: hub.NamesShort})); !reflect.DeepEqual(got, want) {
		t.Errorf("after a restart: names = %q, want %q", got, want)
	}
}
