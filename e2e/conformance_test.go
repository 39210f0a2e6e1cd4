package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// conformancePages are the areas of the in-browser conformance suite, one
// page each under fixtures/conformance/ (see harness.js there).
var conformancePages = []string{"registration", "gettools", "execute", "calls", "legacy", "forms", "oldpolyfill", "crossorigin"}

// conformanceBackend is one way of running the suite.
type conformanceBackend struct {
	name string
	args []string
	// gaps are the cases known to fail on this backend, keyed
	// "page/case name", with the reason. A listed case that passes fails the
	// test as well, so that the list stays true.
	gaps map[string]string
	// flaky are cases known to pass or fail from run to run on this
	// backend, with the reason; either outcome is accepted.
	flaky map[string]string
	// stallAfter is how long a page may take to publish its results. A
	// backend with flaky cases gets one more try for a page that stalls.
	stallAfter time.Duration
	// retryFailures: a case that fails, and is neither a gap nor a flake,
	// runs once more on its own in a fresh browser, and counts as passed
	// (logged) when it passes there. For native WebMCP, whose same-origin
	// iframe calls now and then never settle (nativeIframeStall): a case
	// that fails twice in a row is a failure.
	retryFailures bool
}

// insecureHost is mapped to the fixture server by --host-resolver-rules, so
// that a page can frame itself from an origin that is not potentially
// trustworthy (http://insecure.test:PORT).
const insecureHost = "--chrome-arg=--host-resolver-rules=MAP insecure.test 127.0.0.1"

// nativeGaps are the cases where Chromium's own WebMCP (156, with
// --enable-features=WebMCP) differs from the behaviour list the suite is
// written from. The polyfill passes all of them; on the native backend
// webmcp-cdp adds only the older API and leaves document.modelContext to
// Chromium.
var nativeGaps = map[string]string{
	"execute/toolactivated also fires at the window":                                                                        "Chromium 156 dispatches toolactivated only at document.modelContext; the declarative explainer and the web-platform-tests also expect it at the Window",
	"execute/toolcancel also fires at the window":                                                                           "Chromium 156 dispatches toolcancel only at document.modelContext; the web-platform-tests also expect it at the Window",
	"execute/a same-origin iframe's tool runs in the iframe, with toolactivated there only":                                 "Chromium 156 hands the tool an input object of the caller's realm; the draft parses the input in the target document's realm",
	"legacy/provideContext fires one toolchange":                                                                            "on native WebMCP the older API is layered on document.modelContext, and Chromium fires one toolchange per tool registered or removed",
	"legacy/clearContext removes every tool and fires one toolchange":                                                       "on native WebMCP the older API is layered on document.modelContext, and Chromium fires one toolchange per tool removed",
	"forms/a reset cancels the call with UnknownError and fires toolcancel":                                                 "Chromium 156 rejects the call on a form reset but fires no toolcancel",
	"forms/removing the form before the person submitted it cancels the call with UnknownError and fires toolcancel":        "Chromium 156 rejects the call when the form goes before its submission but fires no toolcancel (the web-platform-tests expect it: crbug.com/565332588)",
	"forms/removing tooldescription before the person submitted it cancels the call with UnknownError and fires toolcancel": "Chromium 156 rejects the call when the form stops being a tool before its submission but fires no toolcancel (the web-platform-tests expect it: crbug.com/565332588)",
}

// nativeFlaky are the cases whose outcome on native WebMCP varies from run
// to run, with the reason. Either outcome is accepted (and logged); they
// pass on most runs, and always on the polyfill.
var nativeFlaky = map[string]string{
	"registration/a same-origin iframe's registration fires toolchange in the parent": nativeIframeStall,
	"gettools/a same-origin iframe's tools are listed with the iframe's window":       nativeIframeStall,
	"gettools/a same-origin iframe sees the parent's tools":                           nativeIframeStall,
	// (seen once in three runs: the case registers in two same-origin iframes)
	"calls/a re-entrant call whose inner target frame is removed rejects the inner call, and the outer one gets the tool's answer":   nativeIframeStall,
	"calls/a re-entrant call whose inner target frame is navigated rejects the inner call, and the outer one gets the tool's answer": nativeIframeStall,
}

