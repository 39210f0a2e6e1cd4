package e2e

import (
	"encoding/json"
	"encoding/xml"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// ciRun runs the webmcp-cdp binary with args (and stdin, when not empty)
// and returns what it printed and its exit code.
// A --timeout of 30 s (unless args give another) leaves room for a loaded
// machine, where the first page of a new browser can take seconds; a page
// that settles returns at once all the same.
func ciRun(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	// A default --timeout, unless the test gives its own: a flag given
	// twice is an error.
	if len(args) > 0 && !slices.ContainsFunc(args, func(a string) bool { return a == "--timeout" || strings.HasPrefix(a, "--timeout=") }) {
		args = append([]string{args[0], "--timeout", "30s"}, args[1:]...)
	}
	cmd := ciCommand(args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	return runCommand(t, cmd)
}

// ciCommand is the webmcp-cdp binary with args.
func ciCommand(args ...string) *exec.Cmd { return exec.Command(binary, args...) }

// runCommand runs cmd and returns what it printed and its exit code.
func runCommand(t *testing.T, cmd *exec.Cmd) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %v: %v", cmd.Args, err)
	}
	return out.String(), errOut.String(), code
}

// closedPort returns a 127.0.0.1 URL on which nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/"
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

type inspectJSON struct {
	URL     string `json:"url"`
	Settled bool   `json:"settled"`
	Tools   []struct {
		Name        string          `json:"name"`
		Routed      string          `json:"routed"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Annotations map[string]any  `json:"annotations"`
		Refused     string          `json:"refused"`
		Reason      string          `json:"reason"`
		Backend     string          `json:"backend"`
	} `json:"tools"`
	Resources []struct {
		URI         string `json:"uri"`
		Routed      string `json:"routed"`
		Template    bool   `json:"template"`
		Name        string `json:"name"`
		Description string `json:"description"`
		MimeType    string `json:"mimeType"`
	} `json:"resources"`
	Prompts []struct {
		Name        string `json:"name"`
		Routed      string `json:"routed"`
		Description string `json:"description"`
		Arguments   []struct {
			Name     string `json:"name"`
			Required bool   `json:"required"`
		} `json:"arguments"`
	} `json:"prompts"`
	Findings []struct {
		Tool     string `json:"tool"`
		Severity string `json:"severity"`
		Rule     string `json:"rule"`
		Message  string `json:"message"`
		Reason   string `json:"reason"`
	} `json:"findings"`
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
}

func inspect(t *testing.T, wantCode int, args ...string) inspectJSON {
	t.Helper()
	rep, _ := inspectLogged(t, wantCode, args...)
	return rep
}

// inspectLogged is inspect that also returns what inspect logged.
func inspectLogged(t *testing.T, wantCode int, args ...string) (inspectJSON, string) {
	t.Helper()
	stdout, stderr, code := ciRun(t, "", append([]string{"inspect", "--json"}, args...)...)
	if code != wantCode {
		t.Fatalf("inspect %v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, wantCode, stdout, stderr)
	}
	var rep inspectJSON
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("inspect --json printed something else than JSON: %v\n%s", err, stdout)
	}
	return rep, stderr
}

// TestCIInspectGood: a page whose tools are all fine: the tools as the page
// declared them, their routed names, and no findings (exit 0).
func TestCIInspectGood(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	rep := inspect(t, 0, base+"/ci/good.html")
	if !rep.Settled || rep.Errors != 0 || rep.Warnings != 0 || len(rep.Findings) != 0 {
		t.Errorf("settled %v, %d errors, %d warnings: %+v", rep.Settled, rep.Errors, rep.Warnings, rep.Findings)
	}
	var names []string
	for _, tl := range rep.Tools {
		names = append(names, tl.Name)
		if !strings.HasSuffix(tl.Routed, "_"+tl.Name) || strings.HasPrefix(tl.Description, "[") {
			t.Errorf("%s: routed %q, description %q", tl.Name, tl.Routed, tl.Description)
		}
		switch tl.Name {
		case "add":
			var schema struct {
				Properties map[string]any `json:"properties"`
			}
			json.Unmarshal(tl.InputSchema, &schema)
			if tl.Description != "Add two numbers and return {sum}." || tl.Annotations["readOnlyHint"] != true || schema.Properties["a"] == nil {
				t.Errorf("add is %+v", tl)
			}
		case "echo":
			if tl.Title != "Echo" {
				t.Errorf("echo's title is %q", tl.Title)
			}
		}
	}
	if want := []string{"add", "echo", "fail", "stats"}; strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("tools %v, want %v", names, want)
	}
}

// TestCIInspectBad: each kind of error finding, including the tools that
// webmcp-cdp refused (exit 1).
func TestCIInspectBad(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	rep := inspect(t, 1, base+"/ci/bad.html")
	got := map[string][]string{}
	for _, f := range rep.Findings {
		got[f.Tool] = append(got[f.Tool], f.Severity+" "+f.Rule)
	}
	for _, rules := range got {
		sort.Strings(rules)
	}
	want := map[string][]string{
		"blank_description": {"error empty-description"},
		"huge_description":  {"error huge-description"},
		"way_too_long":      {"error refused"},
		"list_input":        {"error refused"},
		"bad_pattern":       {"error schema-invalid"},
		"bad_type":          {"error schema-invalid"},
		"dotted.name":       {"error name-rejected"},
		"a_tool_name_long_enough_to_be_cut_in_routed_names": {"warning routed-name-cut"},
	}
	for tool, rules := range want {
		if strings.Join(got[tool], ",") != strings.Join(rules, ",") {
			t.Errorf("%s: findings %v, want %v", tool, got[tool], rules)
		}
	}
	for tool := range got {
		if _, ok := want[tool]; !ok {
			t.Errorf("unexpected findings for %q: %v", tool, got[tool])
		}
	}
	if rep.Errors != 7 || rep.Warnings != 1 {
		t.Errorf("%d errors, %d warnings; want 7 and 1", rep.Errors, rep.Warnings)
	}
	// Refused tools carry the hub's reason code, and so do their findings.
	wantReason := map[string]string{"way_too_long": "size", "list_input": "schema"}
	for _, tl := range rep.Tools {
		if (wantReason[tl.Name] != "") != (tl.Refused != "") || tl.Reason != wantReason[tl.Name] {
			t.Errorf("%s: refused %q, reason %q", tl.Name, tl.Refused, tl.Reason)
		}
	}
	for _, f := range rep.Findings {
		if f.Rule == "refused" && f.Reason != wantReason[f.Tool] {
			t.Errorf("the finding about %s has reason %q, want %q", f.Tool, f.Reason, wantReason[f.Tool])
		}
	}

	// The text report says the same for people.
	stdout, stderr, code := ciRun(t, "", "inspect", base+"/ci/bad.html")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, s := range []string{
		"bad.html: 9 tools",
		"dotted.name  →  127_0_0_1_",
		"way_too_long  (refused: ",
		"error   bad_type: schema-invalid: ",
		"warning a_tool_name_long_enough_to_be_cut_in_routed_names: routed-name-cut: ",
	} {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}
	if lastLine(stdout) != "7 errors, 1 warning" || !strings.Contains(stderr, "7 lint errors") {
		t.Errorf("last line %q; stderr:\n%s", lastLine(stdout), stderr)
	}
}

// TestCIInspectOutcomes: warnings only (exit 0), no tools (exit 1), a page
// that does not load and bad command lines (exit 2).
func TestCIInspectOutcomes(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	down := closedPort(t)
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string
		wantStderr string
		// wantNotStderr must not be on stderr, nor the SDK's chatter.
		wantNotStderr string
	}{
		{name: "warnings only", args: []string{base + "/ci/warn.html"}, wantCode: 0,
			wantStdout: []string{"warning lookup_order: instruction-like: ", "inputSchema/properties/order", "warning wordy: long-description: ", "0 errors, 3 warnings"}},
		{name: "no tools", args: []string{"--timeout", "2s", base + "/"}, wantCode: 1,
			wantStdout: []string{"0 tools", "Why there are no tools:", "error   (page): no-tools: "}, wantStderr: "1 lint error"},
		// A page that never loaded has nothing to diagnose but its load
		// error (issue 29 point 4): no word on its WebMCP API.
		{name: "page does not load", args: []string{down}, wantCode: 2, wantStderr: "ERR_CONNECTION_REFUSED", wantNotStderr: "WebMCP API"},
		{name: "HTTP 404", args: []string{base + "/ci/missing.html"}, wantCode: 2, wantStderr: "loading " + base + "/ci/missing.html: HTTP 404 Not Found"},
		{name: "no URL", args: nil, wantCode: 2, wantStderr: "usage: webmcp-cdp inspect"},
		{name: "relative URL", args: []string{"ci/good.html"}, wantCode: 2, wantStderr: "is not absolute"},
		{name: "unknown flag", args: []string{"--nope", base + "/ci/good.html"}, wantCode: 2, wantStderr: "unknown flag: --nope"},
		// A serving flag is not inspect's (issue 29 point 3).
		{name: "a flag of other commands", args: []string{"--confirm", "never", base + "/ci/good.html"}, wantCode: 2, wantStderr: "--confirm is a flag of attach, demo and launch; inspect does not use it"},
		{name: "bad settle", args: []string{"--settle", "0s", base + "/ci/good.html"}, wantCode: 2, wantStderr: "--settle 0s"},
		{name: "bad backend", args: []string{"--backend", "magic", base + "/ci/good.html"}, wantCode: 2, wantStderr: "--backend"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := ciRun(t, "", append([]string{"inspect"}, tt.args...)...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout, stderr)
			}
			for _, s := range tt.wantStdout {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, stderr)
			}
			if tt.wantNotStderr != "" && strings.Contains(stderr, tt.wantNotStderr) {
				t.Errorf("stderr has %q:\n%s", tt.wantNotStderr, stderr)
			}
			if sdk := sdkChatter.FindString(stderr); sdk != "" {
				t.Errorf("stderr has the SDK's %q at the default level:\n%s", sdk, stderr)
			}
			if tt.wantCode == 2 && stdout != "" {
				t.Errorf("a failed inspect printed on stdout:\n%s", stdout)
			}
		})
	}
}

// TestCICall: one call, its result on stdout as JSON, and the exit codes.
func TestCICall(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	good := base + "/ci/good.html"
	site := strings.NewReplacer(".", "_", ":", "_").Replace(strings.TrimPrefix(base, "http://"))
	tests := []struct {
		name       string
		stdin      string
		args       []string
		wantCode   int
		wantText   string // the result's text, when a result is printed
		wantSum    float64
		wantStderr string
	}{
		{name: "structured result", args: []string{good, "add", `{"a":2,"b":3}`}, wantText: `{"sum":5}`, wantSum: 5},
		{name: "arguments on stdin", stdin: `{"text":"from stdin"}`, args: []string{good, "echo", "-"}, wantText: "from stdin"},
		{name: "routed name", args: []string{good, site + "_echo", `{"text":"hi"}`}, wantText: "hi"},
		{name: "no arguments", args: []string{good, "stats"}, wantText: `"owner"`},
		{name: "error result", args: []string{good, "fail"}, wantCode: 1, wantText: "fail tool failed on purpose", wantStderr: "fail returned an error result (isError)"},
		{name: "no such tool", args: []string{good, "nope"}, wantCode: 2, wantStderr: `the page has no tool "nope"; it has add, echo, fail, stats`},
		{name: "refused tool", args: []string{base + "/ci/bad.html", "list_input"}, wantCode: 2, wantStderr: `refused the page's tool "list_input"`},
		{name: "arguments not JSON", args: []string{good, "add", `{"a":`}, wantCode: 2, wantStderr: "not a JSON object"},
		{name: "arguments not an object", args: []string{good, "add", `[1,2]`}, wantCode: 2, wantStderr: "not a JSON object"},
		{name: "no tool", args: []string{good}, wantCode: 2, wantStderr: "usage: webmcp-cdp call"},
		{name: "page does not load", args: []string{closedPort(t), "add"}, wantCode: 2, wantStderr: "ERR_CONNECTION_REFUSED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := ciRun(t, tt.stdin, append([]string{"call"}, tt.args...)...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout, stderr)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, stderr)
			}
			if code == 2 {
				if stdout != "" {
					t.Errorf("exit 2 printed a result:\n%s", stdout)
				}
				return
			}
			var res struct {
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
				StructuredContent map[string]any `json:"structuredContent"`
				IsError           bool           `json:"isError"`
			}
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatalf("stdout is not a CallToolResult: %v\n%s", err, stdout)
			}
			if res.IsError != (code == 1) || len(res.Content) != 1 || res.Content[0].Type != "text" || !strings.Contains(res.Content[0].Text, tt.wantText) {
				t.Errorf("result %+v", res)
			}
			if tt.wantSum != 0 && res.StructuredContent["sum"] != tt.wantSum {
				t.Errorf("structuredContent %v", res.StructuredContent)
			}
		})
	}
}

