package ci

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestInspect: tools waited for and missing come first, as errors; the
// counts add up; both outputs carry the page.
func TestInspect(t *testing.T) {
	tests := []struct {
		name       string
		page       Page
		wantErrors int
		wantFirst  string // rule of the first finding, "" for none
	}{
		{"no tools", Page{URL: "https://a.test/", Settled: true}, 0, ""},
		{"a tool waited for and missing", Page{URL: "https://a.test/", Missing: []string{"search"}}, 1, RuleNotSettled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Inspect(&tt.page, 10*time.Second)
			if in.Errors < tt.wantErrors || in.Errors+in.Warnings != len(in.Findings) {
				t.Errorf("errors %d warnings %d of %d findings, want at least %d errors", in.Errors, in.Warnings, len(in.Findings), tt.wantErrors)
			}
			if tt.wantFirst != "" && (len(in.Findings) == 0 || in.Findings[0].Rule != tt.wantFirst) {
				t.Errorf("first finding %+v, want rule %s", in.Findings, tt.wantFirst)
			}
			var j, txt bytes.Buffer
			if err := in.WriteJSON(&j); err != nil {
				t.Fatal(err)
			}
			var rep inspectReport
			if err := json.Unmarshal(j.Bytes(), &rep); err != nil || rep.URL != tt.page.URL || rep.Errors != in.Errors {
				t.Errorf("JSON %s: %v", j.String(), err)
			}
			if err := in.WriteText(&txt); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(txt.String(), tt.page.URL+": ") || !strings.Contains(txt.String(), Plural(in.Errors, "error")) {
				t.Errorf("text:\n%s", txt.String())
			}
		})
	}
}
