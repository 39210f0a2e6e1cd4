package polyfill

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

func TestScript(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
		want    []string
	}{
		{name: "fills placeholders", opts: Options{Nonce: "abc123", Binding: "__ping_x", Backend: BackendNative},
			want: []string{"'abc123'", "'__ping_x'", "'native'"}},
		{name: "default backend", opts: Options{Nonce: "n", Binding: "b"}, want: []string{"'auto'"}},
		{name: "quote in nonce", opts: Options{Nonce: "a'b", Binding: "b"}, wantErr: "characters outside"},
		{name: "empty binding", opts: Options{Nonce: "a"}, wantErr: "characters outside"},
		{name: "bad backend", opts: Options{Nonce: "a", Binding: "b", Backend: "magic"}, wantErr: "unknown backend"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Script(tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Script() error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(got, "__WEBMCP_CDP_") {
				t.Error("a placeholder is left in the script")
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("script lacks %s", w)
				}
			}
		})
	}
}

func TestParseBackend(t *testing.T) {
	for _, s := range []string{"auto", "polyfill", "native"} {
		if b, err := ParseBackend(s); err != nil || string(b) != s {
			t.Errorf("ParseBackend(%q) = %q, %v", s, b, err)
		}
	}
	if _, err := ParseBackend("chrome"); err == nil {
		t.Error("ParseBackend(chrome) accepted an unknown backend")
	}
}

// TestScriptAvoidsReplaceableBuiltins guards issue 15 point 8: after its
// intrinsics section, the page script calls no method of a page-reachable
// prototype by name and uses no array spread, and every for…of is marked as
// running before the page or as WebIDL's own iteration of a page value. (The
// e2e test TestReliabilityHostileBuiltins checks the behaviour in Chromium.)
func TestScriptAvoidsReplaceableBuiltins(t *testing.T) {
	method := regexp.MustCompile(`\.(push|pop|shift|unshift|slice|splice|includes|indexOf|sort|map|filter|find|join|startsWith|endsWith|trim|toLowerCase|replace|then|catch|call|apply|bind|keys|values|entries|observe|disconnect|assign)\(`)
	forOf := regexp.MustCompile(`for \((const|let|var) .* of `)
	for _, name := range parts[1:] { // every file after intrinsics.js
		b, err := files.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for n, l := range strings.Split(string(b), "\n") {
			code := l
			if c := strings.Index(code, "//"); c >= 0 && !strings.Contains(code[:c], "'") && !strings.Contains(code[:c], "`") {
				code = code[:c]
			}
			at := fmt.Sprintf("%s:%d", name, n+1)
			if m := method.FindString(code); m != "" {
				t.Errorf("%s calls %s on a value whose prototype the page can replace: use the captured, uncurried built-in\n\t%s", at, m, strings.TrimSpace(l))
			}
			if strings.Contains(code, "[...") || strings.Contains(code, "(...") && !strings.Contains(code, "(...args)") && !strings.Contains(code, "(...a)") {
				t.Errorf("%s spreads an array (the page can replace the array iterator)\n\t%s", at, strings.TrimSpace(l))
			}
			if forOf.MatchString(code) && !strings.Contains(l, "(before the page)") && !strings.Contains(l, "WebIDL") {
				t.Errorf("%s uses for…of (the page can replace the iterators) without saying why it is safe\n\t%s", at, strings.TrimSpace(l))
			}
		}
	}
}

// TestPartsListed: every embedded .js file is joined, once, and
// intrinsics.js comes first (the others use what it captures).
func TestPartsListed(t *testing.T) {
	entries, err := files.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]int{}
	for _, p := range parts {
		listed[p]++
	}
	for _, e := range entries {
		if listed[e.Name()] != 1 {
			t.Errorf("%s is embedded but listed %d times in parts", e.Name(), listed[e.Name()])
		}
	}
	if len(entries) != len(parts) || parts[0] != "intrinsics.js" {
		t.Errorf("parts = %v, embedded %d files; intrinsics.js must come first", parts, len(entries))
	}
}
