package ci

import (
	"slices"
	"strings"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

func TestExplain(t *testing.T) {
	tests := []struct {
		name string
		d    core.PageDiagnosis
		want []string // the lines, in order
	}{
		{"load error is the whole story",
			core.PageDiagnosis{Load: core.PageLoad{URL: "http://x/", Err: "net::ERR_CONNECTION_REFUSED"}, API: "none"},
			[]string{"the page did not load: net::ERR_CONNECTION_REFUSED"}},
		{"HTTP error says nothing of the API",
			core.PageDiagnosis{Load: core.PageLoad{URL: "http://x/", Status: 404, StatusText: "Not Found", Loaded: true}, API: "polyfill"},
			[]string{"the page answered HTTP 404 Not Found (http://x/)"}},
		{"loaded page without an API",
			core.PageDiagnosis{Load: core.PageLoad{URL: "http://x/", Status: 200, Loaded: true}, API: "none"},
			[]string{"no WebMCP API in the page: neither document.modelContext nor navigator.modelContext has registerTool (did a script replace them?)",
				"the page logged no errors and none of its requests failed"}},
		{"loaded page with an API",
			core.PageDiagnosis{Load: core.PageLoad{URL: "http://x/", Status: 200, Loaded: true}, API: "native"},
			[]string{"a WebMCP API was present (native)", "the page logged no errors and none of its requests failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Explain(tt.d); !slices.Equal(got, tt.want) {
				t.Errorf("Explain:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
