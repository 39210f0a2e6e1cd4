package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
	"github.com/webmcp-cdp/webmcp-cdp/fixtures"
)

func newDemo() *cobra.Command {
	var lf launchFlags
	var bf browserFlags
	var exit bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Serve the built-in notes app, launch Chromium on it, call its tools through MCP, then serve MCP on stdio",
		Long: "demo serves a notes app (five WebMCP tools) from this binary on 127.0.0.1, launches Chromium on it,\n" +
			"lists the tools that appeared and calls a few through an in-process MCP client, printing what\n" +
			"happened on stderr. It then serves MCP on stdio like launch, until the client goes away\n" +
			"(with --exit, it stops after the demo).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			backend, err := bf.check()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return fmt.Errorf("serving the demo page: %w", err)
			}
			httpSrv := &http.Server{Handler: fixtures.Handler(), ReadHeaderTimeout: 5 * time.Second}
			go httpSrv.Serve(ln)
			defer httpSrv.Close()
			pageURL := "http://" + ln.Addr().String() + "/notes/"

			br, err := (&browsers.Launch{Options: lf.options(backend)}).Start(ctx)
			if err != nil {
				return err
			}
			defer br.End(context.WithoutCancel(ctx))
			bf.serve.viewport = lf.viewport
			s, err := startSession(ctx, br.Conn(), &bf.serve, backend, false)
			if err != nil {
				return err
			}
			if err := runDemo(ctx, os.Stderr, s, pageURL); err != nil {
				return err
			}
			if exit {
				return nil
			}
			if bf.http.addr == "" {
				fmt.Fprintln(os.Stderr, "\nServing MCP on stdio now; the notes app stays at", pageURL)
			}
			return s.run(ctx, &bf, br.Gone(), br.Reason)
		},
	}
	lf.register(cmd)
	bf.register(cmd.Flags())
	cmd.Flags().BoolVar(&exit, "exit", false, "stop after the demo instead of serving MCP on stdio")
	return cmd
}

// runDemo opens the notes app, waits for its tools, and calls some of them
// through a real MCP client connected in memory, printing each step to w.
func runDemo(ctx context.Context, w io.Writer, s *session, pageURL string) error {
	start := time.Now()
	tabs, err := s.openURLs(ctx, []string{pageURL}, true)
	if err != nil {
		return err
	}
	go s.settleStartPages(ctx, tabs, s.waitTools)
	clientT, serverT := mcp.NewInMemoryTransports()
	if _, err := s.server.MCP().Connect(ctx, serverT, nil); err != nil {
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
	fmt.Fprintf(w, "webmcp-cdp demo: the notes app at %s registered %d tools (%s after launch):\n", pageURL, len(pageTools), time.Since(start).Round(time.Millisecond))
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
