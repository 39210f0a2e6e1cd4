package ci

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub/record"
)

// Report is the outcome of a spec run: one suite per page.
type Report struct {
	// Name names the run (the spec file).
	Name string `json:"name"`
	// Suites are the pages, in the spec's order.
	Suites []Suite `json:"suites"`
	// Took is how long the run took.
	Took time.Duration `json:"-"`
	// Updates are the snapshots a run with Runner.Update found changed
	// (UpdateSnapshots writes them into the spec).
	Updates []SnapshotUpdate `json:"-"`
}

// Suite is the outcome of one page.
type Suite struct {
	// Name is the page's name, URL its resolved URL.
	Name string `json:"name"`
	URL  string `json:"url"`
	// Cases are the page's checks, in order.
	Cases []Case `json:"cases"`
	// Took is how long the page took, from opening to closing.
	Took time.Duration `json:"-"`
	// Pos is the page's place in the spec.
	Pos Pos `json:"-"`
}

// Case is one check: the page's load, its tools, the lint of the page and
// of each tool, or a call. A case that is neither failed, errored nor
// skipped passed.
type Case struct {
	// Name is "load", "tools", "lint", "tool NAME" or the call's name.
	Name string `json:"name"`
	// Failure says why a check failed.
	Failure string `json:"failure,omitempty"`
	// Error says why the case could not be checked: the page did not
	// load, the run was interrupted.
	Error string `json:"error,omitempty"`
	// Skipped says why the case was not run (its page did not load).
	Skipped string `json:"skipped,omitempty"`
	// Note is a short remark on a case that passed (such as "2 warnings").
	Note string `json:"note,omitempty"`
	// Detail is more text: about a failure (the lint findings, a result),
	// or about the note of a case that passed.
	Detail string `json:"detail,omitempty"`
	// Took is how long the case took.
	Took time.Duration `json:"-"`
	// Pos is where the case comes from in the spec.
	Pos Pos `json:"-"`
	// Findings are the lint findings of a lint case.
	Findings []Finding `json:"findings,omitempty"`
}

// Status is "passed", "failed", "error" or "skipped".
func (c Case) Status() string {
	switch {
	case c.Error != "":
		return "error"
	case c.Failure != "":
		return "failed"
	case c.Skipped != "":
		return "skipped"
	}
	return "passed"
}

// Counts are the cases of a report by status.
type Counts struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Errors  int `json:"errors"`
	Skipped int `json:"skipped"`
}

// String words the counts as the last line of a run: "N passed, M
// failed", then errors and skipped cases when there are any.
func (c Counts) String() string {
	s := fmt.Sprintf("%d passed, %d failed", c.Passed, c.Failed)
	if c.Errors > 0 {
		s += ", " + Plural(c.Errors, "error")
	}
	if c.Skipped > 0 {
		s += fmt.Sprintf(", %d skipped", c.Skipped)
	}
	return s
}

// Counts counts the cases of the report by status.
func (r *Report) Counts() Counts {
	var n Counts
	for _, s := range r.Suites {
		for _, c := range s.Cases {
			switch c.Status() {
			case "error":
				n.Errors++
			case "failed":
				n.Failed++
			case "skipped":
				n.Skipped++
			default:
				n.Passed++
			}
		}
	}
	return n
}

// Runner runs specs on a Session, printing each case to Out as it ends.
type Runner struct {
	// Session opens the pages.
	Session *Session
	// Out receives the progress and the summary (default io.Discard). Its
	// last line is Counts.String().
	Out io.Writer
	// Update takes each result whose snapshot differs as the new snapshot
	// (Report.Updates) instead of failing its call.
	Update bool
}

// Run opens each page of spec at urls[i] (see Spec.URLs), checks it, and
// closes it. When ctx ends, the pages left are errors and their calls are
// skipped.
func (r *Runner) Run(ctx context.Context, name string, spec *Spec, urls []string) *Report {
	out := r.Out
	if out == nil {
		out = io.Discard
	}
	start := time.Now()
	rep := &Report{Name: name}
	for i := range spec.Pages {
		rep.Suites = append(rep.Suites, r.runPage(ctx, out, spec, i, urls[i], &rep.Updates))
	}
	rep.Took = time.Since(start)
	fmt.Fprintln(out, rep.Counts())
	return rep
}

