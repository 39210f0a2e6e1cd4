package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// mcpClient is a go-sdk client connected in memory to an MCP server over a
// hub, recording when list_changed notifications arrive.
type mcpClient struct {
	cs  *mcp.ClientSession
	srv *mcpserver.Server

	mu      sync.Mutex
	changes []time.Time
	notify  chan struct{}
}

func connect(tb testing.TB, h *hub.Hub) *mcpClient {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv := mcpserver.New(ctx, h, mcpserver.Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		cancel()
		tb.Fatalf("server connect: %v", err)
	}
	c := &mcpClient{srv: srv, notify: make(chan struct{}, 1)}
	client := mcp.NewClient(&mcp.Implementation{Name: "hub-test", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			c.mu.Lock()
			c.changes = append(c.changes, time.Now())
			c.mu.Unlock()
			select {
			case c.notify <- struct{}{}:
			default:
			}
		},
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		cancel()
		tb.Fatalf("client connect: %v", err)
	}
	c.cs = cs
	tb.Cleanup(func() {
		cs.Close()
		ss.Wait()
		cancel()
	})
	return c
}

// times returns the arrival times of the notifications so far.
func (c *mcpClient) times() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.changes...)
}

// listAll lists every tool, page after page.
func (c *mcpClient) listAll(tb testing.TB) map[string]*mcp.Tool {
	tb.Helper()
	out := map[string]*mcp.Tool{}
	for tl, err := range c.cs.Tools(context.Background(), nil) {
		if err != nil {
			tb.Fatalf("tools/list: %v", err)
		}
		out[tl.Name] = tl
	}
	return out
}

