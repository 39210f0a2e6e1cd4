package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/bench"
	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// The benchmarks measure the MCP edge in process:
//
//	go test ./hub/mcpserver -run '^$' -bench . -benchmem

// lineClient speaks JSON-RPC lines to a server over pipes and does not
// decode the answers beyond finding a cursor: what it measures is the
// server's work (decoding the request, answering it, encoding the answer).
type lineClient struct {
	tb  testing.TB
	w   io.Writer
	r   *bufio.Reader
	seq int
}

func newLineClient(tb testing.TB, srv *mcpserver.Server) *lineClient {
	tb.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := srv.MCP().Connect(ctx, &mcpserver.StdioTransport{In: inR, Out: outW, Server: srv}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cancel(); inW.Close(); outR.Close(); ss.Close() })
	c := &lineClient{tb: tb, w: inW, r: bufio.NewReaderSize(outR, 8<<20)}
	c.rpc(`"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"0"}}`)
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`+"\n"); err != nil {
		tb.Fatal(err)
	}
	return c
}

// rpc sends a request (the method and params part of it) and returns the
// answer's line.
func (c *lineClient) rpc(methodAndParams string) []byte {
	c.seq++
	id := fmt.Sprintf(`"id":%d,`, c.seq)
	if _, err := io.WriteString(c.w, `{"jsonrpc":"2.0",`+id+`"method":`+methodAndParams+"}\n"); err != nil {
		c.tb.Fatal(err)
	}
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			c.tb.Fatal(err)
		}
		if bytes.Contains(line[:min(len(line), 200)], []byte(id)) {
			if bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0",`+id+`"error"`)) {
				c.tb.Fatalf("error: %.300s", line)
			}
			return line
		}
	}
}

// listAll lists every page and returns the bytes and pages read.
func (c *lineClient) listAll() (n, pages int) {
	return listPages(func(params string) []byte { return c.rpc(`"tools/list","params":` + params) })
}

// listPages lists every page through list, which sends tools/list with
// the params given and returns the answer, and returns the bytes and pages
// read.
func listPages(list func(params string) []byte) (n, pages int) {
	cursor := ""
	for {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":"` + cursor + `"}`
		}
		answer := list(params)
		n += len(answer)
		pages++
		_, rest, ok := bytes.Cut(answer, []byte(`"nextCursor":"`))
		if !ok {
			return n, pages
		}
		cursor, _, _ = strings.Cut(string(rest[:min(len(rest), 100)]), `"`)
	}
}

// BenchmarkToolsListServerSide is tools/list of the 2200-tool catalog,
// all pages, as the server answers it over a pipe.
func BenchmarkToolsListServerSide(b *testing.B) {
	srv, h := catalogServer(b)
	want := len(h.Tools())
	c := newLineClient(b, srv)
	n, pages := c.listAll()
	if pages != 3 || want != 2200 {
		b.Fatalf("%d tools in %d pages", want, pages)
	}
	b.SetBytes(int64(n))
	for b.Loop() {
		c.listAll()
	}
}

// BenchmarkToolsList is tools/list of the 2200-tool catalog, all pages,
// over streamable HTTP: read raw (the server's answer and the loopback
// transport, not decoded), and through the go-sdk client, whose decoding
// is the rest of what an SDK client waits for.
func BenchmarkToolsList(b *testing.B) {
	srv, _ := catalogServer(b)
	h, err := srv.ServeHTTP(mcpserver.HTTPOptions{Addr: "127.0.0.1:0"}, make(chan error, 1))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	url := "http://" + h.Addr() + "/mcp"
	b.Run("http-raw", func(b *testing.B) {
		c := newRawHTTPClient(b, url)
		n, pages := c.listAll()
		if pages != 3 {
			b.Fatalf("%d pages, want 3", pages)
		}
		b.SetBytes(int64(n))
		for b.Loop() {
			c.listAll()
		}
	})
	b.Run("http-go-sdk-client", func(b *testing.B) {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "b", Version: "0"}, nil).Connect(b.Context(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		b.ReportAllocs()
		for b.Loop() {
			for _, err := range cs.Tools(b.Context(), nil) {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// rawHTTPClient speaks JSON-RPC to a streamable HTTP endpoint in a session
// of its own and reads the answers without decoding them.
type rawHTTPClient struct {
	tb            testing.TB
	url, id, auth string
}

func newRawHTTPClient(tb testing.TB, url string) *rawHTTPClient {
	return newRawHTTPClientWith(tb, url, "")
}

// newRawHTTPClientWith sends auth (when not "") as every request's
// Authorization.
func newRawHTTPClientWith(tb testing.TB, url, auth string) *rawHTTPClient {
	c := &rawHTTPClient{tb: tb, url: url, auth: auth}
	h, _ := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"0"}}}`)
	if c.id = h.Get("Mcp-Session-Id"); c.id == "" {
		tb.Fatal("no session id")
	}
	c.post(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
	return c
}

func (c *rawHTTPClient) post(body string) (http.Header, []byte) {
	req, err := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		c.tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	if c.id != "" {
		req.Header.Set("Mcp-Session-Id", c.id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.tb.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode/100 != 2 {
		c.tb.Fatalf("%s %v: %.300s", resp.Status, err, data)
	}
	return resp.Header, data
}

// listAll lists every page and returns the bytes and pages read.
func (c *rawHTTPClient) listAll() (n, pages int) {
	return listPages(func(params string) []byte {
		_, data := c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":` + params + `}`)
		return data
	})
}

