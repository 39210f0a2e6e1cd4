package hub

import (
	"regexp"
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
