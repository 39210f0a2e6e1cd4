package ci

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// Spec is a test spec: the pages to open, the tools each must have, and
// the calls to make with their expected results. It is read from YAML or
// JSON with the field names below; see fixtures/ci/webmcp-tests.yaml.
type Spec struct {
	// Base is the URL that relative page URLs resolve against. A base
	// without a trailing slash is taken as a directory all the same.
	Base string `json:"base,omitempty"`
	// Serve is a directory (relative to the spec file) to serve on
	// 127.0.0.1 for the run; relative page URLs then resolve against it.
	Serve string `json:"serve,omitempty"`
	// Lint is the default lint mode of the pages.
	Lint LintMode `json:"lint,omitempty"`
	// Pages are opened one at a time, in order.
	Pages []PageSpec `json:"pages"`

	// file is where the spec was read from.
	file string
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
	// Expect is what the result must be.
	Expect Expect `json:"expect,omitempty"`
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
	// Structured must be a JSON subset of the result's structuredContent:
	// every key of an object must be there with a matching value, arrays
	// must have the same length and matching elements, and other values
	// must be equal.
	Structured json.RawMessage `json:"structured,omitempty"`
}

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

// LoadSpec reads and checks a spec file: JSON when its name ends in .json,
// YAML otherwise. Unknown fields are errors, so that a typo does not quietly
// skip a check.
func LoadSpec(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the spec: %w", err)
	}
	s, err := ParseSpec(data, strings.EqualFold(filepath.Ext(path), ".json"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.file = path
	return s, nil
}

// ParseSpec parses and checks a spec, as JSON or as YAML.
func ParseSpec(data []byte, isJSON bool) (*Spec, error) {
	var s Spec
	if isJSON {
		d := json.NewDecoder(bytes.NewReader(data))
		d.DisallowUnknownFields()
		if err := d.Decode(&s); err != nil {
			return nil, fmt.Errorf("not a valid spec: %w", err)
		}
	} else if err := yaml.UnmarshalStrict(data, &s); err != nil {
		msg := err.Error()
		for _, p := range []string{"error converting YAML to JSON: ", "error unmarshaling JSON: ", "while decoding JSON: "} {
			msg = strings.TrimPrefix(msg, p)
		}
		return nil, fmt.Errorf("not a valid spec: %s", msg)
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return &s, nil
}

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

// check finds the mistakes that can be found without a browser.
func (s *Spec) check() error {
	if s.Base != "" && s.Serve != "" {
		return errors.New("base and serve both set: serve already gives the base URL, keep one")
	}
	if s.Base != "" {
		if _, err := parseBase(s.Base); err != nil {
			return err
		}
	}
	if err := s.Lint.normalize(); err != nil {
		return err
	}
	if len(s.Pages) == 0 {
		return errors.New("the spec has no pages")
	}
	for i := range s.Pages {
		p := &s.Pages[i]
		where := fmt.Sprintf("pages[%d]", i)
		if p.URL == "" {
			return fmt.Errorf("%s: url is missing", where)
		}
		if _, err := url.Parse(p.URL); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if err := p.Lint.normalize(); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if p.ExactTools && len(p.Tools) == 0 {
			return fmt.Errorf("%s: exactTools needs the list of tools", where)
		}
		for _, a := range p.Absent {
			for _, t := range p.Tools {
				if a == t {
					return fmt.Errorf("%s: %q is both in tools and in absent", where, a)
				}
			}
		}
		if len(p.Tools) == 0 && len(p.Absent) == 0 && len(p.Calls) == 0 && s.lintMode(*p) == LintOff {
			return fmt.Errorf("%s: the page checks nothing (no tools, absent or calls, and lint is off)", where)
		}
		for j, c := range p.Calls {
			where := fmt.Sprintf("pages[%d].calls[%d]", i, j)
			if c.Tool == "" {
				return fmt.Errorf("%s: tool is missing", where)
			}
			if len(c.Args) > 0 && string(c.Args) != "null" {
				var obj map[string]any
				if err := json.Unmarshal(c.Args, &obj); err != nil {
					return fmt.Errorf("%s: args must be an object (a mapping of argument names to values)", where)
				}
			}
			if len(c.Expect.Structured) > 0 && !json.Valid(c.Expect.Structured) {
				return fmt.Errorf("%s: expect.structured is not valid JSON", where)
			}
		}
	}
	return nil
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
				return nil, fmt.Errorf("pages[%d]: url %q is relative: give the spec a base or serve, or pass --base-url", i, p.URL)
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
