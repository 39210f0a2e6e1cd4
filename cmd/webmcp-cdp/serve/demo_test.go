package serve

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestWaitPageTools: the demo lists tools when the server says the list
// changed, not on a clock: it returns right after the last tool it needs
// appears, having listed once per notification (a 50 ms poll would list
// every 50 ms), and gives up at its bound.
func TestWaitPageTools(t *testing.T) {
	const gap = 100 * time.Millisecond
	tests := []struct {
		name      string
		add       int  // tools the page adds, one every gap
		upfront   bool // the page has added them before the wait starts
		want      int
		limit     time.Duration
		wantErr   string
		min, max  time.Duration
		maxListed int32
	}{
		// The upper bounds only catch a wait that runs to its limit (5 s)
		// or far past it: a loaded machine stretches the page's gaps (a
		// 400 ms margin failed at load 12). The list count is what shows
		// the demo waits on notifications, not on a clock.
		{name: "tools come one by one", add: 5, want: 5, limit: 5 * time.Second,
			min: 5 * gap, max: 5*gap + 3*time.Second, maxListed: 7},
		// The page's two tools are there before the wait starts, so that
		// the error's count does not hang on the page's pace (at load 30
		// the second tool came after the 600 ms bound).
		{name: "too few tools", add: 2, upfront: true, want: 5, limit: 600 * time.Millisecond, wantErr: "found 2 of 5",
			min: 600 * time.Millisecond, max: 600*time.Millisecond + 3*time.Second, maxListed: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			srv := mcp.NewServer(&mcp.Implementation{Name: "page", Version: "0"}, &mcp.ServerOptions{
				Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
			})
			var listed atomic.Int32
			srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if method == "tools/list" {
						listed.Add(1)
					}
					return next(ctx, method, req)
				}
			})
			// One of our own tools, which does not count as a page tool.
			srv.AddTool(&mcp.Tool{Name: "webmcp_list_tabs", InputSchema: map[string]any{"type": "object"}}, nil)
			st, ct := mcp.NewInMemoryTransports()
			if _, err := srv.Connect(ctx, st, nil); err != nil {
				t.Fatal(err)
			}
			listChanged := make(chan struct{}, 1)
			client := mcp.NewClient(&mcp.Implementation{Name: "demo", Version: "0"}, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
					select {
					case listChanged <- struct{}{}:
					default:
					}
				},
			})
			cs, err := client.Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			addTools := func(gap time.Duration) {
				for i := range tt.add {
					time.Sleep(gap) // the page taking its time, not a poll
					srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("site_tool%d", i), InputSchema: map[string]any{"type": "object"}},
						func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
							return &mcp.CallToolResult{}, nil
						})
				}
			}
			if tt.upfront {
				addTools(0)
			}
			start := time.Now()
			if !tt.upfront {
				go addTools(gap)
			}
			tools, err := waitPageTools(ctx, cs, listChanged, tt.want, tt.limit)
			took := time.Since(start)
			switch {
			case tt.wantErr == "" && (err != nil || len(tools) != tt.want):
				t.Errorf("got %d tools, %v; want %d", len(tools), err, tt.want)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error %v, want one about %q", err, tt.wantErr)
			}
			if took < tt.min || took > tt.max {
				t.Errorf("took %s, want between %s and %s", took, tt.min, tt.max)
			}
			t.Logf("listed %d times in %s", listed.Load(), took)
			if n := listed.Load(); n > tt.maxListed {
				t.Errorf("listed the tools %d times, want at most %d: it polls", n, tt.maxListed)
			}
		})
	}
}
