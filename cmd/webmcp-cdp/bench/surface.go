package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file measures what an agent meets (issue 19): the bytes of
// tools/list, of the server's own tools and in all, for the demo pages and
// for 100 tabs × 10 tools with --list all and --list active, and the time
// of a tool search over 2,000 tools.

var (
	catalogVerbs = []string{"add", "remove", "list", "get", "search", "update", "create", "delete", "open", "close",
		"send", "book", "cancel", "rate", "share", "export", "import", "filter", "sort", "track"}
	catalogNouns = []string{"cart", "item", "order", "product", "review", "note", "event", "ticket", "flight", "hotel",
		"message", "contact", "file", "photo", "invoice", "payment", "address", "coupon", "task", "playlist"}
)

// SyntheticCatalog fills h with tabs tabs of perTab tools each, every tab
// on a site of its own (so every tool has one routed name), named and
// described from a small vocabulary of verbs and nouns the way shop, mail
// and travel sites name theirs. It is the catalog of the search
// measurements (here and in hub's BenchmarkSearch2000).
func SyntheticCatalog(h *hub.Hub, tabs, perTab int) {
	for t := range tabs {
		origin := fmt.Sprintf("https://site%d.example.com", t)
		id := fmt.Sprintf("tab-%d", t)
		h.TabOpened(id, origin+"/app", fmt.Sprintf("Site %d", t))
		tools := make([]core.Tool, perTab)
		for i := range tools {
			verb, noun := catalogVerbs[(7*i+t)%len(catalogVerbs)], catalogNouns[(i+3*t)%len(catalogNouns)]
			tools[i] = core.Tool{
				Name:        fmt.Sprintf("%s_%s_%d", verb, noun, i),
				Title:       strings.ToUpper(verb[:1]) + verb[1:] + " " + noun,
				Description: fmt.Sprintf("%s a %s on site %d: finds it by its text or id, and returns what changed.", strings.ToUpper(verb[:1])+verb[1:], noun, t),
				InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
			}
		}
		h.Update(core.Source{Key: "doc-" + id, Tab: id, Frame: id, Origin: origin, URL: origin + "/app", Backend: core.Backend("polyfill")}, tools, nil)
	}
}

// nopBrowser is a hub.Browser that no measurement calls.
type nopBrowser struct{}

func (nopBrowser) Invoke(context.Context, string, string, json.RawMessage) (core.Result, error) {
	return core.Result{}, fmt.Errorf("the surface measurements call no tool")
}

// The targets of issue 19, printed beside the figures: the server's own
// tools in at most ownToolsTarget bytes of tools/list, and a tool search
// over 2,000 tools in at most searchTarget at p50.
const (
	ownToolsTarget = 2048
	searchTarget   = 5 * time.Millisecond
)

// searchQueries are the queries timed over the synthetic catalog.
var searchQueries = []string{"cart", "add item to cart", "book a flight", "cancel order", "export invoices", "site 42 photo", "track payment", "pay"}

// surfaceRows adds the rows of this file: the search time over 2,000
// tools, the list bytes of 100 tabs × 10 tools in process, and the list
// bytes of the demo pages through the binary.
func surfaceRows(ctx context.Context, bin, base string, add func(what, value string)) error {
	searchRow(add)
	if err := syntheticListRows(ctx, add); err != nil {
		return err
	}
	return demoListRows(ctx, bin, base, add)
}

