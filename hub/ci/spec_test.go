package ci

import (
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
	s, err := ParseSpec([]byte(src), false)
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
	s, err := ParseSpec([]byte(`{"pages":[{"url":"/a.html","calls":[{"tool":"t","args":{"x":1},"expect":{"text":"ok"}}]}]}`), true)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.lintMode(s.Pages[0]); got != LintErrors {
		t.Errorf("default lint mode %q", got)
	}
	if _, err := ParseSpec([]byte(`{"pages":[{"url":"/a.html","tols":["x"]}]}`), true); err == nil || !strings.Contains(err.Error(), `unknown field "tols"`) {
		t.Errorf("unknown field: %v", err)
	}
}

func TestParseSpecErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"not YAML", "pages: [", "not a valid spec"},
		{"unknown field", "pages:\n  - url: /\n    tols: [a]\n", `unknown field "tols"`},
		{"duplicate key", "pages: []\npages: []\n", "not a valid spec"},
		{"no pages", "base: http://x/\n", "no pages"},
		{"no url", "pages:\n  - tools: [a]\n", "pages[0]: url is missing"},
		{"base and serve", "base: http://x/\nserve: .\npages:\n  - url: /\n", "base and serve"},
		{"relative base", "base: /app/\npages:\n  - url: a\n", "not an absolute URL"},
		{"bad lint", "lint: strict\npages:\n  - url: /\n", `lint "strict"`},
		{"bad page lint", "pages:\n  - url: /\n    lint: maybe\n", `pages[0]: lint "maybe"`},
		{"exact without tools", "pages:\n  - url: /\n    exactTools: true\n", "exactTools needs"},
		{"tool both wanted and absent", "pages:\n  - url: /\n    tools: [a]\n    absent: [a]\n", `"a" is both`},
		{"checks nothing", "pages:\n  - url: /\n    lint: off\n", "checks nothing"},
		{"call without tool", "pages:\n  - url: /\n    calls:\n      - args: {}\n", "pages[0].calls[0]: tool is missing"},
		{"args not an object", "pages:\n  - url: /\n    calls:\n      - tool: t\n        args: [1]\n", "args must be an object"},
		{"contains not strings", "pages:\n  - url: /\n    calls:\n      - tool: t\n        expect: {contains: {a: 1}}\n", "contains must be a string or a list"},
		{"isError not a bool", "pages:\n  - url: /\n    calls:\n      - tool: t\n        expect: {isError: maybe}\n", "not a valid spec"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tt.src), false)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
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
	// A .json file is read as JSON, so YAML syntax is an error there.
	os.WriteFile(js, []byte("pages:\n  - url: x\n"), 0o644)
	if _, err := LoadSpec(js); err == nil || !strings.Contains(err.Error(), js) {
		t.Errorf("YAML in a .json file: %v", err)
	}
	if _, err := LoadSpec(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "reading the spec") {
		t.Errorf("missing file: %v", err)
	}
	if s := (&Spec{}); s.ServeDir() != "" {
		t.Errorf("ServeDir of a spec without serve: %q", s.ServeDir())
	}
}