// junitDoc is the part of the JUnit XML the tests read.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Time    string `xml:"time,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junitDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the JUnit file does not parse: %v\n%s", err, b)
	}
	return doc
}

// TestCITestPasses runs the example spec (YAML, serve: .) with --junit.
func TestCITestPasses(t *testing.T) {
	t.Parallel()
	junit := filepath.Join(t.TempDir(), "results.xml")
	stdout, stderr, code := ciRun(t, "", "test", "../fixtures/ci/webmcp-tests.yaml", "--junit", junit)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if last := lastLine(stdout); last != "16 passed, 0 failed" {
		t.Errorf("last line %q\n%s", last, stdout)
	}
	if !strings.Contains(stdout, "  ok    tool lookup_order: 2 warnings") || !strings.Contains(stdout, "  ok    tool wordy: 1 warning") {
		t.Errorf("the warnings of warn.html are not shown:\n%s", stdout)
	}
	doc := readJUnit(t, junit)
	if doc.Tests != 16 || doc.Failures != 0 || len(doc.Suites) != 2 || doc.Suites[0].Name != "good tools" || doc.Suites[0].Tests != 11 {
		t.Errorf("JUnit: %+v", doc)
	}
}

// TestCITestFails runs a spec with failing checks of every kind: exit 1,
// the summary, and the failures in the JUnit XML.
func TestCITestFails(t *testing.T) {
	t.Parallel()
	site, err := filepath.Abs("../fixtures/ci")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	spec := filepath.Join(dir, "failing.yaml")
	os.WriteFile(spec, []byte(`serve: `+site+`
pages:
  - name: good
    url: good.html
    tools: [add]
    absent: [echo]
    calls:
      - tool: add
        args: {a: 1, b: 1}
        expect: {structured: {sum: 2}}
      - name: wrong text
        tool: echo
        args: {text: hi}
        expect: {text: ho}
      - name: unexpected error
        tool: fail
      - name: error expected
        tool: echo
        args: {text: x}
        expect: {isError: true}
  - name: bad
    url: bad.html
    tools: [ok_tool]
    calls:
      - tool: ok_tool
        expect: {text: ok}
  - name: strict
    url: warn.html
    lint: warnings
  - name: late
    url: late.html
    tools: [late_tool]
    calls:
      - name: structured from text
        tool: late_tool
        args: {who: CI}
        expect: {structured: {greeting: hello nobody}}
`), 0o644)
	junit := filepath.Join(dir, "out", "results.xml")
	os.MkdirAll(filepath.Dir(junit), 0o755)
	stdout, stderr, code := ciRun(t, "", "test", spec, "--junit", junit)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if last := lastLine(stdout); last != "15 passed, 14 failed" {
		t.Errorf("last line %q\n%s", last, stdout)
	}
	for _, s := range []string{
		"FAIL  tools: unexpected echo (listed in absent)",
		`FAIL  wrong text: text is "hi", want "ho"`,
		"FAIL  unexpected error: the call failed: fail tool failed on purpose",
		"FAIL  error expected: the call succeeded, but isError: true was expected",
		"FAIL  tool bad_type: 1 error, 0 warnings",
		"FAIL  tool lookup_order: 0 errors, 2 warnings",
		// structured: on a tool that returns JSON as text compares the text's
		// values (late_tool's greeting is "hello CI").
		`FAIL  structured from text: text.greeting is "hello CI", want "hello nobody"`,
	} {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}
	if !strings.Contains(stderr, "14 of 29 checks failed") {
		t.Errorf("stderr:\n%s", stderr)
	}
	doc := readJUnit(t, junit)
	if doc.Tests != 29 || doc.Failures != 14 || len(doc.Suites) != 4 {
		t.Fatalf("JUnit: tests %d, failures %d, suites %d", doc.Tests, doc.Failures, len(doc.Suites))
	}
	var got []string
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			if c.Failure != nil {
				got = append(got, s.Name+"/"+c.Name)
				if c.Failure.Message == "" {
					t.Errorf("%s/%s: a failure without a message", s.Name, c.Name)
				}
			}
		}
	}
	sort.Strings(got)
	want := []string{"bad/tool bad_pattern", "bad/tool bad_type", "bad/tool blank_description", "bad/tool dotted.name", "bad/tool huge_description",
		"bad/tool list_input", "bad/tool way_too_long", "good/error expected", "good/tools", "good/unexpected error", "good/wrong text",
		"late/structured from text", "strict/tool lookup_order", "strict/tool wordy"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("failed cases %v, want %v", got, want)
	}
}

