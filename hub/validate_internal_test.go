package hub

import (
	"log/slog"
	"sync"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// TestCheckWhileMarkedBroken runs concurrent checks of schemas that the
// first validation marks broken (a reference cycle shows only then). Under
// -race it shows whether the mark is read without the lock; every check
// must let the call through.
func TestCheckWhileMarkedBroken(t *testing.T) {
	tests := []struct {
		name, schema, args string
	}{
		{"direct cycle", `{"type":"object","$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`, `{}`},
		{"cycle through allOf", `{"type":"object","allOf":[{"$ref":"#"}]}`, `{}`},
		{"cycle below a property", `{"type":"object","properties":{"p":{"$ref":"#/$defs/a"}},"$defs":{"a":{"$ref":"#/$defs/a"}}}`, `{"p":1}`},
	}
	const checkers, rounds = 8, 20
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range rounds {
				v := newValidator(slog.New(slog.DiscardHandler))
				c, _ := v.entry([]byte(tt.schema))
				start := make(chan struct{})
				var wg sync.WaitGroup
				for range checkers {
					wg.Go(func() {
						<-start
						if reason := v.check("loop", "https://example.com", c, []byte(tt.args)); reason != "" {
							t.Errorf("check = %q, want the call let through", reason)
						}
					})
				}
				close(start)
				wg.Wait()
			}
		})
	}
}

// TestSchemaEntriesAreShared checks that the documents whose tools have the
// same schema text hold one compiled entry, compiled once, and that calls
// use the entry their document holds.
func TestSchemaEntriesAreShared(t *testing.T) {
	const schema = `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`
	tests := []struct {
		name    string
		docs    []string
		schemas []string // one per doc
		entries int
	}{
		{"one schema in two tabs", []string{"a", "b"}, []string{schema, schema}, 1},
		{"two schemas", []string{"a", "b"}, []string{schema, `{"type":"object"}`}, 2},
		{"no schema", []string{"a"}, []string{""}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := New(nopBrowser{}, Options{Logger: slog.New(slog.DiscardHandler)})
			for i, k := range tt.docs {
				tool := core.Tool{Name: "t", Description: "d"}
				if tt.schemas[i] != "" {
					tool.InputSchema = []byte(tt.schemas[i]) // a slice of its own, as from a page
				}
				h.Update(core.Source{Key: k, Tab: k, Frame: k, Origin: "https://example.com", URL: "https://example.com/"}, []core.Tool{tool}, nil)
			}
			seen := map[*compiled]bool{}
			for _, k := range tt.docs {
				if c := h.docs[k].schemas["t"]; c != nil {
					seen[c] = true
				}
			}
			if len(seen) != tt.entries || len(h.validator.cache) != tt.entries {
				t.Errorf("%d entries held by documents, %d cached; want %d", len(seen), len(h.validator.cache), tt.entries)
			}
			for c := range seen {
				if s, err := c.get(); s == nil || err != nil {
					t.Errorf("the entry did not compile: %v", err)
				}
			}
		})
	}
}
