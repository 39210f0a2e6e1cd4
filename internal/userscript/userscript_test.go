package userscript

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func header(lines ...string) string {
	return "// ==UserScript==\n// " + strings.Join(lines, "\n// ") + "\n// ==/UserScript==\nconsole.log(1);\n"
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		wantErr string
		check   func(t *testing.T, s *Script)
	}{
		{name: "full header", src: header("@name Orders", "@namespace x", "@version 1.2", "@description d",
			"@match https://shop.example/*", "@include http://*.legacy/*", "@exclude https://shop.example/admin*",
			"@run-at document-start", "@noframes", "@grant none", "@author me"),
			check: func(t *testing.T, s *Script) {
				if s.Name != "Orders" || s.Version != "1.2" || s.Description != "d" || s.RunAt != DocumentStart || !s.NoFrames {
					t.Errorf("got %+v", s)
				}
				if strings.Join(s.Ignored, ",") != "namespace,author" {
					t.Errorf("Ignored = %v, want namespace,author", s.Ignored)
				}
			}},
		{name: "defaults", src: header("@match *://*/*"), check: func(t *testing.T, s *Script) {
			if s.Name != "x" || s.RunAt != DocumentIdle || s.NoFrames {
				t.Errorf("got name %q run-at %q noframes %v", s.Name, s.RunAt, s.NoFrames)
			}
		}},
		{name: "tabs and CRLF", src: strings.ReplaceAll("// ==UserScript==\n//\t@name\tTabbed\n// @match\thttps://a.example/*\n// ==/UserScript==\n", "\n", "\r\n"),
			check: func(t *testing.T, s *Script) {
				if s.Name != "Tabbed" || s.Matches[0] != "https://a.example/*" {
					t.Errorf("got name %q matches %q", s.Name, s.Matches)
				}
			}},
		{name: "comments before the header", src: "// hello\n\n" + header("@match https://a.example/*")},
		{name: "byte order mark", src: "\uFEFF" + header("@match https://a.example/*")},
		{name: "not a userscript", src: "console.log('hi');\n", wantErr: "is not a userscript"},
		{name: "header after code", src: "let a;\n" + header("@match https://a.example/*"), wantErr: "is not a userscript"},
		{name: "header never ends", src: "// ==UserScript==\n// @match https://a.example/*\n", wantErr: "never ends"},
		{name: "code in header", src: "// ==UserScript==\nlet a;\n// ==/UserScript==\n", wantErr: "not a comment"},
		{name: "GM grant", src: header("@match https://a.example/*", "@grant GM_xmlhttpRequest"), wantErr: "@grant GM_xmlhttpRequest is refused"},
		{name: "unsafeWindow", src: header("@match https://a.example/*", "@grant unsafeWindow"), wantErr: "@grant unsafeWindow is refused"},
		{name: "bad run-at", src: header("@match https://a.example/*", "@run-at context-menu"), wantErr: `@run-at "context-menu"`},
		{name: "no match", src: header("@name n"), wantErr: "no @match or @include"},
		{name: "empty match", src: header("@match"), wantErr: "@match has no value"},
		{name: "bad match", src: header("@match example.com"), wantErr: "not a match pattern"},
		{name: "regex include", src: header("@include /^https:.*$/"), wantErr: "is a regular expression"},
		{name: "too big", src: header("@match https://a.example/*") + strings.Repeat("x", MaxSize), wantErr: "over the limit"},
		{name: "not UTF-8", src: header("@match https://a.example/*") + "\xff", wantErr: "not UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("dir/x.user.js", []byte(tt.src))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}

func TestGrantError(t *testing.T) {
	_, err := Parse("a.user.js", []byte(header("@match https://a.example/*", "@grant GM.getValue")))
	ge, ok := errors.AsType[*GrantError](err)
	if !ok || ge.Grant != "GM.getValue" || ge.File != "a.user.js" {
		t.Fatalf("error = %#v, want a *GrantError naming GM.getValue", err)
	}
}

func TestRuns(t *testing.T) {
	tests := []struct {
		name    string
		lines   []string
		yes, no []string
	}{
		{name: "any scheme any host", lines: []string{"@match *://*/*"},
			yes: []string{"http://a.example/", "https://b.example:8443/x?y#z"},
			no:  []string{"file:///tmp/a", "ftp://a.example/", "about:blank", "chrome://settings/"}},
		{name: "subdomains", lines: []string{"@match https://*.example.com/app/*"},
			yes: []string{"https://example.com/app/", "https://a.b.example.com/app/x", "https://example.com:8443/app/x"},
			no:  []string{"http://example.com/app/", "https://badexample.com/app/", "https://example.com.evil/app/", "https://example.com/apps"}},
		{name: "host with port", lines: []string{"@match http://127.0.0.1:8080/*"},
			yes: []string{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/a?b"},
			no:  []string{"http://127.0.0.1/", "http://127.0.0.1:8081/", "http://127.0.0.1:80800/"}},
		{name: "default port", lines: []string{"@match https://a.example:443/*"},
			yes: []string{"https://a.example/", "https://a.example:443/"}},
		{name: "exact path", lines: []string{"@match https://a.example/orders.html"},
			yes: []string{"https://a.example/orders.html", "https://a.example/orders.html#top"},
			no:  []string{"https://a.example/orders.html?x=1", "https://a.example/orders.htmlx", "https://a.example/ordersXhtml"}},
		{name: "all urls", lines: []string{"@match <all_urls>"},
			yes: []string{"https://a.example/", "file:///x"}, no: []string{"about:blank", "data:text/html,x"}},
		{name: "file", lines: []string{"@match file:///srv/*"}, yes: []string{"file:///srv/a.html"}, no: []string{"file:///etc/a"}},
		{name: "include glob", lines: []string{"@include http*://legacy.example/*/edit*"},
			yes: []string{"https://legacy.example/orders/edit?id=1", "http://legacy.example/a/edit"},
			no:  []string{"https://legacy.example/orders/view"}},
		{name: "exclude pattern and glob", lines: []string{"@match https://a.example/*", "@exclude https://a.example/admin/*", "@exclude *logout*"},
			yes: []string{"https://a.example/orders"},
			no:  []string{"https://a.example/admin/users", "https://a.example/logout"}},
		{name: "regexp characters are literal", lines: []string{"@match https://a.example/(x)+[y].php?q=$1"},
			yes: []string{"https://a.example/(x)+[y].php?q=$1"}, no: []string{"https://a.example/xx[y].php?q=$1", "https://a.example/(x)+[y]Xphp?q=$1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("x.user.js", []byte(header(tt.lines...)))
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range tt.yes {
				if !s.Runs(u) {
					t.Errorf("does not run on %s (pattern %s)", u, s.match.src)
				}
			}
			for _, u := range tt.no {
				if s.Runs(u) {
					t.Errorf("runs on %s (pattern %s)", u, s.match.src)
				}
			}
		})
	}
}

func TestBadMatchPatterns(t *testing.T) {
	for _, p := range []string{"gopher://a/*", "https://a.example", "https://a.*.example/*", "https://a.example:http/*", "https://*:1x/*", "file://host/x", "https:///x"} {
		if _, err := Parse("x.user.js", []byte(header("@match "+p))); err == nil {
			t.Errorf("@match %s was taken", p)
		}
	}
}

// TestPatternSyntax: the sources handed to the page use only syntax that
// means the same in JavaScript: groups, alternation, classes of plain
// characters, quoted metacharacters.
func TestPatternSyntax(t *testing.T) {
	s, err := Parse("x.user.js", []byte(header("@match *://*.a-b.example:8080/p(1)/*", "@include http://x.example/?a=[b]{c}|d^e$", "@exclude https://a.example/*")))
	if err != nil {
		t.Fatal(err)
	}
	m, x := s.Pattern()
	allowed := regexp.MustCompile(`^(\(\?:|\)|\||\^|\$|\?|\.\*|\[\^/\?#:@\]\*|\[0-9\]\+|\\[.+*?()|\[\]{}^$]|[^\\()\[\]{}|^$?*+.])*$`)
	for _, src := range []string{m, x} {
		if !allowed.MatchString(src) {
			t.Errorf("pattern %s uses syntax outside the shared subset", src)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("b.user.js", header("@name B", "@match https://b.example/*"))
	write("a.user.js", header("@name A", "@match https://a.example/*"))
	write("notes.txt", "not a script")
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	single := write("sub/c.js", header("@name C", "@match https://c.example/*"))

	got, err := Load([]string{dir, single, single})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "A,B,C" {
		t.Errorf("loaded %v, want A,B,C", names)
	}

	dup := write("sub/d.user.js", header("@name A", "@match https://d.example/*"))
	if _, err := Load([]string{dir, dup}); err == nil || !strings.Contains(err.Error(), `both named "A"`) {
		t.Errorf("two scripts named A: error = %v", err)
	}
	if _, err := Load([]string{filepath.Join(dir, "missing.user.js")}); err == nil {
		t.Error("a missing file was taken")
	}
	empty := t.TempDir()
	if _, err := Load([]string{empty}); err == nil || !strings.Contains(err.Error(), "no *.user.js") {
		t.Errorf("an empty directory: error = %v", err)
	}
	if _, err := Load([]string{filepath.Join(dir, "notes.txt")}); err == nil || !strings.Contains(err.Error(), "is not a userscript") {
		t.Errorf("a text file: error = %v", err)
	}
}
