package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// protocols are the MCP versions the ToolSet tests run with: the newest
// (list_changed on a subscriptions/listen stream) and a legacy one.
var protocols = []string{"", "2025-11-25"}

// setEnv is a bare go-sdk server with one own tool and a ToolSet, and a
// go-sdk client connected in memory.
type setEnv struct {
	set     *mcpserver.ToolSet
	cs      *mcp.ClientSession
	changes atomic.Int64
	changed chan struct{}
}

func newSetEnv(t *testing.T, protocol string, opts mcpserver.ToolSetOptions) *setEnv {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		Logger:       slog.New(slog.DiscardHandler),
	})
	opts.Logger = slog.New(slog.DiscardHandler)
	e := &setEnv{set: mcpserver.NewToolSet(srv, opts), changed: make(chan struct{}, 1000)}
	go e.set.Run(ctx)
	srv.AddTool(&mcp.Tool{Name: "own", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "own"}}}, nil
		})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			e.changes.Add(1)
			e.changed <- struct{}{}
		},
	})
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	e.cs = cs
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return e
}

// entries makes n tools named prefix0..prefix(n-1) whose handler answers
// with the tool's name.
func entries(t testing.TB, prefix string, n int) []mcpserver.ToolEntry {
	out := make([]mcpserver.ToolEntry, n)
	for i := range out {
		name := fmt.Sprintf("%s%03d", prefix, i)
		raw, err := mcpserver.RenderTool(&mcp.Tool{Name: name, Description: "tool " + name, InputSchema: json.RawMessage(`{"type":"object"}`)})
		if err != nil {
			t.Fatal(err)
		}
		out[i] = mcpserver.ToolEntry{Name: name, JSON: raw, Handler: func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " " + req.Params.Name + " " + string(req.Params.Arguments)}}}, nil
		}}
	}
	return out
}

// listAll lists every page and counts each name.
func (e *setEnv) listAll(t *testing.T) (map[string]int, error) {
	t.Helper()
	seen := map[string]int{}
	for tl, err := range e.cs.Tools(context.Background(), nil) {
		if err != nil {
			return nil, err
		}
		seen[tl.Name]++
	}
	return seen, nil
}

// quiet waits until no notification came for a while and returns how many
// came in all.
func (e *setEnv) quiet() int64 {
	for n := e.changes.Load(); ; {
		// A quiet period, not a poll: the tests count notifications, and
		// that no more will come has no event (60 ms is six MinGaps).
		time.Sleep(60 * time.Millisecond)
		if m := e.changes.Load(); m == n {
			return m
		} else {
			n = m
		}
	}
}

func TestToolSetPagination(t *testing.T) {
	for _, protocol := range protocols {
		t.Run("protocol="+protocol, func(t *testing.T) {
			for _, n := range []int{0, 1, 6, 7, 8, 50} {
				e := newSetEnv(t, protocol, mcpserver.ToolSetOptions{PageSize: 7})
				e.set.Set(entries(t, "p", n))
				seen, err := e.listAll(t)
				if err != nil {
					t.Fatal(err)
				}
				if len(seen) != n+1 || seen["own"] != 1 {
					t.Fatalf("%d tools: listed %d names (%v), want %d and own", n, len(seen), seen, n+1)
				}
				for name, c := range seen {
					if c != 1 {
						t.Errorf("%d tools: %s listed %d times", n, name, c)
					}
				}
			}
		})
	}
}

func TestToolSetStaleCursor(t *testing.T) {
	e := newSetEnv(t, "", mcpserver.ToolSetOptions{PageSize: 5})
	e.set.Set(entries(t, "a", 12))
	first, err := e.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.NextCursor == "" || len(first.Tools) != 6 {
		t.Fatalf("first page: %d tools, cursor %q; want own + 5 and a cursor", len(first.Tools), first.NextCursor)
	}
	// A change: the listing goes on in the snapshot it started in.
	e.set.Set(entries(t, "b", 12))
	second, err := e.cs.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: first.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range second.Tools {
		if !strings.HasPrefix(tl.Name, "a") {
			t.Errorf("page 2 of the first snapshot lists %s", tl.Name)
		}
	}
	// Many changes later, the cursor is refused rather than mixing versions.
	for i := range 6 {
		e.set.Set(entries(t, fmt.Sprintf("c%d_", i), 3))
	}
	if _, err := e.cs.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: first.NextCursor}); err == nil {
		t.Error("a cursor into a forgotten snapshot was accepted")
	}
	if _, err := e.cs.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: "junk"}); err == nil {
		t.Error("a junk cursor was accepted")
	}
}

