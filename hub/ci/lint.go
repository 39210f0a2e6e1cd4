package ci

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Severity grades a lint finding.
type Severity string

// The severities. An error fails inspect (exit 1) and, by default, a test
// spec's lint case; a warning is reported only.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// The rules, as they appear in Finding.Rule.
const (
	RuleNoTools         = "no-tools"
	RuleNotSettled      = "not-settled"
	RuleRefused         = "refused"
	RuleEmptyDesc       = "empty-description"
	RuleLongDesc        = "long-description"
	RuleHugeDesc        = "huge-description"
	RuleSchemaNotObject = "schema-not-object"
	RuleSchemaInvalid   = "schema-invalid"
	RuleNameRejected    = "name-rejected"
	RuleNameCut         = "routed-name-cut"
	RuleInstructions    = "instruction-like"
	RuleOneWordDesc     = "one-word-description"
	RuleRequiredUnknown = "required-not-in-properties"
	RuleDefaultType     = "default-wrong-type"
	RuleDuplicateFrames = "duplicate-across-frames"
	RuleFramePermission = "frame-permission"
	RuleFormNoSubmit    = "form-without-autosubmit"
)

// The description lengths, in characters, over which a description is long
// (a warning: it costs every client context on every request) and huge (an
// error). webmcp-cdp refuses descriptions over 16 KiB outright.
const (
	LongDescription = 1024
	HugeDescription = 8192
)

// Finding is one lint finding.
type Finding struct {
	// Tool is the page's name for the tool; empty for a finding about the
	// whole page.
	Tool string `json:"tool,omitempty"`
	// Severity is error or warning.
	Severity Severity `json:"severity"`
	// Rule names the check, such as "schema-invalid".
	Rule string `json:"rule"`
	// Message says what is wrong, for the page's authors.
	Message string `json:"message"`
	// Reason is the hub's code for a refused tool (rule "refused"), such as
	// "size" or "schema"; empty for other findings.
	Reason core.Reason `json:"reason,omitempty"`
}

// refusalHints say what a page's authors can do about each kind of
// refusal.
var refusalHints = map[core.Reason]string{
	core.ReasonName:        "use 1-128 characters of A-Z a-z 0-9 _ . -",
	core.ReasonDescription: "give it a description",
	core.ReasonSize:        "shorten the description, title or inputSchema",
	core.ReasonSchema:      `give it an inputSchema of type "object"`,
	core.ReasonDuplicate:   "give each tool of the page its own name",
	core.ReasonTooMany:     "register fewer tools in one document",
	core.ReasonRate:        "register fewer new tool names a minute",
	core.ReasonOrigin:      "the origin policy (--allow-origin, --deny-origin) denies the page's origin",
	core.ReasonPage:        "make the definition plain JSON-able data",
}

// clientName is the tool name pattern of most model APIs and MCP clients.
var clientName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// instructionLike matches text that reads as orders to the model rather
// than a description of the tool: the stuff of prompt injection.
var instructionLike = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\b(ignore|disregard|forget|override)\s+(all\s+|any\s+)?(the\s+|your\s+)?(previous|prior|above|earlier|preceding|other|system)\s+(instructions|prompts?|messages|rules|directions)`),
	regexp.MustCompile(`(?i)\bsystem\s+prompt\b`),
	regexp.MustCompile(`(?i)\byou\s+must\b`),
	regexp.MustCompile(`(?i)\bnew\s+instructions\b`),
	regexp.MustCompile(`(?i)\b(do\s+not|don't|never)\s+(tell|inform|mention|reveal|show)\b[^.]{0,40}\buser\b`),
	regexp.MustCompile(`(?i)\balways\s+(call|use|invoke|run)\s+this\s+tool\b`),
	regexp.MustCompile(`(?i)\bbefore\s+(calling|using)\s+any\s+other\s+tools?\b`),
	regexp.MustCompile(`(?i)</?\s*(system|instructions?|important)\s*>`),
}

// LintPage lints a page's tools and adds the findings about the page
// itself: no tools (with the page's diagnosis), tools that never settled,
// a tool name used by several frames,
// and declarative forms an agent cannot submit.
func LintPage(p *Page) []Finding {
	var out []Finding
	switch {
	case len(p.Tools) == 0 && len(p.Resources) == 0 && len(p.Prompts) == 0:
		msg := fmt.Sprintf("the page registered no tools within %s", p.Took.Round(time.Millisecond))
		if why := Explain(p.Diagnosis); len(why) > 0 {
			msg += ": " + strings.Join(why, "; ")
		}
		out = append(out, Finding{Severity: Error, Rule: RuleNoTools, Message: msg})
	case !p.Settled && len(p.Missing) == 0: // a missing tool is its own failure
		out = append(out, Finding{Severity: Warning, Rule: RuleNotSettled,
			Message: fmt.Sprintf("the page's tools were still changing (or it had not loaded) after %s; these are the tools at that moment", p.Took.Round(time.Millisecond))})
	}
	out = append(out, Lint(p.Tools)...)
	out = append(out, lintFrames(p.Tools)...)
	out = append(out, lintForms(p.Diagnosis.Forms)...)
	sortFindings(out)
	return out
}

