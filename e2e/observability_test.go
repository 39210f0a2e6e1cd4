package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP trace receiver: POST /v1/traces with a
// protobuf ExportTraceServiceRequest, decoded with the official OTLP types.
type otlpReceiver struct {
	url string

	mu      sync.Mutex
	spans   []receivedSpan
	changed chan struct{} // closed and replaced on each export
}

// receivedSpan is a span with its resource's attributes.
type receivedSpan struct {
	resource map[string]string
	span     *tracepb.Span
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{changed: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "POST /v1/traces with application/x-protobuf", http.StatusNotFound)
			return
		}
		var body io.Reader = io.LimitReader(req.Body, 16<<20)
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		var msg collectortrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(b, &msg)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.add(&msg)
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func (r *otlpReceiver) add(msg *collectortrace.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range msg.GetResourceSpans() {
		res := attrMap(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, receivedSpan{resource: res, span: s})
			}
		}
	}
	close(r.changed)
	r.changed = make(chan struct{})
}

// wait returns the spans received once ok accepts them, failing the test
// after d; it wakes on each export.
func (r *otlpReceiver) wait(t *testing.T, d time.Duration, what string, ok func([]receivedSpan) bool) []receivedSpan {
	t.Helper()
	deadline := time.After(d)
	for {
		r.mu.Lock()
		spans, changed := append([]receivedSpan(nil), r.spans...), r.changed
		r.mu.Unlock()
		if ok(spans) {
			return spans
		}
		select {
		case <-changed:
		case <-deadline:
			var names []string
			for _, s := range spans {
				names = append(names, s.span.GetName())
			}
			t.Fatalf("no %s within %s; spans received: %q", what, d, names)
		}
	}
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_IntValue:
			m[kv.GetKey()] = strconv.FormatInt(x.IntValue, 10)
		case *commonpb.AnyValue_BoolValue:
			m[kv.GetKey()] = strconv.FormatBool(x.BoolValue)
		default:
			m[kv.GetKey()] = v.GetStringValue()
		}
	}
	return m
}