// nativeIframeStall is the reason of the native flakes: measured on Chromium
// 156 under webmcp-cdp's CDP session, a same-origin iframe's
// registerTool() (or the parent's getTools() around it) now and then never
// settles, mostly when the machine is loaded; it happens with webmcp-cdp's
// registerTool wrapper turned off too, and not with a plain CDP session.
const nativeIframeStall = "native registerTool/getTools around a same-origin iframe intermittently never settle under webmcp-cdp's CDP session (Chromium 156)"

var conformanceBackends = []conformanceBackend{
	{name: "polyfill", args: []string{"--backend", "polyfill"}, stallAfter: 3 * time.Minute},
	{name: "native", args: []string{"--backend", "native", "--chrome-arg=--enable-features=WebMCP"}, gaps: nativeGaps, flaky: nativeFlaky, stallAfter: time.Minute, retryFailures: true},
}

// conformanceReport is what the tool conformance_results returns.
type conformanceReport struct {
	Page    string `json:"page"`
	Passed  int    `json:"passed"`
	Failed  int    `json:"failed"`
	Results []struct {
		Name    string `json:"name"`
		OK      bool   `json:"ok"`
		Message string `json:"message"`
	} `json:"results"`
}

// TestConformance runs every conformance page in real Chromium with the page
// script as webmcp-cdp injects it, on the polyfill backend and on native
// WebMCP as a reference, and reads each page's results over MCP. It prints
// "conformance: N passed, M failed" and fails on any case that fails and is
// neither a listed gap nor a listed flake of its backend. (go test shows the
// line with -v, in local directory mode, or when the package fails.)
func TestConformance(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	// A second server: another origin of the same site (another port),
	// for the page crossorigin.
	sameSite := serveFixtures(t)
	// The pages run in parallel (each in its own browser); what they found
	// is added up under mu and checked once they are all done.
	var mu sync.Mutex
	total := map[string][2]int{}
	ran := map[string]bool{}             // backend/page whose results were read
	seen := map[string]map[string]bool{} // backend: page/case
	t.Cleanup(func() {
		for _, be := range conformanceBackends {
			for _, list := range []map[string]string{be.gaps, be.flaky} {
				for key := range list {
					page, _, _ := strings.Cut(key, "/")
					if ran[be.name+"/"+page] && !seen[be.name][key] {
						t.Errorf("the %s list names %q, which is no case of the suite", be.name, key)
					}
				}
			}
		}
		passed, failed := 0, 0
		for _, be := range conformanceBackends {
			n := total[be.name]
			fmt.Printf("conformance %s: %d passed, %d failed (%d known gaps, %d known flakes)\n", be.name, n[0], n[1], len(be.gaps), len(be.flaky))
			passed += n[0]
			failed += n[1]
		}
		fmt.Printf("conformance: %d passed, %d failed\n", passed, failed)
	})
	for _, be := range conformanceBackends {
		seen[be.name] = map[string]bool{}
		for _, page := range conformancePages {
			t.Run(be.name+"/"+page, func(t *testing.T) {
				t.Parallel()
				u := base + "/conformance/" + page + ".html"
				if page == "crossorigin" {
					u += "?samesite=" + url.QueryEscape(sameSite)
				}
				args := append(append([]string{"launch", "--headless", "--log-level", "debug", insecureHost}, be.args...), u)
				c := start(t, args...)
				rep, ok := conformanceResults(t, c, page, be.stallAfter)
				if !ok && be.flaky != nil {
					// Native WebMCP can stall a whole page (nativeIframeStall):
					// try it once more in a fresh browser.
					t.Logf("known %s stall: %s published no results within %s (%s); trying once more", be.name, page, be.stallAfter, nativeIframeStall)
					c = start(t, args...)
					if rep, ok = conformanceResults(t, c, page, be.stallAfter); !ok {
						t.Logf("known %s stall again on %s: its cases are not counted this run", be.name, page)
						return
					}
				}
				if !ok {
					t.Fatalf("the page %s published no conformance_results within %s; tab titles: %s", page, be.stallAfter, tabTitles(c))
				}
				mu.Lock()
				ran[be.name+"/"+page] = true
				for _, r := range rep.Results {
					seen[be.name][page+"/"+r.Name] = true
				}
				mu.Unlock()
				var n [2]int
				for _, r := range rep.Results {
					key := page + "/" + r.Name
					reason, listed := be.gaps[key]
					flake, flaky := be.flaky[key]
					switch {
					case flaky && !r.OK:
						n[1]++
						t.Logf("known %s flake failed this time: %s: %s (%s)", be.name, key, r.Message, flake)
					case r.OK:
						n[0]++
						if listed {
							t.Errorf("%s passes on %s but is listed as a known gap (%s): remove it from the list", key, be.name, reason)
						}
					case listed:
						n[1]++
						t.Logf("known %s gap: %s: %s (%s)", be.name, key, r.Message, reason)
					case be.retryFailures && retryCase(t, be, u, args, page, r.Name):
						n[0]++
						t.Logf("%s failed on %s (%s), then passed alone in a fresh browser (%s)", key, be.name, r.Message, nativeIframeStall)
					default:
						n[1]++
						t.Errorf("%s failed on %s: %s", key, be.name, r.Message)
					}
				}
				mu.Lock()
				sum := total[be.name]
				total[be.name] = [2]int{sum[0] + n[0], sum[1] + n[1]}
				mu.Unlock()
				if page == "oldpolyfill" {
					checkOldPolyfillTool(t, c)
				}
			})
		}
	}
}