func TestToolSetListChanged(t *testing.T) {
	for _, protocol := range protocols {
		t.Run("protocol="+protocol, func(t *testing.T) {
			e := newSetEnv(t, protocol, mcpserver.ToolSetOptions{MinGap: 20 * time.Millisecond})
			base := e.quiet()
			// A no-op announces nothing.
			e.set.Set(nil)
			if got := e.quiet(); got != base {
				t.Fatalf("setting the empty set again gave %d notifications", got-base)
			}
			// One change: one notification, and the list then has it.
			tools := entries(t, "x", 3)
			e.set.Set(tools)
			select {
			case <-e.changed:
			case <-time.After(5 * time.Second):
				t.Fatal("no list_changed after a change")
			}
			seen, err := e.listAll(t)
			if err != nil || seen["x002"] != 1 {
				t.Fatalf("after list_changed the list is %v (%v)", seen, err)
			}
			if got := e.quiet(); got != base+1 {
				t.Fatalf("one change gave %d notifications", got-base)
			}
			// The same tools again (new handlers): no notification.
			e.set.Set(entries(t, "x", 3))
			if got := e.quiet(); got != base+1 {
				t.Fatalf("an unchanged set gave %d notifications", got-base-1)
			}
			// A burst of 50 changes: coalesced to about one notification per
			// MinGap after the first Burst (4 by default), and the last change
			// is announced.
			t0 := time.Now()
			for i := range 50 {
				e.set.Set(entries(t, fmt.Sprintf("b%d_", i), 2))
				time.Sleep(100 * time.Microsecond) // the burst's pace, faster than MinGap: what the test is about
			}
			took := time.Since(t0)
			n := e.quiet() - base - 1
			if most := int64(took/(20*time.Millisecond)) + 4 + 1; n < 1 || n > most {
				t.Errorf("a burst of 50 changes over %s gave %d notifications, want 1 to %d", took, n, most)
			}
			seen, err = e.listAll(t)
			if err != nil || seen["b49_001"] != 1 || len(seen) != 3 {
				t.Errorf("after the burst the list is %v (%v)", seen, err)
			}
		})
	}
}

// TestToolSetBurst: a navigation's two changes (the old document's tools
// go, the new one's come) are each announced at once, not the second a
// MinGap after the first; past the burst, changes wait for the pace.
func TestToolSetBurst(t *testing.T) {
	for _, protocol := range protocols {
		t.Run("protocol="+protocol, func(t *testing.T) {
			t.Parallel()
			// A pace no test outlives: a notification that waited for it
			// would end the test by its timeout.
			e := newSetEnv(t, protocol, mcpserver.ToolSetOptions{MinGap: time.Hour, Burst: 2})
			if base := e.quiet(); base != 0 {
				t.Fatalf("%d notifications before any change", base)
			}
			for i, tools := range [][]mcpserver.ToolEntry{entries(t, "old", 3), nil} {
				e.set.Set(tools)
				select {
				case <-e.changed:
				case <-time.After(5 * time.Second):
					t.Fatalf("change %d of the burst was not announced at once", i+1)
				}
			}
			// The third change waits for the pace, and is listed meanwhile.
			e.set.Set(entries(t, "new", 3))
			if got := e.quiet(); got != 2 {
				t.Errorf("a burst of 2 gave %d notifications for 3 changes, want 2 until the pace allows one more", got)
			}
			seen, err := e.listAll(t)
			if err != nil || seen["new002"] != 1 || len(seen) != 4 {
				t.Errorf("the list after the third change is %v (%v)", seen, err)
			}
		})
	}
}

