package hub_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// The benchmarks build the catalog of 100 tabs with 20 tools each, spread
// over 10 sites of 10 tabs (so every tool is shared: 200 site-level names
// and 2000 tab-level names), with a fake browser, and serve it through the
// MCP server to a go-sdk client connected in memory:
//
//	go test ./hub -run '^$' -bench . -benchtime 200x
const (
	benchSites       = 10
	benchTabsPerSite = 10
	benchTools       = 20
)

// benchTool is a realistic tool definition.
func benchTool(i int, version string) core.Tool {
	return core.Tool{
		Name:        fmt.Sprintf("tool_%02d", i),
		Title:       fmt.Sprintf("Tool %d", i),
		Description: fmt.Sprintf("Does thing %d to the items on this page: finds them by text, filters them by tag, and returns at most limit of them. %s", i, version),
		InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"text to look for"},` +
			`"tag":{"type":"string","enum":["work","home","misc"]},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["query"]}`),
		Annotations: map[string]any{"readOnlyHint": true},
	}
}

func benchDoc(site, tab int) core.Source {
	o := fmt.Sprintf("https://site%d.example.com", site)
	id := fmt.Sprintf("tab-%d-%d", site, tab)
	return core.Source{Key: "doc-" + id, Tab: id, Frame: id, Origin: o, URL: o + "/app", Backend: "polyfill"}
}

// benchCatalog fills a hub and connects a client; it returns when the
// client lists every tool.
func benchCatalog(b *testing.B) (*hub.Hub, *mcpClient, int) {
	b.Helper()
	h := hub.New(&fakeBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	tools := make([]core.Tool, benchTools)
	for i := range tools {
		tools[i] = benchTool(i, "v1")
	}
	for s := range benchSites {
		for t := range benchTabsPerSite {
			h.Update(benchDoc(s, t), tools, nil)
		}
	}
	c := connect(b, h)
	want := len(h.Tools())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.srv.Synced(ctx); err != nil {
		b.Fatalf("the server did not take the catalog: %v", err)
	}
	if len(c.listAll(b)) < want+3 {
		b.Fatalf("the client does not list the %d tools", want)
	}
	return h, c, want
}

// BenchmarkToolsList measures tools/list of the whole catalog (all pages)
// through the go-sdk client.
func BenchmarkToolsList(b *testing.B) {
	_, c, want := benchCatalog(b)
	b.ResetTimer()
	for b.Loop() {
		if got := len(c.listAll(b)); got != want+3 {
			b.Fatalf("listed %d tools, want %d", got, want+3)
		}
	}
	b.ReportMetric(float64(want), "tools")
}

// rawClient is a JSON-RPC client on the in-memory transport that reads each
// answer's envelope but does not decode and check every tool the way the
// go-sdk client does: it measures what the server does.
type rawClient struct {
	tb   testing.TB
	conn mcp.Connection
	seq  int64
}

// benchServer fills a hub, serves it, and connects a raw client.
func benchServer(tb testing.TB) (*hub.Hub, *rawClient, int) {
	tb.Helper()
	h := hub.New(&fakeBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	tools := make([]core.Tool, benchTools)
	for i := range tools {
		tools[i] = benchTool(i, "v1")
	}
	for s := range benchSites {
		for t := range benchTabsPerSite {
			h.Update(benchDoc(s, t), tools, nil)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	srv := mcpserver.New(ctx, h, mcpserver.Options{Version: "bench", Logger: slog.New(slog.DiscardHandler)})
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.MCP().Connect(ctx, st, nil); err != nil {
		tb.Fatal(err)
	}
	conn, err := ct.Connect(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	c := &rawClient{tb: tb, conn: conn}
	c.rpc("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bench", "version": "0"}})
	if err := conn.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)}); err != nil {
		tb.Fatal(err)
	}
	want := len(h.Tools()) + 3
	synced, cancelSynced := context.WithTimeout(ctx, 30*time.Second)
	defer cancelSynced()
	if err := srv.Synced(synced); err != nil {
		tb.Fatalf("the server did not take the catalog: %v", err)
	}
	if c.listAll() != want {
		tb.Fatalf("the server does not list the %d tools", want)
	}
	return h, c, want
}

func (c *rawClient) rpc(method string, params any) json.RawMessage {
	c.seq++
	id, _ := jsonrpc.MakeID(float64(c.seq))
	raw, _ := json.Marshal(params)
	ctx := context.Background()
	if err := c.conn.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: raw}); err != nil {
		c.tb.Fatal(err)
	}
	for {
		msg, err := c.conn.Read(ctx)
		if err != nil {
			c.tb.Fatal(err)
		}
		if r, ok := msg.(*jsonrpc.Response); ok && r.ID == id {
			if r.Error != nil {
				c.tb.Fatalf("%s: %v", method, r.Error)
			}
			return r.Result
		}
	}
}

// listAll lists every page of tools and returns how many there are.
func (c *rawClient) listAll() int {
	n, cursor := 0, ""
	for {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var page struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(c.rpc("tools/list", params), &page); err != nil {
			c.tb.Fatal(err)
		}
		n += len(page.Tools)
		if cursor = page.NextCursor; cursor == "" {
			return n
		}
	}
}

// BenchmarkToolsListServer measures tools/list of the whole catalog (all
// pages) as the server answers it, read by a raw JSON-RPC client.
func BenchmarkToolsListServer(b *testing.B) {
	_, c, want := benchServer(b)
	for b.Loop() {
		if n := c.listAll(); n != want {
			b.Fatalf("listed %d tools, want %d", n, want)
		}
	}
}

// BenchmarkListChanged measures the time from a catalog change (one tab's
// page registers a changed tool) to the client's list_changed.
func BenchmarkListChanged(b *testing.B) {
	h, c, _ := benchCatalog(b)
	tools := make([]core.Tool, benchTools)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		time.Sleep(50 * time.Millisecond) // a quiet catalog, as between page loads: the condition measured, not a wait
		for len(c.notify) > 0 {
			<-c.notify
		}
		for j := range tools {
			tools[j] = benchTool(j, "v"+strconv.Itoa(i+2))
		}
		b.StartTimer()
		h.Update(benchDoc(i%benchSites, i%benchTabsPerSite), tools, nil)
		select {
		case <-c.notify:
		case <-time.After(5 * time.Second):
			b.Fatal("no list_changed within 5 s")
		}
	}
}

// BenchmarkCatalogMemory reports the heap and the process's resident set
// with the catalog built, served and listed (once, whatever b.N is), by the
// raw client so that no client-side copy of the list is counted.
func BenchmarkCatalogMemory(b *testing.B) {
	h, c, _ := benchServer(b)
	c.listAll()
	for b.Loop() {
		runtime.GC()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "MB-heap")
	if rss := vmRSS(); rss > 0 {
		b.ReportMetric(rss/(1<<20), "MB-rss")
	}
	runtime.KeepAlive(h)
}

// vmRSS is the process's resident set size in bytes, from /proc (0 where
// there is none).
func vmRSS() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}
