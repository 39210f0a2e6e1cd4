package telemetry

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Telemetry is the hub's Observer when metrics, traces or both are on.
type Telemetry struct {
	// Metrics and Traces are the parts that are on (nil when off).
	Metrics *Metrics
	Traces  *Traces
}

// New returns a Telemetry of the parts given, or nil when both are nil.
// With both, the metrics count the calls that got no spans because more
// than the trace queue holds waited for them at once
// (webmcp_cdp_trace_calls_dropped_total).
func New(m *Metrics, t *Traces) *Telemetry {
	if m == nil && t == nil {
		return nil
	}
	if m != nil && t != nil {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "webmcp_cdp_trace_calls_dropped_total",
			Help: "Tool calls that got no trace spans: more than the trace queue holds waited for theirs at once (the exporter is slower than the calls).",
		}, func() float64 { return float64(t.dropped.Load()) }))
	}
	return &Telemetry{Metrics: m, Traces: t}
}

// Observer returns t as a hub.Observer, and nil for a nil t (a nil
// *Telemetry in the interface would not be nil).
func (t *Telemetry) Observer() hub.Observer {
	if t == nil {
		return nil
	}
	return t
}

// Tracing says whether traces are on (the browser is then asked to time
// each tool's execute in the page).
func (t *Telemetry) Tracing() bool { return t != nil && t.Traces != nil }

// TraceContext returns the func that mcpserver.Options.TraceContext takes,
// or nil when traces are off (the _meta keys are then not read).
func (t *Telemetry) TraceContext() func(ctx context.Context, traceparent, tracestate string) context.Context {
	if t == nil || t.Traces == nil {
		return nil
	}
	return t.Traces.TraceContext
}

// CallDone implements hub.Observer.
func (t *Telemetry) CallDone(ctx context.Context, c hub.CallTrace) {
	if t.Metrics != nil {
		t.Metrics.call(&c)
	}
	if t.Traces != nil {
		t.Traces.queue(ctx, c)
	}
}

// Registered implements hub.Observer.
func (t *Telemetry) Registered(r hub.Registration) {
	if t.Traces != nil {
		t.Traces.registration(r)
	}
}

// Refused implements hub.Observer.
func (t *Telemetry) Refused(reason core.Reason) {
	if t.Metrics != nil {
		t.Metrics.refusal(reason)
	}
}

// Shutdown exports the spans still buffered, within ctx.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil || t.Traces == nil {
		return nil
	}
	return t.Traces.Shutdown(ctx)
}
