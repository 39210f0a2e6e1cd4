package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStartURL(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "https://example.com/", want: "https://example.com/"},
		{in: "localhost:8080/app", want: "http://localhost:8080/app"},
		{in: "localhost", want: "http://localhost"},
		{in: "127.0.0.1:3000", want: "http://127.0.0.1:3000"},
		{in: "127.1.2.3/x?y#z", want: "http://127.1.2.3/x?y#z"},
		{in: "[::1]:8080/", want: "http://[::1]:8080/"},
		{in: "app.localhost:5173", want: "http://app.localhost:5173"},
		{in: "about:blank", want: "about:blank"},
		{in: "file:///tmp/a.html", want: "file:///tmp/a.html"},
		{in: "data:text/html,<p>hi", want: "data:text/html,<p>hi"},
		{in: "example.com", err: `"example.com" has no scheme: add https:// (or http://)`},
		{in: "example.com:8080/x", err: "add https://"},
		{in: "/path/only", err: "has no host"},
		{in: "http://", err: "not a valid URL"},
	} {
		got, err := StartURL(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("StartURL(%q) = %q, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("StartURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestJSONAt(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{\"a\":\n  1,,}", "line 2, column 5: invalid character ','"},
		{`{"a":`, "line 1, column 6: unexpected end of JSON input"},
		{`[1]`, "line 1, column 1: a JSON array where an object is needed"},
		{"{\n\n\"a\" 1}", "line 3, column 5: invalid character '1'"},
		{"{\"a\": 1,\n \"b\": }", "line 2, column 7: invalid character '}'"},
	} {
		var obj map[string]any
		err := json.Unmarshal([]byte(tc.in), &obj)
		if err == nil {
			t.Fatalf("%q parsed", tc.in)
		}
		if got := JSONAt([]byte(tc.in), err); !strings.HasPrefix(got, tc.want) {
			t.Errorf("JSONAt(%q) = %q, want %q...", tc.in, got, tc.want)
		}
	}
}
