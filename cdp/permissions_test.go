package cdp

import "testing"

func TestChildVerdict(t *testing.T) {
	const top, other = "https://top.example", "https://ads.example"
	s := func(v string) *string { return &v }
	tests := []struct {
		name string
		c    childFacts
		want bool
	}{
		{"same origin inherits", childFacts{origin: top, urlOrigin: top, parentOrigin: top, srcOrigin: top}, true},
		{"cross origin without allow", childFacts{origin: other, urlOrigin: other, parentOrigin: top, srcOrigin: other}, false},
		{"allow=tools is 'src'", childFacts{origin: other, urlOrigin: other, parentOrigin: top, srcOrigin: other, allow: s("tools")}, true},
		{"'src' after the frame navigated elsewhere", childFacts{origin: "https://third.example", urlOrigin: "https://third.example", parentOrigin: top, srcOrigin: other, allow: s("tools")}, false},
		{"allow=tools 'none'", childFacts{origin: top, urlOrigin: top, parentOrigin: top, srcOrigin: top, allow: s("tools 'none'")}, false},
		{"allow=tools *", childFacts{origin: other, urlOrigin: other, parentOrigin: top, srcOrigin: other, allow: s("camera; tools *")}, true},
		{"allow=tools 'self'", childFacts{origin: other, urlOrigin: other, parentOrigin: top, srcOrigin: other, allow: s("tools 'self'")}, false},
		{"allow names the origin", childFacts{origin: other, urlOrigin: other, parentOrigin: top, srcOrigin: other, allow: s("tools https://ads.example:443")}, true},
		{"allow without tools", childFacts{origin: other, urlOrigin: other, parentOrigin: top, srcOrigin: other, allow: s("camera")}, false},
		{"sandboxed without allow", childFacts{origin: "null", urlOrigin: top, parentOrigin: top, srcOrigin: top}, false},
		{"sandboxed with allow=tools", childFacts{origin: "null", urlOrigin: top, parentOrigin: top, srcOrigin: top, allow: s("tools")}, true},
		{"parent header self only", childFacts{origin: other, urlOrigin: other, parentOrigin: top, srcOrigin: other, allow: s("tools"), parentHeader: "tools=(self)"}, false},
		{"parent header names the frame", childFacts{origin: other, urlOrigin: other, parentOrigin: top, srcOrigin: other, allow: s("tools"), parentHeader: `geolocation=(), tools=(self "https://ads.example")`}, true},
		{"parent header *", childFacts{origin: other, urlOrigin: other, parentOrigin: top, srcOrigin: other, allow: s("tools"), parentHeader: "tools=*"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := childVerdict(tt.c); got.allowed != tt.want {
				t.Errorf("childVerdict = %+v, want allowed %v", got, tt.want)
			}
		})
	}
}

func TestHeaderVerdict(t *testing.T) {
	tests := []struct {
		header string
		want   bool
	}{
		{"", true},
		{"camera=()", true},
		{"tools=()", false},
		{"camera=(), tools=()", false},
		{"tools=(self)", true},
		{"tools=*", true},
		{`tools=("https://other.example")`, false},
		{"tools=()\ntools=(self)", true}, // the later member wins
		{"tools=(", true},                // malformed: ignored
	}
	for _, tt := range tests {
		if got := headerVerdict(tt.header, "https://top.example"); got.allowed != tt.want {
			t.Errorf("headerVerdict(%q) = %+v, want allowed %v", tt.header, got, tt.want)
		}
	}
}
