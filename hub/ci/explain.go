package ci

import (
	"fmt"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Explain words a page's diagnosis for its authors, one line each: how the
// page loaded, whether it has a WebMCP API, and its errors (uncaught
// exceptions and console errors with their script's URL:line:column,
// failed requests with their status). It is what CI mode prints when a
// page has no tools or did not load. A page that did not load has nothing
// to diagnose but its load error: no line is said about its API, which it
// never had the chance to get.
func Explain(d core.PageDiagnosis) []string {
	var out []string
	l := d.Load
	switch {
	case l.Status >= 400:
		out = append(out, fmt.Sprintf("the page answered HTTP %d %s (%s)", l.Status, l.StatusText, l.URL))
	case l.Err != "":
		out = append(out, fmt.Sprintf("the page did not load: %s", l.Err))
	case !l.Loaded && l.URL != "":
		out = append(out, "the page had not finished loading (no load event) when the wait ended: a slow script or request? (--timeout sets the wait)")
	}
	switch {
	case l.Failed():
	case d.API == "none":
		out = append(out, "no WebMCP API in the page: neither document.modelContext nor navigator.modelContext has registerTool (did a script replace them?)")
	case d.API == "native" || d.API == "polyfill":
		out = append(out, fmt.Sprintf("a WebMCP API was present (%s)", d.API))
	}
	for _, p := range d.Problems {
		out = append(out, problemLine(p))
	}
	if d.Dropped > 0 {
		out = append(out, fmt.Sprintf("… and %d more errors", d.Dropped))
	}
	if len(d.Problems) == 0 && !l.Failed() {
		out = append(out, "the page logged no errors and none of its requests failed")
	}
	return out
}

// problemLine words one problem.
func problemLine(p core.PageProblem) string {
	where := p.URL
	if where != "" && p.Line > 0 {
		where += fmt.Sprintf(":%d", p.Line)
		if p.Column > 0 {
			where += fmt.Sprintf(":%d", p.Column)
		}
	}
	switch p.Kind {
	case core.ProblemException:
		if where != "" {
			return fmt.Sprintf("uncaught exception at %s: %s", where, p.Text)
		}
		return "uncaught exception: " + p.Text
	case core.ProblemConsole:
		if where != "" {
			return fmt.Sprintf("%s (at %s)", p.Text, where)
		}
		return p.Text
	case core.ProblemRequest:
		return fmt.Sprintf("failed request %s: %s", p.URL, p.Text)
	}
	if where != "" {
		return fmt.Sprintf("browser error: %s (%s)", p.Text, where)
	}
	return "browser error: " + p.Text
}
