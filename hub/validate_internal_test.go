package hub

import (
	"log/slog"
	"sync"
	"testing"
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
				start := make(chan struct{})
				var wg sync.WaitGroup
				for range checkers {
					wg.Go(func() {
						<-start
						if reason := v.check("loop", "https://example.com", []byte(tt.schema), []byte(tt.args)); reason != "" {
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
