package mcpserver_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/bench"
	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
)

// BenchmarkCallHTTP is one tools/call of a bench page tool (one tab of the
// bench page's ten tools, a fake browser) through the go-sdk client over
// streamable HTTP on loopback, the path of `bench --rows http` without the
// browser:
//   - 2026-07-28: the client's own choice, served statelessly (one
//     short-lived server session per request, revisions.go);
//   - 2025-11-25: the same client forced to the older revision (a
//     session);
//   - floor-2026-07-28: the same client into the bench's minimal stateless
//     forwarder (bench.ForwardHandler, answering application/json), whose
//     work is all the client's and the transport's.
//
// cpu-ns/op is the CPU time of the whole process (client and server) per
// call, steadier than ns/op on a shared machine.
//
// Profile the stateless path with
//
//	go test ./hub/mcpserver -run '^$' -bench 'CallHTTP/^2026' -cpuprofile cpu.out
func BenchmarkCallHTTP(b *testing.B) {
	logger := slog.New(slog.DiscardHandler)
	h := hub.New(&fakeBrowser{}, hub.Options{Logger: logger})
	bench.AddBenchTab(h, 0)
	srv := mcpserver.New(b.Context(), h, mcpserver.Options{Version: "bench", Logger: logger})
	web, err := srv.ServeHTTP(mcpserver.HTTPOptions{Addr: "127.0.0.1:0"}, make(chan error, 1))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { web.Close() })
	floor := httptest.NewServer(bench.ForwardHandler(func(context.Context) error { return nil }, bench.ForwardHTTPMode{Stateless: true}))
	b.Cleanup(floor.Close)
	page := h.Tools()[0].Name
	for _, bc := range []struct{ name, url, version, tool string }{
		{"2026-07-28", "http://" + web.Addr() + "/mcp", "", page},
		{"2025-11-25", "http://" + web.Addr() + "/mcp", "2025-11-25", page},
		{"floor-2026-07-28", floor.URL + "/mcp", "", "echo_0"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "b", Version: "0"}, nil).Connect(b.Context(),
				&mcp.StreamableClientTransport{Endpoint: bc.url}, &mcp.ClientSessionOptions{ProtocolVersion: bc.version})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { cs.Close() })
			want := bc.version
			if want == "" {
				want = "2026-07-28"
			}
			if v := cs.InitializeResult().ProtocolVersion; v != want {
				b.Fatalf("negotiated %s, want %s", v, want)
			}
			params := &mcp.CallToolParams{Name: bc.tool, Arguments: map[string]any{"text": "x"}}
			b.ReportAllocs()
			cpu0 := processCPU(b)
			for b.Loop() {
				res, err := cs.CallTool(b.Context(), params)
				if err != nil || res.IsError {
					b.Fatalf("%v %+v", err, res)
				}
			}
			// The CPU the process spent (client and server, GC included):
			// on a shared machine a steadier figure than the time per call.
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the CPU time (user and system) this process has spent.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