// retryCase runs the case name of page on its own (the harness's ?only=)
// in a fresh browser and reports whether it passed there.
func retryCase(t *testing.T, be conformanceBackend, pageURL string, args []string, page, name string) bool {
	t.Helper()
	sep := "?"
	if strings.Contains(pageURL, "?") {
		sep = "&"
	}
	only := pageURL + sep + "only=" + url.QueryEscape(name)
	c := start(t, append(args[:len(args)-1:len(args)-1], only)...)
	defer c.cs.Close()
	rep, ok := conformanceResults(t, c, page, be.stallAfter)
	if !ok {
		return false
	}
	for _, r := range rep.Results {
		if r.Name == name {
			if !r.OK {
				t.Logf("%s/%s failed again on its own: %s", page, name, r.Message)
			}
			return r.OK
		}
	}
	t.Logf("%s/%s: the run with only=%q did not report that case", page, name, name)
	return false
}

// conformanceResults waits for a page to publish conformance_results and
// returns them.
func conformanceResults(t *testing.T, c *client, page string, wait time.Duration) (conformanceReport, bool) {
	t.Helper()
	var name string
	deadline := time.Now().Add(wait)
	for name == "" {
		if got := toolWithSuffix(c.tools(), "conformance_results"); len(got) == 1 {
			name = got[0]
			break
		}
		if time.Now().After(deadline) {
			// The page shows the case it is running in its title.
			t.Logf("the page %s published no conformance_results within %s; tab titles: %s", page, wait, tabTitles(c))
			return conformanceReport{}, false
		}
		time.Sleep(100 * time.Millisecond) // poll interval: as in client.waitFor, no list_changed is sure to come
	}
	var rep conformanceReport
	out := c.callOK(name, map[string]any{})
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("conformance_results of %s is not JSON: %v\n%s", page, err, out)
	}
	if rep.Page != page || len(rep.Results) == 0 {
		t.Fatalf("conformance_results of %s: %s", page, out)
	}
	return rep, true
}

