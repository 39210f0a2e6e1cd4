package hub_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// fakeSession is a page server's session that answers every call with its
// own name.
type fakeSession struct{ name string }

func (f fakeSession) CallTool(_ context.Context, tool string, _ json.RawMessage) (core.Result, error) {
	return core.Result{Kind: core.KindString, Value: f.name + ":" + tool}, nil
}

func psSource(tab, key string) core.Source {
	return core.Source{Key: key, Tab: tab, Origin: "http://127.0.0.1:8080", URL: "http://127.0.0.1:8080/", Backend: core.BackendMCPB}
}

// TestPageServerToolsRouteToTheSession: a page server's tools are admitted
// like a document's and their calls go to its session, not the browser;
// once the session ends they are gone.
func TestPageServerToolsRouteToTheSession(t *testing.T) {
	b := &fakeBrowser{}
	h := hub.New(b, hub.Options{})
	h.TabOpened("T1", "http://127.0.0.1:8080/", "shop")
	src := psSource("T1", "doc1#mcpb:t:mcp-default")
	h.SetPageServerClient(src, core.PageServer{ID: "t:mcp-default", Channel: "mcp-default", Kind: "tab"}, fakeSession{"s1"})
	h.Update(src, []core.Tool{{Name: "add", Description: "Adds", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`)}}, nil)
	tools := h.Tools()
	if len(tools) != 1 || tools[0].Source.Backend != core.BackendMCPB || tools[0].Source.Tab != 1 {
		t.Fatalf("tools = %+v", tools)
	}
	if o := h.Call(context.Background(), tools[0].Name, json.RawMessage(`{"n":1}`)); o.IsError || o.FirstText() != "s1:add" {
		t.Errorf("call = %+v", o)
	}
	if o := h.Call(context.Background(), tools[0].Name, json.RawMessage(`{"n":"x"}`)); !o.IsError {
		t.Errorf("a call against the schema went through: %+v", o)
	}
	if len(b.calls) != 0 {
		t.Errorf("the browser was called: %+v", b.calls)
	}
	h.SetServerCatalog(src, core.PageServer{ID: "t:mcp-default", Channel: "mcp-default", Kind: "tab"},
		[]core.Resource{{URI: "cart://current", Raw: json.RawMessage(`{}`)}}, nil, []core.Prompt{{Name: "help", Raw: json.RawMessage(`{}`)}})
	want := []hub.PageServerInfo{{Tab: "T1", Channel: "mcp-default", Kind: "tab", Tools: 1, Resources: 1, Prompts: 1}}
	if got := h.PageServers(); !reflect.DeepEqual(got, want) {
		t.Errorf("page servers = %+v, want %+v", got, want)
	}
	h.EndPageServer(src.Key)
	if got := h.Tools(); len(got) != 0 {
		t.Errorf("after the session ended: %+v", got)
	}
	if got := h.PageServers(); len(got) != 0 {
		t.Errorf("page servers after the session ended: %+v", got)
	}
}

// TestServerCatalogRoutesAndBounds: resources, templates and prompts get
// routed URIs and names that resolve back to the server's own, and only
// through the catalog; bad or oversized entries are refused with reasons.
func TestServerCatalogRoutesAndBounds(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{})
	h.TabOpened("T1", "http://127.0.0.1:8080/", "shop")
	main := psSource("T1", "doc1#mcpb:t:mcp-default")
	frame := psSource("T1", "doc1#mcpb:f1:mcp-iframe")
	raw := json.RawMessage(`{}`)
	refused := h.SetServerCatalog(main, core.PageServer{ID: "t:mcp-default", Channel: "mcp-default", Kind: "tab"},
		[]core.Resource{{URI: "cart://current", Raw: raw}, {URI: "no scheme", Raw: raw}, {URI: "big://x", Raw: json.RawMessage(`"` + strings.Repeat("x", 20000) + `"`)}},
		[]core.ResourceTemplate{{URITemplate: "product://{sku}", Raw: raw}},
		[]core.Prompt{{Name: "help", Raw: raw}, {Name: "help", Raw: raw}})
	if len(refused) != 3 {
		t.Errorf("refused = %q, want the URI without a scheme, the oversized one and the second prompt", refused)
	}
	h.SetServerCatalog(frame, core.PageServer{ID: "f1:mcp-iframe", Channel: "mcp-iframe", Kind: "iframe", FrameOrigin: "http://localhost:9"},
		[]core.Resource{{URI: "cart://current", Raw: raw}}, nil, nil)
	rs, ts, ps := h.ServerCatalog()
	want := []string{"webmcp://127_0_0_1_8080/tab1-f1-mcp-iframe/cart://current", "webmcp://127_0_0_1_8080/tab1/cart://current"}
	if len(rs) != 2 || rs[0].URI != want[0] || rs[1].URI != want[1] {
		t.Errorf("resources = %+v", rs)
	}
	if rs[0].Source.FrameOrigin != "http://localhost:9" || rs[1].Source.Backend != core.BackendMCPB || rs[1].Source.Tab != 1 {
		t.Errorf("provenance = %+v / %+v", rs[0].Source, rs[1].Source)
	}
	if len(ts) != 1 || ts[0].URITemplate != "webmcp://127_0_0_1_8080/tab1/product://{sku}" {
		t.Errorf("templates = %+v", ts)
	}
	if len(ps) != 1 || ps[0].Name != "127_0_0_1_8080_tab1_help" {
		t.Errorf("prompts = %+v", ps)
	}
	for _, tc := range []struct {
		uri, key, orig string
		ok             bool
	}{
		{want[1], main.Key, "cart://current", true},
		{want[0], frame.Key, "cart://current", true},
		{"webmcp://127_0_0_1_8080/tab1/product://B7", main.Key, "product://B7", true},
		{"webmcp://127_0_0_1_8080/tab2/cart://current", "", "", false},
		{"webmcp://127_0_0_1_8080/tab1/", "", "", false},
		{"cart://current", "", "", false},
	} {
		key, orig, err := h.ResolveURI(tc.uri)
		if (err == nil) != tc.ok || key != tc.key || orig != tc.orig {
			t.Errorf("ResolveURI(%q) = %q, %q, %v", tc.uri, key, orig, err)
		}
	}
	if key, orig, err := h.ResolvePrompt("127_0_0_1_8080_tab1_help"); err != nil || key != main.Key || orig != "help" {
		t.Errorf("ResolvePrompt = %q, %q, %v", key, orig, err)
	}
	if got := h.RoutedURI(main.Key, "product://Z"); got != "webmcp://127_0_0_1_8080/tab1/product://Z" {
		t.Errorf("RoutedURI = %q", got)
	}
	h.EndPageServer(main.Key)
	if _, _, err := h.ResolveURI(want[1]); err == nil {
		t.Error("a URI of an ended server still resolves")
	}
	if rs, _, _ := h.ServerCatalog(); len(rs) != 1 {
		t.Errorf("after the main server ended: %+v", rs)
	}
}

// TestPageServerQueueIsBounded: page servers wait for the MCP edge in a
// bounded queue; over it they are closed and refused.
func TestPageServerQueueIsBounded(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{})
	h.TabOpened("T1", "http://127.0.0.1:8080/", "shop")
	conns := make([]*fakeConn, 70)
	for i := range conns {
		conns[i] = &fakeConn{}
		h.PageServer(psSource("T1", "k"), conns[i])
	}
	if !conns[69].closed || conns[0].closed {
		t.Errorf("closed: first %v, last %v", conns[0].closed, conns[69].closed)
	}
	c, err := h.NextPageServer(context.Background())
	if err != nil || c.Conn != conns[0] {
		t.Errorf("NextPageServer = %v, %v", c, err)
	}
	refs, _ := h.Refusals(0)
	if len(refs) == 0 || !strings.Contains(refs[0].Detail, "page server") {
		t.Errorf("refusals = %+v", refs)
	}
}

type fakeConn struct{ closed bool }

func (f *fakeConn) Server() core.PageServer                  { return core.PageServer{} }
func (f *fakeConn) Recv(context.Context) ([]byte, error)     { return nil, core.ErrPageServerGone }
func (f *fakeConn) Send(context.Context, []byte, bool) error { return nil }
func (f *fakeConn) Done() <-chan struct{}                    { return nil }
func (f *fakeConn) Dropped() map[string]int                  { return nil }
func (f *fakeConn) DropSignal() <-chan struct{}              { return nil }
func (f *fakeConn) Close()                                   { f.closed = true }
