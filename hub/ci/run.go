package ci

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Report is the outcome of a spec run: one suite per page.
type Report struct {
	// Name names the run (the spec file).
	Name string
	// Suites are the pages, in the spec's order.
	Suites []Suite
	// Took is how long the run took.
	Took time.Duration
}

// Suite is the outcome of one page.
type Suite struct {
	// Name is the page's name, URL its resolved URL.
	Name, URL string
	// Cases are the page's checks, in order.
	Cases []Case
	// Took is how long the page took, from opening to closing.
	Took time.Duration
}

// Case is one check: the page's tools, its lint, or a call.
type Case struct {
	// Name is "tools", "lint" or the call's name.
	Name string
	// Failure says why the case failed; empty when it passed.
	Failure string
	// Note is a short remark on a case that passed (such as "2 warnings").
	Note string
	// Detail is more text: about a failure (the lint findings, a result),
	// or about the note of a case that passed.
	Detail string
	// Took is how long the case took.
	Took time.Duration
}

// Counts returns the number of passed and failed cases.
func (r *Report) Counts() (passed, failed int) {
	for _, s := range r.Suites {
		for _, c := range s.Cases {
			if c.Failure == "" {
				passed++
			} else {
				failed++
			}
		}
	}
	return passed, failed
}

// Runner runs specs on a Session, printing each case to Out as it ends.
type Runner struct {
	// Session opens the pages.
	Session *Session
	// Out receives the progress and the summary (default io.Discard). Its
	// last line is "N passed, M failed".
	Out io.Writer
}

// Run opens each page of spec at urls[i] (see Spec.URLs), checks it, and
// closes it. When ctx ends, the cases left fail with its cause.
func (r *Runner) Run(ctx context.Context, name string, spec *Spec, urls []string) *Report {
	out := r.Out
	if out == nil {
		out = io.Discard
	}
	start := time.Now()
	rep := &Report{Name: name}
	for i, ps := range spec.Pages {
		suite := r.runPage(ctx, out, spec, ps, urls[i])
		rep.Suites = append(rep.Suites, suite)
	}
	rep.Took = time.Since(start)
	passed, failed := rep.Counts()
	fmt.Fprintf(out, "%d passed, %d failed\n", passed, failed)
	return rep
}

// cases lists the names of a page's cases, in order.
func pageCases(spec *Spec, ps PageSpec) []string {
	var names []string
	if len(ps.Tools) > 0 || len(ps.Absent) > 0 {
		names = append(names, "tools")
	}
	if spec.lintMode(ps) != LintOff {
		names = append(names, "lint")
	}
	for _, c := range ps.Calls {
		names = append(names, callName(c))
	}
	return names
}

func callName(c CallSpec) string {
	if c.Name != "" {
		return c.Name
	}
	return "call " + c.Tool
}

func (r *Runner) runPage(ctx context.Context, out io.Writer, spec *Spec, ps PageSpec, url string) Suite {
	start := time.Now()
	suite := Suite{Name: ps.Name, URL: url}
	if suite.Name == "" {
		suite.Name = ps.URL
	}
	fmt.Fprintf(out, "page %s (%s)\n", suite.Name, url)
	report := func(c Case) {
		suite.Cases = append(suite.Cases, c)
		switch {
		case c.Failure != "":
			fmt.Fprintf(out, "  FAIL  %s: %s\n", c.Name, c.Failure)
		case c.Note != "":
			fmt.Fprintf(out, "  ok    %s: %s\n", c.Name, c.Note)
		case c.Took > 0:
			fmt.Fprintf(out, "  ok    %s (%s)\n", c.Name, roundDuration(c.Took))
		default:
			fmt.Fprintf(out, "  ok    %s\n", c.Name)
		}
		if c.Detail != "" {
			fmt.Fprintf(out, "%s\n", indent(c.Detail, "        "))
		}
	}
	failAll := func(why string) Suite {
		for _, name := range pageCases(spec, ps) {
			report(Case{Name: name, Failure: why})
		}
		suite.Took = time.Since(start)
		return suite
	}
	if ctx.Err() != nil {
		return failAll(fmt.Sprintf("not run: %v", context.Cause(ctx)))
	}
	page, err := r.Session.Open(ctx, url)
	if err != nil {
		return failAll(err.Error())
	}
	defer func() {
		if err := page.Close(context.WithoutCancel(ctx)); err != nil && ctx.Err() == nil {
			fmt.Fprintf(out, "  (closing the page: %v)\n", err)
		}
	}()
	fmt.Fprintf(out, "  %d tools after %s: %s\n", len(page.Names()), roundDuration(page.Took), strings.Join(page.Names(), ", "))

	if len(ps.Tools) > 0 || len(ps.Absent) > 0 {
		report(checkTools(page, ps))
	}
	if mode := spec.lintMode(ps); mode != LintOff {
		report(checkLint(page, mode))
	}
	for _, c := range ps.Calls {
		if ctx.Err() != nil {
			report(Case{Name: callName(c), Failure: fmt.Sprintf("not run: %v", context.Cause(ctx))})
			continue
		}
		report(runCall(ctx, page, c))
	}
	suite.Took = time.Since(start)
	return suite
}

