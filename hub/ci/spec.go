package ci

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Spec is a test spec: the pages to open, the tools each must have, and
// the calls to make with their expected results. It is read from YAML or
// JSON with the field names below; see docs/ci-spec.md and
// fixtures/ci/webmcp-tests.yaml.
type Spec struct {
	// Base is the URL that relative page URLs resolve against. A base
	// without a trailing slash is taken as a directory all the same.
	Base string `json:"base,omitempty"`
	// Serve is a directory (relative to the spec file) to serve on
	// 127.0.0.1 for the run; relative page URLs then resolve against it.
	Serve string `json:"serve,omitempty"`
	// Lint is the default lint mode of the pages.
	Lint LintMode `json:"lint,omitempty"`
	// Viewport, Headers and Cookies are the defaults of the pages.
	Viewport *Viewport         `json:"viewport,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	Cookies  []Cookie          `json:"cookies,omitempty"`
	// Pages are opened one at a time, in order.
	Pages []PageSpec `json:"pages"`
	// Secrets name the environment variables that ${NAME} placeholders in
	// arguments and snapshots stand for (a recorded session lists them);
	// Substitute fills them in before a run.
	Secrets []string `json:"secrets,omitempty"`

	// file is where the spec was read from; pos are the places of its
	// values, by path (pages[0].calls[1]).
	file string
	pos  map[string]Pos
	// secretValues are the secrets filled in by Substitute, by name.
	secretValues map[string]string
}

// Viewport is a page's window size in CSS pixels.
type Viewport struct {
	Width  int     `json:"width"`
	Height int     `json:"height"`
	Scale  float64 `json:"deviceScaleFactor,omitempty"`
	Mobile bool    `json:"mobile,omitempty"`
}

// Cookie is a cookie set before a page loads; without a domain it is the
// page URL's.
type Cookie struct {
	Name     string `json:"name"`
	Value    string `json:"value"`
	Domain   string `json:"domain,omitempty"`
	Path     string `json:"path,omitempty"`
	Secure   bool   `json:"secure,omitempty"`
	HTTPOnly bool   `json:"httpOnly,omitempty"`
}

// Duration is a time span written as Go writes one: 500ms, 5s, 1m30s.
type Duration time.Duration

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("want a duration such as 5s or 500ms")
	}
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func parseDuration(s string) (time.Duration, error) {
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration such as 5s or 500ms", s)
	}
	return v, nil
}

// LintMode says when a page's lint case fails.
type LintMode string

// The lint modes.
const (
	// LintErrors fails on error findings (the default).
	LintErrors LintMode = "errors"
	// LintWarnings fails on warnings too.
	LintWarnings LintMode = "warnings"
	// LintOff skips the lint case.
	LintOff LintMode = "off"
)

// PageSpec is one page of a spec.
type PageSpec struct {
	// Name names the page in the report (default: its URL).
	Name string `json:"name,omitempty"`
	// URL is the page's URL, absolute or relative to the base.
	URL string `json:"url"`
	// Tools must all be among the page's tools (the page's own names).
	Tools []string `json:"tools,omitempty"`
	// ExactTools says the page must have Tools and no others.
	ExactTools bool `json:"exactTools,omitempty"`
	// Absent must not be among the page's tools.
	Absent []string `json:"absent,omitempty"`
	// Lint overrides the spec's lint mode for this page.
	Lint LintMode `json:"lint,omitempty"`
	// Viewport, Headers and Cookies are set before the page loads; they
	// override the spec's (headers and cookies are merged, by name).
	Viewport *Viewport         `json:"viewport,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	Cookies  []Cookie          `json:"cookies,omitempty"`
	// Calls are made in order, after the tools settled.
	Calls []CallSpec `json:"calls,omitempty"`
}

// CallSpec is one call and what its result must be.
type CallSpec struct {
	// Name names the call in the report (default: "call TOOL").
	Name string `json:"name,omitempty"`
	// Tool is the page's own name for the tool.
	Tool string `json:"tool"`
	// Args is the arguments object (default {}).
	Args json.RawMessage `json:"args,omitempty"`
	// Timeout bounds the call (default: --call-timeout, which also caps it).
	Timeout Duration `json:"timeout,omitempty"`
	// Expect is what the result must be.
	Expect Expect `json:"expect,omitempty"`

	// shownArgs are the arguments as written, with their ${NAME}
	// placeholders (Substitute fills in Args), for the report.
	shownArgs json.RawMessage
}

