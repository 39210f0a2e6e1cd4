package telemetry

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Telemetry feeds on the hub's hooks (Hooks) when metrics, traces or both
// are on.
type Telemetry struct {
	// Metrics and Traces are the parts that are on (nil when off).
	Metrics *Metrics
	Traces  *Traces
	// space is the id of the person's space whose calls this copy sees
	// (InSpace): a hash, never who the person is.
	space string
}

// InSpace returns t for the hub of one person's space: the spans of its
// calls carry the space's id (webmcp_cdp.space), a hash of who the person
// is and never their subject. A nil t stays nil.
func (t *Telemetry) InSpace(id string) *Telemetry {
	if t == nil {
		return nil
	}
	c := *t
	c.space = id
	return &c
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

// Hooks returns the hub's hooks that feed t (hub.Options.Hooks): the calls'
// traces, the registrations and the refusals. A nil t has none, and the hub
// then reads no clock for them.
func (t *Telemetry) Hooks() hub.Hooks {
	if t == nil {
		return hub.Hooks{}
	}
	return hub.Hooks{Calls: hub.CallHooks{Trace: t.CallDone}, Registered: t.Registered, Refused: t.Refused}
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

// CallDone is the hub's Trace hook (hub.CallHooks): a finished call.
func (t *Telemetry) CallDone(ctx context.Context, c hub.CallTrace) {
	if t.Metrics != nil {
		t.Metrics.call(&c)
	}
	if t.Traces != nil {
		t.Traces.queue(ctx, c, t.space)
	}
}

// Registered is the hub's Registered hook (hub.Hooks).
func (t *Telemetry) Registered(r hub.Registration) {
	if t.Traces != nil {
		t.Traces.registration(r)
	}
}

// Refused is the hub's Refused hook (hub.Hooks).
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