// lintFrames finds tool names that several documents of the page (frames)
// registered: clients see them as different tools with near names, and a
// model cannot tell them apart.
func lintFrames(tools []Tool) []Finding {
	docs := make(map[string][]string)
	for _, t := range tools {
		if t.Refused != "" {
			continue
		}
		if !slices.Contains(docs[t.Name], t.URL) {
			docs[t.Name] = append(docs[t.Name], t.URL)
		}
	}
	var out []Finding
	for name, urls := range docs {
		if len(urls) > 1 {
			out = append(out, Finding{Tool: name, Severity: Warning, Rule: RuleDuplicateFrames,
				Message: fmt.Sprintf("%d documents of the page register it (%s): clients see one tool per document under near names; give each its own name", len(urls), strings.Join(urls, ", "))})
		}
	}
	return out
}

// lintForms finds declarative tools without toolautosubmit.
func lintForms(forms []core.FormTool) []Finding {
	var out []Finding
	for _, f := range forms {
		if !f.AutoSubmit {
			out = append(out, Finding{Tool: f.Name, Severity: Warning, Rule: RuleFormNoSubmit,
				Message: "the <form toolname> has no toolautosubmit: an agent's call fills the form, but a person must press submit before the call returns; add toolautosubmit if the agent may submit it"})
		}
	}
	return out
}

func sortFindings(out []Finding) {
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Tool != out[j].Tool {
			return out[i].Tool < out[j].Tool
		}
		return out[i].Severity == Error && out[j].Severity != Error
	})
}

// Lint checks tools for what MCP clients and models stumble on. The
// findings come sorted by tool, errors first.
func Lint(tools []Tool) []Finding {
	var out []Finding
	for _, t := range tools {
		out = append(out, lintTool(t)...)
	}
	sortFindings(out)
	return out
}

func lintTool(t Tool) []Finding {
	var out []Finding
	add := func(sev Severity, rule, format string, args ...any) {
		out = append(out, Finding{Tool: t.Name, Severity: sev, Rule: rule, Message: fmt.Sprintf(format, args...)})
	}
	if t.Refused != "" && isPermissionRefusal(t.Reason) {
		f := Finding{Tool: t.Name, Severity: Error, Rule: RuleFramePermission, Reason: t.Reason,
			Message: fmt.Sprintf("%s (in %s); browsers refuse it too. If that document should have tools, delegate \"tools\" to it (allow=\"tools\" on its <iframe> and on each frame above it) and keep Permissions-Policy headers from excluding it", t.Refused, t.URL)}
		if t.Name == "*" {
			f.Tool = ""
		}
		return append(out, f)
	}
	if t.Refused != "" {
		why := t.Refused
		if hint := refusalHints[t.Reason]; hint != "" {
			why += " (" + hint + ")"
		}
		f := Finding{Tool: t.Name, Severity: Error, Rule: RuleRefused, Reason: t.Reason,
			Message: "webmcp-cdp refused it, so no MCP client sees it: " + why}
		if t.Name == "*" {
			f.Tool, f.Message = "", "webmcp-cdp refused tools: "+why
		}
		return append(out, f)
	}

	if !clientName.MatchString(t.Name) {
		add(Error, RuleNameRejected, "the name is not 1-64 characters of a-z A-Z 0-9 _ -, which clients that pass tool names on as they are (most model APIs) reject; webmcp-cdp serves it as %q", t.Routed)
	} else if t.Routed != "" && !strings.HasSuffix(t.Routed, "_"+t.Name) {
		add(Warning, RuleNameCut, "clients see it as %q: with the site in front the name passes 48 characters (or it clashes with another tool's name), so it ends in a hash; a shorter name stays readable", t.Routed)
	}

	desc := strings.TrimSpace(t.Description)
	n := utf8.RuneCountInString(t.Description)
	switch {
	case desc == "":
		add(Error, RuleEmptyDesc, "the description is empty, so a model cannot tell what the tool does")
	case len(strings.Fields(desc)) == 1 && n <= 64:
		add(Warning, RuleOneWordDesc, "the description is one word (%q): say what the tool does, what it returns, and when to use it", cut(desc, 60))
	case n > HugeDescription:
		add(Error, RuleHugeDesc, "the description is %d characters (more than %d); every client sends it with every request", n, HugeDescription)
	case n > LongDescription:
		add(Warning, RuleLongDesc, "the description is %d characters (more than %d); every client sends it with every request", n, LongDescription)
	}

	for _, s := range []struct{ where, text string }{{"the description", t.Description}, {"the title", t.Title}} {
		if m := instructionMatch(s.text); m != "" {
			add(Warning, RuleInstructions, "%s reads like instructions to the model (%q); describe what the tool does instead", s.where, m)
		}
	}

	if len(t.InputSchema) > 0 {
		for _, f := range lintSchema(t.InputSchema) {
			add(f.Severity, f.Rule, "%s", f.Message)
		}
	}
	return out
}

