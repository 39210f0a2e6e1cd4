package e2e

import (
	"slices"
	"strings"
	"testing"
)

// lintUserscript is a userscript for the legacy order system whose tool,
// order_status, has lint problems on purpose: its inputSchema requires
// "order", not in its properties (an error), and its description is one
// word (a warning). It sits apart from userscriptDir, whose tools other
// tests count.
const lintUserscript = "../fixtures/legacy/lint/order_status.user.js"

// TestUserscriptsLint (issue 42): inspect --userscript lints a userscript's
// tools like any page's, on both backends: the faulty script's
// order_status is listed beside the other scripts' tools, its two problems
// are reported for it (so inspect exits 1 for the error), in the JSON
// report and in the text one, and the other scripts' tools have no
// finding.
func TestUserscriptsLint(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t) // static pages: one server for both backends
	for _, tc := range userscriptBackends {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"--userscript", userscriptDir, "--userscript", lintUserscript}, tc.args...)
			args = append(args, base+"/legacy/")
			rep := inspect(t, 1, args...)
			var got []string
			for _, tl := range rep.Tools {
				got = append(got, tl.Name)
				if tl.Refused != "" || !strings.HasSuffix(tl.Routed, "_"+tl.Name) {
					t.Errorf("%s: refused %q, routed as %q", tl.Name, tl.Refused, tl.Routed)
				}
			}
			slices.Sort(got)
			if want := []string{"add_order_note", "find_order", "order_status", "page_start_order"}; !slices.Equal(got, want) {
				t.Errorf("inspect listed %v, want %v", got, want)
			}
			var rules []string
			for _, f := range rep.Findings {
				if f.Tool == "" {
					continue // about the page, not a tool
				}
				if f.Tool != "order_status" {
					t.Errorf("a finding for %s, whose userscript is fine: %+v", f.Tool, f)
					continue
				}
				rules = append(rules, f.Severity+" "+f.Rule)
				if f.Rule == "required-not-in-properties" && !strings.Contains(f.Message, "requires order") {
					t.Errorf("the finding does not name the required argument: %q", f.Message)
				}
			}
			slices.Sort(rules)
			if want := []string{"error required-not-in-properties", "warning one-word-description"}; !slices.Equal(rules, want) {
				t.Errorf("order_status's findings: %v, want %v (all findings: %+v)", rules, want, rep.Findings)
			}
			if rep.Errors != 1 {
				t.Errorf("inspect counted %d errors, want order_status's one: %+v", rep.Errors, rep.Findings)
			}

			// The text report says the same, by the tool's name.
			stdout, stderr, code := ciRun(t, "", append([]string{"inspect"}, args...)...)
			if code != 1 {
				t.Fatalf("inspect (text): exit %d, want 1\n%s\n%s", code, stdout, stderr)
			}
			found := false
			for line := range strings.Lines(stdout) {
				found = found || strings.Contains(line, "order_status") && strings.Contains(line, "required-not-in-properties")
			}
			if !found {
				t.Errorf("the text report has no line for order_status's required-not-in-properties:\n%s", stdout)
			}
		})
	}
}