func callName(c CallSpec) string {
	if c.Name != "" {
		return c.Name
	}
	return "call " + c.Tool
}

// waitFor lists the tools a page must have: its tools and those its calls
// call, less those that must be absent.
func waitFor(ps PageSpec) []string {
	absent := make(map[string]bool)
	for _, a := range ps.Absent {
		absent[a] = true
	}
	seen := make(map[string]bool)
	var out []string
	for _, n := range ps.Tools {
		if !seen[n] && !absent[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, c := range ps.Calls {
		if !seen[c.Tool] && !absent[c.Tool] {
			seen[c.Tool] = true
			out = append(out, c.Tool)
		}
	}
	return out
}

func (r *Runner) runPage(ctx context.Context, out io.Writer, spec *Spec, i int, url string, updates *[]SnapshotUpdate) Suite {
	ps := spec.Pages[i]
	where := fmt.Sprintf("pages[%d]", i)
	start := time.Now()
	suite := Suite{Name: ps.Name, URL: url, Pos: spec.Pos(where)}
	if suite.Name == "" {
		suite.Name = ps.URL
	}
	fmt.Fprintf(out, "page %s (%s)\n", suite.Name, url)
	report := func(c Case) {
		suite.Cases = append(suite.Cases, c)
		printCase(out, c)
	}
	// notLoaded reports the page's load as an error and skips its calls.
	notLoaded := func(c Case) Suite {
		c.Name, c.Pos = "load", suite.Pos
		report(c)
		for j, cs := range ps.Calls {
			report(Case{Name: callName(cs), Skipped: "not run: the page did not load", Pos: spec.Pos(fmt.Sprintf("%s.calls[%d]", where, j))})
		}
		suite.Took = time.Since(start)
		return suite
	}
	if ctx.Err() != nil {
		return notLoaded(Case{Error: fmt.Sprintf("not run: %v", context.Cause(ctx))})
	}
	page, err := r.Session.Open(ctx, url, PageOptions{Setup: spec.Setup(i), WaitFor: waitFor(ps)})
	if err != nil {
		c := Case{Error: err.Error(), Took: time.Since(start)}
		if le, ok := err.(*LoadError); ok {
			c.Detail = strings.Join(Explain(le.Diagnosis), "\n")
		}
		return notLoaded(c)
	}
	defer func() {
		if err := page.Close(context.WithoutCancel(ctx)); err != nil && ctx.Err() == nil {
			fmt.Fprintf(out, "  (closing the page: %v)\n", err)
		}
	}()
	load := Case{Name: "load", Took: page.Took, Pos: suite.Pos,
		Note: fmt.Sprintf("%s after %s: %s", Plural(len(page.Names()), "tool"), roundDuration(page.Took), servedNames(page))}
	if !page.Settled {
		load.Note += " (gave up waiting)"
	}
	report(load)

	if len(ps.Tools) > 0 || len(ps.Absent) > 0 {
		c := checkTools(page, ps)
		c.Pos = spec.Pos(where + ".tools")
		report(c)
	}
	if mode := spec.lintMode(ps); mode != LintOff {
		for _, c := range lintCases(page, mode) {
			c.Pos = suite.Pos
			report(c)
		}
	}
	for j, c := range ps.Calls {
		pos := spec.Pos(fmt.Sprintf("%s.calls[%d]", where, j))
		if ctx.Err() != nil {
			report(Case{Name: callName(c), Skipped: fmt.Sprintf("not run: %v", context.Cause(ctx)), Pos: pos})
			continue
		}
		var up *SnapshotUpdate
		if r.Update && len(c.Expect.Snapshot) > 0 {
			up = &SnapshotUpdate{Page: i, Call: j, Name: callName(c), scrub: spec.scrubSecrets}
		}
		cs := runCall(ctx, page, c, up)
		cs.Pos = pos
		report(cs)
		if up != nil && up.Diff != nil {
			*updates = append(*updates, *up)
		}
	}
	suite.Took = time.Since(start)
	return suite
}

// printCase writes a case's line (and its detail) as the run goes.
func printCase(out io.Writer, c Case) {
	switch {
	case c.Error != "":
		fmt.Fprintf(out, "  ERROR %s: %s\n", c.Name, c.Error)
	case c.Failure != "":
		fmt.Fprintf(out, "  FAIL  %s: %s\n", c.Name, c.Failure)
	case c.Skipped != "":
		fmt.Fprintf(out, "  skip  %s: %s\n", c.Name, c.Skipped)
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
		if len(p.Names()) == 0 {
			if why := Explain(p.Diagnosis); len(why) > 0 {
				c.Detail += "\n" + strings.Join(why, "\n")
			}
		}
	}
	return c
}

// lintCases lints a page: a "lint" case for the findings about the whole
// page (when there are any), then a "tool NAME" case per tool.
func lintCases(p *Page, mode LintMode) []Case {
	findings := LintPage(p)
	byTool := make(map[string][]Finding)
	for _, f := range findings {
		byTool[f.Tool] = append(byTool[f.Tool], f)
	}
	var out []Case
	if fs := byTool[""]; len(fs) > 0 {
		out = append(out, lintCase("lint", fs, mode))
	}
	seen := make(map[string]bool)
	for _, t := range p.Tools {
		if seen[t.Name] || t.Name == "*" {
			continue
		}
		seen[t.Name] = true
		out = append(out, lintCase("tool "+t.Name, byTool[t.Name], mode))
	}
	return out
}

func lintCase(name string, findings []Finding, mode LintMode) Case {
	c := Case{Name: name, Findings: findings}
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
		c.Failure = Plural(errs, "error") + ", " + Plural(warns, "warning")
	} else {
		c.Note = Plural(warns, "warning")
	}
	return c
}

// runCall makes a call and checks its result. With up set (--update), a
// snapshot that differs is taken into up instead of failing the call.
func runCall(ctx context.Context, p *Page, cs CallSpec, up *SnapshotUpdate) Case {
	start := time.Now()
	c := Case{Name: callName(cs)}
	if cs.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(cs.Timeout))
		defer cancel()
	}
	res, err := p.Call(ctx, cs.Tool, cs.Args)
	c.Took = time.Since(start)
	if err != nil {
		if cs.Timeout > 0 && ctx.Err() != nil {
			err = fmt.Errorf("no result within its timeout of %s: %w", time.Duration(cs.Timeout), err)
		}
		c.Failure = err.Error()
		return c
	}
	want := cs.Expect
	if up != nil {
		if sc, err := compileSnapshot(want); err == nil {
			if _, d := sc.check(ResultText(res)); d != nil {
				up.take(ResultText(res), d)
				// Checked against the new snapshot, the call still fails
				// where a matches mark does not hold.
				if b, err := json.Marshal(record.Snapshot(ResultText(res))); err == nil {
					want.Snapshot = b
				}
			}
		}
	}
	var diff []string
	c.Failure, diff = checkResult(res, want)
	if c.Failure != "" {
		c.Detail = callDetail(ctx, p, cs, res, diff)
	} else if up != nil && up.Diff != nil {
		c.Note = "snapshot updated"
	}
	return c
}

// callDetail says what a failed call was: the tool and its arguments (as
// written, secrets as placeholders), the snapshot's diff or the result, and
// the page's console errors.
func callDetail(ctx context.Context, p *Page, cs CallSpec, res *mcp.CallToolResult, diff []string) string {
	args := cs.shownArgs
	if args == nil {
		args = cs.Args
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	lines := []string{"tool: " + cs.Tool, "arguments: " + cut(string(args), 500)}
	if diff != nil {
		lines = append(lines, "diff (- expected, + actual):")
		lines = append(lines, diff...)
	} else {
		b, _ := json.Marshal(res)
		lines = append(lines, "result: "+cut(string(b), 2000))
	}
	if errs := p.consoleErrors(ctx); len(errs) > 0 {
		lines = append(lines, "the page's errors:")
		lines = append(lines, errs...)
	}
	return strings.Join(lines, "\n")
}

func roundDuration(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

// Plural writes n and the word, with an s when n is not 1.
func Plural(n int, word string) string {
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
