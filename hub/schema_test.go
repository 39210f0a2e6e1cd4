package hub

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestObjectSchema(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		want   map[string]any // nil: refused
		same   bool           // the input passes unchanged
		reason string         // part of the reason when refused
	}{
		{name: "no type", in: `{"properties":{}}`, want: map[string]any{"type": "object", "properties": map[string]any{}}},
		{name: "object", in: `{"type":"object"}`, want: map[string]any{"type": "object"}, same: true},
		{name: "object with properties", in: `{"type":"object","properties":{"q":{"type":"string"}}}`, same: true,
			want: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}},
		{name: "string type", in: `{"type":"string"}`, reason: "string"},
		{name: "array type", in: `{"type":["object","null"]}`, reason: "type"},
		{name: "array", in: `[]`, reason: "not a JSON object"},
		{name: "string", in: `"x"`, reason: "not a JSON object"},
		{name: "null", in: `null`, reason: "not a JSON object"},
		{name: "not JSON", in: `{`, reason: "not a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, reason := objectSchema([]byte(tc.in))
			if tc.want == nil {
				if reason == "" {
					t.Fatalf("objectSchema(%s) was accepted as %s", tc.in, out)
				}
				if !strings.Contains(reason, tc.reason) {
					t.Errorf("reason %q does not say %q", reason, tc.reason)
				}
				if out != nil {
					t.Errorf("a refused schema came back as %s", out)
				}
				return
			}
			if reason != "" {
				t.Fatalf("objectSchema(%s) refused: %s", tc.in, reason)
			}
			if tc.same && string(out) != tc.in {
				t.Errorf("objectSchema(%s) = %s, want it unchanged", tc.in, out)
			}
			var got map[string]any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("output %s: %v", out, err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("objectSchema(%s) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}
