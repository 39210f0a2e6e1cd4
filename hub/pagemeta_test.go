package hub_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// loggedHub is a hub over b whose log the test reads.
func loggedHub(b hub.Browser, opts hub.Options) (*hub.Hub, *logBuffer) {
	log := &logBuffer{}
	opts.Logger = log.logger()
	return hub.New(b, opts), log
}

func TestReservedMetaKey(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		key  string
		want bool
	}{
		{"io.modelcontextprotocol/related-task", true},
		{"IO.ModelContextProtocol/x", true},
		{"modelcontextprotocol.io/x", true},
		{"tools.mcp.com/x", true},
		{"dev.mcp/x", true},
		{"webmcp-cdp/source", true},
		{"WebMCP-CDP/annotations", true},
		{"ui", false},
		{"ui/resourceUri", false},
		{"openai/outputTemplate", false},
		{"com.example/x", false},
		{"mcp/x", false}, // a single label is not one of MCP's prefixes
		{"mcpish.dev/x", false},
		{"com.mcp.tools/x", true},
		{"org.modelcontextprotocol.api/x", true},
		{"com.example.mcp/x", false},       // MCP's own example: the second label is example
		{"io.modelcontextprotocol", false}, // no prefix at all
	} {
		if got := hub.ReservedMetaKey(tt.key); got != tt.want {
			t.Errorf("ReservedMetaKey(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

// TestToolCarriesAdmission: a page's outputSchema, _meta and icons pass
// admission as the page gave them, within their bounds; a tool over a bound
// or with the wrong shape is refused with its reason (the page's other
// tool stays); reserved _meta keys and bad icons are dropped, logged with
// the page, and the rest stays.
func TestToolCarriesAdmission(t *testing.T) {
	t.Parallel()
	big := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name       string
		tool       core.Tool
		refused    string // a substring of the refusal; "" for admitted
		wantOut    string // the admitted outputSchema
		wantMeta   string // the admitted _meta
		wantIcons  string // the admitted icons
		wantLogged string // a substring of the log; "" for no drop logged
	}{
		{name: "all carried as given",
			tool: core.Tool{OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
				Meta:  json.RawMessage(`{"ui":{"resourceUri":"ui://shop/cart.html"},"com.example/n":1}`),
				Icons: json.RawMessage(`[{"src":"https://shop.example/i.png","mimeType":"image/png","sizes":["48x48"]}]`)},
			wantOut: `{"type":"object","properties":{"n":{"type":"integer"}}}`, wantMeta: `{"ui":{"resourceUri":"ui://shop/cart.html"},"com.example/n":1}`,
			wantIcons: `[{"src":"https://shop.example/i.png","mimeType":"image/png","sizes":["48x48"]}]`},
		{name: "outputSchema without a type gets object",
			tool:    core.Tool{OutputSchema: json.RawMessage(`{"properties":{}}`)},
			wantOut: `{"properties":{},"type":"object"}`},
		{name: "outputSchema of another type", tool: core.Tool{OutputSchema: json.RawMessage(`{"type":"array"}`)},
			refused: "its outputSchema has type array; MCP tools give an object"},
		{name: "outputSchema not an object", tool: core.Tool{OutputSchema: json.RawMessage(`[1]`)},
			refused: "its outputSchema is not a JSON object"},
		{name: "outputSchema over the schema limit", tool: core.Tool{OutputSchema: json.RawMessage(`{"description":"` + big(hub.DefaultSchemaBytes) + `"}`)},
			refused: "its outputSchema is 65554 bytes, over the limit of 65536"},
		{name: "10 MB _meta", tool: core.Tool{Meta: json.RawMessage(`{"x":"` + big(10<<20) + `"}`)},
			refused: "its _meta is 10485768 bytes, over the limit of 16384"},
		{name: "_meta not an object", tool: core.Tool{Meta: json.RawMessage(`"ui"`)},
			refused: "its _meta is not a JSON object"},
		{name: "icons over their limit", tool: core.Tool{Icons: json.RawMessage(`[{"src":"data:image/png;base64,` + big(hub.MaxIconsBytes) + `"}]`)},
			refused: "its icons are 16418 bytes, over the limit of 16384"},
		{name: "icons not an array", tool: core.Tool{Icons: json.RawMessage(`{"src":"https://a.example/i.png"}`)},
			refused: "its icons are not a JSON array"},
		{name: "forged keys dropped",
			tool:       core.Tool{Meta: json.RawMessage(`{"io.modelcontextprotocol/x":1,"webmcp-cdp/source":{"origin":"https://bank.example"},"ui":{"resourceUri":"ui://a"}}`)},
			wantMeta:   `{"ui":{"resourceUri":"ui://a"}}`,
			wantLogged: `_meta key \"io.modelcontextprotocol/x\" (reserved to MCP or webmcp-cdp); _meta key \"webmcp-cdp/source\"`},
		{name: "only forged keys", tool: core.Tool{Meta: json.RawMessage(`{"io.modelcontextprotocol/x":1}`)},
			wantLogged: `io.modelcontextprotocol/x`},
		{name: "bad icons dropped",
			tool:       core.Tool{Icons: json.RawMessage(`[{"src":"javascript:alert(1)"},{"src":"https://a.example/i.png"},{"src":"data:text/html,<b>"},"x",{"src":"https://a.example/j.png","sizes":"48x48"}]`)},
			wantIcons:  `[{"src":"https://a.example/i.png"}]`,
			wantLogged: `icon 0 (its src is not an https:, http: or data: URL); icon 2 (a data: src that is not an image); icon 3 (not an object with a src (and a mimeType, sizes and theme of MCP's types)); icon 4 (not an object`},
		{name: "icons past the eighth dropped",
			tool:       core.Tool{Icons: json.RawMessage(`[` + strings.TrimSuffix(strings.Repeat(`{"src":"https://a.example/i.png"},`, 9), ",") + `]`)},
			wantIcons:  `[` + strings.TrimSuffix(strings.Repeat(`{"src":"https://a.example/i.png"},`, 8), ",") + `]`,
			wantLogged: "icon 8 (over 8 icons)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, log := loggedHub(&fakeBrowser{}, hub.Options{})
			tl := tt.tool
			tl.Name, tl.Description = "shop", "a tool that carries things"
			h.Update(mkDoc("a", "A", origin), append(mkTools("other"), tl), nil)
			if _, ok := h.Tool(site + "_other"); !ok {
				t.Fatal("the page's other tool was lost")
			}
			rt, ok := h.Tool(site + "_shop")
			refused, _ := h.Refusals(0)
			if tt.refused != "" {
				if ok {
					t.Fatalf("admitted, want refused with %q", tt.refused)
				}
				if len(refused) != 1 || !strings.Contains(refused[0].Detail, tt.refused) {
					t.Fatalf("refusals = %v, want one with %q", refused, tt.refused)
				}
				return
			}
			if !ok {
				t.Fatalf("refused: %v", refused)
			}
			for _, f := range []struct{ what, got, want string }{
				{"outputSchema", string(rt.Tool.OutputSchema), tt.wantOut},
				{"_meta", string(rt.Tool.Meta), tt.wantMeta},
				{"icons", string(rt.Tool.Icons), tt.wantIcons},
			} {
				if f.got != f.want {
					t.Errorf("%s = %s, want %s", f.what, f.got, f.want)
				}
			}
			logged := log.String()
			if tt.wantLogged == "" && strings.Contains(logged, "dropped") {
				t.Errorf("logged a drop: %s", logged)
			}
			if tt.wantLogged != "" {
				if !strings.Contains(logged, tt.wantLogged) || !strings.Contains(logged, "url=http://127.0.0.1:8080/page-a") || !strings.Contains(logged, "tool=shop") {
					t.Errorf("log = %s, want the page, the tool and %s", logged, tt.wantLogged)
				}
			}
		})
	}
}

// TestToolCarriesChanges: a tool whose _meta alone changes is listed anew.
func TestToolCarriesChanges(t *testing.T) {
	t.Parallel()
	h := hub.New(&fakeBrowser{}, hub.Options{})
	tl := core.Tool{Name: "shop", Description: "d", Meta: json.RawMessage(`{"ui":{"resourceUri":"ui://a"}}`)}
	h.Update(mkDoc("a", "A", origin), []core.Tool{tl}, nil)
	v := h.Version()
	tl.Meta = json.RawMessage(`{"ui":{"resourceUri":"ui://b"}}`)
	h.Update(mkDoc("a", "A", origin), []core.Tool{tl}, nil)
	rt, _ := h.Tool(site + "_shop")
	if string(rt.Tool.Meta) != `{"ui":{"resourceUri":"ui://b"}}` || h.Version() == v {
		t.Errorf("after a _meta change: _meta %s, version %d (was %d)", rt.Tool.Meta, h.Version(), v)
	}
}

// TestResultCarries: a page's structuredContent and _meta reach the
// outcome as given; reserved _meta keys and a _meta over its bound are
// dropped and logged; a tool with an outputSchema gets an error naming the
// page when its result has no structuredContent or one that does not fit.
func TestResultCarries(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type":"object","properties":{"total":{"type":"integer"}},"required":["total"]}`)
	tests := []struct {
		name       string
		schema     json.RawMessage
		value      string // the page's result, as JSON
		max        int    // MaxResultBytes; 0 for the default
		wantError  string // a substring of the error; "" for none
		wantStruct string
		wantMeta   map[string]any
		wantLogged string
	}{
		{name: "structured and _meta as given", schema: schema,
			value:      `{"content":[{"type":"text","text":"3 items"}],"structuredContent":{"total":3},"_meta":{"ui":{"view":"cart"},"com.example/k":[1,2]}}`,
			wantStruct: `{"total":3}`, wantMeta: map[string]any{"ui": map[string]any{"view": "cart"}, "com.example/k": []any{1.0, 2.0}}},
		{name: "every content type", value: `{"content":[{"type":"text","text":"t"},{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"audio","data":"AA==","mimeType":"audio/wav"},{"type":"resource_link","uri":"https://a.example/r","name":"r"},{"type":"resource","resource":{"uri":"a://b","text":"x"}}]}`},
		{name: "forged keys dropped", value: `{"content":[],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"},"webmcp-cdp/untrustedContent":false,"ok":true}}`,
			wantMeta: map[string]any{"ok": true}, wantLogged: "dropped=\"io.modelcontextprotocol/related-task; webmcp-cdp/untrustedContent\""},
		{name: "_meta over its bound", value: `{"content":[{"type":"text","text":"kept"}],"_meta":{"x":"` + strings.Repeat("y", hub.MaxResultMetaBytes) + `"}}`,
			wantLogged: "over the limit of 65536"},
		{name: "no structuredContent", schema: schema, value: `{"content":[{"type":"text","text":"3"}]}`,
			wantError: "declares an outputSchema, but the result the page http://127.0.0.1:8080/page-a returned has no structuredContent object"},
		{name: "structuredContent that does not fit", schema: schema, value: `{"content":[],"structuredContent":{"total":"three"}}`,
			wantError: "the result the page http://127.0.0.1:8080/page-a returned for 127_0_0_1_8080_shop does not fit the tool's outputSchema: at /total: got string, want integer"},
		{name: "a plain object checked too", schema: schema, value: `{"total":1.5}`,
			wantError: "at /total: got number, want integer"},
		{name: "a plain object that fits", schema: schema, value: `{"total":2}`, wantStruct: `{"total":2}`},
		{name: "an error result needs no structuredContent", schema: schema, value: `{"content":[{"type":"text","text":"out of stock"}],"isError":true}`,
			wantError: "out of stock"},
		{name: "a cut result", schema: schema, max: 16, value: `{"content":[],"structuredContent":{"total":3}}`,
			wantError: "was over the limit of 16 bytes, so it has no structuredContent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := &fakeBrowser{respond: func(context.Context, invocation) (core.Result, error) {
				return core.Result{Kind: core.KindJSON, Value: tt.value}, nil
			}}
			h, log := loggedHub(b, hub.Options{MaxResultBytes: tt.max})
			h.Update(mkDoc("a", "A", origin), []core.Tool{{Name: "shop", Description: "d", OutputSchema: tt.schema}}, nil)
			r := h.Call(context.Background(), site+"_shop", nil)
			if tt.wantError != "" {
				if !r.IsError || !strings.Contains(r.FirstText(), tt.wantError) {
					t.Fatalf("outcome = %+v, want an error with %q", r, tt.wantError)
				}
				return
			}
			if r.IsError {
				t.Fatalf("an error: %s", r.FirstText())
			}
			if string(r.Structured) != tt.wantStruct {
				t.Errorf("structuredContent = %s, want %s", r.Structured, tt.wantStruct)
			}
			if got, want := jsonOf(t, r.Meta), jsonOf(t, tt.wantMeta); got != want {
				t.Errorf("_meta = %s, want %s", got, want)
			}
			if tt.name == "every content type" {
				var want struct{ Content []json.RawMessage }
				json.Unmarshal([]byte(tt.value), &want)
				if len(r.Content) != len(want.Content) {
					t.Fatalf("content = %+v, want %d blocks", r.Content, len(want.Content))
				}
				for i, b := range r.Content[1:] {
					if string(b.Raw) != string(want.Content[i+1]) {
						t.Errorf("block %d = %s, want %s", i+1, b.Raw, want.Content[i+1])
					}
				}
			}
			logged := log.String()
			if tt.wantLogged == "" && strings.Contains(logged, "dropped") {
				t.Errorf("logged a drop: %s", logged)
			}
			if tt.wantLogged != "" && (!strings.Contains(logged, tt.wantLogged) || !strings.Contains(logged, "url=http://127.0.0.1:8080/page-a")) {
				t.Errorf("log = %s, want the page and %s", logged, tt.wantLogged)
			}
		})
	}
}

