package telemetry

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
)

// BenchmarkCallDone measures what an observed call costs the call path:
// counting it, and queueing it for its spans ("traces", "both"); "spans"
// is what making its four spans costs the goroutine that makes them (handed
// to a batch processor whose exporter drops them).
//
//	go test ./hub/telemetry -run '^$' -bench CallDone -benchmem
func BenchmarkCallDone(b *testing.B) {
	t0 := time.Now()
	c := hub.CallTrace{Tool: "shop_search", PageTool: "search", Origin: "https://shop.example", Tab: 1, Result: hub.ResultOK,
		Start: t0, ValidateStart: t0, ValidateEnd: t0.Add(time.Microsecond), InvokeStart: t0.Add(2 * time.Microsecond),
		InvokeEnd: t0.Add(400 * time.Microsecond), PageTook: 100 * time.Microsecond, PageTimed: true, End: t0.Add(410 * time.Microsecond)}
	for _, bc := range []struct {
		name    string
		metrics bool
		traces  bool
	}{{"metrics", true, false}, {"traces", false, true}, {"both", true, true}, {"spans", false, true}} {
		b.Run(bc.name, func(b *testing.B) {
			var m *Metrics
			var tr *Traces
			if bc.metrics {
				m = NewMetrics(0)
			}
			if bc.traces {
				p := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
				defer p.Shutdown(context.Background())
				tr = tracesOf(p, "bench")
			}
			tel := New(m, tr)
			ctx := context.Background()
			b.ReportAllocs()
			if bc.name == "spans" {
				for b.Loop() {
					tr.call(ctx, &c, "")
				}
				return
			}
			for b.Loop() {
				tel.CallDone(ctx, c)
			}
		})
	}
}
