package hub_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// srvStep is one change in the page-server name tests: the catalog of the
// default server of a tab (key "k"+tab), or the end of that server, or a
// tab closing.
type srvStep struct {
	tab, origin string
	res, tpls   []string
	prompts     []string
	end, close  bool
}

func (s srvStep) apply(h *hub.Hub) {
	key := "k" + s.tab
	switch {
	case s.close:
		h.EndPageServer(key)
		h.TabClosed(s.tab)
	case s.end:
		h.EndPageServer(key)
	default:
		h.TabOpened(s.tab, s.origin+"/", "")
		src := core.Source{Key: key, Tab: s.tab, Origin: s.origin, URL: s.origin + "/", Backend: core.BackendMCPB}
		var res []core.Resource
		for _, u := range s.res {
			res = append(res, core.Resource{URI: u, Name: u, Raw: []byte(`{"uri":"` + u + `","name":"r"}`)})
		}
		var tpls []core.ResourceTemplate
		for _, u := range s.tpls {
			tpls = append(tpls, core.ResourceTemplate{URITemplate: u, Name: u, Raw: []byte(`{}`)})
		}
		var ps []core.Prompt
		for _, n := range s.prompts {
			ps = append(ps, core.Prompt{Name: n, Raw: []byte(`{}`)})
		}
		h.SetServerCatalog(src, core.PageServer{ID: "t:mcp-default", Channel: "mcp-default", Kind: "tab"}, res, tpls, ps)
	}
}

