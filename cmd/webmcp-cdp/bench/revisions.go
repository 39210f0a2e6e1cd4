package bench

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// revisionRows adds the tools/call rows of issue 26 over streamable HTTP,
// all measured in one loop (Interleaved), so that noise on the machine
// falls on every row alike:
//   - raw CDP calls into the bench page (the floor of the issue 10 ratios);
//   - the go-sdk client into s, webmcp-cdp's `launch --http`, at MCP
//     2026-07-28 (the client's own choice: s.cs);
//   - the same client forced to 2025-11-25 (a session, initialize) into
//     the same server;
//   - the same client into the minimal stateless forwarder
//     (ForwardHTTPMode.Stateless), which answers tools/call as
//     application/json and, in a second process, as an event stream (as
//     the go-sdk server behind webmcp-cdp answers it): the floor of any
//     2026-07-28 server behind that client.
//
// Issue 26's target is the 2026-07-28 row's p50 at most 1.15× the
// stateless floor's (application/json: the least a server can do).
func revisionRows(ctx context.Context, opts Options, s *server, echo, page string, raw func(context.Context) error, add func(what, value string)) error {
	if v := s.cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		return fmt.Errorf("the go-sdk client negotiated %s with webmcp-cdp over HTTP, want 2026-07-28", v)
	}
	old, err := newClient(make(chan struct{}, 1)).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.endpoint},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return fmt.Errorf("connecting a 2025-11-25 client to webmcp-cdp over HTTP: %w", err)
	}
	defer old.Close()
	if v := old.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		return fmt.Errorf("the go-sdk client asked for 2025-11-25 got %s", v)
	}
	type side struct {
		what string // the row's words
		call func(context.Context) error
	}
	sides := []side{
		{"raw Runtime.callFunctionOn into the page", raw},
		{"tools/call over streamable HTTP 2026-07-28, go-sdk client, webmcp-cdp", caller(s.cs, echo)},
		{"tools/call over streamable HTTP 2025-11-25, same client forced, same server", caller(old, echo)},
	}
	for _, mode := range []ForwardHTTPMode{{Stateless: true}, {Stateless: true, SSE: true}} {
		what := "tools/call over streamable HTTP 2026-07-28, same client, minimal stateless forwarder"
		extra := []string{forwardHTTPStatelessFlag}
		if mode.SSE {
			what += ", SSE answers"
			extra = append(extra, forwardHTTPSSEFlag)
		}
		fw, err := startHTTPProcess(ctx, opts.Binary, nil, func(addr string) []string {
			return append([]string{"bench", forwardHTTPFlag, page, forwardHTTPAddrFlag, addr}, extra...)
		})
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		defer fw.close()
		if v := fw.cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			return fmt.Errorf("the go-sdk client negotiated %s with the stateless forwarder, want 2026-07-28", v)
		}
		sides = append(sides, side{what, caller(fw.cs, "echo_0")})
	}
	fs := make([]func(context.Context) error, len(sides))
	for i, sd := range sides {
		fs[i] = sd.call
	}
	if _, err := Interleaved(ctx, warmup, fs...); err != nil {
		return fmt.Errorf("warming up the HTTP revision rows: %w", err)
	}
	ls, err := Interleaved(ctx, opts.Calls, fs...)
	if err != nil {
		return fmt.Errorf("the HTTP revision rows: %w", err)
	}
	for i, sd := range sides {
		add(fmt.Sprintf("%s (%d, interleaved with the %d others)", sd.what, opts.Calls, len(sides)-1), ls[i].summary())
	}
	const rawL, v26, v25, floor, floorSSE = 0, 1, 2, 3, 4
	for _, r := range []struct {
		what string
		a, b int
	}{
		{"ratio 2026-07-28 webmcp-cdp / raw", v26, rawL},
		{"ratio 2025-11-25 webmcp-cdp / raw", v25, rawL},
		{"ratio stateless forwarder / raw", floor, rawL},
		{"ratio 2026-07-28 webmcp-cdp / stateless forwarder (issue 26: p50 ≤ 1.15×)", v26, floor},
		{"ratio 2026-07-28 webmcp-cdp / stateless forwarder, SSE answers", v26, floorSSE},
		{"ratio 2025-11-25 webmcp-cdp / stateless forwarder", v25, floor},
	} {
		add(r.what, ratios(ls[r.a], ls[r.b]))
	}
	return nil
}