// TestCITestSpecs: a JSON spec with --base-url, and the specs and command
// lines that exit 2 before a browser starts.
func TestCITestSpecs(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	jsonSpec := write("spec.json", `{"pages": [{"url": "ci/good.html", "tools": ["add"],
		"calls": [{"tool": "add", "args": {"a": 1, "b": 2}, "expect": {"text": "{\"sum\":3}", "structured": {"sum": 3}}}]}]}`)
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "JSON spec with --base-url", args: []string{jsonSpec, "--base-url", base}, wantCode: 0, wantStdout: "7 passed, 0 failed\n"},
		{name: "relative URL without a base", args: []string{jsonSpec}, wantCode: 2, wantStderr: `url "ci/good.html" is relative`},
		{name: "unknown field", args: []string{write("typo.yaml", "pages:\n  - url: http://127.0.0.1/\n    tols: [a]\n")}, wantCode: 2, wantStderr: `typo.yaml:3:5: pages[0]: unknown field "tols" (did you mean "tools"?)`},
		{name: "not YAML", args: []string{write("broken.yaml", "pages: [\n")}, wantCode: 2, wantStderr: "broken.yaml:1: not valid YAML"},
		{name: "no pages", args: []string{write("empty.yaml", "base: http://127.0.0.1/\n")}, wantCode: 2, wantStderr: "the spec has no pages"},
		{name: "serve a missing directory", args: []string{write("serve.yaml", "serve: nowhere\npages:\n  - url: a.html\n")}, wantCode: 2, wantStderr: "serve: "},
		{name: "missing file", args: []string{filepath.Join(dir, "missing.yaml")}, wantCode: 2, wantStderr: "reading the spec"},
		{name: "JUnit file cannot be written", args: []string{jsonSpec, "--base-url", base, "--junit", filepath.Join(dir, "no", "such", "dir.xml")}, wantCode: 2, wantStderr: "--junit"},
		{name: "no file", args: nil, wantCode: 2, wantStderr: "usage: webmcp-cdp test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := ciRun(t, "", append([]string{"test"}, tt.args...)...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout, stderr)
			}
			if !strings.HasSuffix(stdout, tt.wantStdout) {
				t.Errorf("stdout does not end in %q:\n%s", tt.wantStdout, stdout)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, stderr)
			}
		})
	}
}
