package e2e

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/bench"
)

// The benchmarks report milliseconds as custom metrics; run them with
//
//	go test ./e2e -run '^$' -bench . -benchtime 3x
//
// They drive the same real parts as the tests: the binary over stdio, the
// go-sdk client, Chromium.

// BenchmarkLaunchToTools: from starting `webmcp-cdp launch URL` to the first
// tools/list that holds the demo's five tools.
func BenchmarkLaunchToTools(b *testing.B) {
	base := serveFixtures(b)
	var total time.Duration
	for b.Loop() {
		t0 := time.Now()
		c := start(b, "launch", "--headless", base+"/notes/")
		for len(toolWithSuffix(c.tools(), "get_stats")) == 0 || len(toolWithSuffix(c.tools(), "add_note")) == 0 {
			// Poll interval, the measure's resolution: a list_changed sent
			// before the new session's subscriptions/listen is in place
			// never comes.
			time.Sleep(2 * time.Millisecond)
		}
		total += time.Since(t0)
		c.cs.Close()
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/launch-to-tools")
}

// BenchmarkNavigationToTools: from asking for a reload to the client's
// tools/list holding the page's tools again (the tools are dropped on
// navigation, so this is navigation start -> tools seen by the client).
func BenchmarkNavigationToTools(b *testing.B) {
	base := serveFixtures(b)
	c := start(b, "launch", "--headless", base+"/notes/")
	c.waitFor("tools", hasSuffix("get_stats", 1))
	var samples []time.Duration
	for b.Loop() {
		c.drainChanges()
		t0 := time.Now()
		c.callOK("webmcp_reload_tab", map[string]any{"tab": 1})
		c.waitChange("reload")
		for len(toolWithSuffix(c.tools(), "get_stats")) == 0 {
			c.waitChange("the reloaded page's tools")
		}
		samples = append(samples, time.Since(t0))
	}
	b.ReportMetric(ms(percentile(samples, 50)), "ms/p50-nav-to-tools")
}

// BenchmarkCallOverhead measures, in one loop, 200 tools/call over stdio
// into a page and 200 raw Runtime.callFunctionOn round trips into a page of
// a browser driven directly, alternating which goes first (bench.Paired),
// and reports both p50s and their ratio. The ratio is reported, never
// asserted.
func BenchmarkCallOverhead(b *testing.B) {
	base := serveFixtures(b)
	c := start(b, "launch", "--headless", base+"/current/")
	tools := c.waitFor("tools", hasSuffix("echo", 1))
	echo := toolWithSuffix(tools, "echo")[0]
	raw, closeRaw, _, err := bench.RawCaller(context.Background(), base+"/current/")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(closeRaw)
	viaMCP := func(context.Context) error {
		c.callOK(echo, map[string]any{"text": "x"})
		return nil
	}
	var mcpL, rawL bench.Latencies
	for b.Loop() {
		m, r, err := bench.Paired(context.Background(), 200, viaMCP, raw)
		if err != nil {
			b.Fatal(err)
		}
		mcpL, rawL = append(mcpL, m...), append(rawL, r...)
	}
	p50m, p50r := mcpL.Percentile(50), rawL.Percentile(50)
	b.ReportMetric(ms(p50m), "ms/p50-tools-call-stdio")
	b.ReportMetric(ms(mcpL.Percentile(99)), "ms/p99-tools-call-stdio")
	b.ReportMetric(ms(p50r), "ms/p50-raw-callFunctionOn")
	b.ReportMetric(float64(p50m)/float64(p50r), "x-ratio")
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