// BenchmarkLiveHeap100Tabs is the heap that the hub and the MCP edge keep
// (no browser) for 100 tabs of the bench page's 10 tools on one site, the
// catalog of `webmcp-cdp bench`'s memory rows: one update per tab, each
// followed by a full tools/list over stdio as a client does on
// list_changed. live-B is the heap kept after a GC; alloc-B what was
// allocated on the way.
func BenchmarkLiveHeap100Tabs(b *testing.B) {
	ctx := b.Context()
	var live, alloc float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		h := hub.New(&fakeBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
		srv := mcpserver.New(ctx, h, mcpserver.Options{Version: "bench", Logger: slog.New(slog.DiscardHandler)})
		c := newLineClient(b, srv)
		for t := range 100 {
			bench.AddBenchTab(h, t)
			if err := srv.Synced(ctx); err != nil {
				b.Fatal(err)
			}
			c.listAll()
		}
		if n := len(h.Tools()); n != 1010 {
			b.Fatalf("%d tools, want 1010", n)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(h)
		runtime.KeepAlive(srv)
		live, alloc = float64(after.HeapAlloc)-float64(before.HeapAlloc), float64(after.TotalAlloc-before.TotalAlloc)
	}
	b.ReportMetric(live, "live-B")
	b.ReportMetric(alloc, "alloc-B")
}

// BenchmarkCall is one tools/call of a page tool through a go-sdk client in
// memory, into a fake browser; BenchmarkCallHub is the hub's part alone.
func BenchmarkCall(b *testing.B) {
	srv, h := catalogServer(b)
	name := h.Tools()[len(h.Tools())/2].Name
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "b", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close(); ss.Wait() })
	params := &mcp.CallToolParams{Name: name, Arguments: map[string]any{"query": "x"}}
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("%v %v", err, res)
		}
	}
}

func BenchmarkCallHub(b *testing.B) {
	h := hub.New(&fakeBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	h.Update(mkDoc("a", "A"), []core.Tool{{Name: "t", Description: "t"}}, nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if o := h.Call(ctx, site+"_t", []byte(`{"query":"x"}`)); o.IsError {
			b.Fatal(o)
		}
	}
}

// BenchmarkCallServerSide is one tools/call of a page tool into a fake
// browser, as the server answers it over a pipe: decoding the request,
// the call, and encoding the answer. The new-protocol variant carries the
// per-request _meta a 2026-07-28 client (the go-sdk's) sends.
func BenchmarkCallServerSide(b *testing.B) {
	for _, bc := range []struct{ name, meta string }{
		{"2025-11-25", ``},
		{"2026-07-28", `"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv, h := catalogServer(b)
			name := h.Tools()[len(h.Tools())/2].Name
			c := newLineClient(b, srv)
			req := `"tools/call","params":{` + bc.meta + `"name":"` + name + `","arguments":{"query":"x"}}`
			b.ReportAllocs()
			for b.Loop() {
				if line := c.rpc(req); bytes.Contains(line, []byte(`"isError":true`)) {
					b.Fatalf("%s", line)
				}
			}
		})
	}
}
