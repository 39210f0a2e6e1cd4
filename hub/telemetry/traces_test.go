package telemetry

import (
	"context"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
)

func TestTracesEnabled(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"nothing set", nil, false},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true},
		{"exporter otlp", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{"exporter none", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, false},
		{"sdk disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, false},
		{"service name alone", map[string]string{"OTEL_SERVICE_NAME": "x"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TracesEnabled(func(k string) string { return tt.env[k] }); got != tt.want {
				t.Errorf("TracesEnabled = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNewTracesRefusesWhatItCannotExport(t *testing.T) {
	for _, env := range []map[string]string{
		{"OTEL_TRACES_EXPORTER": "console"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
	} {
		if tr, err := NewTraces(context.Background(), func(k string) string { return env[k] }, "test"); err == nil {
			tr.Shutdown(context.Background())
			t.Errorf("NewTraces(%v) did not fail", env)
		}
	}
	tr, err := NewTraces(context.Background(), func(string) string { return "" }, "test")
	if tr != nil || err != nil {
		t.Errorf("with no OTEL_* set: %v, %v; want nil, nil", tr, err)
	}
}

// TestCallSpanTree: a call under a client's traceparent makes a server
// span with the client's span as parent, and its steps as children; a
// space's call carries the space's id.
func TestCallSpanTree(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr := tracesOf(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)), "test")
	tel := New(nil, tr).InSpace("5f1c0ffee")
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	ctx := tel.TraceContext()(context.Background(), "00-"+traceID+"-"+parentID+"-01", "vendor=x")
	t0 := time.Now()
	tel.CallDone(ctx, hub.CallTrace{
		Tool: "shop_search", PageTool: "search", Origin: "https://shop.example", Tab: 2, Browser: "b1", Result: hub.ResultError, Error: "boom",
		Start: t0, ValidateStart: t0.Add(time.Millisecond), ValidateEnd: t0.Add(2 * time.Millisecond),
		InvokeStart: t0.Add(3 * time.Millisecond), InvokeEnd: t0.Add(9 * time.Millisecond), End: t0.Add(10 * time.Millisecond),
		PageTook: 2 * time.Millisecond, PageTimed: true,
	})
	tel.Traces.flush()
	spans := exp.GetSpans()
	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	root, ok := byName["tools/call shop_search"]
	if !ok || len(spans) != 4 {
		t.Fatalf("spans %v", names(spans))
	}
	if root.SpanContext.TraceID().String() != traceID || root.Parent.SpanID().String() != parentID || !root.Parent.IsRemote() {
		t.Errorf("root trace %s parent %s: want the client's", root.SpanContext.TraceID(), root.Parent.SpanID())
	}
	if root.SpanKind != trace.SpanKindServer || root.Status.Code != codes.Error || !root.StartTime.Equal(t0) || !root.EndTime.Equal(t0.Add(10*time.Millisecond)) {
		t.Errorf("root kind %v status %v times %v..%v", root.SpanKind, root.Status, root.StartTime, root.EndTime)
	}
	want := map[attribute.Key]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "shop_search", "gen_ai.operation.name": "execute_tool",
		"webmcp_cdp.site": "https://shop.example", "webmcp_cdp.tab": "2", "webmcp_cdp.browser": "b1", "webmcp_cdp.result": "error", "error.type": "tool_error",
		"webmcp_cdp.space": "5f1c0ffee"}
	got := map[attribute.Key]string{}
	for _, a := range root.Attributes {
		got[a.Key] = a.Value.Emit()
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("attribute %s = %q, want %q", k, got[k], v)
		}
	}
	for _, name := range []string{SpanValidate, SpanRoundTrip} {
		s, ok := byName[name]
		if !ok || s.Parent.SpanID() != root.SpanContext.SpanID() || s.SpanContext.TraceID() != root.SpanContext.TraceID() {
			t.Errorf("%s: not a child of the call span (%v)", name, ok)
		}
	}
	rt, page := byName[SpanRoundTrip], byName[SpanPage]
	if d := rt.EndTime.Sub(rt.StartTime); d != 6*time.Millisecond {
		t.Errorf("round trip %v, want 6ms", d)
	}
	// The page's 2 ms, centred in the 6 ms round trip.
	if page.Parent.SpanID() != rt.SpanContext.SpanID() || !page.StartTime.Equal(t0.Add(5*time.Millisecond)) || !page.EndTime.Equal(t0.Add(7*time.Millisecond)) {
		t.Errorf("page span under %s at %v..%v, want under the round trip at 5..7 ms", page.Parent.SpanID(), page.StartTime.Sub(t0), page.EndTime.Sub(t0))
	}
}

// TestUnknownToolSpan: a call of a tool the hub does not know keeps the
// client's name out of the span's name, and cuts it in the attribute.
func TestUnknownToolSpan(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tel := New(nil, tracesOf(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)), "test"))
	t0 := time.Now()
	tel.CallDone(context.Background(), hub.CallTrace{Tool: strings.Repeat("x", 5000), Result: hub.ResultRefused, Error: "no tool", Start: t0, End: t0})
	tel.Traces.flush()
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "tools/call" {
		t.Fatalf("spans %v, want one named tools/call", names(spans))
	}
	for _, a := range spans[0].Attributes {
		if a.Key == "gen_ai.tool.name" && len(a.Value.AsString()) > maxToolName+len("…") {
			t.Errorf("gen_ai.tool.name is %d bytes long", len(a.Value.AsString()))
		}
	}
}

