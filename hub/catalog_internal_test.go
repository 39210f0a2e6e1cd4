package hub

import (
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
