package e2e

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestNavigatingForms: a declarative form with toolautosubmit that submits
// to another page answers with that page's JSON-LD (a JSON array, empty when
// the page has none), the same on the polyfill as on native Chromium; on the
// polyfill a form without toolautosubmit is filled and the call says which
// fields and that a person must submit it (native Chromium waits for the
// person instead: docs/differences.md).
func TestNavigatingForms(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	want := []any{
		map[string]any{"@context": "https://schema.org", "@type": "Flight", "flightNumber": "WM 156",
			"arrivalAirport": map[string]any{"@type": "Airport", "name": "Lisbon"}},
		map[string]any{"@context": "https://schema.org", "@type": "Offer", "price": "99.00", "priceCurrency": "EUR"},
	}
	got := map[string]string{}
	for _, be := range []string{"polyfill", "native"} {
		t.Run(be, func(t *testing.T) {
			args := []string{"launch", "--headless", "--backend", be}
			if be == "native" {
				args = append(args, "--chrome-arg=--enable-features=WebMCP")
			}
			c := start(t, append(args, base+"/navform/index.html")...)
			tools := c.waitFor("the forms' tools", hasSuffix("find_page", 1))
			if be == "polyfill" {
				out := c.callOK(toolWithSuffix(tools, "book_flight")[0], map[string]any{"to": "Lisbon", "seat": "window"})
				if !strings.Contains(out, `"book_flight" was filled (`) || !strings.Contains(out, "seat") || !strings.Contains(out, "to") || !strings.Contains(out, "a person must check it and submit it") {
					t.Errorf("book_flight = %q, want the filled fields and that a person must submit", out)
				}
			}
			// find_page navigates to plain.html (no JSON-LD), whose own form
			// find_flight_again navigates to result.html.
			if out := c.callOK(toolWithSuffix(tools, "find_page")[0], map[string]any{"q": "x"}); out != "[]" {
				t.Errorf("find_page (a page without JSON-LD) = %q, want []", out)
			}
			tools = c.waitFor("the plain page's form", hasSuffix("find_flight_again", 1))
			out := c.callOK(toolWithSuffix(tools, "find_flight_again")[0], map[string]any{"to": "Lisbon"})
			got[be] = out
			var data []any
			if err := json.Unmarshal([]byte(out), &data); err != nil || !reflect.DeepEqual(data, want) {
				t.Errorf("find_flight_again = %s, want the result page's JSON-LD %v", out, want)
			}
		})
	}
	if got["polyfill"] != got["native"] {
		t.Errorf("find_flight: the polyfill answers %s, native Chromium %s", got["polyfill"], got["native"])
	}
}
