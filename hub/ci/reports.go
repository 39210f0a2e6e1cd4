package ci

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// This file writes a report for machines and CI systems: JSON (test
// --format json), GitHub Actions annotations, and a Markdown summary (for
// $GITHUB_STEP_SUMMARY). JUnit XML is in junit.go.

// jsonReport is the JSON form of a report, with times in milliseconds.
type jsonReport struct {
	Name   string      `json:"name"`
	Counts Counts      `json:"counts"`
	TookMS int64       `json:"tookMs"`
	Suites []jsonSuite `json:"suites"`
}

type jsonSuite struct {
	Name   string     `json:"name"`
	URL    string     `json:"url"`
	Line   int        `json:"line,omitempty"`
	TookMS int64      `json:"tookMs"`
	Cases  []jsonCase `json:"cases"`
}

type jsonCase struct {
	Case
	Status string `json:"status"`
	TookMS int64  `json:"tookMs"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

// WriteJSON writes the report as one JSON object: the counts, then each
// page with its cases (status, failure, error, skipped, findings, time).
func (r *Report) WriteJSON(w io.Writer) error {
	out := jsonReport{Name: r.Name, Counts: r.Counts(), TookMS: r.Took.Milliseconds(), Suites: []jsonSuite{}}
	for _, s := range r.Suites {
		js := jsonSuite{Name: s.Name, URL: s.URL, Line: s.Pos.Line, TookMS: s.Took.Milliseconds(), Cases: []jsonCase{}}
		for _, c := range s.Cases {
			js.Cases = append(js.Cases, jsonCase{Case: c, Status: c.Status(), TookMS: c.Took.Milliseconds(), Line: c.Pos.Line, Column: c.Pos.Column})
		}
		out.Suites = append(out.Suites, js)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// WriteAnnotations writes GitHub Actions workflow commands: an ::error for
// each failed or errored case, and a ::warning for each lint warning of a
// case that passed, each on the spec's line of the page or call, so that
// they show on the spec file in the pull request.
func (r *Report) WriteAnnotations(w io.Writer, file string) error {
	var b strings.Builder
	for _, s := range r.Suites {
		for _, c := range s.Cases {
			var kind, msg string
			switch c.Status() {
			case "error":
				kind, msg = "error", c.Error
			case "failed":
				kind, msg = "error", c.Failure
			default:
				if c.Note == "" || len(c.Findings) == 0 {
					continue
				}
				kind, msg = "warning", c.Note
			}
			if c.Detail != "" {
				msg += "\n" + c.Detail
			}
			props := []string{}
			if file != "" {
				props = append(props, "file="+escapeProperty(file))
				if c.Pos.Line > 0 {
					props = append(props, fmt.Sprintf("line=%d", c.Pos.Line))
				}
				if c.Pos.Column > 0 {
					props = append(props, fmt.Sprintf("col=%d", c.Pos.Column))
				}
			}
			props = append(props, "title="+escapeProperty(s.Name+": "+c.Name))
			fmt.Fprintf(&b, "::%s %s::%s\n", kind, strings.Join(props, ","), escapeData(cut(msg, 4000)))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// escapeData escapes a workflow command's message (GitHub's toolkit
// escapeData).
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value (GitHub's
// toolkit escapeProperty).
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// WriteSummary writes the report as Markdown: the counts, then a table of
// the cases that did not pass (or "all passed").
func (r *Report) WriteSummary(w io.Writer) error {
	var b strings.Builder
	n := r.Counts()
	icon := "✅"
	if n.Failed+n.Errors > 0 {
		icon = "❌"
	}
	fmt.Fprintf(&b, "### %s WebMCP tools: %s\n\n", icon, mdEscape(r.Name))
	fmt.Fprintf(&b, "%s in %s.\n\n", n, roundDuration(r.Took))
	b.WriteString("| page | check | result | time |\n|---|---|---|---|\n")
	for _, s := range r.Suites {
		for _, c := range s.Cases {
			var res string
			switch c.Status() {
			case "error":
				res = "💥 error: " + c.Error
			case "failed":
				res = "❌ " + c.Failure
			case "skipped":
				res = "⏭️ " + c.Skipped
			default:
				res = "✅"
				if c.Note != "" {
					res += " " + c.Note
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdEscape(s.Name), mdEscape(c.Name), mdEscape(cut(res, 300)), roundDuration(c.Took))
		}
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// mdEscape keeps text inside one Markdown table cell.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "<", "&lt;").Replace(s)
}
