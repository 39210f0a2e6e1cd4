package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// pageServerPage holds two echo tools in one page: wm_echo, registered
// with document.modelContext (WebMCP), and ps_echo, served by an MCP-B page
// server on the postMessage wire of @mcp-b/transports (hand-written here,
// so the bench needs no npm packages; the e2e tests run the real ones).
// Both return their text unchanged, so a call measures the round trip.
const pageServerPage = `<!doctype html>
<meta charset="utf-8">
<title>webmcp-cdp bench: MCP-B page server</title>
<script>
'use strict';
document.modelContext?.registerTool({
  name: 'wm_echo', description: 'Return the text unchanged (WebMCP).',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: async ({ text }) => text,
});
const CH = 'mcp-default';
const post = (payload) => window.postMessage({ channel: CH, type: 'mcp', direction: 'server-to-client', payload }, '*');
const tools = [{ name: 'ps_echo', description: 'Return the text unchanged (MCP-B page server).',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }];
window.addEventListener('message', (ev) => {
  const d = ev.data;
  if (ev.source !== window || !d || d.type !== 'mcp' || d.direction !== 'client-to-server' || d.channel !== CH) return;
  const m = d.payload;
  if (m === 'mcp-check-ready') { post('mcp-server-ready'); return; }
  if (!m || m.id === undefined) return;
  const reply = (result) => post({ jsonrpc: '2.0', id: m.id, result });
  if (m.method === 'initialize') {
    reply({ protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'bench', version: '1' } });
  } else if (m.method === 'tools/list') {
    reply({ tools });
  } else if (m.method === 'tools/call') {
    reply({ content: [{ type: 'text', text: String(m.params.arguments.text) }] });
  } else {
    post({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no such method' } });
  }
});
post('mcp-server-ready');
</script>`

// pageServerRows adds the rows of a call through an MCP-B page server next
// to a WebMCP tool call in the same page, measured in one loop over stdio.
func pageServerRows(ctx context.Context, opts Options, env []string, add func(what, value string)) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("serving the page-server bench page: %w", err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(pageServerPage))
	})}
	go srv.Serve(ln)
	defer srv.Close()
	s, err := startStdio(ctx, opts.Binary, "http://"+ln.Addr().String()+"/", env)
	if err != nil {
		return err
	}
	defer s.close()
	ps, err := waitTool(ctx, s.cs, "ps_echo", 1)
	if err != nil {
		return err
	}
	wm, err := waitTool(ctx, s.cs, "wm_echo", 1)
	if err != nil {
		return err
	}
	viaPS, viaWM := caller(s.cs, ps), caller(s.cs, wm)
	if _, _, err := Paired(ctx, warmup, viaPS, viaWM); err != nil {
		return fmt.Errorf("warming up the page-server calls: %w", err)
	}
	psL, wmL, err := Paired(ctx, opts.Calls, viaPS, viaWM)
	if err != nil {
		return fmt.Errorf("page-server latency: %w", err)
	}
	add(fmt.Sprintf("tools/call over stdio of a WebMCP tool (%d, interleaved with the page server's)", opts.Calls), wmL.summary())
	add(fmt.Sprintf("tools/call over stdio of an MCP-B page server's tool in the same page (%d)", opts.Calls), psL.summary())
	add("ratio page server / WebMCP tools/call", ratios(psL, wmL))
	return nil
}