// TestObservability: the real Prometheus scrapes a running webmcp-cdp on
// both of its metrics addresses (--metrics, and /metrics of --http behind
// --token) and, after two ok calls and one that fails, its query API gives
// webmcp_cdp_tool_calls_total by result; an OTLP/HTTP receiver gets the span
// tree of a call made under the client's traceparent, and the span of the
// navigation that registered the tools.
func TestObservability(t *testing.T) {
	t.Parallel()
	prom := startPrometheus(t)
	otlp := startOTLPReceiver(t)
	base := serveFixtures(t)
	env := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + otlp.url, "OTEL_BSP_SCHEDULE_DELAY=100", "OTEL_SERVICE_NAME=webmcp-cdp-e2e"}
	endpoint, stderr := startHTTPEnv(t, env, "launch", "--headless", "--http", "127.0.0.1:0", "--token", promToken, "--metrics", "127.0.0.1:0", base+"/shop/")
	m := regexp.MustCompile(`serving Prometheus metrics url=http://(\S+)/metrics`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("webmcp-cdp did not say where --metrics serves:\n%s", stderr.String())
	}
	metricsAddr, httpAddr := m[1], strings.TrimSuffix(strings.TrimPrefix(endpoint, "http://"), "/mcp")

	// /metrics of --http is behind the token; --metrics's own listener is not.
	if code, _ := do(t, http.MethodGet, "http://"+httpAddr+"/metrics", nil, ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics of --http without the token: %d, want 401", code)
	}
	if code, body := do(t, http.MethodGet, "http://"+httpAddr+"/metrics", http.Header{"Authorization": {"Bearer " + promToken}}, ""); code != http.StatusOK || !strings.Contains(body, "webmcp_cdp_tools{") {
		t.Errorf("/metrics of --http with the token: %d\n%.400s", code, body)
	}
	prom.scrape(t, promJobMetrics, metricsAddr)
	prom.scrape(t, promJobHTTP, httpAddr)

	c := httpClient(t, endpoint, promToken)
	tools := c.waitFor("the shop's tools", hasSuffix("checkout", 1))
	search, view, checkout := toolWithSuffix(tools, "search_products")[0], toolWithSuffix(tools, "view_cart")[0], toolWithSuffix(tools, "checkout")[0]
	traceID, parentID := randomHex(t, 16), randomHex(t, 8)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: search, Arguments: map[string]any{"text": "tea"},
		Meta: mcp.Meta{"traceparent": "00-" + traceID + "-" + parentID + "-01", "tracestate": "e2e=1"}})
	if err != nil || res.IsError {
		t.Fatalf("%s under a traceparent: %v %v", search, err, res)
	}
	c.callOK(view, map[string]any{})
	if res := c.call(checkout, map[string]any{}); !res.IsError {
		t.Fatalf("checkout of an empty cart did not fail: %s", text(res))
	}

	// Prometheus's query API: 2 ok and 1 error, on both jobs.
	for _, job := range []string{promJobMetrics, promJobHTTP} {
		q := `sum by (result) (webmcp_cdp_tool_calls_total{job="` + job + `"})`
		got, err := prom.waitQuery(q, 30*time.Second, func(s []promSample) bool {
			by := byLabel(s, "result")
			return by["ok"] == 2 && by["error"] == 1
		})
		if err != nil {
			t.Errorf("%v; last answer %v\nprometheus log:\n%s", err, got, prom.logs.String())
			continue
		}
		if by := byLabel(got, "result"); by["timeout"]+by["refused"]+by["cancelled"] != 0 {
			t.Errorf("%s: %v, want only ok and error", job, by)
		}
	}
	if got, err := prom.query(`webmcp_cdp_tools{job="` + promJobMetrics + `",state="live"}`); err != nil || len(got) != 1 || sampleValue(got[0]) != 5 {
		t.Errorf("live tools through Prometheus: %v %v, want 5", got, err)
	}

	// The call's span tree under the client's span.
	root := "tools/call " + search
	spans := otlp.wait(t, 20*time.Second, "span tree of "+root, func(spans []receivedSpan) bool {
		var top []byte
		for _, s := range spans {
			if s.span.GetName() == root && hex.EncodeToString(s.span.GetTraceId()) == traceID {
				top = s.span.GetSpanId()
			}
		}
		kids, inTrace := 0, 0
		for _, s := range spans {
			if top != nil && bytes.Equal(s.span.GetParentSpanId(), top) {
				kids++
			}
			if hex.EncodeToString(s.span.GetTraceId()) == traceID {
				inTrace++
			}
		}
		return kids == 2 && inTrace == 4 // and the page's, under the round trip
	})
	var call receivedSpan
	children := map[string]*tracepb.Span{}
	for _, s := range spans {
		if s.span.GetName() == root && hex.EncodeToString(s.span.GetTraceId()) == traceID {
			call = s
		}
	}
	for _, s := range spans {
		if bytes.Equal(s.span.GetParentSpanId(), call.span.GetSpanId()) {
			children[s.span.GetName()] = s.span
		}
	}
	if got := hex.EncodeToString(call.span.GetParentSpanId()); got != parentID {
		t.Errorf("the call's parent span %s, want the client's %s", got, parentID)
	}
	if call.span.GetKind() != tracepb.Span_SPAN_KIND_SERVER || call.span.GetTraceState() != "e2e=1" {
		t.Errorf("the call's span: kind %v, tracestate %q", call.span.GetKind(), call.span.GetTraceState())
	}
	attrs := attrMap(call.span.GetAttributes())
	for k, v := range map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": search, "gen_ai.operation.name": "execute_tool",
		"webmcp_cdp.site": base, "webmcp_cdp.tab": "1", "webmcp_cdp.page_tool": "search_products", "webmcp_cdp.result": "ok"} {
		if attrs[k] != v {
			t.Errorf("span attribute %s = %q, want %q", k, attrs[k], v)
		}
	}
	if call.resource["service.name"] != "webmcp-cdp-e2e" {
		t.Errorf("service.name %q, want OTEL_SERVICE_NAME's", call.resource["service.name"])
	}
	for _, name := range []string{"validate arguments", "cdp round trip"} {
		s := children[name]
		if s == nil {
			t.Errorf("no %q span under the call (children: %v)", name, children)
			continue
		}
		if s.GetStartTimeUnixNano() < call.span.GetStartTimeUnixNano() || s.GetEndTimeUnixNano() > call.span.GetEndTimeUnixNano() {
			t.Errorf("%q is not within the call's time", name)
		}
	}

	// The page's execution, under the round trip, within it.
	rt := children["cdp round trip"]
	var page *tracepb.Span
	for _, s := range spans {
		if rt != nil && bytes.Equal(s.span.GetParentSpanId(), rt.GetSpanId()) && s.span.GetName() == "page execute" {
			page = s.span
		}
	}
	if page == nil {
		t.Errorf("no \"page execute\" span under the round trip")
	} else if page.GetStartTimeUnixNano() < rt.GetStartTimeUnixNano() || page.GetEndTimeUnixNano() > rt.GetEndTimeUnixNano() {
		t.Errorf("the page's span is not within the round trip")
	}

	// The failed call's span is an error; the navigation's span is there.
	otlp.wait(t, 20*time.Second, "the failed checkout's span and the navigation's", func(spans []receivedSpan) bool {
		failed, nav := false, false
		for _, s := range spans {
			a := attrMap(s.span.GetAttributes())
			failed = failed || s.span.GetName() == "tools/call "+checkout && s.span.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR && a["error.type"] == "tool_error"
			nav = nav || s.span.GetName() == "navigation registers tools" && a["url.full"] == base+"/shop/" && a["webmcp_cdp.tools"] == "5"
		}
		return failed && nav
	})
}

