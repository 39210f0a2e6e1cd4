package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/fixtures"
)

// TestCIDiagnose: pages without tools are explained (the failed script
// request, the console error, the uncaught exception with its URL:line, and
// whether a WebMCP API was there at all), and a spec's viewport, headers,
// cookies and per-call timeout reach the page. One spec run, one browser.
func TestCIDiagnose(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var headers []string // X-Team of each request for env.html
	mux := http.NewServeMux()
	files := fixtures.Handler()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/env.html") {
			mu.Lock()
			headers = append(headers, r.Header.Get("X-Team"))
			mu.Unlock()
		}
		files.ServeHTTP(w, r)
	})
	base := serveHandler(t, mux)
	dir := t.TempDir()
	spec := filepath.Join(dir, "diagnose.yaml")
	os.WriteFile(spec, []byte(`base: `+base+`/ci/
headers: {X-Team: webmcp}
pages:
  - name: env
    url: env.html
    viewport: {width: 640, height: 480}
    cookies: [{name: session, value: abc123}]
    calls:
      - tool: page_env
        expect:
          json: {$.width: 640, $.height: 480, $.cookie: session=abc123}
      - name: times out
        tool: never_answers
        timeout: 1s
  - name: no tools
    url: notools.html
    tools: [anything]
    lint: off
  - name: no API
    url: noapi.html
`), 0o644)
	stdout, stderr, code := ciRun(t, "", "test", spec, "--format", "json", "--timeout", "15s")
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var rep struct {
		Suites []struct {
			Name  string `json:"name"`
			Cases []struct {
				Name    string `json:"name"`
				Status  string `json:"status"`
				Failure string `json:"failure"`
				Detail  string `json:"detail"`
			} `json:"cases"`
		} `json:"suites"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	cases := map[string]string{}
	for _, s := range rep.Suites {
		for _, c := range s.Cases {
			cases[s.Name+"/"+c.Name] = c.Status + ": " + c.Failure + "\n" + c.Detail
		}
	}
	t.Logf("cases: %v", cases)
	if got := cases["env/call page_env"]; !strings.HasPrefix(got, "passed") {
		t.Errorf("viewport and cookies: %s", got)
	}
	if got := cases["env/times out"]; !strings.HasPrefix(got, "failed: no result within its timeout of 1s") {
		t.Errorf("the call's timeout: %s", got)
	}
	mu.Lock()
	if len(headers) == 0 || headers[0] != "webmcp" {
		t.Errorf("X-Team of the requests for env.html: %q", headers)
	}
	mu.Unlock()
	noTools := cases["no tools/tools"]
	for _, want := range []string{
		"failed: missing anything",
		"a WebMCP API was present",
		"/ci/tools-bundle.js: HTTP 404 Not Found",
		"console.error: could not start the tools: WebMCPTools is not loaded (at " + base + "/ci/notools.html:14:",
		"uncaught exception at " + base + "/ci/notools.html:15:",
		"Cannot read properties of undefined (reading 'registerAll')",
	} {
		if !strings.Contains(noTools, want) {
			t.Errorf("the page without tools: lacks %q in\n%s", want, noTools)
		}
	}
	if strings.Contains(noTools, "favicon.ico") {
		t.Errorf("the browser's own favicon request is listed:\n%s", noTools)
	}
	if got := cases["no API/lint"]; !strings.Contains(got, "no-tools") || !strings.Contains(got, "no WebMCP API in the page") {
		t.Errorf("the page without an API: %s", got)
	}
}

// TestCILintRules: the lint rules a site author needs, on one page.
func TestCILintRules(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	rep := inspect(t, 1, base+"/ci/lint.html")
	got := map[string]bool{}
	for _, f := range rep.Findings {
		got[f.Tool+" "+f.Severity+" "+f.Rule] = true
	}
	for _, want := range []string{
		"search error required-not-in-properties",
		"list_items warning default-wrong-type",
		"refresh warning one-word-description",
		"status warning duplicate-across-frames",
		"book_table warning form-without-autosubmit",
	} {
		if !got[want] {
			t.Errorf("no finding %q in %v", want, got)
		}
	}
}

// serveHandler serves h on 127.0.0.1 for the test and returns its URL.
func serveHandler(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestCIFramePermission: a cross-origin frame without allow="tools" is a
// frame-permission error only when it tries to have tools (registerTool, a
// <form toolname>); one that registers nothing, like an ad or a video
// player, is no finding at all, and the page passes. (127.0.0.1 and
// localhost on the fixture server's port are two sites.)
func TestCIFramePermission(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	other := strings.Replace(base, "127.0.0.1", "localhost", 1)
	for _, tt := range []struct {
		child    string
		wantCode int
		wantTool string // the frame's tool, refused; "" for none
	}{
		{"register", 1, "frame_search"},
		{"form", 1, "frame_form"},
		{"none", 0, ""},
	} {
		t.Run(tt.child, func(t *testing.T) {
			rep := inspect(t, tt.wantCode, base+"/ci/xframe.html?child="+tt.child+"&other="+url.QueryEscape(other))
			var served, refused []string
			for _, tl := range rep.Tools {
				if tl.Refused == "" {
					served = append(served, tl.Name)
					continue
				}
				refused = append(refused, tl.Name)
				if tl.Reason != "permissions-policy" || !strings.Contains(tl.Refused, "tried to register it") {
					t.Errorf("refused %s: reason %q, %q", tl.Name, tl.Reason, tl.Refused)
				}
			}
			if strings.Join(served, ",") != "host_status" {
				t.Errorf("served tools %v, want host_status", served)
			}
			var perm []string
			for _, f := range rep.Findings {
				if f.Rule == "frame-permission" {
					perm = append(perm, f.Tool)
					if f.Severity != "error" || !strings.Contains(f.Message, other+"/ci/xframe-child.html") || !strings.Contains(f.Message, `allow="tools"`) {
						t.Errorf("the finding: %+v", f)
					}
				}
			}
			want := []string{}
			if tt.wantTool != "" {
				want = append(want, tt.wantTool)
			}
			if strings.Join(refused, ",") != strings.Join(want, ",") || strings.Join(perm, ",") != strings.Join(want, ",") {
				t.Errorf("refused %v, frame-permission findings for %v; want %v for both (findings %+v)", refused, perm, want, rep.Findings)
			}
		})
	}
}
