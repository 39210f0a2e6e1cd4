package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/fixtures"
)

// DemoPage serves the demo's notes app (fixtures) on a free loopback
// port, and returns its address and what stops it.
func DemoPage() (pageURL string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("serving the demo page: %w", err)
	}
	srv := &http.Server{Handler: fixtures.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/notes/", func() { srv.Close() }, nil
}

// Demo waits for the tools of the notes app (served at pageURL, the
// session's start page), and calls some of them through a real MCP client
// connected in memory, printing each step to w.
func (s *Session) Demo(ctx context.Context, w io.Writer, pageURL, version string) error {
	clientT, serverT := mcp.NewInMemoryTransports()
	if _, err := s.Server.MCP().Connect(ctx, serverT, nil); err != nil {
		return fmt.Errorf("connecting the demo client: %w", err)
	}
	// The client learns of new tools as any MCP client does: from
	// notifications/tools/list_changed. A notification that comes while
	// the client lists is kept (capacity 1), so none is lost.
	listChanged := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "webmcp-cdp-demo", Version: version}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case listChanged <- struct{}{}:
			default:
			}
		},
	})
	cs, err := client.Connect(ctx, clientT, nil)
	if err != nil {
		return fmt.Errorf("connecting the demo client: %w", err)
	}
	defer cs.Close()

	pageTools, err := waitPageTools(ctx, cs, listChanged, 5, demoToolsWait)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "webmcp-cdp demo: the notes app at %s registered %d tools (%s after launch):\n", pageURL, len(pageTools), time.Since(s.began).Round(time.Millisecond))
	var add, list, stats string
	for _, t := range pageTools {
		fmt.Fprintf(w, "  %-40s %s\n", t.Name, t.Description)
		// By the page's own name: the listed one is <site>_add_note, or
		// add_note with --tool-names short.
		switch ownToolName(t) {
		case "add_note":
			add = t.Name
		case "list_notes":
			list = t.Name
		case "get_stats":
			stats = t.Name
		}
	}
	calls := []struct {
		name string
		args map[string]any
	}{
		{add, map[string]any{"title": "Hello", "content": "written by an MCP client through webmcp-cdp", "tag": "demo"}},
		{add, map[string]any{"title": "Second note", "content": "tools run in the page", "tag": "demo"}},
		{list, map[string]any{}},
		{stats, map[string]any{}},
	}
	for _, c := range calls {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
		if err != nil {
			return fmt.Errorf("calling %s: %w", c.name, err)
		}
		args, _ := json.Marshal(c.args)
		fmt.Fprintf(w, "\ncall %s %s  (%s)\n", c.name, args, time.Since(t0).Round(time.Microsecond))
		for _, content := range res.Content {
			if tc, ok := content.(*mcp.TextContent); ok {
				fmt.Fprintf(w, "  -> %s\n", tc.Text)
			}
		}
		if res.IsError {
			return fmt.Errorf("the demo call %s failed", c.name)
		}
	}
	return nil
}

// demoToolsWait bounds the wait for the demo page's tools.
const demoToolsWait = 15 * time.Second

// waitPageTools lists the page tools (those not named webmcp_...) each time
// the server says the list changed, until there are at least n, and returns
// them. It gives up after limit or when ctx ends.
func waitPageTools(ctx context.Context, cs *mcp.ClientSession, listChanged <-chan struct{}, n int, limit time.Duration) ([]*mcp.Tool, error) {
	bound := time.NewTimer(limit)
	defer bound.Stop()
	for {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("listing tools: %w", err)
		}
		var pageTools []*mcp.Tool
		for _, t := range res.Tools {
			if !strings.HasPrefix(t.Name, "webmcp_") {
				pageTools = append(pageTools, t)
			}
		}
		if len(pageTools) >= n {
			return pageTools, nil
		}
		select {
		case <-listChanged:
		case <-bound.C:
			return nil, fmt.Errorf("the demo page's tools did not appear within %s (found %d of %d); run with --log-level debug to see why", limit, len(pageTools), n)
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the demo page's tools: %w", context.Cause(ctx))
		}
	}
}

// ownToolName is a listed page tool's own name, from its provenance in
// _meta["webmcp-cdp/source"].
func ownToolName(t *mcp.Tool) string {
	src, _ := t.Meta["webmcp-cdp/source"].(map[string]any)
	name, _ := src["tool"].(string)
	return name
}
