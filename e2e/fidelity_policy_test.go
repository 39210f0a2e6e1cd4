package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/fixtures"
)

// policyReports collects what the frames of fixtures/frames/policy.html
// report: the outcome of registerTool(), getTools() and executeTool() per
// frame name.
type policyReports struct {
	mu      sync.Mutex
	got     map[string]policyOutcome
	changed chan struct{}
}

type policyOutcome struct {
	Register string `json:"register"`
	GetTools string `json:"getTools"`
	Execute  string `json:"execute"`
}

// policyServer serves the fixtures, sends the Permissions-Policy header
// named by a page's ?pp= query, and takes the frames' reports on
// /policy-report.
func policyServer(t *testing.T, reps *policyReports) string {
	files := fixtures.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/policy-report" {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
			var rep struct {
				Name string `json:"name"`
				policyOutcome
			}
			if json.Unmarshal(body, &rep) == nil {
				reps.mu.Lock()
				reps.got[rep.Name] = rep.policyOutcome
				reps.mu.Unlock()
				select {
				case reps.changed <- struct{}{}:
				default:
				}
			}
			return
		}
		if pp := r.URL.Query().Get("pp"); pp != "" {
			w.Header().Set("Permissions-Policy", pp)
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// policyCases is what native Chromium 156 does for each frame of the table
// (true: the frame may use tools); the polyfill must do the same.
var policyCases = map[string]bool{
	"x_none":                 false, // cross-origin, no allow attribute
	"x_allow":                true,  // allow="tools" ('src')
	"x_allow_none":           false, // allow="tools 'none'"
	"x_allow_star":           true,  // allow="tools *"
	"x_allow_origin":         true,  // allow="tools <the frame's origin>"
	"x_allow_self":           false, // 'self' is the parent's origin
	"x_allow_camera":         false, // an allow attribute without tools
	"x_allow_header_off":     false, // delegated, but its own header says tools=()
	"same_none":              true,  // same-origin frames inherit
	"same_allow_none":        false,
	"same_header_off":        false,
	"srcdoc":                 true, // the parent's origin
	"srcdoc_sandboxed":       false,
	"sandboxed":              false, // an opaque origin is another origin
	"sandboxed_allow":        true,  // 'src' matches the frame's URL
	"sandboxed_same_origin":  true,
	"x_allow_mid":            true,
	"nest_same_as_mid":       true,  // same origin as its allowed parent
	"x_allow_mid2":           true,  //
	"nest_back_to_top":       false, // the top's origin, but not its parent's: needs allow
	"x_allow_mid3":           true,  //
	"nest_back_to_top_allow": true,  // delegated on by an allowed parent
	"x_none_mid":             false, //
	"nest_under_denied":      false, // a denied parent cannot delegate
	"nav_from":               true,  // allow="tools <other>", at other
	"nav_to":                 false, // nav_from navigated to the top's origin, which the allow list does not cover
	"top_header_off":         false, // a tab whose header says tools=()
	"top_header_self":        true,  // tools=(self)
}

// policyExecute is what executeTool() of its own tool gives in the frames
// of policyCases that may use tools but cannot run their tool, as on native
// Chromium 156.
var policyExecute = map[string]string{
	"sandboxed_allow": "NotSupportedError", // its tool's origin is opaque
}

// TestPermissionsPolicyTools runs the table of frames of
// fixtures/frames/policy.html (and two top-level documents with a
// Permissions-Policy header) on the polyfill and on native Chromium: both
// must let exactly the frames of policyCases use tools, reject the others'
// registerTool(), getTools() and executeTool() with NotAllowedError (a frame
// navigated to an origin its allow attribute does not name included), and
// list only the
// allowed frames' tools over MCP.
func TestPermissionsPolicyTools(t *testing.T) {
	t.Parallel()
	results := map[string]map[string]policyOutcome{}
	for _, be := range []struct{ name, flag string }{
		{"polyfill", "--backend=polyfill"},
		{"native", "--chrome-arg=--enable-features=WebMCP"},
	} {
		t.Run(be.name, func(t *testing.T) {
			reps := &policyReports{got: map[string]policyOutcome{}, changed: make(chan struct{}, 1)}
			base := policyServer(t, reps)
			other := strings.Replace(base, "127.0.0.1", "localhost", 1) // another site
			args := []string{"launch", "--headless", be.flag}
			if be.name == "native" {
				args = append(args, "--backend=native")
			}
			args = append(args,
				base+"/frames/policy.html?other="+url.QueryEscape(other),
				base+"/frames/policy-child.html?name=top_header_off&pp="+url.QueryEscape("tools=()"),
				base+"/frames/policy-child.html?name=top_header_self&pp="+url.QueryEscape("tools=(self)"),
			)
			c := start(t, args...)
			got, missing := waitPolicyReports(reps, 30*time.Second)
			if be.name == "native" && len(missing) > 0 && onlySameOrigin(missing) {
				// Native WebMCP can stall around a same-origin iframe
				// (nativeIframeStall, as in TestConformance): once more in a
				// fresh browser.
				t.Logf("known native stall: no report from %v (%s); trying once more in a fresh browser", missing, nativeIframeStall)
				c.cs.Close()
				reps.mu.Lock()
				reps.got = map[string]policyOutcome{}
				reps.mu.Unlock()
				c = start(t, args...)
				if got, missing = waitPolicyReports(reps, 30*time.Second); len(missing) > 0 && onlySameOrigin(missing) {
					t.Skipf("known native stall again: no report from %v (%s); native is not compared this run", missing, nativeIframeStall)
				}
			}
			if len(missing) > 0 {
				t.Fatalf("no report from the frames %v; reports: %v", missing, got)
			}
			results[be.name] = got
			for name, allowed := range policyCases {
				o := got[name]
				wantExecute := "ok"
				if w, ok := policyExecute[name]; ok {
					wantExecute = w
				}
				if allowed && (o.Register != "ok" || o.GetTools != "ok" || o.Execute != wantExecute) {
					t.Errorf("%s: registerTool/getTools/executeTool = %q/%q/%q, want ok/ok/%s", name, o.Register, o.GetTools, o.Execute, wantExecute)
				}
				if !allowed && (!strings.HasPrefix(o.Register, "NotAllowedError") || !strings.HasPrefix(o.GetTools, "NotAllowedError") || o.Execute != "NotAllowedError") {
					t.Errorf("%s: registerTool/getTools/executeTool = %q/%q/%q, want NotAllowedError for each", name, o.Register, o.GetTools, o.Execute)
				}
			}
			// Over MCP: the allowed frames' tools, and none of the others'.
			tools := c.waitFor("the allowed frames' tools", func(m map[string]*mcp.Tool) bool {
				return len(toolWithSuffix(m, "pp_host")) == 1 && len(toolWithSuffix(m, "pp_x_allow")) == 1 &&
					len(toolWithSuffix(m, "pp_nest_back_to_top_allow")) == 1 && len(toolWithSuffix(m, "pp_top_header_self")) == 1
			})
			for name, allowed := range policyCases {
				if n := len(toolWithSuffix(tools, "pp_"+name)); !allowed && n != 0 {
					t.Errorf("the denied frame %s has a tool over MCP", name)
				}
			}
			if got := c.callOK(toolWithSuffix(tools, "pp_x_allow")[0], map[string]any{}); got != "from x_allow" {
				t.Errorf("pp_x_allow = %q", got)
			}
		})
	}
	// The two backends agree case by case (the messages included).
	if p, n := results["polyfill"], results["native"]; p != nil && n != nil {
		for name := range policyCases {
			if p[name] != n[name] {
				t.Errorf("%s: the polyfill gives %+v, native Chromium %+v", name, p[name], n[name])
			}
		}
	}
}

// sameOriginFrames are the frames of policyCases that share the origin of
// the document that embeds them: the ones native WebMCP's known stall can
// hold up.
var sameOriginFrames = map[string]bool{
	"same_none": true, "same_allow_none": true, "same_header_off": true, "srcdoc": true,
	"sandboxed_same_origin": true, "nest_same_as_mid": true, "nav_to": true,
}

// onlySameOrigin reports whether every named frame is a same-origin one.
func onlySameOrigin(names []string) bool {
	for _, n := range names {
		if !sameOriginFrames[n] {
			return false
		}
	}
	return true
}

// waitPolicyReports waits up to d until every frame of policyCases has
// reported, and returns the reports and the frames (sorted) that did not.
func waitPolicyReports(reps *policyReports, d time.Duration) (map[string]policyOutcome, []string) {
	deadline := time.After(d)
	for {
		reps.mu.Lock()
		got := make(map[string]policyOutcome, len(reps.got))
		for k, v := range reps.got {
			got[k] = v
		}
		reps.mu.Unlock()
		var missing []string
		for name := range policyCases {
			if _, ok := got[name]; !ok {
				missing = append(missing, name)
			}
		}
		if len(missing) == 0 {
			return got, nil
		}
		select {
		case <-reps.changed:
		case <-deadline:
			sort.Strings(missing)
			return got, missing
		}
	}
}
