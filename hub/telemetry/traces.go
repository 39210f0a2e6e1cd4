package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
)

// The attributes of the spans. mcp.* and gen_ai.* follow OpenTelemetry's
// semantic conventions for MCP and for tool execution (status:
// development); webmcp_cdp.* are this server's own.
const (
	attrMCPMethod     = attribute.Key("mcp.method.name")
	attrToolName      = attribute.Key("gen_ai.tool.name")
	attrOperation     = attribute.Key("gen_ai.operation.name")
	attrErrorType     = attribute.Key("error.type")
	attrSite          = attribute.Key("webmcp_cdp.site")
	attrTab           = attribute.Key("webmcp_cdp.tab")
	attrBrowser       = attribute.Key("webmcp_cdp.browser")
	attrSpace         = attribute.Key("webmcp_cdp.space")
	attrResult        = attribute.Key("webmcp_cdp.result")
	attrPageTool      = attribute.Key("webmcp_cdp.page_tool")
	attrCached        = attribute.Key("webmcp_cdp.cached")
	attrURL           = attribute.Key("url.full")
	attrTools         = attribute.Key("webmcp_cdp.tools")
	methodToolsCall   = "tools/call"
	operationExecTool = "execute_tool"
)

// Span names of the steps of a call and of a registration.
const (
	SpanValidate     = "validate arguments"
	SpanRoundTrip    = "cdp round trip"
	SpanPage         = "page execute"
	SpanRegistration = "navigation registers tools"
)

// tracerName names the instrumentation scope.
const tracerName = "github.com/webmcp-cdp/webmcp-cdp/hub/telemetry"

// Traces makes the spans and exports them over OTLP.
type Traces struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	prop     propagation.TraceContext
	// calls are the finished calls whose spans are yet to be made, by
	// one goroutine (run), off the call path; a call that finds it full
	// is dropped (counted in dropped). done is closed when run ends.
	calls   chan queuedCall
	dropped atomic.Int64
	done    chan struct{}
	stop    sync.Once
}

// queuedCall is a finished call waiting for its spans; a flush asks run to
// close it once the calls before it have their spans.
type queuedCall struct {
	parent trace.SpanContext
	c      hub.CallTrace
	space  string
	flush  chan struct{}
}

// maxQueuedCalls bounds the calls waiting for their spans.
const maxQueuedCalls = 4096

// TracesEnabled says whether the environment asks for traces: an OTLP
// endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), or OTEL_TRACES_EXPORTER names an
// exporter other than none, and OTEL_SDK_DISABLED is not true.
func TracesEnabled(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	if e := getenv("OTEL_TRACES_EXPORTER"); e != "" {
		return e != "none"
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// NewTraces sets up the OTel SDK from the environment: the exporter
// (OTEL_TRACES_EXPORTER: otlp, the default, or none), its protocol
// (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL:
// http/protobuf, the default, or grpc), its endpoint, headers, timeout and
// TLS (OTEL_EXPORTER_OTLP_*, read by the exporter), the sampler
// (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG; default parentbased_always_on),
// the batch processor (OTEL_BSP_*) and the resource (OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES; service.name defaults to webmcp-cdp). It
// returns nil when TracesEnabled is false.
func NewTraces(ctx context.Context, getenv func(string) string, version string) (*Traces, error) {
	if !TracesEnabled(getenv) {
		return nil, nil
	}
	if e := getenv("OTEL_TRACES_EXPORTER"); e != "" && e != "otlp" {
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: webmcp-cdp exports traces over OTLP only; set it to otlp, or none to turn traces off", e)
	}
	exp, err := newExporter(ctx, getenv)
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "webmcp-cdp"), attribute.String("service.version", version)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("the OpenTelemetry resource (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME): %w", err)
	}
	return tracesOf(sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), version), nil
}

// tracesOf makes the spans on p.
func tracesOf(p *sdktrace.TracerProvider, version string) *Traces {
	t := &Traces{provider: p, tracer: p.Tracer(tracerName, trace.WithInstrumentationVersion(version)),
		calls: make(chan queuedCall, maxQueuedCalls), done: make(chan struct{})}
	go t.run()
	return t
}

// run makes the spans of the queued calls until Shutdown.
func (t *Traces) run() {
	defer close(t.done)
	for q := range t.calls {
		if q.flush != nil {
			close(q.flush)
			continue
		}
		ctx := context.Background()
		if q.parent.IsValid() {
			ctx = trace.ContextWithRemoteSpanContext(ctx, q.parent)
		}
		t.call(ctx, &q.c, q.space)
	}
}

// queue hands a finished call to run; the call path pays a channel send.
func (t *Traces) queue(ctx context.Context, c hub.CallTrace, space string) {
	select {
	case t.calls <- queuedCall{parent: trace.SpanContextFromContext(ctx), c: c, space: space}:
	default:
		t.dropped.Add(1)
	}
}

// flush waits until the calls queued before it have their spans.
func (t *Traces) flush() {
	f := make(chan struct{})
	t.calls <- queuedCall{flush: f}
	<-f
}

// newExporter makes the OTLP exporter of the protocol the environment asks
// for; the exporter reads the rest of OTEL_EXPORTER_OTLP_* itself.
func newExporter(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, error) {
	proto := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch proto {
	case "", "http/protobuf":
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("the OTLP/HTTP trace exporter (OTEL_EXPORTER_OTLP_*): %w", err)
		}
		return exp, nil
	case "grpc":
		return newGRPCExporter(ctx)
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: webmcp-cdp exports traces over http/protobuf (the default) or grpc", proto)
	}
}