// byLabel sums samples by one label's value.
func byLabel(samples []promSample, label string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range samples {
		out[s.Metric[label]] += sampleValue(s)
	}
	return out
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// TestObservabilityStdio: over stdio, a call under the client's traceparent
// gets its span tree too (hub/mcpserver's TestTraceContextFromMeta covers
// both stdio paths, the fast one and the SDK's), and --metrics serves its
// count without --http.
func TestObservabilityStdio(t *testing.T) {
	t.Parallel()
	otlp := startOTLPReceiver(t)
	base := serveFixtures(t)
	cmd := exec.Command(binary, "launch", "--headless", "--metrics", "127.0.0.1:0", base+"/shop/")
	cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT="+otlp.url, "OTEL_BSP_SCHEDULE_DELAY=100")
	c := startCmd(t, nil, "", cmd)
	tools := c.waitFor("the shop's tools", hasSuffix("search_products", 1))
	checkCallSpans(t, otlp, c, toolWithSuffix(tools, "search_products")[0], map[string]any{"text": "mug"})
	if !c.stderr.waitFor("serving Prometheus metrics", 5*time.Second) {
		t.Fatalf("no --metrics listener:\n%s", c.stderr.String())
	}
	m := regexp.MustCompile(`serving Prometheus metrics url=(\S+)`).FindStringSubmatch(c.stderr.String())
	_, body := do(t, http.MethodGet, m[1], nil, "")
	if want := `webmcp_cdp_tool_calls_total{result="ok",site="` + base + `"} 1`; !strings.Contains(body, want) {
		t.Errorf("--metrics lacks %s:\n%.2000s", want, body)
	}
}

// TestObservabilityPageExecute: the calls of an MCP-B page server's tool and
// of a tool of Chromium's native WebMCP get a "page execute" span under the
// round trip too, as the polyfill's do (the page script times the page
// server's tools/call; Go times the native execution by CDP's WebMCP
// events).
func TestObservabilityPageExecute(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		page  func(t *testing.T) string
		args  []string
		tool  string
		input map[string]any
	}{
		// A page server's tool runs in the background (handleCall, to relay
		// the server's questions): its call's span is under the client's
		// all the same.
		{"mcp-b", func(t *testing.T) string { return serveMCPB(t, mcpbShop, nil) + "/index.html" },
			[]string{"--state-dir", t.TempDir()}, "add_to_cart", map[string]any{"sku": "A1", "qty": 1}},
		{"native", func(t *testing.T) string { return serveFixtures(t) + "/current/" },
			[]string{"--backend", "native", "--chrome-arg=--enable-features=WebMCP"}, "echo", map[string]any{"text": "hi"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			otlp := startOTLPReceiver(t)
			cmd := exec.Command(binary, append(append([]string{"launch", "--headless"}, tc.args...), tc.page(t))...)
			cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT="+otlp.url, "OTEL_BSP_SCHEDULE_DELAY=100")
			c := startCmd(t, nil, "", cmd)
			tools := c.waitFor("the page's tools", hasSuffix(tc.tool, 1))
			checkCallSpans(t, otlp, c, toolWithSuffix(tools, tc.tool)[0], tc.input)
		})
	}
}

// checkCallSpans calls tool under a traceparent of its own and checks the
// call's span tree: the call under the client's span, validation and the
// round trip under the call, and the page's execution under the round
// trip, within it.
func checkCallSpans(t *testing.T, otlp *otlpReceiver, c *client, tool string, args map[string]any) {
	t.Helper()
	traceID, parentID := randomHex(t, 16), randomHex(t, 8)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args,
		Meta: mcp.Meta{"traceparent": "00-" + traceID + "-" + parentID + "-01"}})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %v", tool, err, res)
	}
	spans := otlp.wait(t, 20*time.Second, "the call's spans", func(spans []receivedSpan) bool {
		n := 0
		for _, s := range spans {
			if hex.EncodeToString(s.span.GetTraceId()) == traceID {
				n++
			}
		}
		return n == 4
	})
	byName := map[string]*tracepb.Span{}
	for _, s := range spans {
		if hex.EncodeToString(s.span.GetTraceId()) == traceID {
			byName[s.span.GetName()] = s.span
		}
	}
	call, rt, page := byName["tools/call "+tool], byName["cdp round trip"], byName["page execute"]
	switch {
	case call == nil || hex.EncodeToString(call.GetParentSpanId()) != parentID:
		t.Errorf("no call span under the client's %s: %v", parentID, byName)
	case byName["validate arguments"] == nil || !bytes.Equal(byName["validate arguments"].GetParentSpanId(), call.GetSpanId()):
		t.Errorf("no validation span under the call")
	case rt == nil || !bytes.Equal(rt.GetParentSpanId(), call.GetSpanId()):
		t.Errorf("no round trip span under the call")
	case page == nil || !bytes.Equal(page.GetParentSpanId(), rt.GetSpanId()):
		t.Errorf("no page span under the round trip")
	case page.GetStartTimeUnixNano() < rt.GetStartTimeUnixNano() || page.GetEndTimeUnixNano() > rt.GetEndTimeUnixNano():
		t.Errorf("the page's span is not within the round trip")
	}
}
