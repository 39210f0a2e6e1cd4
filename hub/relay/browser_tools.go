package relay

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/hub/relay/proxy"
)

// ToolsListResult is the result of tools/list.
type ToolsListResult struct {
	Tools []*mcp.Tool    `json:"tools"`           // the routed tools, as MCP definitions
	Meta  map[string]any `json:"_meta,omitempty"` // holds proxy.VersionMetaKey
}

func (b *BrowserSide) toolsList(_ context.Context, _ string, _ json.RawMessage) (any, error) {
	// The version first: a change between the two reads makes the next wait
	// return at once, so no change is lost.
	v := b.opts.Hub.Version()
	routed := b.opts.Hub.Tools()
	tools := make([]*mcp.Tool, 0, len(routed))
	for _, rt := range routed {
		// Plain tools: the relay serves no resources, so no MCP App's view.
		t, appOnly := mcpserver.PlainTool(MCPTool(rt))
		if !appOnly {
			tools = append(tools, t)
		}
	}
	return ToolsListResult{Tools: tools, Meta: map[string]any{proxy.VersionMetaKey: v}}, nil
}

// toolsCall runs a routed tool for the client behind connection conn. A
// caller that says who answers the page's dialogs (_meta, ask.go) gets its
// calls through the Asker, as a local client's go through hitl.go; one
// that does not gets the old behaviour (alert accepted, the rest
// dismissed).
func (b *BrowserSide) toolsCall(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	var p proxy.ToolsCallParams
	if err := decode(proxy.MethodToolsCall, params, &p); err != nil {
		return nil, err
	}
	if p.Name == "" {
		return nil, proxy.Errorf(proxy.CodeInvalidParams, "Invalid params: tools/call needs params.name")
	}
	c, asked, err := askedCall(conn, p)
	if err != nil {
		return nil, err
	}
	if !asked {
		return mcpserver.CallToolResult(b.opts.Hub.Call(ctx, p.Name, p.Arguments)), nil
	}
	return b.asker.Call(ctx, c), nil
}

func (b *BrowserSide) waitForChanges(ctx context.Context, _ string, params json.RawMessage) (any, error) {
	var p proxy.WaitParams
	if err := decode(proxy.MethodWaitForChanges, params, &p); err != nil {
		return nil, err
	}
	wait := 25 * time.Second
	if p.TimeoutMS > 0 {
		wait = time.Duration(min(p.TimeoutMS, 55000)) * time.Millisecond
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		ch := b.opts.Hub.Changed()
		if v := b.opts.Hub.Version(); v != p.Since {
			return proxy.WaitResult{Version: v}, nil
		}
		select {
		case <-ch:
		case <-timer.C:
			return proxy.WaitResult{Version: b.opts.Hub.Version()}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
