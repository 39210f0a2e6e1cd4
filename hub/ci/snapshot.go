package ci

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
)

// This file compares a result with a recorded snapshot (expect.snapshot):
// structurally, skipping the paths marked ignore and checking the paths
// marked matches against their regular expressions. Every difference is a
// line of a diff: "- PATH: expected" and "+ PATH: actual"; a text
// snapshot that differs is diffed line by line.

// maxDiffLines bounds the lines of a snapshot's diff.
const maxDiffLines = 60

// pattern is a path of ignore or matches: steps of which [*] and .* match
// any index or key.
type pattern struct {
	src   string
	steps []patternStep
}

type patternStep struct {
	pathStep
	any bool
}

// parsePattern reads a path as parsePath does, with [*] and .* as
// wildcards.
func parsePattern(p string) (pattern, error) {
	const anyKey, anyIndex = "\x00any-key", "\x00any-index"
	q := strings.ReplaceAll(strings.ReplaceAll(p, "[*]", `["`+anyIndex+`"]`), ".*", `["`+anyKey+`"]`)
	steps, err := parsePath(q)
	if err != nil {
		return pattern{}, err
	}
	out := pattern{src: p}
	for _, s := range steps {
		out.steps = append(out.steps, patternStep{pathStep: s, any: s.isKey && (s.key == anyKey || s.key == anyIndex)})
	}
	return out, nil
}

// matches says whether the concrete path steps is this pattern.
func (p pattern) matches(steps []pathStep) bool {
	if len(steps) != len(p.steps) {
		return false
	}
	for i, s := range p.steps {
		if s.any {
			continue
		}
		if s.isKey != steps[i].isKey || s.key != steps[i].key || (!s.isKey && s.index != steps[i].index && s.index != steps[i].index-steps[i].len) {
			return false
		}
	}
	return true
}

// pathText writes concrete steps as a path: $.name, $["odd key"], $[0].
func pathText(steps []pathStep) string {
	var b strings.Builder
	b.WriteString("$")
	for _, s := range steps {
		switch {
		case !s.isKey:
			fmt.Fprintf(&b, "[%d]", s.index)
		case identRE.MatchString(s.key):
			b.WriteString("." + s.key)
		default:
			b.WriteString("[" + jsonText(s.key) + "]")
		}
	}
	return b.String()
}

var (
	identRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)
	envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// snapshotCheck is a compiled snapshot with its marks.
type snapshotCheck struct {
	want    any
	ignore  []pattern
	matches []pathRegexp
}

type pathRegexp struct {
	pattern
	re *regexp.Regexp
}

// compileSnapshot reads an expect's snapshot, ignore and path matches (all
// checked when the spec was read). want is nil without a snapshot.
func compileSnapshot(e Expect) (*snapshotCheck, error) {
	c := &snapshotCheck{}
	if len(e.Snapshot) > 0 {
		if err := json.Unmarshal(e.Snapshot, &c.want); err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
	}
	for _, p := range e.Ignore {
		pt, err := parsePattern(p)
		if err != nil {
			return nil, err
		}
		c.ignore = append(c.ignore, pt)
	}
	keys := make([]string, 0, len(e.Matches.Paths))
	for k := range e.Matches.Paths {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		pt, err := parsePattern(k)
		if err != nil {
			return nil, err
		}
		re, err := regexp.Compile(e.Matches.Paths[k])
		if err != nil {
			return nil, err
		}
		c.matches = append(c.matches, pathRegexp{pt, re})
	}
	return c, nil
}

// textual says whether the snapshot is compared with the text itself (a
// string snapshot), rather than with the text read as JSON.
func (c *snapshotCheck) textual() bool {
	_, ok := c.want.(string)
	return ok || (c.want == nil && len(c.matches) == 1 && len(c.matches[0].steps) == 0)
}

