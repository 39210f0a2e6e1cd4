package ci

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

func TestSessionOpen(t *testing.T) {
	site, s := newFakeSite(t, notesSite())
	ctx := context.Background()

	p, err := s.Open(ctx, "http://site.test/notes", PageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Settled {
		t.Error("the page did not settle")
	}
	if got, want := p.Names(), []string{"add", "echo", "fail", "late", "stats"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("tools %v, want %v (the late tool must be waited for)", got, want)
	}
	add, _ := p.Tool("add")
	wantAdd := Tool{Name: "add", Routed: "site_test_add", Description: "Add two numbers.", InputSchema: obj(`"a":{"type":"number"},"b":{"type":"number"}`),
		Annotations: map[string]any{"readOnlyHint": true}, Backend: BackendWebMCP, URL: "http://site.test/notes", Frame: "FT1"}
	if !reflect.DeepEqual(add, wantAdd) {
		t.Errorf("add is\n%+v, want\n%+v", add, wantAdd)
	}
	if echo, _ := p.Tool("site_test_echo"); echo.Name != "echo" || echo.Title != "Echo" {
		t.Errorf("looking a tool up by its routed name gave %+v", echo)
	}

	res, err := p.Call(ctx, "add", json.RawMessage(`{"a":2,"b":3}`))
	if err != nil || res.IsError || ResultText(res) != `{"sum":5}` {
		t.Errorf("add: %v, %v", res, err)
	}
	if res, err := p.Call(ctx, "fail", nil); err != nil || !res.IsError || ResultText(res) != "fail tool failed on purpose" {
		t.Errorf("fail: %v, %v", res, err)
	}
	if _, err := p.Call(ctx, "nope", nil); !errors.Is(err, ErrNoTool) || !strings.Contains(err.Error(), "it has add, echo, fail, late, stats") {
		t.Errorf("a missing tool: %v", err)
	}

	// A second page of the same site, opened while the first is open, is
	// reached through its own tab's names.
	p2, err := s.Open(ctx, "http://site.test/notes", PageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	add2, _ := p2.Tool("add")
	if add2.Routed != "site_test_tab2_add" {
		t.Errorf("the second tab's add is routed as %q", add2.Routed)
	}
	if _, err := p2.Call(ctx, "add", nil); err != nil {
		t.Fatal(err)
	}
	if err := p2.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Hub.TabOf("T1"); ok {
		t.Error("the hub still knows the closed tab")
	}
	site.mu.Lock()
	defer site.mu.Unlock()
	if !reflect.DeepEqual(site.closed, []string{"T2", "T1"}) {
		t.Errorf("closed tabs %v", site.closed)
	}
	if len(site.calls) != 3 || site.calls[2] != "add {}" {
		t.Errorf("calls %v", site.calls)
	}
}

func TestSessionOpenRefusedAndEmpty(t *testing.T) {
	site, s := newFakeSite(t, notesSite())
	ctx := context.Background()

	p, err := s.Open(ctx, "http://site.test/bad", PageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tools) != 3 {
		t.Errorf("tools %+v, want dotted.name, huge and ok", p.Tools)
	}
	huge, ok := p.Tool("huge")
	if !ok || huge.Refused == "" || huge.Routed != "" {
		t.Errorf("the refused tool is %+v, %v", huge, ok)
	}
	if _, err := p.Call(ctx, "huge", nil); !errors.Is(err, ErrNoTool) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("calling a refused tool: %v", err)
	}
	p.Close(ctx)

	// A short bound only for the page whose wait must end at it: the bad
	// page's tools, awaited under it too, could come later than 300 ms on
	// a loaded machine.
	s.Timeout = 300 * time.Millisecond
	start := time.Now()
	p, err = s.Open(ctx, "http://site.test/empty", PageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Settled || len(p.Tools) != 0 || time.Since(start) < s.Timeout {
		t.Errorf("an empty page: settled %v, tools %v after %s", p.Settled, p.Tools, time.Since(start))
	}
	p.Close(ctx)

	if _, err := s.Open(ctx, "http://site.test/down", PageOptions{}); err == nil || !strings.Contains(err.Error(), "loading http://site.test/down: net::ERR_CONNECTION_REFUSED") {
		t.Errorf("a page that does not load: %v", err)
	}
	site.mu.Lock()
	last := site.closed[len(site.closed)-1]
	site.mu.Unlock()
	if last != "T3" {
		t.Errorf("the tab of a page that did not load was not closed: %v", site.closed)
	}

	cctx, cancel := context.WithCancelCause(ctx)
	cancel(errors.New("lost the browser"))
	if _, err := s.Open(cctx, "http://site.test/empty", PageOptions{}); err == nil || !strings.Contains(err.Error(), "lost the browser") {
		t.Errorf("Open after the context ended: %v", err)
	}
}

func TestTabTools(t *testing.T) {
	src := func(tool string, tab int, frame string) core.Provenance {
		return core.Provenance{Tool: tool, Tab: tab, Frame: frame, URL: "http://s.test/" + frame}
	}
	routed := []hub.RoutedTool{
		{Name: "s_test_a", Tool: core.Tool{Name: "a", Description: "A."}, Source: src("a", 1, "F1")},
		{Name: "s_test_b", Tool: core.Tool{Name: "b", Description: "B."}, Source: src("b", 2, "F2")},
		{Name: "s_test_tab1_a", Tool: core.Tool{Name: "a", Description: "A."}, Source: src("a", 1, "F1")},
		{Name: "s_test_tab2_a", Tool: core.Tool{Name: "a", Description: "A."}, Source: src("a", 2, "F2")},
		{Name: "s_test_tab1_x", Tool: core.Tool{Name: "x"}, Source: core.Provenance{Tool: "x", Tab: 1}},
		{Name: "s_test_c", Tool: core.Tool{Name: "c", Description: "C."}, Source: core.Provenance{Tool: "c", Cached: true}},
	}
	got := tabTools(routed, 1)
	var names []string
	for _, tl := range got {
		names = append(names, tl.Name+"="+tl.Routed+" "+tl.Description)
	}
	want := []string{"a=s_test_tab1_a A.", "x=s_test_tab1_x "}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("tab 1's tools %q, want %q", names, want)
	}
}

// TestRun runs a spec with passing, failing, errored and skipped cases of
// every kind against the fake site, and checks the printout, the JUnit XML
// and the other reports.
func TestRun(t *testing.T) {
	spec, err := ParseSpec([]byte(`
base: http://site.test/
headers: {Authorization: Bearer t0ken}
pages:
  - name: notes
    url: notes
    tools: [add, echo, fail, stats, late]
    viewport: {width: 800, height: 600}
    headers: {X-Test: "1"}
    cookies: [{name: session, value: abc}]
    calls:
      - tool: add
        args: {a: 2, b: 3}
        expect: {text: '{"sum":5}', structured: {sum: 5}, json: {$.sum: 5}}
      - name: echo says hello
        tool: echo
        expect: {text: hello, matches: '^h.l+o$'}
      - tool: fail
        expect: {isError: true, contains: on purpose}
      - name: wrong expectation
        tool: stats
        timeout: 5s
        expect: {structured: {owner: {name: someone}}}
      - name: missing tool
        tool: nope
  - name: exact
    url: notes
    tools: [add]
    exactTools: true
    absent: [debug]
    lint: off
  - url: bad
    tools: [ok, huge]
  - name: lenient
    url: bad
    lint: off
    absent: [dotted.name]
  - name: down
    url: down
    tools: [x]
    calls:
      - tool: x
  - name: gone
    url: gone
    tools: [x]
  - name: strict
    url: warn
    lint: warnings
`))
	if err != nil {
		t.Fatal(err)
	}
	urls, err := spec.URLs("")
	if err != nil {
		t.Fatal(err)
	}
	pages := notesSite()
	pages["http://site.test/gone"] = &fakePage{status: 404}
	site, s := newFakeSite(t, pages)
	var out bytes.Buffer
	rep := (&Runner{Session: s, Out: &out}).Run(context.Background(), "spec.yaml", spec, urls)
	printed := out.String()
	t.Logf("printed:\n%s", printed)

	type result struct{ suite, name, status, why string }
	var got []result
	for _, su := range rep.Suites {
		for _, c := range su.Cases {
			got = append(got, result{su.Name, c.Name, c.Status(), c.Failure + c.Error + c.Skipped})
		}
	}
	want := []result{
		{"notes", "load", "passed", ""},
		{"notes", "tools", "passed", ""},
		{"notes", "tool add", "passed", ""},
		{"notes", "tool echo", "passed", ""},
		{"notes", "tool fail", "passed", ""},
		{"notes", "tool late", "passed", ""},
		{"notes", "tool stats", "passed", ""},
		{"notes", "call add", "passed", ""},
		{"notes", "echo says hello", "passed", ""},
		{"notes", "call fail", "passed", ""},
		{"notes", "wrong expectation", "failed", `structuredContent.owner.name is "ci", want "someone"`},
		{"notes", "missing tool", "failed", `the page has no tool "nope"; it has add, echo, fail, late, stats`},
		{"exact", "load", "passed", ""},
		{"exact", "tools", "failed", "unexpected echo (exactTools); unexpected fail (exactTools); unexpected late (exactTools); unexpected stats (exactTools)"},
		{"bad", "load", "passed", ""},
		{"bad", "tools", "failed", "missing huge (webmcp-cdp refused it: its description is 20000 characters, over the limit of 16384)"},
		{"bad", "tool dotted.name", "failed", "1 error, 0 warnings"},
		{"bad", "tool huge", "failed", "1 error, 0 warnings"},
		{"bad", "tool ok", "passed", ""},
		{"lenient", "load", "passed", ""},
		{"lenient", "tools", "failed", "unexpected dotted.name (listed in absent)"},
		{"down", "load", "error", "loading http://site.test/down: net::ERR_CONNECTION_REFUSED"},
		{"down", "call x", "skipped", "not run: the page did not load"},
		{"gone", "load", "error", "loading http://site.test/gone: HTTP 404 Not Found"},
		{"strict", "load", "passed", ""},
		{"strict", "tool w", "failed", "0 errors, 1 warning"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cases:\n%v\nwant\n%v", got, want)
	}
	wantCounts := Counts{Passed: 15, Failed: 8, Errors: 2, Skipped: 1}
	if n := rep.Counts(); n != wantCounts {
		t.Errorf("counts %+v, want %+v", n, wantCounts)
	}
	lines := strings.Split(strings.TrimSpace(printed), "\n")
	if last := lines[len(lines)-1]; last != "15 passed, 8 failed, 2 errors, 1 skipped" {
		t.Errorf("last line %q", last)
	}
	for _, s := range []string{"page notes (http://site.test/notes)", "  ok    call add (", "  FAIL  wrong expectation: ", `result: {"content":[{"type":"text"`,
		"name-rejected", "refused", "  ok    tool fail: 1 warning\n        warning fail: one-word-description: ",
		"  ERROR load: loading http://site.test/gone: HTTP 404 Not Found\n        the page answered HTTP 404 Not Found (http://site.test/gone)\n        uncaught exception",
		"uncaught exception at http://site.test/app.js:3:7: Uncaught Error: boom", "  skip  call x: not run: the page did not load"} {
		if !strings.Contains(printed, s) {
			t.Errorf("the printout lacks %q", s)
		}
	}
	// The page's setup reached the browser: spec headers merged with the
	// page's, its viewport and cookies.
	site.mu.Lock()
	first := site.setups[0]
	site.mu.Unlock()
	if first.Viewport == nil || first.Viewport.Width != 800 || first.Headers["Authorization"] != "Bearer t0ken" || first.Headers["X-Test"] != "1" || len(first.Cookies) != 1 || first.Cookies[0].Value != "abc" {
		t.Errorf("the first page's setup: %+v", first)
	}

	var buf bytes.Buffer
	if err := rep.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Errors   int      `xml:"errors,attr"`
		Skipped  int      `xml:"skipped,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Props    []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Cases []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Time      string `xml:"time,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Error *struct {
					Message string `xml:"message,attr"`
				} `xml:"error"`
				Skipped   *struct{} `xml:"skipped"`
				SystemOut string    `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("the JUnit XML does not parse: %v\n%s", err, buf.String())
	}
	if doc.Tests != 26 || doc.Failures != 8 || doc.Errors != 2 || doc.Skipped != 1 || len(doc.Suites) != 7 {
		t.Errorf("testsuites: tests %d, failures %d, errors %d, skipped %d, suites %d", doc.Tests, doc.Failures, doc.Errors, doc.Skipped, len(doc.Suites))
	}
	notes := doc.Suites[0]
	if notes.Name != "notes" || notes.Tests != 12 || notes.Failures != 2 || notes.Props[0].Value != "http://site.test/notes" {
		t.Errorf("the notes suite: %+v", notes)
	}
	c := notes.Cases[10]
	if c.Name != "wrong expectation" || c.Classname != "notes" || c.Failure == nil || !strings.Contains(c.Failure.Text, "result:") {
		t.Errorf("a failed case: %+v", c)
	}
	if tool := notes.Cases[4]; tool.Failure != nil || !strings.Contains(tool.SystemOut, "one-word-description") {
		t.Errorf("a lint case that passed with a warning: %+v", tool)
	}
	down := doc.Suites[4]
	if down.Cases[0].Error == nil || down.Cases[1].Skipped == nil || down.Cases[1].Failure != nil {
		t.Errorf("the page that did not load: %+v", down)
	}

	// JSON, annotations and the Markdown summary say the same.
	buf.Reset()
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var js struct {
		Counts Counts `json:"counts"`
		Suites []struct {
			Cases []struct {
				Name   string `json:"name"`
				Status string `json:"status"`
				Line   int    `json:"line"`
			} `json:"cases"`
		} `json:"suites"`
	}
	if err := json.Unmarshal(buf.Bytes(), &js); err != nil || js.Counts != wantCounts || js.Suites[0].Cases[10].Status != "failed" || js.Suites[0].Cases[10].Line != 20 {
		t.Errorf("JSON: %v %+v\n%s", err, js, buf.String())
	}
	buf.Reset()
	if err := rep.WriteAnnotations(&buf, "spec.yaml"); err != nil {
		t.Fatal(err)
	}
	ann := buf.String()
	for _, s := range []string{
		"::error file=spec.yaml,line=20,col=9,title=notes%3A wrong expectation::structuredContent.owner.name",
		"::error file=spec.yaml,line=43,col=5,title=gone%3A load::loading http://site.test/gone: HTTP 404 Not Found%0A",
		"::warning file=spec.yaml,line=5,col=5,title=notes%3A tool fail::1 warning%0Awarning fail: one-word-description",
	} {
		if !strings.Contains(ann, s) {
			t.Errorf("annotations lack %q:\n%s", s, ann)
		}
	}
	if n := strings.Count(ann, "::error "); n != 10 {
		t.Errorf("%d ::error lines, want 10 (8 failed, 2 errors)", n)
	}
	buf.Reset()
	if err := rep.WriteSummary(&buf); err != nil {
		t.Fatal(err)
	}
	if sum := buf.String(); !strings.Contains(sum, "### ❌ WebMCP tools: spec.yaml") || !strings.Contains(sum, "| gone | load | 💥 error: loading http://site.test/gone: HTTP 404 Not Found |") {
		t.Errorf("summary:\n%s", sum)
	}
}

// TestRunInterrupted: when the context ends, the pages left are errors
// and their calls are skipped.
func TestRunInterrupted(t *testing.T) {
	spec, err := ParseSpec([]byte("pages:\n  - url: http://site.test/notes\n    tools: [add]\n    calls: [{tool: add}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, s := newFakeSite(t, notesSite())
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("lost the browser: it crashed"))
	rep := (&Runner{Session: s}).Run(ctx, "spec", spec, []string{"http://site.test/notes"})
	cases := rep.Suites[0].Cases
	if len(cases) != 2 || cases[0].Error != "not run: lost the browser: it crashed" || cases[1].Skipped != "not run: the page did not load" {
		t.Errorf("cases %+v", cases)
	}
}

func TestServeDir(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.html"), []byte("<p>hi</p>"), 0o644)
	base, stop, err := ServeDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if !strings.HasPrefix(base, "http://127.0.0.1:") || !strings.HasSuffix(base, "/") {
		t.Errorf("base %q", base)
	}
	res, err := http.Get(base + "a.html")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != "<p>hi</p>" || res.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("served %q with Cache-Control %q", body, res.Header.Get("Cache-Control"))
	}
	if _, _, err := ServeDir(filepath.Join(dir, "a.html")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("serving a file: %v", err)
	}
	if _, _, err := ServeDir(filepath.Join(dir, "missing")); err == nil {
		t.Error("serving a missing directory worked")
	}
}