// Expect is what a call's result must be. Every field that is set must
// hold; a result with isError fails unless IsError is set to true.
type Expect struct {
	// IsError is whether the call must fail (default false).
	IsError *bool `json:"isError,omitempty"`
	// Text is the exact text of the result (its text content, joined with
	// newlines).
	Text *string `json:"text,omitempty"`
	// Contains are strings the text must contain: one string or a list.
	Contains Strings `json:"contains,omitempty"`
	// Matches are regular expressions (Go syntax, RE2) the text must
	// match: one or a list; or, as a mapping, paths into the text read as
	// JSON ($.id) and the expression each value there must match (a mark
	// on a snapshot: the snapshot's value there is not compared).
	Matches Patterns `json:"matches,omitzero"`
	// Structured must be a JSON subset of the result's structuredContent:
	// every key of an object must be there with a matching value, arrays
	// must have the same length and matching elements, and other values
	// must be equal. A result without structuredContent is matched on its
	// text, read as JSON.
	Structured json.RawMessage `json:"structured,omitempty"`
	// JSON matches the result's text read as JSON: either an object of
	// paths ($.items[0].name) to the JSON subset each value must be, or a
	// JSON subset of the whole text.
	JSON json.RawMessage `json:"json,omitempty"`
	// Snapshot is the whole result as a recorded session stored it: its
	// text, or for text that is a JSON object or array the parsed value. It
	// is compared structurally: objects key by key (in any order), arrays
	// element by element, other values equal (snapshot.go).
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
	// Ignore are paths ($.created, $.items[*].id) of the snapshot that are
	// not compared: values that differ from run to run.
	Ignore []string `json:"ignore,omitempty"`
}

// Patterns are the regular expressions of matches: on the text (Text), or
// on the values at paths of the text read as JSON (Paths).
type Patterns struct {
	Text  Strings
	Paths map[string]string
}

// UnmarshalJSON accepts a string, a list of strings, or a mapping of paths
// to strings.
func (p *Patterns) UnmarshalJSON(b []byte) error {
	var paths map[string]string
	if err := json.Unmarshal(b, &paths); err == nil {
		*p = Patterns{Paths: paths}
		return nil
	}
	var text Strings
	if err := text.UnmarshalJSON(b); err != nil {
		return errors.New("matches must be a string, a list of strings, or a mapping of paths to strings")
	}
	*p = Patterns{Text: text}
	return nil
}

// MarshalJSON writes the form it was read in.
func (p Patterns) MarshalJSON() ([]byte, error) {
	if p.Paths != nil {
		return json.Marshal(p.Paths)
	}
	return json.Marshal([]string(p.Text))
}

// IsZero says whether no pattern is given (for omitempty).
func (p Patterns) IsZero() bool { return len(p.Text) == 0 && len(p.Paths) == 0 }

// Strings is a list of strings that may be written as one string.
type Strings []string

// UnmarshalJSON accepts a string or a list of strings.
func (s *Strings) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = Strings{one}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return errors.New("contains must be a string or a list of strings")
	}
	*s = list
	return nil
}

// LoadSpec reads and checks a spec file, YAML or JSON (which YAML
// includes). Unknown fields are errors, so that a typo does not quietly
// skip a check; every error is a *SpecError that names file:line:column.
func LoadSpec(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the spec: %w", err)
	}
	s, err := ParseSpec(data)
	if se, ok := errors.AsType[*SpecError](err); ok {
		se.File = path
	}
	if err != nil {
		return nil, err
	}
	s.file = path
	return s, nil
}

// ParseSpec parses and checks a spec.
func ParseSpec(data []byte) (*Spec, error) {
	var s Spec
	pos, err := decodeYAML(data, &s)
	if err != nil {
		return nil, err
	}
	s.pos = pos
	if err := s.check(); err != nil {
		if se, ok := errors.AsType[*SpecError](err); ok && se.Pos.Line == 0 {
			se.Pos = s.Pos(se.Path)
		}
		return nil, err
	}
	return &s, nil
}