// instructionMatch returns the first instruction-like phrase in s.
func instructionMatch(s string) string {
	for _, re := range instructionLike {
		if m := re.FindString(s); m != "" {
			return m
		}
	}
	return ""
}

// lintSchema checks an inputSchema: an object schema that compiles, with
// no instruction-like text in its descriptions.
func lintSchema(raw json.RawMessage) []Finding {
	var out []Finding
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return []Finding{{Severity: Error, Rule: RuleSchemaInvalid, Message: fmt.Sprintf("the inputSchema is not JSON: %v", err)}}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return []Finding{{Severity: Error, Rule: RuleSchemaNotObject, Message: "the inputSchema is not a JSON object; MCP tools take an object schema"}}
	}
	if ty, ok := m["type"]; ok && ty != "object" {
		out = append(out, Finding{Severity: Error, Rule: RuleSchemaNotObject, Message: fmt.Sprintf("the inputSchema has type %v; MCP tools take arguments as an object (type \"object\")", jsonText(ty))})
	}
	if err := CompileSchema(raw); err != nil {
		out = append(out, Finding{Severity: Error, Rule: RuleSchemaInvalid, Message: fmt.Sprintf("the inputSchema does not compile as JSON Schema (2020-12 unless $schema says otherwise): %s", oneLine(err.Error()))})
	}
	walkSchema(m, "", func(path string, s map[string]any) {
		out = append(out, lintRequired(path, s)...)
		out = append(out, lintDefault(path, s)...)
		if d, ok := s["description"].(string); ok {
			if hit := instructionMatch(d); hit != "" {
				out = append(out, Finding{Severity: Warning, Rule: RuleInstructions,
					Message: fmt.Sprintf("the description at inputSchema%s reads like instructions to the model (%q); describe the argument instead", path, hit)})
			}
		}
	})
	return out
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// isPermissionRefusal says a refusal is for the Permissions Policy
// "tools" feature: a cross-origin frame that was not allowed tools.
func isPermissionRefusal(r core.Reason) bool {
	return r == core.ReasonPermissions
}

// lintRequired finds required names that the schema's properties lack: a
// model sees no type or description for them, and calls fail validation.
func lintRequired(path string, s map[string]any) []Finding {
	req, ok := s["required"].([]any)
	if !ok || len(req) == 0 {
		return nil
	}
	if _, ok := s["patternProperties"]; ok {
		return nil
	}
	if _, ok := s["additionalProperties"].(map[string]any); ok {
		return nil
	}
	props, _ := s["properties"].(map[string]any)
	var missing []string
	for _, r := range req {
		if name, ok := r.(string); ok {
			if _, ok := props[name]; !ok {
				missing = append(missing, name)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return []Finding{{Severity: Error, Rule: RuleRequiredUnknown,
		Message: fmt.Sprintf("inputSchema%s requires %s, not in its properties: a model is told nothing about them; add them to properties or drop them from required", path, strings.Join(missing, ", "))}}
}

// lintDefault finds a default that its own schema's type or enum refuses.
func lintDefault(path string, s map[string]any) []Finding {
	def, ok := s["default"]
	if !ok {
		return nil
	}
	var types []string
	switch ty := s["type"].(type) {
	case string:
		types = []string{ty}
	case []any:
		for _, t := range ty {
			if t, ok := t.(string); ok {
				types = append(types, t)
			}
		}
	}
	if len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return jsonTypeIs(def, t) }) {
		return []Finding{{Severity: Warning, Rule: RuleDefaultType,
			Message: fmt.Sprintf("the default at inputSchema%s is %s, not of its type %s", path, cut(jsonText(def), 60), strings.Join(types, " or "))}}
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return Subset(e, def, "") == "" && Subset(def, e, "") == "" }) {
		return []Finding{{Severity: Warning, Rule: RuleDefaultType,
			Message: fmt.Sprintf("the default at inputSchema%s is %s, not one of its enum", path, cut(jsonText(def), 60))}}
	}
	return nil
}

// jsonTypeIs says whether v (as encoding/json decodes) is of JSON Schema
// type t.
func jsonTypeIs(v any, t string) bool {
	switch t {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	}
	return true
}
