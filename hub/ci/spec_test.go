package ci

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseSpecYAML(t *testing.T) {
	src := `
base: http://127.0.0.1:8080/app
lint: warnings
pages:
  - name: notes
    url: notes/
    tools: [add_note, list_notes]
    exactTools: true
    absent: [debug]
    calls:
      - tool: add_note
        args: {title: Hi, count: 2, tags: [a, b]}
        expect:
          text: 42          # a YAML number, read as the string "42"
          contains: one
          structured: {id: 1, tags: [a]}
      - name: fails
        tool: list_notes
        expect:
          isError: true
          contains: [not, found]
  - url: https://example.com/other
    lint: off
    tools: [x]
`
	s, err := ParseSpec([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.Base != "http://127.0.0.1:8080/app" || s.Lint != LintWarnings || len(s.Pages) != 2 {
		t.Fatalf("spec %+v", s)
	}
	p := s.Pages[0]
	if p.Name != "notes" || !p.ExactTools || !reflect.DeepEqual(p.Tools, []string{"add_note", "list_notes"}) || !reflect.DeepEqual(p.Absent, []string{"debug"}) {
		t.Errorf("page %+v", p)
	}
	c := p.Calls[0]
	if string(c.Args) != `{"count":2,"tags":["a","b"],"title":"Hi"}` {
		t.Errorf("args %s", c.Args)
	}
	if c.Expect.Text == nil || *c.Expect.Text != "42" || !reflect.DeepEqual(c.Expect.Contains, Strings{"one"}) || string(c.Expect.Structured) != `{"id":1,"tags":["a"]}` {
		t.Errorf("expect %+v", c.Expect)
	}
	if e := p.Calls[1].Expect; e.IsError == nil || !*e.IsError || !reflect.DeepEqual(e.Contains, Strings{"not", "found"}) {
		t.Errorf("expect %+v", e)
	}
	if got := s.lintMode(s.Pages[1]); got != LintOff {
		t.Errorf("lint mode of page 2 = %q", got)
	}
	urls, err := s.URLs("")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"http://127.0.0.1:8080/app/notes/", "https://example.com/other"}
	if !reflect.DeepEqual(urls, want) {
		t.Errorf("URLs %v, want %v", urls, want)
	}
}

func TestParseSpecJSON(t *testing.T) {
	s, err := ParseSpec([]byte(`{"pages":[{"url":"/a.html","calls":[{"tool":"t","args":{"x":1},"expect":{"text":"ok"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.lintMode(s.Pages[0]); got != LintErrors {
		t.Errorf("default lint mode %q", got)
	}
	if _, err := ParseSpec([]byte(`{"pages":[{"url":"/a.html","tols":["x"]}]}`)); err == nil || !strings.Contains(err.Error(), `unknown field "tols"`) {
		t.Errorf("unknown field: %v", err)
	}
}

// TestParseSpecErrors: each mistake is named with its line and column
// (the line alone for YAML syntax errors, which is all the parser gives).
func TestParseSpecErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"not YAML", "pages: [\n", "spec:1: not valid YAML: "},
		{"unknown field", "pages:\n  - url: /\n    tols: [a]\n", `spec:3:5: pages[0]: unknown field "tols" (did you mean "tools"?)`},
		{"duplicate key", "pages: []\npages: []\n", `spec:2:1: "pages" is given twice`},
		{"no pages", "base: http://x/\n", "spec:1:1: pages: the spec has no pages"},
		{"no url", "pages:\n  - tools: [a]\n", "spec:2:5: pages[0]: url is missing"},
		{"base and serve", "base: http://x/\nserve: .\npages:\n  - url: /\n", "spec:2:8: serve: base and serve both set"},
		{"relative base", "base: /app/\npages:\n  - url: a\n", "spec:1:7: base: base \"/app/\" is not an absolute URL"},
		{"bad lint", "lint: strict\npages:\n  - url: /\n", `spec:1:7: lint: lint "strict"`},
		{"bad page lint", "pages:\n  - url: /\n    lint: maybe\n", `spec:3:11: pages[0].lint: lint "maybe"`},
		{"exact without tools", "pages:\n  - url: /\n    exactTools: true\n", "spec:3:17: pages[0].exactTools: exactTools needs"},
		{"tool both wanted and absent", "pages:\n  - url: /\n    tools: [a]\n    absent: [a]\n", `spec:4:13: pages[0].absent: "a" is both`},
		{"checks nothing", "pages:\n  - url: /\n    lint: off\n", "spec:2:5: pages[0]: the page checks nothing"},
		{"call without tool", "pages:\n  - url: /\n    calls:\n      - args: {}\n", "spec:4:9: pages[0].calls[0]: tool is missing"},
		{"args not an object", "pages:\n  - url: /\n    calls:\n      - tool: t\n        args: [1]\n", "spec:5:15: pages[0].calls[0].args: args must be an object"},
		{"contains not strings", "pages:\n  - url: /\n    calls:\n      - tool: t\n        expect: {contains: {a: 1}}\n", "spec:5:28: pages[0].calls[0].expect.contains: want a list"},
		{"isError not a bool", "pages:\n  - url: /\n    calls:\n      - tool: t\n        expect: {isError: maybe}\n", "spec:5:27: pages[0].calls[0].expect.isError: want true or false"},
		{"bad regexp", "pages:\n  - url: /\n    calls:\n      - tool: t\n        expect:\n          matches: ['a(']\n", "spec:6:21: pages[0].calls[0].expect.matches[0]: not a regular expression"},
		{"bad path", "pages:\n  - url: /\n    calls:\n      - tool: t\n        expect:\n          json: {\"$.a[x]\": 1}\n", `spec:6:17: pages[0].calls[0].expect.json: path "$.a[x]": [x] is neither`},
		{"paths and keys mixed", "pages:\n  - url: /\n    calls:\n      - tool: t\n        expect:\n          json: {$.a: 1, b: 2}\n", "mixes paths"},
		{"bad timeout", "pages:\n  - url: /\n    calls:\n      - tool: t\n        timeout: soon\n", `spec:5:18: pages[0].calls[0].timeout: "soon" is not a positive duration`},
		{"bad viewport", "pages:\n  - url: /\n    viewport: {width: 0, height: 10}\n", "spec:3:15: pages[0].viewport: width and height"},
		{"viewport not a number", "pages:\n  - url: /\n    viewport: {width: wide, height: 10}\n", "spec:3:23: pages[0].viewport.width: want a whole number"},
		{"cookie without a name", "cookies: [{value: x}]\npages:\n  - url: /\n", "spec:1:11: cookies[0]: a cookie needs a name"},
		{"header not a string", "pages:\n  - url: /\n    headers: {X: [1]}\n", "spec:3:18: pages[0].headers.X: want a string"},
		{"JSON", `{"pages": [{"url": "/", "tols": []}]}`, `spec:1:25: pages[0]: unknown field "tols"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestJSONMatch: paths and subsets on a result's text read as JSON.
func TestJSONMatch(t *testing.T) {
	got := map[string]any{"items": []any{map[string]any{"name": "a", "n": 1.0}, map[string]any{"name": "b"}}, "odd key": true}
	tests := []struct{ matcher, diff string }{
		{`{"$.items[0].name": "a"}`, ""},
		{`{"$.items[-1].name": "b", "$['odd key']": true}`, ""},
		{`{"$.items[0]": {"n": 1}}`, ""},
		{`{"$": {"items": [{}, {}]}}`, ""},
		{`{"items": [{"name": "a"}, {}]}`, ""},
		{`{"$.items[0].name": "z"}`, `json $.items[0].name is "a", want "z"`},
		{`{"$.items[5]": 1}`, "json $.items[5]: $.items has 2 elements, no [5]"},
		{`{"$.nope": 1}`, `json $.nope: $ has no "nope"`},
		{`{"$.items.name": 1}`, "json $.items.name: $.items is an array, not an object"},
		{`{"$.items[0].name.x": 1}`, `json $.items[0].name.x: $.items[0].name is "a", which has no "x"`},
		{`{"other": 1}`, `json has no "other"`},
	}
	for _, tt := range tests {
		m, err := compileJSONMatch(json.RawMessage(tt.matcher))
		if err != nil {
			t.Fatalf("%s: %v", tt.matcher, err)
		}
		if d := m.match(got); d != tt.diff {
			t.Errorf("%s: %q, want %q", tt.matcher, d, tt.diff)
		}
	}
}

func TestSpecURLs(t *testing.T) {
	spec := func(base string) *Spec {
		return &Spec{Base: base, Pages: []PageSpec{{URL: "a.html"}, {URL: "/b/"}, {URL: "c/?q=1#f"}, {URL: "http://other.test/d"}}}
	}
	tests := []struct {
		specBase, flag string
		want           []string
		wantErr        string
	}{
		{"http://h.test/app/", "", []string{"http://h.test/app/a.html", "http://h.test/b/", "http://h.test/app/c/?q=1#f", "http://other.test/d"}, ""},
		{"http://h.test/app", "", []string{"http://h.test/app/a.html", "http://h.test/b/", "http://h.test/app/c/?q=1#f", "http://other.test/d"}, ""},
		{"http://h.test/app/", "http://127.0.0.1:9/", []string{"http://127.0.0.1:9/a.html", "http://127.0.0.1:9/b/", "http://127.0.0.1:9/c/?q=1#f", "http://other.test/d"}, ""},
		{"", "", nil, "pages[0]: url \"a.html\" is relative"},
		{"", "127.0.0.1:9", nil, "not an absolute URL"},
	}
	for _, tt := range tests {
		got, err := spec(tt.specBase).URLs(tt.flag)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("base %q, flag %q: error %v, want %q", tt.specBase, tt.flag, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("base %q, flag %q: %v, %v; want %v", tt.specBase, tt.flag, got, err, tt.want)
		}
	}
}

func TestLoadSpec(t *testing.T) {
	dir := t.TempDir()
	yml := filepath.Join(dir, "specs", "site.yaml")
	os.MkdirAll(filepath.Dir(yml), 0o755)
	os.WriteFile(yml, []byte("serve: ../public\npages:\n  - url: index.html\n"), 0o644)
	s, err := LoadSpec(yml)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.ServeDir(), filepath.Join(dir, "public"); got != want {
		t.Errorf("ServeDir %q, want %q", got, want)
	}

	js := filepath.Join(dir, "site.JSON")
	os.WriteFile(js, []byte(`{"serve": "/srv/www", "pages": [{"url": "x"}]}`), 0o644)
	if s, err := LoadSpec(js); err != nil || s.ServeDir() != "/srv/www" {
		t.Errorf("JSON spec: %v, %v", s, err)
	}
	// Errors name the file, line and column.
	os.WriteFile(js, []byte("{\"pages\": [{\"url\": \"x\",\n  \"tools\": 3}]}"), 0o644)
	if _, err := LoadSpec(js); err == nil || !strings.Contains(err.Error(), js+":2:12: pages[0].tools: want a list") {
		t.Errorf("a bad JSON spec: %v", err)
	}
	if _, err := LoadSpec(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "reading the spec") {
		t.Errorf("missing file: %v", err)
	}
	if s := (&Spec{}); s.ServeDir() != "" {
		t.Errorf("ServeDir of a spec without serve: %q", s.ServeDir())
	}
}