func TestRegistrationSpan(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tel := New(nil, tracesOf(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)), "test"))
	t0 := time.Now()
	tel.Registered(hub.Registration{Origin: "https://a.example", URL: "https://a.example/x", Tab: 1, Tools: 3, Start: t0, End: t0.Add(time.Second)})
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != SpanRegistration || spans[0].EndTime.Sub(spans[0].StartTime) != time.Second {
		t.Fatalf("spans %v", names(spans))
	}
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// TestShutdownMakesTheQueuedSpans: spans of calls still queued at Shutdown
// are made and exported before it returns.
func TestShutdownMakesTheQueuedSpans(t *testing.T) {
	exp := &countingExporter{}
	tel := New(nil, tracesOf(sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp)), "test"))
	t0 := time.Now()
	for range 100 {
		tel.CallDone(context.Background(), hub.CallTrace{Tool: "s_t", PageTool: "t", Result: hub.ResultOK, Start: t0, End: t0})
	}
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := exp.n.Load(); n != 100 {
		t.Errorf("%d spans exported, want 100", n)
	}
}

// countingExporter counts the spans exported.
type countingExporter struct{ n atomic.Int64 }

func (e *countingExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.n.Add(int64(len(spans)))
	return nil
}
func (e *countingExporter) Shutdown(context.Context) error { return nil }

// TestDroppedCallsMetric: with metrics and traces on, the calls that got
// no spans (the queue was full) are a counter; with traces off there is
// none.
func TestDroppedCallsMetric(t *testing.T) {
	const name = "webmcp_cdp_trace_calls_dropped_total"
	for _, tc := range []struct {
		traces  bool
		dropped int64
		want    map[string]float64
	}{
		{traces: false, want: map[string]float64{}},
		{traces: true, want: map[string]float64{"": 0}},
		{traces: true, dropped: 3, want: map[string]float64{"": 3}},
	} {
		m := NewMetrics(0)
		var tr *Traces
		if tc.traces {
			tr = tracesOf(sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter())), "test")
			tr.dropped.Add(tc.dropped)
		}
		New(m, tr)
		if got := gather(t, m, name); !maps.Equal(got, tc.want) {
			t.Errorf("traces %v, %d dropped: %s = %v, want %v", tc.traces, tc.dropped, name, got, tc.want)
		}
	}
}