func TestToolSetCallRouting(t *testing.T) {
	for _, protocol := range protocols {
		t.Run("protocol="+protocol, func(t *testing.T) {
			e := newSetEnv(t, protocol, mcpserver.ToolSetOptions{})
			e.set.Set(entries(t, "r", 3))
			ctx := context.Background()
			tests := []struct {
				name    string
				want    string
				wantErr bool
			}{
				{name: "r001", want: `r001 r001 {"k":1}`},
				{name: "own", want: "own"},
				{name: "nope", wantErr: true},
				{name: "webmcp_cdp_toolset_dispatch", wantErr: true},
			}
			for _, tt := range tests {
				res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: tt.name, Arguments: map[string]any{"k": 1}})
				if tt.wantErr {
					if err == nil && !res.IsError {
						t.Errorf("calling %s succeeded", tt.name)
					}
					continue
				}
				if err != nil {
					t.Fatalf("calling %s: %v", tt.name, err)
				}
				if got := res.Content[0].(*mcp.TextContent).Text; got != tt.want {
					t.Errorf("calling %s: %q, want %q", tt.name, got, tt.want)
				}
			}
			seen, _ := e.listAll(t)
			if seen["webmcp_cdp_toolset_dispatch"] != 0 {
				t.Error("the dispatch tool is listed")
			}
		})
	}
}

// TestListNeverPartial lists the tools again and again while pages come
// and go, each registering its ten tools at once: no listing may hold some
// of a document's tools without the others.
func TestListNeverPartial(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler), Limits: hub.Limits{RegistrationsPerMinute: 1 << 30}})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv := mcpserver.New(ctx, h, mcpserver.Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
	cs := connectInMemory(ctx, t, srv)
	const docs, perDoc = 6, 10
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			d := i % docs
			key := fmt.Sprintf("d%d", d)
			if i%3 == 2 {
				h.DropDoc(key)
				continue
			}
			tools := make([]core.Tool, perDoc)
			for j := range tools {
				tools[j] = core.Tool{Name: fmt.Sprintf("g%d_v%d_t%d", d, i, j), Description: "t",
					InputSchema: json.RawMessage(`{"type":"object"}`)}
			}
			h.Update(mkDoc(key, "tab"+key), tools, nil)
			time.Sleep(200 * time.Microsecond) // the pages' churn, not a wait
		}
	}()
	deadline := time.Now().Add(1500 * time.Millisecond)
	lists := 0
	for time.Now().Before(deadline) {
		groups := map[string]int{}
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			name := tl.Name
			if i := strings.Index(name, "_g"); i >= 0 {
				if j := strings.LastIndex(name, "_t"); j > i {
					groups[name[i+1:j]]++
				}
			}
		}
		for g, n := range groups {
			if n != perDoc {
				t.Fatalf("a listing holds %d of the %d tools of %s", n, perDoc, g)
			}
		}
		lists++
	}
	close(stop)
	wg.Wait()
	t.Logf("%d listings, none partial", lists)
}

// ---- benchmarks --------------------------------------------------------