// check compares the result's text with the snapshot and the marks, and
// returns the problem and the diff lines ("" and nil when they hold).
func (c *snapshotCheck) check(text string) (string, []string) {
	var got any = text
	if !c.textual() {
		v, err := textJSON(text)
		if err != nil {
			return "the result's text is not JSON, as the snapshot is", []string{"- $: " + cut(jsonText(c.want), 300), "+ $: " + cut(jsonText(text), 300)}
		}
		got = v
	}
	var diff []string
	seen := make([]bool, len(c.matches))
	if c.want != nil {
		c.walk(c.want, got, nil, seen, &diff)
	} else {
		c.walkMarks(got, nil, seen, &diff)
	}
	for i, m := range c.matches {
		if !seen[i] {
			diff = append(diff, fmt.Sprintf("- %s: a value matching /%s/", m.src, m.re), fmt.Sprintf("+ %s: nothing there", m.src))
		}
	}
	if len(diff) == 0 {
		return "", nil
	}
	if len(diff) > maxDiffLines {
		diff = append(diff[:maxDiffLines], fmt.Sprintf("… %d more lines", len(diff)-maxDiffLines))
	}
	if c.want == nil {
		return "matches: a value differs", diff
	}
	return "the result differs from the snapshot", diff
}

// mark returns what marks the value at steps: ignored, or the index of
// the matches pattern (-1 for none).
func (c *snapshotCheck) mark(steps []pathStep) (ignored bool, match int) {
	for _, p := range c.ignore {
		if p.matches(steps) {
			return true, -1
		}
	}
	for i, m := range c.matches {
		if m.matches(steps) {
			return false, i
		}
	}
	return false, -1
}

// checkMatch checks a value against the matches pattern i.
func (c *snapshotCheck) checkMatch(i int, got any, steps []pathStep, seen []bool, diff *[]string) {
	seen[i] = true
	s, ok := got.(string)
	if !ok {
		s = jsonText(got)
	}
	if m := c.matches[i]; !m.re.MatchString(s) {
		p := pathText(steps)
		*diff = append(*diff, fmt.Sprintf("- %s: a value matching /%s/", p, m.re), fmt.Sprintf("+ %s: %s", p, cut(jsonText(got), 300)))
	}
}

// walk compares want and got at steps, appending the differences.
func (c *snapshotCheck) walk(want, got any, steps []pathStep, seen []bool, diff *[]string) {
	ignored, mi := c.mark(steps)
	switch {
	case ignored:
		return
	case mi >= 0:
		c.checkMatch(mi, got, steps, seen, diff)
		return
	}
	p := pathText(steps)
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub := append(steps[:len(steps):len(steps)], pathStep{key: k, isKey: true})
			wv, inW := w[k]
			gv, inG := g[k]
			if ign, _ := c.mark(sub); ign {
				continue
			}
			switch {
			case !inG:
				*diff = append(*diff, fmt.Sprintf("- %s: %s", pathText(sub), cut(jsonText(wv), 300)))
			case !inW:
				if _, mi := c.mark(sub); mi >= 0 {
					c.checkMatch(mi, gv, sub, seen, diff)
					continue
				}
				*diff = append(*diff, fmt.Sprintf("+ %s: %s", pathText(sub), cut(jsonText(gv), 300)))
			default:
				c.walk(wv, gv, sub, seen, diff)
			}
		}
		return
	case []any:
		g, ok := got.([]any)
		if !ok {
			break
		}
		for i := 0; i < max(len(w), len(g)); i++ {
			sub := append(steps[:len(steps):len(steps)], pathStep{index: i, len: len(g)})
			switch {
			case i >= len(g):
				*diff = append(*diff, fmt.Sprintf("- %s: %s", pathText(sub), cut(jsonText(w[i]), 300)))
			case i >= len(w):
				if ign, _ := c.mark(sub); !ign {
					*diff = append(*diff, fmt.Sprintf("+ %s: %s", pathText(sub), cut(jsonText(g[i]), 300)))
				}
			default:
				c.walk(w[i], g[i], sub, seen, diff)
			}
		}
		return
	case string:
		if g, ok := got.(string); ok && (strings.Contains(w, "\n") || strings.Contains(g, "\n")) {
			if w != g {
				*diff = append(*diff, p+": the text differs:")
				*diff = append(*diff, lineDiff(w, g)...)
			}
			return
		}
	}
	if !reflect.DeepEqual(want, got) {
		*diff = append(*diff, fmt.Sprintf("- %s: %s", p, cut(jsonText(want), 300)), fmt.Sprintf("+ %s: %s", p, cut(jsonText(got), 300)))
	}
}

