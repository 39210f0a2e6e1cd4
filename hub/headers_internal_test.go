package hub

import (
	"strings"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

func TestCheckHeaderAnnotations(t *testing.T) {
	tests := []struct {
		name, schema, want string // want: "" or a part of the reason
	}{
		{"none", `{"type":"object","properties":{"q":{"type":"string"}}}`, ""},
		{"string", `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`, ""},
		{"integer and boolean", `{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"},"b":{"type":"boolean","x-mcp-header":"B"}}}`, ""},
		{"nested", `{"type":"object","properties":{"o":{"type":"object","properties":{"id":{"type":"string","x-mcp-header":"Id"}}}}}`, ""},
		{"word in a description only", `{"type":"object","description":"uses x-mcp-header","properties":{}}`, ""},
		{"object type", `{"type":"object","properties":{"o":{"type":"object","x-mcp-header":"O"}}}`, "not type object"},
		{"no type", `{"type":"object","properties":{"o":{"x-mcp-header":"O"}}}`, "not type <nil>"},
		{"empty name", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`, "non-empty string"},
		{"not a string", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":7}}}`, "non-empty string"},
		{"space", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"My Header"}}}`, "character ' '"},
		{"colon", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A:B"}}}`, "character ':'"},
		{"non-ASCII", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Zoë"}}}`, "character 'ë'"},
		{"duplicate, other case", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"REGION"}}}`, "already names the header"},
		{"duplicate across nesting", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"o":{"type":"object","properties":{"b":{"type":"string","x-mcp-header":"x"}}}}}`, "already names the header"},
		{"deep", `{"type":"object","properties":` + strings.Repeat(`{"a":{"type":"object","properties":`, 40) + `{"x":{"type":"string","x-mcp-header":"X"}}` + strings.Repeat(`}}`, 40) + `}`, "more than 32 deep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkHeaderAnnotations([]byte(tt.schema))
			switch {
			case tt.want == "" && got != "":
				t.Errorf("refused: %s", got)
			case tt.want != "" && !strings.Contains(got, tt.want):
				t.Errorf("got %q, want a reason with %q", got, tt.want)
			}
		})
	}
}

// TestCheckToolRefusesBadHeader: admission refuses the tool, with a schema
// reason that names the property.
func TestCheckToolRefusesBadHeader(t *testing.T) {
	var l Limits
	l.defaults()
	tl := core.Tool{Name: "lookup", Description: "Looks up a city.",
		InputSchema: []byte(`{"type":"object","properties":{"city":{"type":"array","x-mcp-header":"City"}}}`)}
	_, code, why := l.checkTool(tl)
	if code != "schema" || !strings.Contains(why, `"city"`) {
		t.Fatalf("got %q %q, want a schema refusal naming city", code, why)
	}
}