func TestShortServerNames(t *testing.T) {
	const a, b = "http://127.0.0.1:8080", "https://example.com"
	const pa, pb = "webmcp://127_0_0_1_8080/", "webmcp://example_com/"
	tests := []struct {
		name                 string
		steps                []srvStep
		res, tpls, prompts   []string
		resolve, resolveTmpl map[string]string // URI -> source key
		prompt               map[string]string // name -> source key
	}{
		{
			name:    "one server keeps its own names (the conformance fixture)",
			steps:   []srvStep{{tab: "T1", origin: a, res: []string{"test://static-text"}, tpls: []string{"test://template/{id}/data"}, prompts: []string{"test_simple_prompt"}}},
			res:     []string{"test://static-text"},
			tpls:    []string{"test://template/{id}/data"},
			prompts: []string{"test_simple_prompt"},
			resolve: map[string]string{"test://static-text": "kT1", "test://template/7/data": "kT1", pa + "tab1/test://static-text": "kT1"},
			prompt:  map[string]string{"test_simple_prompt": "kT1"},
		},
		{
			name: "two tabs of one site: the own name goes to the latest, the routed ones to each",
			steps: []srvStep{
				{tab: "T1", origin: a, res: []string{"test://x"}, prompts: []string{"p"}},
				{tab: "T2", origin: a, res: []string{"test://x"}, prompts: []string{"p"}},
			},
			res:     []string{"test://x", pa + "tab1/test://x", pa + "tab2/test://x"},
			prompts: []string{"127_0_0_1_8080_tab1_p", "127_0_0_1_8080_tab2_p", "p"},
			resolve: map[string]string{"test://x": "kT2", pa + "tab1/test://x": "kT1"},
			prompt:  map[string]string{"p": "kT2", "127_0_0_1_8080_tab1_p": "kT1"},
		},
		{
			name: "a clash: both fall back, the rest stays",
			steps: []srvStep{
				{tab: "T1", origin: a, res: []string{"test://x", "test://a-only"}, prompts: []string{"p"}},
				{tab: "T2", origin: b, res: []string{"test://x"}, prompts: []string{"p"}},
			},
			res:     []string{"test://a-only", pa + "tab1/test://x", pb + "tab2/test://x"},
			prompts: []string{"127_0_0_1_8080_tab1_p", "example_com_tab2_p"},
			resolve: map[string]string{"test://x": "", pb + "tab2/test://x": "kT2", "test://a-only": "kT1"},
			prompt:  map[string]string{"p": ""},
		},
		{
			name: "the clash goes away: the fallen-back names stay while their tab lives",
			steps: []srvStep{
				{tab: "T1", origin: a, res: []string{"test://x"}},
				{tab: "T2", origin: b, res: []string{"test://x"}},
				{tab: "T2", close: true},
				{tab: "T1", origin: a, res: []string{"test://x"}}, // a reload: a new listing in the same tab
			},
			res:     []string{pa + "tab1/test://x"},
			resolve: map[string]string{"test://x": ""},
		},
		{
			name: "once every tab that saw the clash closed, the own name is back",
			steps: []srvStep{
				{tab: "T1", origin: a, res: []string{"test://x"}},
				{tab: "T2", origin: b, res: []string{"test://x"}},
				{tab: "T1", close: true},
				{tab: "T2", close: true},
				{tab: "T3", origin: b, res: []string{"test://x"}},
			},
			res:     []string{"test://x"},
			resolve: map[string]string{"test://x": "kT3"},
		},
		{
			name: "a template that matches another site's resource clashes with it",
			steps: []srvStep{
				{tab: "T1", origin: a, res: []string{"https://shop.example/cart"}},
				{tab: "T2", origin: b, tpls: []string{"https://{host}/cart", "https://shop.example/{path}"}},
			},
			res:  []string{pa + "tab1/https://shop.example/cart"},
			tpls: []string{pb + "tab2/https://shop.example/{path}", pb + "tab2/https://{host}/cart"},
		},
		{
			name: "templates that overlap across sites clash, the others keep their own form",
			steps: []srvStep{
				{tab: "T1", origin: a, tpls: []string{"note://{id}", "note://list/{page}"}},
				{tab: "T2", origin: b, tpls: []string{"note://x/{id}", "todo://{id}"}},
			},
			tpls:    []string{"note://list/{page}", "todo://{id}", pa + "tab1/note://{id}", pb + "tab2/note://x/{id}"},
			resolve: map[string]string{"todo://5": "kT2", "note://list/2": "kT1", "note://5": "", "note://x/5": ""},
		},
		{
			name:    "within a site, the template with the longest beginning takes a read",
			steps:   []srvStep{{tab: "T1", origin: a, tpls: []string{"note://{id}"}}, {tab: "T2", origin: a, tpls: []string{"note://list/{page}"}}},
			tpls:    []string{"note://list/{page}", "note://{id}"},
			resolve: map[string]string{"note://list/2": "kT2", "note://5": "kT1"},
		},
		{
			name: "names that could stand for routed ones keep their routed form",
			steps: []srvStep{{tab: "T1", origin: a,
				res:     []string{"webmcp://example_com/tab1/test://x", "WebMCP://y"},
				tpls:    []string{"{+any}", "webmcp://{x}"},
				prompts: []string{"example_com_tab1_p", "webmcp_p", "ok"}}},
			res:     []string{pa + "tab1/WebMCP://y", pa + "tab1/webmcp://example_com/tab1/test://x"},
			tpls:    []string{pa + "tab1/webmcp://{x}", pa + "tab1/{+any}"},
			prompts: []string{"127_0_0_1_8080_tab1_example_com_tab1_p", "127_0_0_1_8080_tab1_webmcp_p", "ok"},
			resolve: map[string]string{"WebMCP://y": "", "webmcp://example_com/tab1/test://x": ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hub.New(&fakeBrowser{}, hub.Options{Names: hub.NamesShort})
			for _, s := range tt.steps {
				s.apply(h)
			}
			rs, ts, ps := h.ServerCatalog()
			var gotR, gotT, gotP []string
			for _, r := range rs {
				gotR = append(gotR, r.URI)
			}
			for _, r := range ts {
				gotT = append(gotT, r.URITemplate)
			}
			for _, r := range ps {
				gotP = append(gotP, r.Name)
			}
			for _, c := range []struct {
				what      string
				got, want []string
			}{{"resources", gotR, tt.res}, {"templates", gotT, tt.tpls}, {"prompts", gotP, tt.prompts}} {
				if !reflect.DeepEqual(c.got, c.want) {
					t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
				}
			}
			for uri, want := range tt.resolve {
				key, orig, err := h.ResolveURI(uri)
				if want == "" {
					if err == nil {
						t.Errorf("ResolveURI(%q) = %q, %q; want an error", uri, key, orig)
					}
					continue
				}
				if err != nil || key != want {
					t.Errorf("ResolveURI(%q) = %q, %v; want %q", uri, key, err, want)
				}
				if back := h.RoutedURI(key, orig); back != uri && !strings.HasPrefix(uri, hub.URIScheme) {
					t.Errorf("RoutedURI(%q, %q) = %q, want %q", key, orig, back, uri)
				}
			}
			for name, want := range tt.prompt {
				key, _, err := h.ResolvePrompt(name)
				if want == "" && err == nil || want != "" && (err != nil || key != want) {
					t.Errorf("ResolvePrompt(%q) = %q, %v; want %q", name, key, err, want)
				}
			}
		})
	}
}

// TestSiteServerNames: the default style routes every entry.
func TestSiteServerNames(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{})
	srvStep{tab: "T1", origin: "http://127.0.0.1:8080", res: []string{"test://x"}, prompts: []string{"p"}}.apply(h)
	rs, _, ps := h.ServerCatalog()
	if len(rs) != 1 || rs[0].URI != "webmcp://127_0_0_1_8080/tab1/test://x" || len(ps) != 1 || ps[0].Name != "127_0_0_1_8080_tab1_p" {
		t.Errorf("resources %+v, prompts %+v", rs, ps)
	}
	if _, _, err := h.ResolveURI("test://x"); err == nil {
		t.Error("ResolveURI of an own URI worked with --tool-names site")
	}
}
