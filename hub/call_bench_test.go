package hub_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// instantBrowser answers every call at once with the same result, so a
// benchmark of Hub.Call measures the hub alone.
type instantBrowser struct{}

func (instantBrowser) Invoke(context.Context, string, string, json.RawMessage) (core.Result, error) {
	return core.Result{Kind: "string", Value: "done"}, nil
}

// BenchmarkCall measures the hub's side of one tool call: routing, argument
// validation against the tool's inputSchema, the call into a browser that
// answers at once, the result, and the call record for a subscriber. "no
// schema" leaves the schema library out, so the hub's own cost shows.
//
//	go test ./hub -run '^$' -bench BenchmarkCall -benchmem
func BenchmarkCall(b *testing.B) {
	for _, bc := range []struct {
		name   string
		schema bool
	}{{"schema", true}, {"no schema", false}} {
		b.Run(bc.name, func(b *testing.B) {
			h := hub.New(instantBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
			tool := benchTool(0, "v1")
			if !bc.schema {
				tool.InputSchema = nil
			}
			h.Update(benchDoc(0, 0), []core.Tool{tool}, nil)
			name := h.Tools()[0].Name
			records, stop := h.WatchCalls(1)
			defer stop()
			go func() {
				for range records {
				}
			}()
			args := json.RawMessage(`{"query":"milk","tag":"home","limit":3}`)
			ctx := context.Background()
			if res := h.Call(ctx, name, args); res.IsError {
				b.Fatalf("the call failed: %+v", res)
			}
			b.ReportAllocs()
			for b.Loop() {
				if res := h.Call(ctx, name, args); res.IsError {
					b.Fatalf("the call failed: %+v", res)
				}
			}
		})
	}
}

// BenchmarkCallParallel is BenchmarkCall from many goroutines at once, with
// catalog updates going on, so contention on the hub's locks shows.
func BenchmarkCallParallel(b *testing.B) {
	h := hub.New(instantBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler), MaxInflightPerTab: 1 << 20})
	h.Update(benchDoc(0, 0), []core.Tool{benchTool(0, "v1")}, nil)
	name := h.Tools()[0].Name
	args := json.RawMessage(`{"query":"milk","tag":"home","limit":3}`)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if res := h.Call(ctx, name, args); res.IsError {
				b.Errorf("the call failed: %+v", res)
				return
			}
		}
	})
}
