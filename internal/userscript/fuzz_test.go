package userscript

import (
	"regexp"
	"testing"
)

// FuzzParse: no header makes Parse panic, and every header it takes gives
// patterns that compile and a Runs that answers for any URL.
func FuzzParse(f *testing.F) {
	f.Add([]byte(header("@name A", "@match https://*.example.com/*", "@exclude *admin*")), "https://a.example.com/x")
	f.Add([]byte(header("@include http*://x/*", "@run-at document-start", "@noframes")), "http://x/y")
	f.Add([]byte(header("@match <all_urls>", "@grant none")), "file:///a")
	f.Add([]byte("// ==UserScript==\n// @match http://[::1]:*/*\n// ==/UserScript=="), "http://[::1]:8080/")
	f.Fuzz(func(t *testing.T, src []byte, url string) {
		s, err := Parse("f.user.js", src)
		if err != nil {
			return
		}
		m, x := s.Pattern()
		if m == "" {
			t.Fatal("a script was taken with no pattern to run on")
		}
		for _, p := range []string{m, x} {
			if p != "" {
				if _, err := regexp.Compile(p); err != nil {
					t.Fatalf("pattern %q: %v", p, err)
				}
			}
		}
		s.Runs(url)
	})
}
