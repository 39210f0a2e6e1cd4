package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rejectionCases is how many cases fixtures/conformance/rejections.js runs
// in the page (executeTool's paths); each must run to its end. The harness
// adds its result unhandledCase.
const rejectionCases = 15

// unhandledCase is the last result of every conformance page (harness.js):
// no unhandled rejection was reported while its cases ran.
const unhandledCase = "no unhandled rejection while the cases ran"

// rejectionCalls are the calls TestNoUnhandledRejections makes over MCP to
// the tools of fixtures/conformance/rejections.html, each ending one way.
var rejectionCalls = []struct {
	tool    string
	wantErr bool
	want    string // the text of a result that is not an error
	either  bool   // an error or any result: only that the call ends
}{
	{tool: "rej_mcp_unregistered", want: "answered after the unregistration"},
	{tool: "rej_mcp_unregistered_fails", wantErr: true},
	{tool: "rej_mcp_form_answers", want: "answered after the form was removed"},
	{tool: "rej_mcp_form_fails", wantErr: true},
	{tool: "rej_mcp_frame_detach", wantErr: true},
	// The polyfill fails the call (the page navigated away); native
	// WebMCP answers with the next page's JSON-LD, as for a form whose
	// submission navigates ("[]").
	{tool: "rej_mcp_frame_navigate", either: true},
}

// nativeRejectionGaps are the unhandled rejections Chromium's own WebMCP
// (156) leaves behind in the page, keyed by reason, with why. Each is a
// promise the page handed to respondWith(), which the browser takes over
// (WebIDL follows it with a promise of its own): the polyfill handles it
// in every path. A listed reason that no longer shows fails the test, so
// that the list stays true.
var nativeRejectionGaps = map[string]string{
	"Error: refused, then reset":                          "Chromium 156 drops the respondWith() promise of a form reset by its submit handler, unhandled",
	"Error: the answer of a form whose frame was removed": "Chromium 156 drops the respondWith() promise of a form whose frame was removed during the call, unhandled",
}

// rejectionMarks are what rejections_report must say ran in the page: each
// call over MCP reached its end there (the cancelled call included).
var rejectionMarks = []string{
	"rej_mcp_cancel: the tool saw the cancellation",
	"rej_mcp_form_answers: answered after the form was removed",
	"rej_mcp_form_fails: failed after the form was removed",
	"rej_mcp_frame_detach: the frame went away during the call",
	"rej_mcp_frame_navigate: the frame went away during the call",
	"rej_mcp_unregistered: answered after the unregistration",
	"rej_mcp_unregistered_fails: failed after the unregistration",
}

// rejectionReport is what the page's rejections_report returns.
type rejectionReport struct {
	Unhandled []struct {
		Where  string `json:"where"`
		Reason string `json:"reason"`
	} `json:"unhandled"`
	Ran     []string `json:"ran"`
	Drained bool     `json:"drained"`
}

// TestNoUnhandledRejections (issue 41): however a call ends, the page API
// leaves no unhandled rejection behind (one would reach the site's error
// monitoring as the site's bug), on both backends. The page
// fixtures/conformance/rejections.html counts every unhandledrejection of
// its own and of its frames while its cases run executeTool() through a
// form removed, stripped or reset during the call, a tool unregistered, an
// aborted call and a frame removed or navigated; then the same paths run
// for calls from this MCP client (a tool that unregisters itself, a call
// cancelled by the client, forms removed by their submit handler, a frame
// taken away). The count must be zero, with every case run to its end and
// a control rejection seen (so the count is complete).
func TestNoUnhandledRejections(t *testing.T) {
	t.Parallel()
	for _, be := range conformanceBackends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			u := serveFixtures(t) + "/conformance/rejections.html"
			if be.name == "native" {
				// Chromium 156's renderer crashes when the answer of a tool
				// whose frame went away rejects: there the page resolves it
				// (rejections.js, settleLate).
				u += "?native"
			}
			c := start(t, append(append([]string{"launch", "--headless", "--call-timeout", "10s"}, be.args...), u)...)
			rep, ok := conformanceResults(t, c, "rejections", be.stallAfter)
			if !ok {
				t.Fatalf("the page published no results within %s; tab titles: %s", be.stallAfter, tabTitles(c))
			}
			if len(rep.Results) != rejectionCases+1 {
				t.Errorf("the page has %d results, want %d cases and %q", len(rep.Results), rejectionCases, unhandledCase)
			}
			for _, r := range rep.Results {
				if r.Name == unhandledCase && be.name == "native" {
					continue // (its known gaps are checked below, in rejections_report's count)
				}
				if !r.OK {
					t.Errorf("%s: %s", r.Name, r.Message)
				}
			}

			tools := c.waitFor("the page's tools for calls over MCP", func(m map[string]*mcp.Tool) bool {
				for _, rc := range rejectionCalls {
					if len(toolWithSuffix(m, rc.tool)) != 1 {
						return false
					}
				}
				return len(toolWithSuffix(m, "rej_mcp_cancel")) == 1 && len(toolWithSuffix(m, "rejections_report")) == 1
			})
			for _, rc := range rejectionCalls {
				res := c.call(toolWithSuffix(tools, rc.tool)[0], map[string]any{})
				switch {
				case rc.either:
				case rc.wantErr && !res.IsError:
					t.Errorf("%s = %q, want an error", rc.tool, text(res))
				case !rc.wantErr && (res.IsError || text(res) != rc.want):
					t.Errorf("%s = %q (isError %v), want %q", rc.tool, text(res), res.IsError, rc.want)
				}
			}
			cancelRunning(t, c, toolWithSuffix(tools, "rej_mcp_cancel")[0])

			var r rejectionReport
			out := c.callOK(toolWithSuffix(tools, "rejections_report")[0], map[string]any{})
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("rejections_report is not JSON: %v\n%s", err, out)
			}
			if !r.Drained {
				t.Error("the page never saw its control rejection: the count may be incomplete")
			}
			checkUnhandled(t, be.name, r)
			for _, m := range rejectionMarks {
				if !slices.Contains(r.Ran, m) {
					t.Errorf("the page did not see %q; it saw %q", m, r.Ran)
				}
			}
		})
	}
}

// checkUnhandled fails the test on each unhandled rejection of the
// report, but for the known gaps of native WebMCP (nativeRejectionGaps),
// which are logged, and must all show.
func checkUnhandled(t *testing.T, backend string, r rejectionReport) {
	t.Helper()
	gaps := map[string]string{}
	if backend == "native" {
		gaps = nativeRejectionGaps
	}
	seen := map[string]bool{}
	for _, u := range r.Unhandled {
		if why, ok := gaps[u.Reason]; ok {
			seen[u.Reason] = true
			t.Logf("known %s gap: unhandled rejection in %s: %s (%s)", backend, u.Where, u.Reason, why)
			continue
		}
		t.Errorf("unhandled rejection in %s: %s", u.Where, u.Reason)
	}
	for reason, why := range gaps {
		if !seen[reason] {
			t.Errorf("no unhandled rejection %q on %s, listed as a known gap (%s): remove it from the list", reason, backend, why)
		}
	}
}

// cancelRunning calls the page tool name, waits until the page says it
// runs (it registers rej_mcp_cancel_started), and cancels the call
// (notifications/cancelled), which must then end with an error.
func cancelRunning(t *testing.T, c *client, name string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		done <- err
	}()
	c.waitFor("rej_mcp_cancel_started", hasSuffix("rej_mcp_cancel_started", 1))
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the cancelled call returned no error")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
}