// Shutdown exports the spans still buffered and stops the exporter, within
// ctx.
func (t *Traces) Shutdown(ctx context.Context) error {
	t.stop.Do(func() { close(t.calls) })
	select {
	case <-t.done:
	case <-ctx.Done():
	}
	if n := t.dropped.Load(); n > 0 {
		otel.Handle(fmt.Errorf("%d calls had no spans: more than %d waited for them at once", n, maxQueuedCalls))
	}
	if err := t.provider.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("exporting the last traces: %w", err)
	}
	return nil
}

// TraceContext returns ctx with the client's span (a W3C traceparent and
// tracestate) as the remote parent of the call's span; a value that does
// not parse leaves ctx as it is.
func (t *Traces) TraceContext(ctx context.Context, traceparent, tracestate string) context.Context {
	return t.prop.Extract(ctx, carrier{traceparent: traceparent, tracestate: tracestate})
}

// carrier hands the two values to the propagator without a map.
type carrier struct{ traceparent, tracestate string }

func (c carrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.traceparent
	case "tracestate":
		return c.tracestate
	}
	return ""
}
func (c carrier) Set(string, string) {}
func (c carrier) Keys() []string     { return []string{"traceparent", "tracestate"} }

// call makes the spans of a finished call: "tools/call TOOL" (kind server,
// under the client's span when it sent one) with a child for the argument
// check and one for the browser's round trip; space is the id of the
// person's space the call was made in ("": none).
func (t *Traces) call(ctx context.Context, c *hub.CallTrace, space string) {
	attrs := []attribute.KeyValue{
		attrMCPMethod.String(methodToolsCall),
		attrOperation.String(operationExecTool),
		attrToolName.String(cut(c.Tool, maxToolName)),
		attrResult.String(string(c.Result)),
	}
	if c.Origin != "" {
		attrs = append(attrs, attrSite.String(cut(c.Origin, maxURL)))
	}
	if c.PageTool != "" {
		attrs = append(attrs, attrPageTool.String(cut(c.PageTool, maxToolName)))
	}
	if c.Tab != 0 {
		attrs = append(attrs, attrTab.Int(c.Tab))
	}
	if c.Browser != "" {
		attrs = append(attrs, attrBrowser.String(c.Browser))
	}
	if space != "" {
		attrs = append(attrs, attrSpace.String(space))
	}
	if c.Cached {
		attrs = append(attrs, attrCached.Bool(true))
	}
	if c.Result != hub.ResultOK {
		attrs = append(attrs, attrErrorType.String(errorType(c.Result)))
	}
	// The tool in the span's name only when it is one the hub knows: a
	// client's made-up names would make as many span names.
	name := methodToolsCall
	if c.PageTool != "" {
		name += " " + c.Tool
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithTimestamp(c.Start),
		trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	if !c.ValidateStart.IsZero() {
		_, s := t.tracer.Start(ctx, SpanValidate, trace.WithTimestamp(c.ValidateStart))
		s.End(trace.WithTimestamp(c.ValidateEnd))
	}
	if !c.InvokeStart.IsZero() {
		rtCtx, s := t.tracer.Start(ctx, SpanRoundTrip, trace.WithTimestamp(c.InvokeStart), trace.WithSpanKind(trace.SpanKindClient))
		if rt := c.InvokeEnd.Sub(c.InvokeStart); c.PageTimed && c.PageTook <= rt {
			// The page's clock is not ours (nor, for a native document,
			// is the arrival of CDP's events the call's start): its span
			// is centred in the round trip, whose rest is the way there
			// and back.
			start := c.InvokeStart.Add((rt - c.PageTook) / 2)
			_, p := t.tracer.Start(rtCtx, SpanPage, trace.WithTimestamp(start))
			p.End(trace.WithTimestamp(start.Add(c.PageTook)))
		}
		s.End(trace.WithTimestamp(c.InvokeEnd))
	}
	if c.Result != hub.ResultOK {
		span.SetStatus(codes.Error, c.Error)
	}
	span.End(trace.WithTimestamp(c.End))
}

// Bounds of the strings a span takes from clients and pages.
const (
	maxToolName = 256
	maxURL      = 2048
)

// cut returns s cut to at most n bytes at a rune boundary, marked with "…"
// when cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// errorType is the error.type of a call that did not end ok: tool_error
// (MCP's convention for a result with isError) or the result.
func errorType(r hub.CallResult) string {
	if r == hub.ResultError {
		return "tool_error"
	}
	return string(r)
}

// registration makes the span of a navigation that registered tools.
func (t *Traces) registration(r hub.Registration) {
	attrs := []attribute.KeyValue{attrSite.String(r.Origin), attrURL.String(cut(r.URL, maxURL)), attrTab.Int(r.Tab), attrTools.Int(r.Tools)}
	if r.Browser != "" {
		attrs = append(attrs, attrBrowser.String(r.Browser))
	}
	_, span := t.tracer.Start(context.Background(), SpanRegistration, trace.WithTimestamp(r.Start), trace.WithAttributes(attrs...))
	span.End(trace.WithTimestamp(r.End))
}