// TestDeclarationsCarry: a page server's resources, templates and prompts
// keep their title, icons, annotations and _meta as declared, less the
// _meta keys a page may not set, which are dropped and refused with the
// page named; a declaration without such keys keeps its bytes.
func TestDeclarationsCarry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, decl, want, refused string
	}{
		{"kept as declared",
			`{"uri":"cart://a","name":"a","title":"Cart","icons":[{"src":"https://a.example/i.png"}],"annotations":{"audience":["user"],"priority":0.5},"_meta":{"ui":{"csp":{"connectDomains":["https://api.example"]}}}}`,
			`{"uri":"cart://a","name":"a","title":"Cart","icons":[{"src":"https://a.example/i.png"}],"annotations":{"audience":["user"],"priority":0.5},"_meta":{"ui":{"csp":{"connectDomains":["https://api.example"]}}}}`, ""},
		{"forged keys dropped",
			`{"uri":"cart://a","name":"a","_meta":{"io.modelcontextprotocol/x":1,"webmcp-cdp/source":{},"ui":{"prefersBorder":true}}}`,
			`{"_meta":{"ui":{"prefersBorder":true}},"name":"a","uri":"cart://a"}`,
			`resource "cart://a": its _meta keys io.modelcontextprotocol/x, webmcp-cdp/source were dropped (reserved to MCP or webmcp-cdp)`},
		{"only forged keys", `{"uri":"cart://a","name":"a","_meta":{"io.modelcontextprotocol/x":1}}`, `{"name":"a","uri":"cart://a"}`,
			"its _meta keys io.modelcontextprotocol/x were dropped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := hub.New(&fakeBrowser{}, hub.Options{})
			h.TabOpened("T1", "http://127.0.0.1:8080/", "shop")
			src := psSource("T1", "doc1#mcpb:t:mcp-default")
			prompt := strings.Replace(strings.Replace(tt.decl, `"uri":"cart://a",`, "", 1), `"name":"a"`, `"name":"help"`, 1)
			h.SetServerCatalog(src, core.PageServer{ID: "t:mcp-default", Channel: "mcp-default", Kind: "tab"},
				[]core.Resource{{URI: "cart://a", Name: "a", Raw: json.RawMessage(tt.decl)}}, nil,
				[]core.Prompt{{Name: "help", Raw: json.RawMessage(prompt)}})
			rs, _, ps := h.ServerCatalog()
			if len(rs) != 1 || len(ps) != 1 {
				t.Fatalf("catalog: %d resources, %d prompts", len(rs), len(ps))
			}
			if got := string(rs[0].Resource.Raw); got != tt.want {
				t.Errorf("resource = %s, want %s", got, tt.want)
			}
			if strings.Contains(string(ps[0].Prompt.Raw), "io.modelcontextprotocol") {
				t.Errorf("prompt = %s, kept a reserved key", ps[0].Prompt.Raw)
			}
			refused, _ := h.Refusals(0)
			var found bool
			for _, r := range refused {
				found = found || strings.Contains(r.Detail, tt.refused) && r.URL == src.URL
			}
			if tt.refused == "" && len(refused) > 0 || tt.refused != "" && !found {
				t.Errorf("refusals = %v, want one with %q", refused, tt.refused)
			}
		})
	}
}