// catalogServer builds the 100 tabs × 20 tools catalog of
// hub/bench_test.go (2200 routed names) and serves it.
func catalogServer(tb testing.TB) (*mcpserver.Server, *hub.Hub) {
	tb.Helper()
	h := hub.New(&fakeBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	tools := make([]core.Tool, 20)
	for i := range tools {
		tools[i] = core.Tool{
			Name:        fmt.Sprintf("tool_%02d", i),
			Title:       fmt.Sprintf("Tool %d", i),
			Description: fmt.Sprintf("Does thing %d to the items on this page: finds them by text, filters them by tag, and returns at most limit of them. v1", i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"text to look for"},` +
				`"tag":{"type":"string","enum":["work","home","misc"]},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["query"]}`),
			Annotations: map[string]any{"readOnlyHint": true},
		}
	}
	for s := range 10 {
		for tb := range 10 {
			o := fmt.Sprintf("https://site%d.example.com", s)
			id := fmt.Sprintf("tab-%d-%d", s, tb)
			h.Update(core.Source{Key: "doc-" + id, Tab: id, Frame: id, Origin: o, URL: o + "/app", Backend: "polyfill"}, tools, nil)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	srv := mcpserver.New(ctx, h, mcpserver.Options{Version: "bench", Logger: slog.New(slog.DiscardHandler)})
	return srv, h
}

func TestCheckTool(t *testing.T) {
	tests := []struct {
		name   string
		schema any
		ok     bool
	}{
		{"object", json.RawMessage(`{"type":"object"}`), true},
		{"no type", json.RawMessage(`{}`), false},
		{"array", json.RawMessage(`{"type":"array"}`), false},
		{"not JSON", json.RawMessage(`{`), false},
		{"map", map[string]any{"type": "object"}, true},
		{"good header", json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X-A"}}}`), true},
		{"header on an object", json.RawMessage(`{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"X-A"}}}`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := mcpserver.CheckTool(&mcp.Tool{Name: "t", InputSchema: tt.schema})
			if (err == nil) != tt.ok {
				t.Errorf("CheckTool: %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// TestToolSetMultiRoundTrip: a set tool that asks the client something
// (an input request) gets the answer on both protocols: a 2026-07-28
// client retries the call itself; for an older one the SDK elicits and
// calls the handler again.
func TestToolSetMultiRoundTrip(t *testing.T) {
	for _, protocol := range protocols {
		t.Run("protocol="+protocol, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
			set := mcpserver.NewToolSet(srv, mcpserver.ToolSetOptions{Logger: slog.New(slog.DiscardHandler)})
			go set.Run(ctx)
			raw, _ := mcpserver.RenderTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)})
			var calls atomic.Int32
			set.Set([]mcpserver.ToolEntry{{Name: "ask", JSON: raw, Handler: func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				calls.Add(1)
				if req.Params.Name != "ask" {
					t.Errorf("the handler sees the name %q", req.Params.Name)
				}
				if req.Params.RequestState == "" {
					return &mcp.CallToolResult{RequestState: "s1", InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{
						Message: "ok?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`)}}}, nil
				}
				r, _ := req.Params.InputResponses["q"].(*mcp.ElicitResult)
				if req.Params.RequestState != "s1" || r == nil {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no answer"}}}, nil
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answer " + r.Action}}}, nil
			}}})
			st, ct := mcp.NewInMemoryTransports()
			ss, err := srv.Connect(ctx, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
				},
			})
			cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close(); ss.Wait() })
			cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
			defer ccancel()
			res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "answer accept" || calls.Load() != 2 {
				t.Errorf("got %q after %d calls of the handler, want \"answer accept\" after 2", got, calls.Load())
			}
		})
	}
}

// TestSyncedListsEarlierChanges: after Synced, a tools/list held by
// FirstList and released lists every tool the catalog had when Synced was
// called, however far the catalog's own sync goroutine has got.
func TestSyncedListsEarlierChanges(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler), Limits: hub.Limits{RegistrationsPerMinute: 1 << 30}})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	first := make(chan struct{})
	srv := mcpserver.New(ctx, h, mcpserver.Options{Version: "test", Logger: slog.New(slog.DiscardHandler), FirstList: first})
	cs := connectInMemory(ctx, t, srv)
	for round := range 20 {
		key := fmt.Sprintf("d%d", round)
		h.Update(mkDoc(key, "tab"+key), []core.Tool{{Name: fmt.Sprintf("t%d", round), Description: "t",
			InputSchema: json.RawMessage(`{"type":"object"}`)}}, nil)
		if err := srv.Synced(ctx); err != nil {
			t.Fatal(err)
		}
		if round == 0 {
			close(first)
		}
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, tl := range res.Tools {
			found = found || strings.HasSuffix(tl.Name, fmt.Sprintf("t%d", round))
		}
		if !found {
			t.Fatalf("round %d: the list after Synced lacks the tool added before it", round)
		}
	}
	done, stop := context.WithCancel(ctx)
	stop()
	if err := srv.Synced(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Synced with an ended context = %v, want context.Canceled", err)
	}
}

// connectInMemory connects a go-sdk client to srv over in-memory transports,
// closed when the test ends.
func connectInMemory(ctx context.Context, t *testing.T, srv *mcpserver.Server) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}
