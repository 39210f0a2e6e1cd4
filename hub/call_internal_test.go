package hub

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// gatedBrowser answers a call when its gate opens.
type gatedBrowser struct {
	entered chan struct{}
	gate    chan struct{}
}

func (b gatedBrowser) Invoke(context.Context, string, string, json.RawMessage) (core.Result, error) {
	b.entered <- struct{}{}
	<-b.gate
	return core.Result{Kind: core.KindString, Value: "ok"}, nil
}

// TestCallRecordsDoNotWaitForTheCatalog finishes a call while the catalog's
// lock is held (as by a long update): its record must reach the subscriber
// without waiting for the lock.
func TestCallRecordsDoNotWaitForTheCatalog(t *testing.T) {
	tests := []struct {
		name        string
		subscribers int
	}{
		{"one subscriber", 1},
		{"three subscribers", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := gatedBrowser{entered: make(chan struct{}), gate: make(chan struct{})}
			h := New(b, Options{Logger: slog.New(slog.DiscardHandler)})
			h.Update(core.Source{Key: "doc", Tab: "T", Frame: "T", Origin: "https://example.com", URL: "https://example.com/"},
				[]core.Tool{{Name: "t", Description: "d"}}, nil)
			var subs []<-chan CallRecord
			for range tt.subscribers {
				ch, stop := h.WatchCalls(1)
				defer stop()
				subs = append(subs, ch)
			}
			done := make(chan core.Outcome, 1)
			go func() { done <- h.Call(context.Background(), "example_com_t", nil) }()
			select {
			case <-b.entered:
			case <-time.After(5 * time.Second):
				t.Fatal("the call never reached the browser")
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			close(b.gate)
			for i, ch := range subs {
				select {
				case rec := <-ch:
					if rec.Tool != "example_com_t" || !rec.OK || rec.Tab != 1 {
						t.Errorf("subscriber %d: record %+v", i, rec)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("subscriber %d: no record while the catalog's lock is held", i)
				}
			}
			if r := <-done; r.IsError {
				t.Errorf("the call failed: %+v", r)
			}
		})
	}
}