// walkMarks checks the matches marks where there is no snapshot.
func (c *snapshotCheck) walkMarks(got any, steps []pathStep, seen []bool, diff *[]string) {
	if _, mi := c.mark(steps); mi >= 0 {
		c.checkMatch(mi, got, steps, seen, diff)
		return
	}
	switch g := got.(type) {
	case map[string]any:
		keys := make([]string, 0, len(g))
		for k := range g {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			c.walkMarks(g[k], append(steps[:len(steps):len(steps)], pathStep{key: k, isKey: true}), seen, diff)
		}
	case []any:
		for i, e := range g {
			c.walkMarks(e, append(steps[:len(steps):len(steps)], pathStep{index: i, len: len(g)}), seen, diff)
		}
	}
}

// maxLineDiff bounds the lines of each side a line diff compares; longer
// texts are shown whole, one after the other.
const maxLineDiff = 400

// lineDiff diffs two texts line by line: "  " for a common line, "- " for
// one only in want, "+ " for one only in got.
func lineDiff(want, got string) []string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	if len(a) > maxLineDiff || len(b) > maxLineDiff {
		var out []string
		for _, l := range a {
			out = append(out, "- "+l)
		}
		for _, l := range b {
			out = append(out, "+ "+l)
		}
		return out
	}
	// lcs[i][j] is the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out = append(out, "  "+a[i])
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			out = append(out, "+ "+b[j])
			j++
		default:
			out = append(out, "- "+a[i])
			i++
		}
	}
	return out
}

// Substitute fills in the spec's secrets: every ${NAME} of a name listed
// under secrets, in the calls' arguments and snapshots, becomes the value
// of the environment variable NAME (lookup is os.LookupEnv). A secret
// that is not set is an error that names it, before any browser starts.
func (s *Spec) Substitute(lookup func(string) (string, bool)) error {
	if len(s.Secrets) == 0 {
		return nil
	}
	values := make(map[string]string, len(s.Secrets))
	var missing []string
	for _, name := range s.Secrets {
		v, ok := lookup(name)
		if !ok {
			missing = append(missing, name)
			continue
		}
		values[name] = v
	}
	if len(missing) > 0 {
		return &SpecError{File: s.file, Pos: s.Pos("secrets"), Path: "secrets", Msg: fmt.Sprintf("%s not set in the environment: the recorded session stands for %s with ${NAME} placeholders; set %s and run again",
			Plural(len(missing), "secret is"), strings.Join(missing, ", "), strings.Join(missing, ", "))}
	}
	s.secretValues = values
	for i := range s.Pages {
		for j := range s.Pages[i].Calls {
			c := &s.Pages[i].Calls[j]
			c.shownArgs = c.Args
			var err error
			if c.Args, err = substituteRaw(c.Args, values); err != nil {
				return specErr(fmt.Sprintf("pages[%d].calls[%d].args", i, j), "%v", err)
			}
			if c.Expect.Snapshot, err = substituteRaw(c.Expect.Snapshot, values); err != nil {
				return specErr(fmt.Sprintf("pages[%d].calls[%d].expect.snapshot", i, j), "%v", err)
			}
		}
	}
	return nil
}

// substituteRaw fills in the placeholders in the strings of a JSON value.
func substituteRaw(raw json.RawMessage, values map[string]string) (json.RawMessage, error) {
	if len(raw) == 0 || !strings.Contains(string(raw), "${") {
		return raw, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	out, err := json.Marshal(substituteValue(v, values))
	if err != nil {
		return nil, errors.New("cannot write the value with its secrets filled in")
	}
	return out, nil
}

func substituteValue(v any, values map[string]string) any {
	switch x := v.(type) {
	case string:
		for name, val := range values {
			x = strings.ReplaceAll(x, "${"+name+"}", val)
		}
		return x
	case map[string]any:
		for k, e := range x {
			x[k] = substituteValue(e, values)
		}
	case []any:
		for i, e := range x {
			x[i] = substituteValue(e, values)
		}
	}
	return v
}

// scrubSecrets puts the placeholders back into a text, for --update.
func (s *Spec) scrubSecrets(text string) string {
	names := make([]string, 0, len(s.secretValues))
	for n := range s.secretValues {
		names = append(names, n)
	}
	// The longest values first, so that one that holds another is found.
	sort.Slice(names, func(i, j int) bool {
		a, b := s.secretValues[names[i]], s.secretValues[names[j]]
		return len(a) > len(b) || len(a) == len(b) && names[i] < names[j]
	})
	for _, n := range names {
		if v := s.secretValues[n]; len(v) >= 4 {
			text = strings.ReplaceAll(text, v, "${"+n+"}")
		}
	}
	return text
}