// searchRow times webmcp_list_tools's search (hub.Search) over 2,000
// tools: every query of searchQueries, 50 rounds, on an index built once
// (its build, which the first search after a catalog change pays, is
// reported apart).
func searchRow(add func(what, value string)) {
	h := hub.New(nopBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	SyntheticCatalog(h, 100, 20)
	t0 := time.Now()
	h.Search("warm", 1) // builds the index
	build := time.Since(t0)
	var ds []time.Duration
	for range 50 {
		for _, q := range searchQueries {
			t := time.Now()
			h.Search(q, 20)
			ds = append(ds, time.Since(t))
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	pct := func(p float64) time.Duration { return ds[int(p*float64(len(ds)-1))] }
	add(fmt.Sprintf("tool search over %d tools (webmcp_list_tools query, %d searches; target p50 ≤ %s)", len(h.Tools()), len(ds), searchTarget),
		fmt.Sprintf("p50 %s p95 %s; index build %s", pct(0.5), pct(0.95), build.Round(time.Microsecond)))
}

// listBytes is what one tools/list carried: the raw JSON of the server's
// own tools and of the whole list, and the count of tools.
type listBytes struct {
	own, all, tools int
}

func (b listBytes) String() string {
	return fmt.Sprintf("own tools %d B; whole list %d B (%d tools)", b.own, b.all, b.tools)
}

// ListRecorder records the raw results of the tools/list requests a
// client reads: it is the Writer of an mcp.LoggingTransport around the
// client's transport, so the bytes are those that came over the wire.
type ListRecorder struct {
	mu    sync.Mutex
	pages [][]byte
}

// Pages returns the raw results recorded since the last Reset.
func (r *ListRecorder) Pages() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.pages)
}

// Reset forgets the results recorded so far.
func (r *ListRecorder) Reset() {
	r.mu.Lock()
	r.pages = nil
	r.mu.Unlock()
}

// Write takes one line of mcp.LoggingTransport's log.
func (r *ListRecorder) Write(p []byte) (int, error) {
	line := string(p)
	if rest, ok := strings.CutPrefix(line, "read: "); ok && strings.Contains(rest, `"tools":[`) {
		var msg struct {
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal([]byte(rest), &msg) == nil && len(msg.Result) > 0 {
			r.mu.Lock()
			r.pages = append(r.pages, append([]byte(nil), msg.Result...))
			r.mu.Unlock()
		}
	}
	return len(p), nil
}

// ListBytes reads a raw tools/list result: the bytes of the tools named
// webmcp_*, of the whole tools array, and the number of tools.
func ListBytes(result []byte) (own, all, tools int, err error) {
	var res struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(result, &res); err != nil {
		return 0, 0, 0, fmt.Errorf("reading a tools/list result: %w", err)
	}
	all = 2 + max(len(res.Tools)-1, 0) // brackets and commas
	for _, t := range res.Tools {
		var head struct {
			Name string `json:"name"`
		}
		json.Unmarshal(t, &head)
		all += len(t)
		if strings.HasPrefix(head.Name, hub.ReservedPrefix) {
			own += len(t) + 1
		}
	}
	return max(own-1, 0), all, len(res.Tools), nil
}

// measureList lists the tools once through cs, every page, and adds up
// what rec saw.
func measureList(ctx context.Context, cs *mcp.ClientSession, rec *ListRecorder) (listBytes, error) {
	rec.Reset()
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return listBytes{}, fmt.Errorf("tools/list: %w", err)
		}
	}
	var b listBytes
	for _, raw := range rec.Pages() {
		own, all, n, err := ListBytes(raw)
		if err != nil {
			return b, err
		}
		b.own, b.all, b.tools = b.own+own, b.all+all, b.tools+n
	}
	return b, nil
}

// syntheticListRows adds the rows of syntheticLists.
func syntheticListRows(ctx context.Context, add func(what, value string)) error {
	lists, err := syntheticLists(ctx)
	if err != nil {
		return err
	}
	for _, mode := range []mcpserver.ListMode{mcpserver.ListAll, mcpserver.ListActive} {
		add(fmt.Sprintf("tools/list, 100 tabs × 10 tools, --list %s (own tools: target ≤ %d B)", mode, ownToolsTarget), lists[mode].String())
	}
	return nil
}