// FuzzCarried: whatever a page puts in a tool's outputSchema, _meta and
// icons and in a result, the hub does not panic, no admitted tool or
// outcome keeps a _meta key a page may not set, and what it keeps is JSON
// of the right shape.
func FuzzCarried(f *testing.F) {
	for _, s := range []struct{ out, meta, icons, result string }{
		{`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`, `{"ui":{"resourceUri":"ui://a"},"io.modelcontextprotocol/x":1}`, `[{"src":"https://a.example/i.png"}]`, `{"content":[],"structuredContent":{"n":1},"_meta":{"webmcp-cdp/x":1,"k":2}}`},
		{`{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, `{"MCP.dev/x":1}`, `[{"src":"javascript:x"},1,null]`, `{"n":"x"}`},
		{`[]`, `[]`, `{}`, `{"content":[{"type":"text","text":"t"}],"structuredContent":[1]}`},
		{``, ``, ``, `not json`},
	} {
		f.Add(s.out, s.meta, s.icons, s.result)
	}
	f.Fuzz(func(t *testing.T, out, meta, icons, result string) {
		b := &fakeBrowser{respond: func(context.Context, invocation) (core.Result, error) {
			return core.Result{Kind: core.KindJSON, Value: result}, nil
		}}
		h := hub.New(b, hub.Options{Logger: slog.New(slog.DiscardHandler)})
		tl := core.Tool{Name: "t", Description: "d"}
		for _, f := range []struct {
			dst *json.RawMessage
			v   string
		}{{&tl.OutputSchema, out}, {&tl.Meta, meta}, {&tl.Icons, icons}} {
			if f.v != "" {
				*f.dst = json.RawMessage(f.v)
			}
		}
		h.Update(mkDoc("a", "A", origin), []core.Tool{tl}, nil)
		if rt, ok := h.Tool(site + "_t"); ok {
			var m map[string]json.RawMessage
			if len(rt.Tool.Meta) > 0 && json.Unmarshal(rt.Tool.Meta, &m) != nil {
				t.Fatalf("admitted _meta %s is not an object", rt.Tool.Meta)
			}
			for k := range m {
				if hub.ReservedMetaKey(k) {
					t.Fatalf("admitted _meta keeps %q", k)
				}
			}
			var ic []json.RawMessage
			if len(rt.Tool.Icons) > 0 && (json.Unmarshal(rt.Tool.Icons, &ic) != nil || len(ic) > hub.MaxIcons) {
				t.Fatalf("admitted icons %s", rt.Tool.Icons)
			}
		}
		o := h.Call(context.Background(), site+"_t", nil)
		for k := range o.Meta {
			if hub.ReservedMetaKey(k) {
				t.Fatalf("the outcome's _meta keeps %q", k)
			}
		}
	})
}
