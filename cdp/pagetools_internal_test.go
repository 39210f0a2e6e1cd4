package cdp

import (
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// TestPageToolsCarry: a tool of the page script's list keeps its title,
// annotations and input schema, and an outputSchema when the page script
// hands one over, as JSON for the hub to judge.
func TestPageToolsCarry(t *testing.T) {
	t.Parallel()
	in, out := `{"type":"object"}`, `{"type":"object","properties":{"n":{"type":"integer"}}}`
	tests := []struct {
		name string
		pt   pageTool
		want core.Tool
	}{
		{"without an outputSchema", pageTool{Name: "a", Title: "A", Description: "d", InputSchema: &in, Annotations: map[string]any{"readOnlyHint": true}},
			core.Tool{Name: "a", Title: "A", Description: "d", InputSchema: []byte(in), Annotations: map[string]any{"readOnlyHint": true}}},
		{"with one", pageTool{Name: "b", Description: "d", OutputSchema: &out},
			core.Tool{Name: "b", Description: "d", OutputSchema: []byte(out)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tools, refused := pageTools(core.Source{Origin: "https://a.example"}, []pageTool{tt.pt}, 0, 200)
			if len(tools) != 1 || len(refused) != 0 {
				t.Fatalf("pageTools = %+v, %+v", tools, refused)
			}
			got := tools[0]
			if got.Name != tt.want.Name || got.Title != tt.want.Title || string(got.InputSchema) != string(tt.want.InputSchema) ||
				string(got.OutputSchema) != string(tt.want.OutputSchema) || len(got.Annotations) != len(tt.want.Annotations) {
				t.Errorf("tool = %+v, want %+v", got, tt.want)
			}
		})
	}
}
