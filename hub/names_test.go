package hub

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestSiteOf(t *testing.T) {
	tests := []struct{ origin, want string }{
		{"https://example.com", "example_com"},
		{"https://example.com:443", "example_com"},
		{"http://localhost:8080", "localhost_8080"},
		{"http://127.0.0.1:41234", "127_0_0_1_41234"},
		{"http://[::1]:9000", "__1_9000"},
		{"https://xn--bcher-kva.example", "xn--bcher-kva_example"},
		{"file://", "file"},
		{"null", "opaque"},
		{"", "opaque"},
	}
	for _, tt := range tests {
		if got := SiteOf(tt.origin); got != tt.want {
			t.Errorf("SiteOf(%q) = %q, want %q", tt.origin, got, tt.want)
		}
	}
}

func TestRoutedName(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,48}$`)
	long := strings.Repeat("x", 100)
	tests := []struct {
		name  string
		parts []string
		want  string
	}{
		{"short", []string{"localhost_8080", toolPart("add_note")}, "localhost_8080_add_note"},
		{"tab level", []string{"example_com", "tab2", toolPart("search")}, "example_com_tab2_search"},
		{"dots in tool", []string{"a", toolPart("x.y")}, "a_x_y_" + shortHash("x.y")},
	}
	for _, tt := range tests {
		if got := RoutedName(tt.parts...); got != tt.want {
			t.Errorf("%s: RoutedName(%q) = %q, want %q", tt.name, tt.parts, got, tt.want)
		}
	}
	a, b := RoutedName("site", long+"a"), RoutedName("site", long+"b")
	if a == b || !valid.MatchString(a) || !valid.MatchString(b) {
		t.Errorf("long names %q and %q must be valid and distinct", a, b)
	}
	if toolPart("a.b") == toolPart("a_b") {
		t.Error(`"a.b" and "a_b" share a routed name`)
	}
}

func TestSiteOfHosts(t *testing.T) {
	tests := []struct{ name, origin, want string }{
		{"IPv6 without port", "http://[::1]", "__1"},
		{"IPv6 with default port", "https://[2001:db8::1]:443", "2001_db8__1"},
		{"IPv6 with port", "https://[2001:db8::1]:8443", "2001_db8__1_8443"},
		{"IPv4 default port", "http://10.0.0.1:80", "10_0_0_1"},
		{"http on 443 keeps the port", "http://example.com:443", "example_com_443"},
		{"punycode", "https://xn--mnchen-3ya.de", "xn--mnchen-3ya_de"},
		{"hyphens", "https://my-app.example-site.com", "my-app_example-site_com"},
		{"file", "file://", "file"},
		{"file with a host", "file://server", "file"},
		{"opaque", "null", "opaque"},
		{"unparsable", "http://[::1", "opaque"},
		{"odd scheme", "chrome-extension://abcdef", "abcdef"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SiteOf(tt.origin); got != tt.want {
				t.Errorf("SiteOf(%q) = %q, want %q", tt.origin, got, tt.want)
			}
		})
	}
}

func TestNaturalName(t *testing.T) {
	tests := []struct {
		name                string
		site, tabPart, tool string
		want                string
	}{
		{"site level", "example_com", "", "search", "example_com_search"},
		{"tab level", "example_com", "tab3", "search", "example_com_tab3_search"},
		{"reserved prefix", "webmcp", "", "call", "page_webmcp_call"},
		{"reserved prefix in other case", "WEBMCP", "", "call", "page_WEBMCP_call"},
		{"prefix only in the middle", "my-webmcp", "", "call", "my-webmcp_call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := naturalName(tt.site, tt.tabPart, tt.tool); got != tt.want {
				t.Errorf("naturalName(%q, %q, %q) = %q, want %q", tt.site, tt.tabPart, tt.tool, got, tt.want)
			}
		})
	}
}

func TestNamesAllocator(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,48}$`)
	ns := newNames()
	open := map[string]bool{"A": true, "B": true}
	isOpen := func(tab string) bool { return open[tab] }

	a := ns.alloc("id-a", "site_x", "", []string{"A"}, false)
	b := ns.alloc("id-b", "site_x", "", []string{"B"}, false)
	if a != "site_x" {
		t.Errorf("the first holder got %q, want the readable name", a)
	}
	if b == a || !strings.HasPrefix(b, "site_x_") || !valid.MatchString(b) {
		t.Errorf("the second holder got %q, want site_x_<hash>", b)
	}
	if again := ns.alloc("id-a", "site_x", "", nil, false); again != a {
		t.Errorf("a holder's name changed from %q to %q", a, again)
	}

	// id-a goes away for a moment (its page reloads) while its tab lives: a
	// newcomer for the same readable name does not take it.
	ns.release("id-a")
	ns.gc([]string{"id-a"}, isOpen)
	if c := ns.alloc("id-c", "site_x", "", []string{"B"}, false); c == a {
		t.Fatalf("a newcomer took %q while its holder's tab is open", a)
	}
	if got := ns.alloc("id-a", "site_x", "", []string{"A"}, false); got != a {
		t.Errorf("after a moment away, the holder got %q, want %q again", got, a)
	}

	// Once it is not listed and its tab closed, the name is free again.
	ns.release("id-a")
	open["A"] = false
	ns.gc([]string{"id-a"}, isOpen)
	if got := ns.alloc("id-d", "site_x", "", []string{"B"}, false); got != "site_x" {
		t.Errorf("after the holder's tab closed, a newcomer got %q, want site_x", got)
	}

	// A cached holder keeps its name with no tab; prefer is taken when free.
	e := ns.alloc("id-e", "site_y", "site_y_saved", nil, true)
	ns.gc(nil, isOpen)
	if e != "site_y_saved" || ns.byID["id-e"] == nil {
		t.Errorf("a cached holder got %q (kept: %v), want its saved name kept", e, ns.byID["id-e"] != nil)
	}
	// A preferred name that is reserved, malformed or taken is not used.
	for _, prefer := range []string{"webmcp_call", "bad name!", strings.Repeat("x", 49), "site_y_saved"} {
		if got := ns.alloc("p-"+prefer, "site_z", prefer, nil, false); got == prefer {
			t.Errorf("alloc preferring %q gave it", prefer)
		}
	}
}

func TestNamesIdleBound(t *testing.T) {
	ns := newNames()
	open := func(string) bool { return true }
	for i := range maxIdleNames + 50 {
		id := "id" + strconv.Itoa(i)
		ns.alloc(id, "n"+strconv.Itoa(i), "", []string{"A"}, false)
		ns.release(id)
	}
	ns.gc(nil, open)
	if len(ns.byID) != maxIdleNames || len(ns.byName) != maxIdleNames {
		t.Errorf("%d idle holders kept (%d names), want %d", len(ns.byID), len(ns.byName), maxIdleNames)
	}
	if ns.byID["id0"] != nil || ns.byID["id"+strconv.Itoa(maxIdleNames+49)] == nil {
		t.Error("the longest idle holders were not the ones dropped")
	}
}
