package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
)

// This file holds the server's own tools: webmcp_list_tabs, webmcp_call,
// webmcp_list_tools and the tab tools.

type tabArgs struct {
	Tab int `json:"tab" jsonschema:"the tab number, as webmcp_list_tabs shows it"`
}

type openArgs struct {
	URL    string `json:"url" jsonschema:"the URL to open"`
	WaitMS int    `json:"wait_ms,omitempty" jsonschema:"how long to wait for the page's tools, in milliseconds (default 5000, at most 30000)"`
}

type callArgs struct {
	Name      string         `json:"name" jsonschema:"the routed tool name, as tools/list or webmcp_list_tabs shows it"`
	Arguments map[string]any `json:"arguments,omitempty" jsonschema:"the tool's arguments, a JSON object"`
}

type tabsOut struct {
	Tabs []hub.TabInfo `json:"tabs"`
}

type listToolsArgs struct {
	Filter  string `json:"filter,omitempty" jsonschema:"only tools whose name or description contains this text (any letter case)"`
	Schemas bool   `json:"schemas,omitempty" jsonschema:"include each tool's inputSchema"`
}

// listedTool is one page tool in webmcp_list_tools's compact listing.
type listedTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema,omitempty"`
}

type listToolsOut struct {
	Tools []listedTool `json:"tools"`
}

// compactDescription is the first line of a description, cut to 200 bytes.
func compactDescription(d string) string {
	d, _, _ = strings.Cut(d, "\n")
	if len(d) > 200 {
		cut := 200
		for cut > 0 && d[cut]&0xC0 == 0x80 {
			cut--
		}
		d = d[:cut] + "…"
	}
	return d
}

// listTools is webmcp_list_tools: the catalog's page tools, compactly.
func (s *Server) listTools(in listToolsArgs) listToolsOut {
	out := listToolsOut{Tools: []listedTool{}}
	filter := strings.ToLower(in.Filter)
	for _, rt := range s.hub.Tools() {
		desc := described(rt)
		if filter != "" && !strings.Contains(strings.ToLower(rt.Name+" "+desc), filter) {
			continue
		}
		lt := listedTool{Name: rt.Name, Description: compactDescription(desc)}
		if in.Schemas {
			if err := json.Unmarshal(safeSchema(rt.Name, rt.Tool.InputSchema, s.logger), &lt.InputSchema); err != nil {
				s.logger.Warn("cannot list a page tool's inputSchema", "name", rt.Name, "err", err)
			}
		}
		out.Tools = append(out.Tools, lt)
	}
	return out
}

func (s *Server) addOwnTools() {
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "webmcp_list_tabs", Description: "[webmcp-cdp] List the open tabs (number, URL, title, active) and the tools that reach each.", Annotations: ro},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, tabsOut, error) {
			return nil, tabsOut{Tabs: s.hub.Tabs()}, nil
		})
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "webmcp_call", Description: "[webmcp-cdp] Call any page tool by its routed name, for clients whose tool list is out of date."},
		func(ctx context.Context, req *mcp.CallToolRequest, in callArgs) (*mcp.CallToolResult, any, error) {
			args, err := json.Marshal(in.Arguments)
			if err != nil {
				return nil, nil, fmt.Errorf("encoding the arguments: %w", err)
			}
			res, err := s.handleCall(ctx, req, in.Name, args)
			return res, nil, err
		})
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "webmcp_list_tools", Annotations: ro,
		Description: "[webmcp-cdp] List the page tools now available (name and a one-line description; schemas on request), " +
			"for clients that never refresh their tool list; call them with webmcp_call."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in listToolsArgs) (*mcp.CallToolResult, listToolsOut, error) {
			return nil, s.listTools(in), nil
		})
	if s.opts.Tabs == nil {
		return
	}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "webmcp_open_tab", Description: "[webmcp-cdp] Open a URL in a new tab, wait for its page tools, and report them."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in openArgs) (*mcp.CallToolResult, hub.TabInfo, error) {
			wait := toolWait(in.WaitMS)
			id, err := s.opts.Tabs.Open(ctx, in.URL)
			if err != nil {
				return nil, hub.TabInfo{}, err
			}
			ti, ok := s.waitTools(ctx, id, wait, true)
			if !ok {
				return nil, hub.TabInfo{}, fmt.Errorf("the tab opened on %s was closed before its page was ready", in.URL)
			}
			return nil, ti, nil
		})
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "webmcp_reload_tab", Description: "[webmcp-cdp] Reload a tab, wait until the new page has loaded and its tools are back, and report them."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in reloadArgs) (*mcp.CallToolResult, hub.TabInfo, error) {
			ti, ok := s.hub.Tab(in.Tab)
			if !ok {
				return nil, hub.TabInfo{}, fmt.Errorf("no tab %d is open; webmcp_list_tabs lists the open tabs", in.Tab)
			}
			// The whole reload, load and tools, within the wait: a page that
			// takes longer is reported as it is then.
			wait := toolWait(in.WaitMS)
			deadline := time.Now().Add(wait)
			rctx, cancel := context.WithDeadline(ctx, deadline)
			defer cancel()
			if err := s.opts.Tabs.Reload(rctx, ti.ID); err != nil && (rctx.Err() == nil || ctx.Err() != nil) {
				return nil, hub.TabInfo{}, err
			}
			// Reload returns once the new document loaded, so the old one's
			// tools are gone: wait for the new one's to settle. A page that
			// had no tools is not waited for beyond the quiet period.
			now, ok := s.waitTools(ctx, ti.ID, time.Until(deadline), len(ti.Tools) > 0)
			if !ok {
				return nil, hub.TabInfo{}, fmt.Errorf("tab %d was closed while it reloaded", ti.N)
			}
			msg := fmt.Sprintf("done: tab %d (%s) reloaded", now.N, now.URL)
			switch {
			case len(now.Tools) > 0:
				msg += "; its tools: " + strings.Join(now.Tools, ", ")
			case len(ti.Tools) > 0:
				msg += fmt.Sprintf("; its tools did not come back within %s (webmcp_list_tabs shows them when they do)", wait)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, now, nil
		})
	tabTool := func(name, desc string, do func(ctx context.Context, ti hub.TabInfo) error) {
		mcp.AddTool(s.mcp, &mcp.Tool{Name: name, Description: desc},
			func(ctx context.Context, _ *mcp.CallToolRequest, in tabArgs) (*mcp.CallToolResult, any, error) {
				ti, ok := s.hub.Tab(in.Tab)
				if !ok {
					return nil, nil, fmt.Errorf("no tab %d is open; webmcp_list_tabs lists the open tabs", in.Tab)
				}
				if err := do(ctx, ti); err != nil {
					return nil, nil, err
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("done: tab %d (%s)", ti.N, ti.URL)}}}, nil, nil
			})
	}
	tabTool("webmcp_activate_tab", "[webmcp-cdp] Bring a tab to the front; site-level tool names then go to it first.", func(ctx context.Context, ti hub.TabInfo) error {
		if err := s.opts.Tabs.ActivateTab(ctx, ti.ID); err != nil {
			return err
		}
		s.hub.SetActive(ti.ID)
		return nil
	})
	tabTool("webmcp_close_tab", "[webmcp-cdp] Close a tab; its tools go away.", func(ctx context.Context, ti hub.TabInfo) error {
		return s.opts.Tabs.CloseTab(ctx, ti.ID)
	})
}
