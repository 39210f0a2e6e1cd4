package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkNodeClient is the comparison from outside that issue 10 asks
// for: one Node MCP client (the TypeScript SDK, pinned in e2e/js), in one
// loop, calls the bench page's echo tool through `webmcp-cdp attach` over
// stdio and makes the raw Runtime.callFunctionOn of cmd/webmcp-cdp/bench over the
// browser's own WebSocket, into the same page of the same browser,
// and calls the same tool of a minimal forwarder (e2e/js/forwarder.mjs: a
// hand-written MCP server making one raw call per tools/call), rotating
// which goes first (e2e/js/compare-client.mjs). It reports the p50s and
// the ratios to raw; the forwarder's is the floor of any server in between.
// The ratios are reported, never asserted.
//
//	go test ./e2e -run '^$' -bench NodeClient -benchtime 3x
func BenchmarkNodeClient(b *testing.B) {
	dir := npmDir(b)
	base := serveFixtures(b)
	page := base + "/bench/"
	browser := startChrome(b, "about:blank")
	var raw, stdio, fwd, ratios, fwdRatios []float64
	for b.Loop() {
		cmd := exec.Command("node", "--experimental-websocket", "--no-warnings",
			filepath.Join(dir, "compare-client.mjs"), binary, browser, page, "200")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			b.Fatalf("compare-client.mjs: %v\n%s%s", err, out, stderr)
		}
		var r struct{ RawP50, StdioP50, ForwarderP50, RatioP50, ForwarderRatioP50 float64 }
		line := strings.TrimSpace(string(out))
		if err := json.Unmarshal([]byte(line[strings.LastIndexByte(line, '\n')+1:]), &r); err != nil || r.RawP50 <= 0 || r.StdioP50 <= 0 || r.ForwarderP50 <= 0 {
			b.Fatalf("compare-client.mjs printed %q, want its JSON line with the three p50s: %v", out, err)
		}
		raw, stdio, fwd = append(raw, r.RawP50), append(stdio, r.StdioP50), append(fwd, r.ForwarderP50)
		ratios, fwdRatios = append(ratios, r.RatioP50), append(fwdRatios, r.ForwarderRatioP50)
	}
	b.ReportMetric(median(raw), "ms/p50-raw-node")
	b.ReportMetric(median(stdio), "ms/p50-stdio-node")
	b.ReportMetric(median(fwd), "ms/p50-forwarder-node")
	b.ReportMetric(median(ratios), "x-ratio")
	b.ReportMetric(median(fwdRatios), "x-forwarder-ratio")
}

// median of xs (xs is not empty: b.Loop ran at least once).
func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}