// TestListChangedNeverLost changes the catalog every 2 ms, faster than the
// SDK's 10 ms notification debounce, which restarts on every change. A
// client that lists the tools on every list_changed must hear of changes
// while they go on (they are not held back for ever), and its last listing
// must be the final catalog; and the notifications must be far fewer than
// the changes.
func TestListChangedNeverLost(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	c := connect(t, h)
	const changes = 150
	final := fmt.Sprintf("%s_v%d", site, changes-1)

	// The client refreshes its list after each notification.
	var mu sync.Mutex
	lastListFinal, refreshes := false, 0
	stop := make(chan struct{})
	refreshed := make(chan struct{})
	go func() {
		defer close(refreshed)
		for {
			select {
			case <-stop:
				return
			case <-c.notify:
			}
			tools := c.listAll(t)
			mu.Lock()
			lastListFinal = tools[final] != nil && tools[site+"_keep"] != nil && len(tools) == 5 // 2 page tools, 3 own tools
			refreshes++
			mu.Unlock()
		}
	}()

	start := time.Now()
	for i := range changes {
		h.Update(mkDoc("a", "A", origin), mkTools("keep", fmt.Sprintf("v%d", i)), nil)
		time.Sleep(2 * time.Millisecond) // the page's pace, faster than the debounce: what the test is about
	}
	last := time.Now()
	// Wait until notifications stop for a while.
	for n := len(c.times()); ; {
		// A quiet period, not a poll: the test counts every notification,
		// and that no more will come has no event.
		time.Sleep(300 * time.Millisecond)
		if m := len(c.times()); m == n {
			break
		} else {
			n = m
		}
	}
	close(stop)
	<-refreshed
	ts := c.times()
	during := 0
	for _, at := range ts {
		if at.Before(last) {
			during++
		}
	}
	if during == 0 {
		t.Errorf("no list_changed reached the client during %s of changes: the notification was held back", last.Sub(start).Round(time.Millisecond))
	}
	// Coalescing: at most one notification per MinGap (10 ms by default)
	// while changes go on, after a burst of 4 at once, and fewer than the
	// changes. (On a loaded machine
	// the changes themselves come more than 10 ms apart, so the pacing
	// bound, not a fixed fraction, is what the server promises.)
	if n := len(ts); n > 0 {
		paced := int(ts[n-1].Sub(start)/(10*time.Millisecond)) + 4 + 1
		if n >= changes || n > paced {
			t.Errorf("%d changes gave %d notifications over %s, want them coalesced (at most %d)", changes, n, ts[n-1].Sub(start).Round(time.Millisecond), min(paced, changes-1))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if refreshes == 0 || !lastListFinal {
		t.Errorf("after %d refreshes on list_changed, the client's last list is not the final catalog", refreshes)
	}
	t.Logf("%d changes over %s gave %d notifications (%d while changing)", changes, last.Sub(start).Round(time.Millisecond), len(ts), during)
}

// TestReservedNamesStayOurs: a page that would take the server's own tool
// names gets names of its own, and webmcp_call still works.
func TestReservedNamesStayOurs(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	c := connect(t, h)
	h.Update(mkDoc("a", "A", "http://webmcp"), mkTools("call", "list_tabs", "list_tools"), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.srv.Synced(ctx); err != nil {
		t.Fatalf("the server did not take the catalog's change: %v", err)
	}
	tools := c.listAll(t)
	if tools["page_webmcp_call"] == nil {
		t.Fatalf("the page's tools are not listed: %v", tools)
	}
	for _, own := range []string{"webmcp_call", "webmcp_list_tabs", "webmcp_list_tools"} {
		if tl := tools[own]; tl == nil || tl.Meta["webmcp-cdp/source"] != nil {
			t.Errorf("%s is not the server's own tool: %+v", own, tl)
		}
	}
	res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "webmcp_call", Arguments: map[string]any{"name": "page_webmcp_call"}})
	if err != nil || res.IsError {
		t.Fatalf("webmcp_call of the page's tool: %v %+v", err, res)
	}
}

// TestListToolsCompact: webmcp_list_tools finds page tools by the words of
// a query, best first, compactly, with schemas on request and a limit that
// says how many more matched.
func TestListToolsCompact(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	c := connect(t, h)
	h.Update(mkDoc("a", "A", origin), []core.Tool{
		{Name: "search", Description: "Finds notes.\nLong details follow.", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)},
		{Name: "add", Description: strings.Repeat("é", 300)},
		{Name: "add_note", Title: "Add a note", Description: "Adds a note to the list."},
	}, nil)
	h.TabClosed("B") // no such tab: nothing happens
	type listed struct {
		Tools []struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
		More int    `json:"more"`
		Note string `json:"note"`
	}
	tests := []struct {
		name      string
		args      map[string]any
		wantNames []string
		schemas   bool
		wantMore  int
	}{
		{"all", map[string]any{}, []string{site + "_add", site + "_add_note", site + "_search"}, false, 0},
		{"query, any letter case", map[string]any{"query": "NOTES"}, []string{site + "_add_note", site + "_search"}, false, 0},
		{"the name's words first", map[string]any{"query": "add a note"}, []string{site + "_add_note", site + "_add", site + "_search"}, false, 0},
		{"schemas", map[string]any{"query": "find", "schema": true}, []string{site + "_search"}, true, 0},
		{"limit", map[string]any{"query": "note", "limit": 1}, []string{site + "_add_note"}, false, 1},
		{"no match", map[string]any{"query": "cart"}, nil, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "webmcp_list_tools", Arguments: tt.args})
			if err != nil || res.IsError {
				t.Fatalf("webmcp_list_tools: %v %+v", err, res)
			}
			raw, _ := json.Marshal(res.StructuredContent)
			var got listed
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range got.Tools {
				names = append(names, tl.Name)
				if strings.Contains(tl.Description, "\n") || len(tl.Description) > 210 {
					t.Errorf("%s: description %q is not one short line", tl.Name, tl.Description)
				}
				if (tl.InputSchema != nil) != tt.schemas {
					t.Errorf("%s: inputSchema %v, want one: %v", tl.Name, tl.InputSchema, tt.schemas)
				}
			}
			if fmt.Sprint(names) != fmt.Sprint(tt.wantNames) {
				t.Errorf("names = %q, want %q", names, tt.wantNames)
			}
			if got.More != tt.wantMore || (tt.wantMore > 0) != strings.Contains(got.Note, "more match") {
				t.Errorf("more = %d, note %q; want %d more", got.More, got.Note, tt.wantMore)
			}
		})
	}
}
