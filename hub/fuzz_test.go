package hub_test

import (
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// FuzzUpdate admits a tool as a page declared it (its name, title,
// description, inputSchema text and annotations, all the page's): the hub
// lists only tools whose schema is a JSON object of type "object" (the MCP
// edge cannot add another: go-sdk's AddTool panics on it) and whose name
// the page gave; a refused tool is simply not listed. Seeds are the tools
// of the in-browser suite's pages and the shapes hostile pages send.
func FuzzUpdate(f *testing.F) {
	for _, s := range []struct{ name, title, desc, schema, ann string }{
		{"echo_0", "", "Return the text unchanged (bench tool 0).", `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`, `{"readOnlyHint":true}`},
		{"add_to_cart", "Add", "Add an item", `{"type":"object","properties":{"sku":{"type":"string","pattern":"^[A-Z]+$"}}}`, `{"destructiveHint":false,"cache":true}`},
		{"no_schema", "", "No input", ``, ``},
		{"string_schema", "", "Bad", `{"type":"string"}`, `null`},
		{"refs", "", "Refs", `{"type":"object","$defs":{"a":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, `{}`},
		{"", "", "", `[]`, `[]`},
		{"x/y z", "t", "d", `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"object"}}}}}`, `{"readOnlyHint":"yes"}`},
	} {
		f.Add(s.name, s.title, s.desc, s.schema, s.ann)
	}
	f.Fuzz(func(t *testing.T, name, title, desc, schema, ann string) {
		h := hub.New(&fakeBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
		tool := core.Tool{Name: name, Title: title, Description: desc}
		if schema != "" {
			tool.InputSchema = json.RawMessage(schema)
		}
		if ann != "" {
			var m map[string]any
			if json.Unmarshal([]byte(ann), &m) != nil {
				return // the page script's JSON never fails to decode
			}
			tool.Annotations = m
		}
		src := core.Source{Key: "doc-1", Tab: "tab-1", Frame: "tab-1", Origin: "https://shop.test", URL: "https://shop.test/", Backend: core.BackendPolyfill}
		h.Update(src, []core.Tool{tool}, nil)
		for _, rt := range h.Tools() {
			if rt.Tool.Name != name {
				t.Fatalf("listed %q for a page tool named %q", rt.Tool.Name, name)
			}
			if rt.Tool.InputSchema == nil {
				continue
			}
			var obj struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal(rt.Tool.InputSchema, &obj); err != nil || obj.Type != "object" {
				t.Fatalf("listed a tool whose schema is not an object schema: %s (%v)", rt.Tool.InputSchema, err)
			}
		}
	})
}