func checkTools(p *Page, ps PageSpec) Case {
	c := Case{Name: "tools"}
	have := make(map[string]bool)
	for _, n := range p.Names() {
		have[n] = true
	}
	var problems []string
	want := make(map[string]bool)
	for _, n := range ps.Tools {
		want[n] = true
		if !have[n] {
			why := "missing " + n
			if t, ok := p.Tool(n); ok && t.Refused != "" {
				why += " (webmcp-cdp refused it: " + t.Refused + ")"
			}
			problems = append(problems, why)
		}
	}
	for _, n := range ps.Absent {
		if have[n] {
			problems = append(problems, "unexpected "+n+" (listed in absent)")
		}
	}
	if ps.ExactTools {
		var extra []string
		for n := range have {
			if !want[n] {
				extra = append(extra, n)
			}
		}
		sort.Strings(extra)
		for _, n := range extra {
			problems = append(problems, "unexpected "+n+" (exactTools)")
		}
	}
	if len(problems) > 0 {
		names := p.Names()
		if len(names) == 0 {
			names = []string{"none"}
		}
		c.Failure = strings.Join(problems, "; ")
		c.Detail = "the page's tools: " + strings.Join(names, ", ")
	}
	return c
}

func checkLint(p *Page, mode LintMode) Case {
	c := Case{Name: "lint"}
	findings := LintPage(p)
	if len(findings) == 0 {
		return c
	}
	errs, warns := 0, 0
	var lines []string
	for _, f := range findings {
		if f.Severity == Error {
			errs++
		} else {
			warns++
		}
		lines = append(lines, FormatFinding(f))
	}
	c.Detail = strings.Join(lines, "\n")
	if errs > 0 || mode == LintWarnings {
		c.Failure = plural(errs, "error") + ", " + plural(warns, "warning")
	} else {
		c.Note = plural(warns, "warning")
	}
	return c
}

// roundDuration rounds d for people: to the millisecond, or to the
// microsecond under a millisecond.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// FormatFinding writes a finding on one line: severity, tool, rule, message.
func FormatFinding(f Finding) string {
	tool := f.Tool
	if tool == "" {
		tool = "(page)"
	}
	return fmt.Sprintf("%-7s %s: %s: %s", f.Severity, tool, f.Rule, f.Message)
}

func runCall(ctx context.Context, p *Page, cs CallSpec) Case {
	start := time.Now()
	c := Case{Name: callName(cs)}
	res, err := p.Call(ctx, cs.Tool, cs.Args)
	c.Took = time.Since(start)
	if err != nil {
		c.Failure = err.Error()
		return c
	}
	c.Failure = CheckResult(res, cs.Expect)
	if c.Failure != "" {
		b, _ := json.Marshal(res)
		c.Detail = "result: " + cut(string(b), 2000)
	}
	return c
}

// CheckResult compares a result with what was expected and says what
// differs, or returns "".
func CheckResult(res *mcp.CallToolResult, want Expect) string {
	text := ResultText(res)
	wantErr := want.IsError != nil && *want.IsError
	var problems []string
	if res.IsError != wantErr {
		if res.IsError {
			problems = append(problems, fmt.Sprintf("the call failed: %s", cut(text, 300)))
		} else {
			problems = append(problems, "the call succeeded, but isError: true was expected")
		}
	}
	if want.Text != nil && text != *want.Text {
		problems = append(problems, fmt.Sprintf("text is %q, want %q", cut(text, 300), cut(*want.Text, 300)))
	}
	for _, s := range want.Contains {
		if !strings.Contains(text, s) {
			problems = append(problems, fmt.Sprintf("text lacks %q", s))
		}
	}
	if len(want.Structured) > 0 {
		var w any
		json.Unmarshal(want.Structured, &w) // checked when the spec was read
		if res.StructuredContent == nil {
			problems = append(problems, "the result has no structuredContent")
		} else {
			var got any
			b, err := json.Marshal(res.StructuredContent)
			if err == nil {
				err = json.Unmarshal(b, &got)
			}
			if err != nil {
				problems = append(problems, fmt.Sprintf("reading structuredContent: %v", err))
			} else if d := Subset(w, got, "structuredContent"); d != "" {
				problems = append(problems, d)
			}
		}
	}
	return strings.Join(problems, "; ")
}

// ResultText joins the text content of a result with newlines.
func ResultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Subset says where got differs from want, with want a JSON subset of got
// (both as encoding/json decodes into any), or returns "" when it is one.
func Subset(want, got any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s is %s, want an object", path, jsonText(got))
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				return fmt.Sprintf("%s has no %q", path, k)
			}
			if d := Subset(w[k], gv, path+"."+k); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Sprintf("%s is %s, want an array", path, jsonText(got))
		}
		if len(g) != len(w) {
			return fmt.Sprintf("%s has %d elements, want %d", path, len(g), len(w))
		}
		for i := range w {
			if d := Subset(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Sprintf("%s is %s, want %s", path, cut(jsonText(got), 200), cut(jsonText(want), 200))
	}
	return ""
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// ServeDir serves the files of dir on 127.0.0.1 (an unused port), with
// "Cache-Control: no-store", until stop is called. It returns the base URL,
// ending in a slash.
func ServeDir(dir string) (base string, stop func(), err error) {
	st, err := os.Stat(dir)
	if err != nil {
		return "", nil, fmt.Errorf("serve: %w", err)
	}
	if !st.IsDir() {
		return "", nil, fmt.Errorf("serve: %s is not a directory", dir)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("serve: listening on 127.0.0.1: %w", err)
	}
	files := http.FileServer(http.Dir(dir))
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cache-Control", "no-store")
			files.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/", func() { srv.Close() }, nil
}
