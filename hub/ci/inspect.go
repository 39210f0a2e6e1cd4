package ci

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// What inspect reports of one page, as text or JSON.

// Inspection is a page as inspect reports it: the page, what the lint rules
// found (tools that were waited for and never came first), and the counts.
type Inspection struct {
	Page     *Page
	Findings []Finding
	Errors   int
	Warnings int
}

// Inspect lints p. Tools it was to wait for and did not serve within
// timeout (--wait-for-tool) are the first findings, as errors.
func Inspect(p *Page, timeout time.Duration) Inspection {
	in := Inspection{Page: p, Findings: LintPage(p)}
	if len(p.Missing) > 0 {
		in.Findings = append([]Finding{{Severity: Error, Rule: RuleNotSettled,
			Message: fmt.Sprintf("the page did not serve %s within --timeout %s", strings.Join(p.Missing, ", "), timeout)}}, in.Findings...)
	}
	for _, fd := range in.Findings {
		if fd.Severity == Error {
			in.Errors++
		} else {
			in.Warnings++
		}
	}
	return in
}

// inspectReport is inspect's --json output.
type inspectReport struct {
	URL       string             `json:"url"`
	Settled   bool               `json:"settled"`
	Missing   []string           `json:"missing,omitempty"`
	TookMS    int64              `json:"tookMs"`
	Tools     []Tool             `json:"tools"`
	Resources []Resource         `json:"resources"`
	Prompts   []Prompt           `json:"prompts"`
	Findings  []Finding          `json:"findings"`
	Errors    int                `json:"errors"`
	Warnings  int                `json:"warnings"`
	Diagnosis core.PageDiagnosis `json:"diagnosis"`
}

// WriteJSON writes the inspection as one indented JSON object (inspect
// --format json).
func (in Inspection) WriteJSON(w io.Writer) error {
	p, findings, errs, warns := in.Page, in.Findings, in.Errors, in.Warnings
	rep := inspectReport{URL: p.URL, Settled: p.Settled, Missing: p.Missing, TookMS: p.Took.Milliseconds(), Tools: p.Tools, Findings: findings, Errors: errs, Warnings: warns, Diagnosis: p.Diagnosis}
	rep.Resources, rep.Prompts = p.Resources, p.Prompts
	if rep.Tools == nil {
		rep.Tools = []Tool{}
	}
	if rep.Resources == nil {
		rep.Resources = []Resource{}
	}
	if rep.Prompts == nil {
		rep.Prompts = []Prompt{}
	}
	if rep.Findings == nil {
		rep.Findings = []Finding{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteText writes the inspection for a person: each tool, resource and
// prompt, why there are no tools when there are none, and the findings.
func (in Inspection) WriteText(w io.Writer) error {
	p, findings, errs, warns := in.Page, in.Findings, in.Errors, in.Warnings
	var b bytes.Buffer
	state := "settled"
	if !p.Settled {
		state = "gave up waiting"
	}
	fmt.Fprintf(&b, "%s: %s (%s after %s)\n", p.URL, PageCounts(p), state, p.Took.Round(time.Millisecond))
	for _, t := range p.Tools {
		b.WriteString("\n")
		if t.Refused != "" {
			fmt.Fprintf(&b, "%s  (refused: %s)\n", t.Name, t.Refused)
			continue
		}
		fmt.Fprintf(&b, "%s  →  %s\n", t.Name, t.Routed)
		fmt.Fprintf(&b, "  backend:      %s\n", t.Backend)
		if t.Title != "" {
			fmt.Fprintf(&b, "  title:        %s\n", t.Title)
		}
		fmt.Fprintf(&b, "  description:  %s\n", cutLine(t.Description, 300))
		if len(t.InputSchema) > 0 {
			var c bytes.Buffer
			if json.Compact(&c, t.InputSchema) != nil {
				c.Reset()
				c.Write(t.InputSchema)
			}
			fmt.Fprintf(&b, "  inputSchema:  %s\n", c.String())
		}
		if len(t.Annotations) > 0 {
			a, _ := json.Marshal(t.Annotations)
			fmt.Fprintf(&b, "  annotations:  %s\n", a)
		}
		if t.URL != "" && t.URL != p.URL {
			fmt.Fprintf(&b, "  from:         %s\n", t.URL)
		}
	}
	writeServerCatalog(&b, p)
	b.WriteString("\n")
	if len(p.Tools) == 0 {
		b.WriteString("Why there are no tools:\n")
		for _, l := range Explain(p.Diagnosis) {
			fmt.Fprintf(&b, "  %s\n", l)
		}
		b.WriteString("\n")
	}
	if len(findings) == 0 {
		b.WriteString("No findings.\n")
	} else {
		b.WriteString("Findings:\n")
		for _, fd := range findings {
			fmt.Fprintf(&b, "  %s\n", FormatFinding(fd))
		}
	}
	fmt.Fprintf(&b, "%s, %s\n", Plural(errs, "error"), Plural(warns, "warning"))
	_, err := w.Write(b.Bytes())
	return err
}

// writeServerCatalog writes the resources, resource templates and prompts
// of the page's MCP-B page servers.
func writeServerCatalog(b *bytes.Buffer, p *Page) {
	if len(p.Resources) > 0 {
		b.WriteString("\nResources (MCP-B page servers):\n")
	}
	for _, r := range p.Resources {
		kind := "resource"
		if r.Template {
			kind = "template"
		}
		fmt.Fprintf(b, "\n%s  →  %s  (%s)\n", r.URI, r.Routed, kind)
		fmt.Fprintf(b, "  name:         %s\n", r.Name)
		if r.Description != "" {
			fmt.Fprintf(b, "  description:  %s\n", cutLine(r.Description, 300))
		}
		if r.MimeType != "" {
			fmt.Fprintf(b, "  mimeType:     %s\n", r.MimeType)
		}
	}
	if len(p.Prompts) > 0 {
		b.WriteString("\nPrompts (MCP-B page servers):\n")
	}
	for _, pr := range p.Prompts {
		fmt.Fprintf(b, "\n%s  →  %s\n", pr.Name, pr.Routed)
		if pr.Description != "" {
			fmt.Fprintf(b, "  description:  %s\n", cutLine(pr.Description, 300))
		}
		for _, a := range pr.Arguments {
			req := ""
			if a.Required {
				req = " (required)"
			}
			line := a.Name + req
			if a.Description != "" {
				line += "  " + cutLine(a.Description, 200)
			}
			fmt.Fprintf(b, "  argument:     %s\n", line)
		}
	}
}

// cutLine shows s on one line, cut to n characters.
func cutLine(s string, n int) string {
	r := []rune(s)
	for i, c := range r {
		if c == '\n' || c == '\r' || c == '\t' {
			r[i] = ' '
		}
	}
	if len(r) > n {
		return string(r[:n]) + fmt.Sprintf("… (%d characters)", len(r))
	}
	return string(r)
}