// AddBenchTab opens tab number t in h with the bench page's 10 echo
// tools, every tab on the same site (so that each tool has a site-level
// name and one name per tab): the catalog of the memory rows, here and in
// hub/mcpserver's BenchmarkLiveHeap100Tabs.
func AddBenchTab(h *hub.Hub, t int) {
	id := fmt.Sprintf("tab-%d", t)
	h.TabOpened(id, "http://127.0.0.1:8080/bench/", "bench")
	tools := make([]core.Tool, 10)
	for i := range tools {
		tools[i] = core.Tool{Name: fmt.Sprintf("echo_%d", i), Description: fmt.Sprintf("Return the text unchanged (bench tool %d).", i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
			Annotations: map[string]any{"readOnlyHint": true}}
	}
	h.Update(core.Source{Key: "doc-" + id, Tab: id, Frame: id, Origin: "http://127.0.0.1:8080", URL: "http://127.0.0.1:8080/bench/", Backend: core.Backend("polyfill")}, tools, nil)
}

// syntheticLists measures tools/list of 100 tabs × 10 tools (the bench
// page's echo tools, on one site) with --list all and --list active,
// served in process to a go-sdk client.
func syntheticLists(ctx context.Context) (map[mcpserver.ListMode]listBytes, error) {
	out := map[mcpserver.ListMode]listBytes{}
	for _, mode := range []mcpserver.ListMode{mcpserver.ListAll, mcpserver.ListActive} {
		h := hub.New(nopBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
		for t := range 100 {
			AddBenchTab(h, t)
		}
		b, err := inProcessList(ctx, h, mcpserver.ListPolicy{Mode: mode})
		if err != nil {
			return nil, err
		}
		out[mode] = b
	}
	return out, nil
}

// inProcessList serves h with the list policy p and measures one
// tools/list.
func inProcessList(ctx context.Context, h *hub.Hub, p mcpserver.ListPolicy) (listBytes, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := mcpserver.New(ctx, h, mcpserver.Options{Version: "bench", Logger: slog.New(slog.DiscardHandler), Tabs: nopTabs{}, List: p})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		return listBytes{}, err
	}
	defer ss.Close()
	rec := &ListRecorder{}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "webmcp-cdp-bench", Version: "1"}, nil).
		Connect(ctx, &mcp.LoggingTransport{Transport: ct, Writer: rec}, nil)
	if err != nil {
		return listBytes{}, err
	}
	defer cs.Close()
	return measureList(ctx, cs, rec)
}

// nopTabs has the tab tools listed; no measurement calls them.
type nopTabs struct{}

func (nopTabs) Open(context.Context, string) (string, error) {
	return "", fmt.Errorf("not in a measurement")
}
func (nopTabs) CloseTab(context.Context, string) error    { return nil }
func (nopTabs) ActivateTab(context.Context, string) error { return nil }
func (nopTabs) Reload(context.Context, string) error      { return nil }

// pageSets are the pages whose tools/list is measured through the binary:
// the demo's notes app, and a shop next to a widget (issue 19's pages).
var pageSets = []struct {
	what  string
	pages []string
}{
	{"demo (notes app)", []string{"/notes/"}},
	{"shop + widget", []string{"/shop/", "/widget/"}},
}

// demoListRows launches the binary on each page set with --list all and
// --list active and measures the tools/list a go-sdk client reads.
func demoListRows(ctx context.Context, bin, base string, add func(what, value string)) error {
	for _, set := range pageSets {
		for _, mode := range []string{"all", "active"} {
			args := []string{"launch", "--headless", "--log-level", "warn", "--list", mode}
			for _, p := range set.pages {
				args = append(args, base+p)
			}
			cmd := exec.Command(bin, args...)
			cmd.Stderr = os.Stderr
			rec := &ListRecorder{}
			cs, err := newClient(make(chan struct{}, 1)).Connect(ctx, &mcp.LoggingTransport{Transport: &mcp.CommandTransport{Command: cmd}, Writer: rec}, nil)
			if err != nil {
				return fmt.Errorf("starting %s on the %s pages: %w", bin, set.what, err)
			}
			// The first tools/list waits for the start pages' tools to settle.
			b, err := measureList(ctx, cs, rec)
			(&server{cmd: cmd, cs: cs}).close()
			if err != nil {
				return err
			}
			add(fmt.Sprintf("tools/list, %s, --list %s (own tools: target ≤ %d B)", set.what, mode, ownToolsTarget), b.String())
		}
	}
	return nil
}