// tabTitles returns the titles of the open tabs, as webmcp_list_tabs gives
// them.
func tabTitles(c *client) string {
	res := c.call("webmcp_list_tabs", map[string]any{})
	var out struct {
		Tabs []struct {
			Title string `json:"title"`
		} `json:"tabs"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	var titles []string
	for _, tb := range out.Tabs {
		titles = append(titles, fmt.Sprintf("%q", tb.Title))
	}
	return strings.Join(titles, ", ")
}

// checkOldPolyfillTool: the tool the oldpolyfill page gave to its own older
// polyfill (after ours) reaches MCP and answers.
func checkOldPolyfillTool(t *testing.T, c *client) {
	t.Helper()
	tools := c.waitFor("old_polyfill_echo", hasSuffix("old_polyfill_echo", 1))
	if got := c.callOK(toolWithSuffix(tools, "old_polyfill_echo")[0], map[string]any{"text": "hi"}); got != "old polyfill says: hi" {
		t.Errorf("old_polyfill_echo = %q", got)
	}
}

// TestDeclarativeFormOverMCP: a <form toolname tooldescription
// toolautosubmit> is an MCP tool whose schema comes from the form's
// controls; calling it fills the form, submits it, and returns what the
// submit handler passed to SubmitEvent.respondWith().
func TestDeclarativeFormOverMCP(t *testing.T) {
	t.Parallel()
	for _, be := range conformanceBackends {
		t.Run(be.name, func(t *testing.T) {
			base := serveFixtures(t)
			c := start(t, append(append([]string{"launch", "--headless"}, be.args...), base+"/conformance/e2e-form.html")...)
			tools := c.waitFor("book_table", hasSuffix("book_table", 1))
			name := toolWithSuffix(tools, "book_table")[0]
			tool := tools[name]
			var schema struct {
				Type       string `json:"type"`
				Properties map[string]struct {
					Type        string   `json:"type"`
					Description string   `json:"description"`
					Enum        []string `json:"enum"`
				} `json:"properties"`
				Required []string `json:"required"`
			}
			raw, _ := json.Marshal(tool.InputSchema)
			if err := json.Unmarshal(raw, &schema); err != nil {
				t.Fatalf("inputSchema %s: %v", raw, err)
			}
			props := schema.Properties
			sort.Strings(schema.Required)
			switch {
			case schema.Type != "object",
				props["name"].Type != "string" || props["name"].Description != "Who the table is for",
				props["guests"].Type != "number",
				props["seating"].Type != "string" || strings.Join(props["seating"].Enum, ",") != "inside,terrace",
				props["highchair"].Type != "boolean",
				strings.Join(schema.Required, ",") != "guests,name":
				t.Errorf("book_table's inputSchema = %s", raw)
			}
			if !strings.Contains(tool.Description, "Book a table at the restaurant") {
				t.Errorf("book_table's description = %q", tool.Description)
			}

			res := c.call(name, map[string]any{"name": "Ada", "guests": 3, "seating": "terrace", "highchair": true})
			want := `{"booked":{"agentInvoked":true,"name":"Ada","guests":3,"seating":"terrace","highchair":true}}`
			if res.IsError || text(res) != want {
				t.Errorf("book_table = %v %s, want %s", res.IsError, text(res), want)
			}
			// Input that the form's schema refuses never reaches the page.
			if res := c.call(name, map[string]any{"name": "Bob", "guests": 2, "seating": "roof"}); !res.IsError {
				t.Errorf("book_table with seating roof = %s, want an error", text(res))
			}
		})
	}
}

// TestSameOriginIframeTool: a tool registered in a same-origin iframe reaches
// the catalog attributed to its own frame (not the top page's), and a call
// runs in the iframe.
func TestSameOriginIframeTool(t *testing.T) {
	t.Parallel()
	for _, be := range conformanceBackends {
		t.Run(be.name, func(t *testing.T) {
			base := serveFixtures(t)
			c := start(t, append(append([]string{"launch", "--headless"}, be.args...), base+"/conformance/e2e-frames.html")...)
			tools := c.waitFor("top_ping and frame_ping", func(m map[string]*mcp.Tool) bool {
				return len(toolWithSuffix(m, "top_ping")) == 1 && len(toolWithSuffix(m, "frame_ping")) == 1
			})
			top := source(t, tools[toolWithSuffix(tools, "top_ping")[0]])
			frame := source(t, tools[toolWithSuffix(tools, "frame_ping")[0]])
			if frame["frame"] == nil || frame["frame"] == "" || frame["frame"] == top["frame"] {
				t.Errorf("frame_ping's frame = %v, top_ping's = %v: want the iframe's own frame", frame["frame"], top["frame"])
			}
			if u, _ := frame["url"].(string); !strings.HasSuffix(u, "/conformance/e2e-frame-child.html") {
				t.Errorf("frame_ping's url = %v, want the iframe's", frame["url"])
			}
			if u, _ := top["url"].(string); !strings.HasSuffix(u, "/conformance/e2e-frames.html") {
				if be.name == "native" && u == "" {
					// cdp reports native tools of a main frame whose URL it has
					// not learnt yet with an empty URL (see the report on this
					// test); the frame attribution checked here is right.
					t.Logf("top_ping's url is empty on the native backend")
				} else {
					t.Errorf("top_ping's url = %v", top["url"])
				}
			}
			if frame["origin"] != base || frame["tab"] != top["tab"] {
				t.Errorf("frame_ping's origin %v and tab %v, top_ping's tab %v", frame["origin"], frame["tab"], top["tab"])
			}
			if got := c.callOK(toolWithSuffix(tools, "frame_ping")[0], map[string]any{}); got != "pong from /conformance/e2e-frame-child.html" {
				t.Errorf("frame_ping = %q", got)
			}
			if got := c.callOK(toolWithSuffix(tools, "top_ping")[0], map[string]any{}); got != "pong from the top page" {
				t.Errorf("top_ping = %q", got)
			}
		})
	}
}

// TestGoCallsFireEvents: a call that comes from the MCP client through the
// polyfill's bridge behaves like executeTool: toolactivated fires at
// document.modelContext and the window once execute started (Chromium's
// order), the tool gets a
// live AbortSignal, and cancelling the call (notifications/cancelled) aborts
// that signal with an AbortError and fires toolcancel. (On the native backend
// calls go through the CDP WebMCP domain and Chromium fires its own events.)
func TestGoCallsFireEvents(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	c := start(t, "launch", "--headless", "--backend", "polyfill", base+"/conformance/e2e-events.html")
	tools := c.waitFor("the event tools", hasSuffix("event_log", 1))
	type report struct {
		Log    []string `json:"log"`
		Signal bool     `json:"signal"`
	}
	var r report
	if err := json.Unmarshal([]byte(c.callOK(toolWithSuffix(tools, "probe_events")[0], map[string]any{})), &r); err != nil {
		t.Fatal(err)
	}
	want := "execute:probe_events,activated:probe_events,window-activated:probe_events"
	if strings.Join(r.Log, ",") != want || !r.Signal {
		t.Errorf("probe_events saw %v (signal %v), want %s and a live AbortSignal", r.Log, r.Signal, want)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: toolWithSuffix(tools, "wait_forever")[0], Arguments: map[string]any{}})
		done <- err
	}()
	logged := func() []string {
		var r report
		json.Unmarshal([]byte(c.callOK(toolWithSuffix(tools, "event_log")[0], map[string]any{})), &r)
		return r.Log
	}
	var seen []string
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(strings.Join(seen, ","), "activated:wait_forever") {
		if time.Now().After(deadline) {
			t.Fatalf("wait_forever never started; log %v", seen)
		}
		time.Sleep(50 * time.Millisecond) // poll interval: the page's event log has no push
		seen = append(seen, logged()...)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled call returned no error")
	}
	for !strings.Contains(strings.Join(seen, ","), "cancel:wait_forever") {
		if time.Now().After(deadline) {
			t.Fatalf("no toolcancel after the cancellation; log %v", seen)
		}
		time.Sleep(50 * time.Millisecond) // poll interval: the page's event log has no push
		seen = append(seen, logged()...)
	}
	if !strings.Contains(strings.Join(seen, ","), "aborted:AbortError,cancel:wait_forever") {
		t.Errorf("log %v: want the tool's signal aborted with an AbortError, then toolcancel", seen)
	}
}
