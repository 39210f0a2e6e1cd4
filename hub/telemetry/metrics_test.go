package telemetry

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// gather returns the samples of family name, by their labels rendered as
// "k=v,k=v" in the registry's order.
func gather(t *testing.T, m *Metrics, name string) map[string]float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			var labels []string
			for _, l := range s.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			out[strings.Join(labels, ",")] = value(s)
		}
	}
	return out
}

func value(s *dto.Metric) float64 {
	switch {
	case s.Counter != nil:
		return s.Counter.GetValue()
	case s.Gauge != nil:
		return s.Gauge.GetValue()
	case s.Histogram != nil:
		return float64(s.Histogram.GetSampleCount())
	}
	return -1
}

func call(origin string, r hub.CallResult) hub.CallTrace {
	start := time.Now()
	return hub.CallTrace{Tool: "t", Origin: origin, Result: r, Start: start, End: start.Add(3 * time.Millisecond)}
}

func TestCallsByResult(t *testing.T) {
	m := NewMetrics(0)
	tel := New(m, nil)
	for _, r := range []hub.CallResult{hub.ResultOK, hub.ResultOK, hub.ResultError, hub.ResultTimeout, hub.ResultRefused, hub.ResultCancelled} {
		tel.CallDone(context.Background(), call("https://a.example", r))
	}
	tel.CallDone(context.Background(), call("", hub.ResultRefused)) // an unknown tool
	got := gather(t, m, "webmcp_cdp_tool_calls_total")
	want := map[string]float64{
		"result=ok,site=https://a.example": 2, "result=error,site=https://a.example": 1, "result=timeout,site=https://a.example": 1,
		"result=refused,site=https://a.example": 1, "result=cancelled,site=https://a.example": 1,
		"result=refused,site=none": 1,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	hist := gather(t, m, "webmcp_cdp_tool_call_duration_seconds")
	if hist["site=https://a.example"] != 6 {
		t.Errorf("duration samples %v, want 6 for a.example", hist)
	}
}

func TestSitesBeyondTheCapFoldIntoOther(t *testing.T) {
	m := NewMetrics(3)
	tel := New(m, nil)
	for i := range 20 {
		tel.CallDone(context.Background(), call(fmt.Sprintf("https://s%d.example", i), hub.ResultOK))
	}
	tel.CallDone(context.Background(), call("https://s0.example", hub.ResultOK))
	got := gather(t, m, "webmcp_cdp_tool_calls_total")
	sites := map[string]bool{}
	for k := range got {
		sites[k[strings.Index(k, "site="):]] = true
	}
	if len(sites) != 4 {
		t.Errorf("series %v: want 3 sites and other", got)
	}
	if got["result=ok,site=https://s0.example"] != 2 || got["result=ok,site=other"] != 17 {
		t.Errorf("s0 %v (want 2), other %v (want 17)", got["result=ok,site=https://s0.example"], got["result=ok,site=other"])
	}
}

func TestSiteLabel(t *testing.T) {
	long := "https://" + strings.Repeat("é", 150) + ".example"
	odd := "https://x" + strings.Repeat("é", 150)
	tests := []struct{ in, want string }{
		{"https://a.example", "https://a.example"},
		{long, long[:200] + "…"}, // "https://" is 8 bytes, é is 2: byte 200 starts a rune
		{odd, odd[:199] + "…"},   // byte 200 is inside an é: cut before it
	}
	for _, tt := range tests {
		if got := SiteLabel(tt.in); got != tt.want {
			t.Errorf("SiteLabel(%.30q…) = %.30q…, want %.30q…", tt.in, got, tt.want)
		}
	}
}

func TestRefusalReasons(t *testing.T) {
	m := NewMetrics(0)
	tel := New(m, nil)
	tel.Refused(core.ReasonRate)
	tel.Refused(core.ReasonRate)
	tel.Refused(core.Reason("made-up"))
	got := gather(t, m, "webmcp_cdp_registrations_refused_total")
	if got["reason=rate"] != 2 || got["reason=other"] != 1 || got["reason=name"] != 0 || len(got) != len(refusalReasons)+1 {
		t.Errorf("refusals %v", got)
	}
}

func TestGaugesAreReadAtScrape(t *testing.T) {
	m := NewMetrics(0)
	sessions := 1
	m.SetGauges(Gauges{
		Counts:   func() hub.Counts { return hub.Counts{LiveTools: 4, CachedTools: 2, Tabs: 3} },
		Browsers: func() map[string]int { return map[string]int{"up": 2, "connecting": 1} },
		Sessions: func() int { return sessions },
		Spaces:   func() int { return 7 },
	})
	sessions = 5
	checks := []struct {
		name string
		want map[string]float64
	}{
		{"webmcp_cdp_tools", map[string]float64{"state=live": 4, "state=cached": 2}},
		{"webmcp_cdp_tabs", map[string]float64{"": 3}},
		{"webmcp_cdp_browsers", map[string]float64{"state=up": 2, "state=connecting": 1, "state=stopped": 0}},
		{"webmcp_cdp_mcp_sessions", map[string]float64{"": 5}},
		{"webmcp_cdp_spaces", map[string]float64{"": 7}},
	}
	for _, c := range checks {
		got := gather(t, m, c.name)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestHandlerServesRuntimeAndProcess(t *testing.T) {
	m := NewMetrics(0)
	New(m, nil).CallDone(context.Background(), call("https://a.example", hub.ResultOK))
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{`webmcp_cdp_tool_calls_total{result="ok",site="https://a.example"} 1`, "go_goroutines ", "process_resident_memory_bytes "} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestCountingAllocatesNothing: once a site has its instruments, counting
// a call makes no allocation.
func TestCountingAllocatesNothing(t *testing.T) {
	tel := New(NewMetrics(0), nil)
	c := call("https://a.example", hub.ResultOK)
	ctx := context.Background()
	tel.CallDone(ctx, c)
	if n := testing.AllocsPerRun(100, func() { tel.CallDone(ctx, c) }); n != 0 {
		t.Errorf("counting a call makes %v allocations, want 0", n)
	}
}
