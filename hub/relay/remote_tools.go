package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
)

// This file keeps the connect side's list of the remote browser's page
// tools in step, and runs them.

// followTools lists the browser's tools, then waits for changes with
// webmcp/waitForChanges and lists them again after each.
func (r *Remote) followTools(ctx context.Context, c *Client) {
	var v uint64
	synced := false
	for ctx.Err() == nil {
		if !synced {
			nv, err := r.syncTools(ctx, c)
			if err != nil {
				if ctx.Err() == nil {
					r.log.Warn("listing the browser's tools", "err", err)
					sleep(ctx, 500*time.Millisecond)
				}
				continue
			}
			v, synced = nv, true
		}
		var res WaitResult
		err := c.Call(ctx, MethodWaitForChanges, WaitParams{Since: v, TimeoutMS: 25000}, &res)
		var rpcErr *Error
		switch {
		case ctx.Err() != nil:
			return
		case errors.As(err, &rpcErr) && rpcErr.Code == CodeMethodNotFound:
			// A browser side without long polls: list again now and then.
			sleep(ctx, 2*time.Second)
			synced = false
		case err != nil:
			r.log.Debug("waiting for tool changes", "err", err)
			sleep(ctx, time.Second)
		case res.Version != v:
			synced = false
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// syncTools makes the server's remote tools equal to the browser's and
// returns the catalog version they come from.
func (r *Remote) syncTools(ctx context.Context, c *Client) (uint64, error) {
	var res struct {
		Tools []json.RawMessage          `json:"tools"`
		Meta  map[string]json.RawMessage `json:"_meta"`
	}
	if err := c.Call(ctx, MethodToolsList, struct{}{}, &res); err != nil {
		return 0, fmt.Errorf("tools/list: %w", err)
	}
	var v uint64
	if raw, ok := res.Meta[VersionMetaKey]; ok {
		_ = json.Unmarshal(raw, &v)
	}
	r.applyTools(ctx, res.Tools)
	return v, nil
}

// applyTools makes the server list exactly the given remote tools, as
// one new snapshot of its ToolSet (which then tells the client the list
// changed). Definitions come from another machine: each is checked, and
// one the SDK would refuse is skipped, not fatal. Only definitions that
// changed are decoded and rendered again.
func (r *Remote) applyTools(ctx context.Context, raws []json.RawMessage) {
	r.toolsMu.Lock()
	defer r.toolsMu.Unlock()
	if ctx.Err() != nil {
		return // the browser went away while the list was on its way
	}
	own := make(map[string]bool)
	for _, t := range r.ownToolNames() {
		own[t] = true
	}
	byRaw := make(map[string]remoteListed, len(r.listed))
	for _, l := range r.listed {
		byRaw[l.raw] = l
	}
	listed := make(map[string]remoteListed, len(raws))
	entries := make([]mcpserver.ToolEntry, 0, len(raws))
	for _, raw := range raws {
		if len(listed) >= r.opts.MaxTools {
			r.log.Warn("the browser lists more tools than the limit; the rest are left out", "limit", r.opts.MaxTools)
			break
		}
		l, ok := byRaw[string(raw)]
		if !ok {
			t, err := remoteTool(raw)
			if err != nil {
				r.log.Warn("skipping a remote tool", "err", err)
				continue
			}
			if own[t.Name] {
				r.log.Warn("skipping a remote tool whose name is one of connect's own", "name", t.Name)
				continue
			}
			rendered, err := mcpserver.RenderTool(t)
			if err != nil {
				r.log.Warn("skipping a remote tool", "name", t.Name, "err", err)
				continue
			}
			l = remoteListed{raw: string(raw), entry: mcpserver.ToolEntry{Name: t.Name, JSON: rendered, Handler: r.remoteHandler(t.Name)}}
		}
		if _, dup := listed[l.entry.Name]; dup {
			continue
		}
		listed[l.entry.Name] = l
		entries = append(entries, l.entry)
	}
	r.listed = listed
	r.tools.Set(entries)
}

// remoteTool decodes and checks one tool definition.
func remoteTool(raw json.RawMessage) (*mcp.Tool, error) {
	var t mcp.Tool
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("a tool definition does not decode: %w", err)
	}
	if t.Name == "" || len(t.Name) > 128 {
		return nil, fmt.Errorf("a tool name must have 1 to 128 bytes (got %d)", len(t.Name))
	}
	schema, ok := t.InputSchema.(map[string]any)
	if !ok || schema["type"] != "object" {
		return nil, fmt.Errorf("the tool %q has no object input schema", t.Name)
	}
	// A page server's tool may declare an output schema (the browser's hub
	// admitted it and checks the results against it); one that is not an
	// object schema would make clients refuse the whole list, so it goes.
	if out, ok := t.OutputSchema.(map[string]any); !ok || out["type"] != "object" {
		t.OutputSchema = nil
	}
	if err := mcpserver.CheckTool(&t); err != nil {
		return nil, err
	}
	return &t, nil
}

// removeRemoteTools removes every remote tool (the browser went away).
func (r *Remote) removeRemoteTools() {
	r.toolsMu.Lock()
	defer r.toolsMu.Unlock()
	r.listed = make(map[string]remoteListed)
	r.tools.Set(nil)
}

// current returns the relay connection when a browser is connected, or the
// reason there is none.
func (r *Remote) current() (*Client, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client != nil && r.linked {
		return r.client, ""
	}
	if r.status.Problem != "" {
		return nil, r.status.Problem
	}
	return nil, "no browser is connected through the relay right now"
}

func errorResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func (r *Remote) remoteHandler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return r.callTool(ctx, req, name, req.Params.Arguments), nil
	}
}

// callTool calls a routed tool of the browser for the client of req; the
// page's questions go to that client (ask.go).
func (r *Remote) callTool(ctx context.Context, req *mcp.CallToolRequest, name string, args json.RawMessage) *mcp.CallToolResult {
	c, why := r.current()
	if c == nil {
		return errorResult("%s cannot run: %s", name, why)
	}
	return r.callAsking(ctx, c, req, name, args)
}