// Pos returns the place of the value at path (pages[0].calls[1]), or of the
// nearest enclosing value that has one.
func (s *Spec) Pos(path string) Pos {
	for {
		if p, ok := s.pos[path]; ok {
			return p
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return s.pos[""]
		}
		path = path[:i]
	}
}

// File is the file the spec was read from.
func (s *Spec) File() string { return s.file }

// normalize checks a lint mode. YAML 1.1 reads an unquoted off as false
// (and on as true), so those mean off and errors.
func (m *LintMode) normalize() error {
	switch *m {
	case "false":
		*m = LintOff
	case "true":
		*m = LintErrors
	}
	switch *m {
	case "", LintErrors, LintWarnings, LintOff:
		return nil
	}
	return fmt.Errorf("lint %q: use errors, warnings or off", string(*m))
}

func specErr(path, format string, args ...any) error {
	return &SpecError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// check finds the mistakes that can be found without a browser.
func (s *Spec) check() error {
	if s.Base != "" && s.Serve != "" {
		return specErr("serve", "base and serve both set: serve already gives the base URL, keep one")
	}
	if s.Base != "" {
		if _, err := parseBase(s.Base); err != nil {
			return specErr("base", "%v", err)
		}
	}
	if err := s.Lint.normalize(); err != nil {
		return specErr("lint", "%v", err)
	}
	if err := checkSetup("", s.Viewport, s.Cookies); err != nil {
		return err
	}
	for i, name := range s.Secrets {
		if !envNameRE.MatchString(name) {
			return specErr(fmt.Sprintf("secrets[%d]", i), "%q is not an environment variable's name (letters, digits and _, not starting with a digit)", name)
		}
	}
	if len(s.Pages) == 0 {
		return specErr("pages", "the spec has no pages")
	}
	for i := range s.Pages {
		p := &s.Pages[i]
		where := fmt.Sprintf("pages[%d]", i)
		if p.URL == "" {
			return specErr(where, "url is missing")
		}
		if _, err := url.Parse(p.URL); err != nil {
			return specErr(where+".url", "%v", err)
		}
		if err := p.Lint.normalize(); err != nil {
			return specErr(where+".lint", "%v", err)
		}
		if err := checkSetup(where+".", p.Viewport, p.Cookies); err != nil {
			return err
		}
		if p.ExactTools && len(p.Tools) == 0 {
			return specErr(where+".exactTools", "exactTools needs the list of tools")
		}
		for _, a := range p.Absent {
			for _, t := range p.Tools {
				if a == t {
					return specErr(where+".absent", "%q is both in tools and in absent", a)
				}
			}
		}
		if len(p.Tools) == 0 && len(p.Absent) == 0 && len(p.Calls) == 0 && s.lintMode(*p) == LintOff {
			return specErr(where, "the page checks nothing (no tools, absent or calls, and lint is off)")
		}
		for j, c := range p.Calls {
			where := fmt.Sprintf("pages[%d].calls[%d]", i, j)
			if c.Tool == "" {
				return specErr(where, "tool is missing")
			}
			if len(c.Args) > 0 && string(c.Args) != "null" {
				var obj map[string]any
				if err := json.Unmarshal(c.Args, &obj); err != nil {
					return specErr(where+".args", "args must be an object (a mapping of argument names to values)")
				}
			}
			if err := c.Expect.check(where + ".expect"); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkSetup checks a viewport and cookies.
func checkSetup(where string, v *Viewport, cookies []Cookie) error {
	if v != nil && (v.Width <= 0 || v.Height <= 0 || v.Width > 10000 || v.Height > 10000 || v.Scale < 0) {
		return specErr(where+"viewport", "width and height must be 1-10000 pixels (and deviceScaleFactor not negative)")
	}
	for i, c := range cookies {
		if c.Name == "" {
			return specErr(fmt.Sprintf("%scookies[%d]", where, i), "a cookie needs a name")
		}
	}
	return nil
}

// check checks the matchers of an expect.
func (e *Expect) check(where string) error {
	for i, re := range e.Matches.Text {
		if _, err := regexp.Compile(re); err != nil {
			return specErr(fmt.Sprintf("%s.matches[%d]", where, i), "not a regular expression: %v", err)
		}
	}
	for p, re := range e.Matches.Paths {
		if _, err := parsePattern(p); err != nil {
			return specErr(join(where+".matches", p), "path %q: %v", p, err)
		}
		if _, err := regexp.Compile(re); err != nil {
			return specErr(join(where+".matches", p), "not a regular expression: %v", err)
		}
	}
	for i, p := range e.Ignore {
		if _, err := parsePattern(p); err != nil {
			return specErr(fmt.Sprintf("%s.ignore[%d]", where, i), "path %q: %v", p, err)
		}
	}
	if len(e.Ignore) > 0 && len(e.Snapshot) == 0 {
		return specErr(where+".ignore", "ignore marks values of a snapshot: give the snapshot too (a recorded session has one)")
	}
	if len(e.JSON) > 0 {
		if _, err := compileJSONMatch(e.JSON); err != nil {
			return specErr(where+".json", "%v", err)
		}
	}
	return nil
}

// Setup returns what to set on page i's tab before it loads.
func (s *Spec) Setup(i int) core.PageSetup {
	p := s.Pages[i]
	var out core.PageSetup
	v := p.Viewport
	if v == nil {
		v = s.Viewport
	}
	if v != nil {
		out.Viewport = &core.Viewport{Width: v.Width, Height: v.Height, Scale: v.Scale, Mobile: v.Mobile}
	}
	if len(s.Headers)+len(p.Headers) > 0 {
		out.Headers = make(map[string]string)
		maps.Copy(out.Headers, s.Headers)
		maps.Copy(out.Headers, p.Headers)
	}
	seen := make(map[string]bool)
	for _, list := range [][]Cookie{p.Cookies, s.Cookies} {
		for _, c := range list {
			if !seen[c.Name] {
				seen[c.Name] = true
				out.Cookies = append(out.Cookies, core.Cookie{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path, Secure: c.Secure, HTTPOnly: c.HTTPOnly})
			}
		}
	}
	return out
}

func (s *Spec) lintMode(p PageSpec) LintMode {
	switch {
	case p.Lint != "":
		return p.Lint
	case s.Lint != "":
		return s.Lint
	}
	return LintErrors
}

// ServeDir is the directory to serve, resolved against the spec file's
// directory; empty when the spec serves nothing.
func (s *Spec) ServeDir() string {
	if s.Serve == "" {
		return ""
	}
	if filepath.IsAbs(s.Serve) || s.file == "" {
		return s.Serve
	}
	return filepath.Join(filepath.Dir(s.file), s.Serve)
}

// URLs resolves the pages' URLs against base (which overrides the spec's
// own base; pass the served directory's URL, or "" for the spec's base).
// A relative URL without a base is an error.
func (s *Spec) URLs(base string) ([]string, error) {
	if base == "" {
		base = s.Base
	}
	var b *url.URL
	if base != "" {
		var err error
		if b, err = parseBase(base); err != nil {
			return nil, err
		}
	}
	out := make([]string, len(s.Pages))
	for i, p := range s.Pages {
		u, err := url.Parse(p.URL)
		if err != nil {
			return nil, fmt.Errorf("pages[%d]: %w", i, err)
		}
		if !u.IsAbs() {
			if b == nil {
				return nil, &SpecError{File: s.file, Pos: s.Pos(fmt.Sprintf("pages[%d].url", i)), Path: fmt.Sprintf("pages[%d]", i), Msg: fmt.Sprintf("url %q is relative: give the spec a base or serve, or pass --base-url", p.URL)}
			}
			u = b.ResolveReference(u)
		}
		out[i] = u.String()
	}
	return out, nil
}

// parseBase parses a base URL and makes its path a directory.
func parseBase(base string) (*url.URL, error) {
	b, err := url.Parse(base)
	if err != nil || !b.IsAbs() || b.Host == "" && b.Scheme != "file" {
		return nil, fmt.Errorf("base %q is not an absolute URL such as http://127.0.0.1:8080/", base)
	}
	if !strings.HasSuffix(b.Path, "/") {
		b.Path += "/"
	}
	return b, nil
}
