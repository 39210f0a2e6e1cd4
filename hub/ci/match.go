package ci

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file checks a call's result against an expect: isError, text,
// contains, matches (regular expressions), structured (a JSON subset of
// structuredContent, or of the text read as JSON) and json (paths into the
// text read as JSON, or a JSON subset of it).

// CheckResult compares a result with what was expected and says what
// differs, or returns "".
func CheckResult(res *mcp.CallToolResult, want Expect) string {
	failure, _ := checkResult(res, want)
	return failure
}

// checkResult is CheckResult with the diff of a snapshot that differs (or
// of matches paths that do not hold).
func checkResult(res *mcp.CallToolResult, want Expect) (string, []string) {
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
	for _, s := range want.Matches.Text {
		if re, err := regexp.Compile(s); err == nil && !re.MatchString(text) {
			problems = append(problems, fmt.Sprintf("text does not match /%s/", s))
		}
	}
	if len(want.Structured) > 0 {
		var w any
		json.Unmarshal(want.Structured, &w) // checked when the spec was read
		if res.StructuredContent != nil {
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
		} else if got, err := textJSON(text); err != nil {
			problems = append(problems, "the result has no structuredContent, and its text is not JSON: "+err.Error())
		} else if d := Subset(w, got, "text"); d != "" {
			problems = append(problems, d)
		}
	}
	if len(want.JSON) > 0 {
		m, _ := compileJSONMatch(want.JSON) // checked when the spec was read
		if got, err := textJSON(text); err != nil {
			problems = append(problems, "json: the result's text is not JSON: "+err.Error())
		} else if d := m.match(got); d != "" {
			problems = append(problems, d)
		}
	}
	var diff []string
	if len(want.Snapshot) > 0 || len(want.Matches.Paths) > 0 {
		if sc, err := compileSnapshot(want); err != nil {
			problems = append(problems, err.Error())
		} else if p, d := sc.check(text); p != "" {
			problems = append(problems, p)
			diff = d
		}
	}
	return strings.Join(problems, "; "), diff
}

// textJSON reads a result's text as JSON.
func textJSON(text string) (any, error) {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, fmt.Errorf("%v (text %q)", err, cut(text, 100))
	}
	return v, nil
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
			return fmt.Sprintf("%s is %s, want an object", path, cut(jsonText(got), 200))
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
			return fmt.Sprintf("%s is %s, want an array", path, cut(jsonText(got), 200))
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

// jsonMatch is a compiled json: matcher.
type jsonMatch struct {
	// paths, when set, are the paths and the subsets their values must be;
	// else whole is the subset of the whole text.
	paths []pathMatch
	whole any
}

type pathMatch struct {
	src   string
	steps []pathStep
	want  any
}

// pathStep is one step of a path: an object key, or an array index (negative
// counts from the end).
type pathStep struct {
	key   string
	index int
	isKey bool
	// len is the length of the array indexed, in a concrete path made while
	// comparing a snapshot (so that a pattern's [-1] matches the last).
	len int
}

// compileJSONMatch reads a json: matcher: an object whose keys all start
// with $ is a set of paths; anything else is a subset.
func compileJSONMatch(raw json.RawMessage) (*jsonMatch, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return &jsonMatch{whole: v}, nil
	}
	dollar := 0
	for k := range obj {
		if strings.HasPrefix(k, "$") {
			dollar++
		}
	}
	switch dollar {
	case 0:
		return &jsonMatch{whole: v}, nil
	case len(obj):
	default:
		return nil, errors.New("mixes paths (keys that start with $) and plain keys: use either paths or a subset object")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	m := &jsonMatch{}
	for _, k := range keys {
		steps, err := parsePath(k)
		if err != nil {
			return nil, fmt.Errorf("path %q: %w", k, err)
		}
		m.paths = append(m.paths, pathMatch{src: k, steps: steps, want: obj[k]})
	}
	return m, nil
}

// parsePath reads a path: $, then .name, ["name"] or ['name'], and [N].
func parsePath(p string) ([]pathStep, error) {
	if !strings.HasPrefix(p, "$") {
		return nil, errors.New("a path starts with $")
	}
	var out []pathStep
	rest := p[1:]
	for rest != "" {
		switch rest[0] {
		case '.':
			rest = rest[1:]
			n := strings.IndexAny(rest, ".[")
			if n < 0 {
				n = len(rest)
			}
			if n == 0 {
				return nil, errors.New("a name must follow each dot")
			}
			out = append(out, pathStep{key: rest[:n], isKey: true})
			rest = rest[n:]
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, errors.New("a [ is not closed")
			}
			in := rest[1:end]
			if len(in) >= 2 && (in[0] == '"' || in[0] == '\'') && in[len(in)-1] == in[0] {
				out = append(out, pathStep{key: in[1 : len(in)-1], isKey: true})
			} else if i, err := strconv.Atoi(in); err == nil {
				out = append(out, pathStep{index: i})
			} else {
				return nil, fmt.Errorf("[%s] is neither an index nor a quoted name", in)
			}
			rest = rest[end+1:]
		default:
			return nil, fmt.Errorf("unexpected %q: use .name, [\"name\"] or [N]", rest[:1])
		}
	}
	return out, nil
}

// match says where got differs, or returns "".
func (m *jsonMatch) match(got any) string {
	if m.paths == nil {
		return Subset(m.whole, got, "json")
	}
	for _, pm := range m.paths {
		v, where := got, "$"
		for _, s := range pm.steps {
			switch c := v.(type) {
			case map[string]any:
				if !s.isKey {
					return fmt.Sprintf("json %s: %s is an object, not an array", pm.src, where)
				}
				next, ok := c[s.key]
				if !ok {
					return fmt.Sprintf("json %s: %s has no %q", pm.src, where, s.key)
				}
				v, where = next, where+"."+s.key
			case []any:
				if s.isKey {
					return fmt.Sprintf("json %s: %s is an array, not an object", pm.src, where)
				}
				i := s.index
				if i < 0 {
					i += len(c)
				}
				if i < 0 || i >= len(c) {
					return fmt.Sprintf("json %s: %s has %d elements, no [%d]", pm.src, where, len(c), s.index)
				}
				v, where = c[i], fmt.Sprintf("%s[%d]", where, s.index)
			default:
				return fmt.Sprintf("json %s: %s is %s, which has no %s", pm.src, where, cut(jsonText(v), 100), s)
			}
		}
		if d := Subset(pm.want, v, pm.src); d != "" {
			return "json " + d
		}
	}
	return ""
}

func (s pathStep) String() string {
	if s.isKey {
		return strconv.Quote(s.key)
	}
	return fmt.Sprintf("[%d]", s.index)
}
