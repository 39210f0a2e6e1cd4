package relay

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file holds the connect side's tools of its own: the browser
// methods of seed 001 offered as MCP tools.

// browserTool maps a tool of connect's own onto a forwarded method.
type browserTool struct {
	name, method, description string
	schema                    string
	readOnly, image           bool
}

const tabIDSchema = `"tabId":{"type":"integer","description":"the tab number, as webmcp_list_tabs shows it (default: the selected tab, else the active one, else the only one)"}`

// browserTools are connect's tools for the seed's browser methods.
func browserTools() []browserTool {
	point := `{"type":"object","properties":{"selector":{"type":"string","description":"a CSS selector; the first match is used"},` +
		`"x":{"type":"number","description":"x in CSS pixels of the viewport, with y, instead of a selector"},"y":{"type":"number"},` + tabIDSchema + `}}`
	tabOnly := `{"type":"object","properties":{` + tabIDSchema + `}}`
	return []browserTool{
		{name: "webmcp_list_tabs", method: "getTabs", readOnly: true, schema: `{"type":"object","properties":{}}`,
			description: "List the remote browser's tabs (number, URL, title, active, selected) and the page tools that reach each."},
		{name: "webmcp_open_tab", method: "createTab", schema: `{"type":"object","properties":{"url":{"type":"string","description":"the URL to open"}},"required":["url"]}`,
			description: "Open a URL in a new tab of the remote browser and select it; its page tools then appear in the tool list."},
		{name: "webmcp_select_tab", method: "selectTab", schema: `{"type":"object","properties":{` + tabIDSchema + `},"required":["tabId"]}`,
			description: "Choose the tab that the browser tools act on when no tabId is given."},
		{name: "webmcp_activate_tab", method: "activateTab", schema: tabOnly,
			description: "Bring a tab to the front; site-level tool names then go to it first."},
		{name: "webmcp_close_tab", method: "closeTab", schema: tabOnly,
			description: "Close a tab; its tools go away."},
		{name: "webmcp_navigate", method: "browser_navigate", schema: `{"type":"object","properties":{"url":{"type":"string"},` + tabIDSchema + `},"required":["url"]}`,
			description: "Load a URL in a tab and wait for it to load."},
		{name: "webmcp_go_back", method: "goBack", schema: tabOnly, description: "Go back one page in a tab's history."},
		{name: "webmcp_go_forward", method: "goForward", schema: tabOnly, description: "Go forward one page in a tab's history."},
		{name: "webmcp_click", method: "click", schema: point, description: "Click an element (by CSS selector) or a point of a tab."},
		{name: "webmcp_hover", method: "hover", schema: point, description: "Move the mouse over an element (by CSS selector) or a point of a tab."},
		{name: "webmcp_type", method: "type", schema: `{"type":"object","properties":{"text":{"type":"string"},` +
			`"selector":{"type":"string","description":"the element to type into (default: the focused one)"},` +
			`"submit":{"type":"boolean","description":"press Enter afterwards"},` + tabIDSchema + `}}`,
			description: "Type text into an element of a tab, optionally pressing Enter."},
		{name: "webmcp_screenshot", method: "screenshot", readOnly: true, image: true, schema: `{"type":"object","properties":{` +
			`"format":{"type":"string","enum":["png","jpeg","webp"]},"quality":{"type":"integer","minimum":1,"maximum":100},` +
			`"fullPage":{"type":"boolean","description":"the whole scrollable page instead of the viewport"},` + tabIDSchema + `}}`,
			description: "Take a screenshot of a tab."},
	}
}

func (r *Remote) ownToolNames() []string {
	names := []string{"webmcp_relay_status", "webmcp_call"}
	for _, bt := range browserTools() {
		names = append(names, bt.name)
	}
	return names
}

func (r *Remote) addOwnTools() {
	r.server.AddTool(&mcp.Tool{
		Name:        "webmcp_relay_status",
		Description: "[webmcp-cdp relay] Which remote browser this is, which browsers the relay has for this user, and why none is connected when that is so.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		st := r.Status()
		b, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("encoding the status: %w", err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: st}, nil
	})
	r.server.AddTool(&mcp.Tool{
		Name:        "webmcp_call",
		Description: "[webmcp-cdp relay] Call any page tool of the remote browser by its routed name, for clients whose tool list is out of date.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"the routed tool name"},` +
			`"arguments":{"type":"object","description":"the tool's arguments"}},"required":["name"]}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in toolsCallParams
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || in.Name == "" {
			return errorResult("webmcp_call needs {name, arguments}"), nil
		}
		return r.callTool(ctx, req, in.Name, in.Arguments), nil
	})
	for _, bt := range browserTools() {
		t := &mcp.Tool{
			Name:        bt.name,
			Description: "[webmcp-cdp relay] " + bt.description,
			InputSchema: json.RawMessage(bt.schema),
		}
		if bt.readOnly {
			t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
		}
		r.server.AddTool(t, r.browserHandler(bt))
	}
}

// browserHandler forwards a tool's arguments as the method's params.
func (r *Remote) browserHandler(bt browserTool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c, why := r.current()
		if c == nil {
			return errorResult("%s cannot run: %s", bt.name, why), nil
		}
		var params any = struct{}{}
		if args := req.Params.Arguments; len(args) > 0 && !isNull(args) {
			params = args
		}
		var raw json.RawMessage
		if err := c.Call(ctx, bt.method, params, &raw); err != nil {
			return errorResult("%s: %v", bt.name, err), nil
		}
		if bt.image {
			var shot ScreenshotResult
			if err := json.Unmarshal(raw, &shot); err != nil {
				return errorResult("%s: the browser's answer is not a screenshot: %v", bt.name, err), nil
			}
			img, err := base64.StdEncoding.DecodeString(shot.Data)
			if err != nil {
				return errorResult("%s: the screenshot is not base64: %v", bt.name, err), nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: img, MIMEType: shot.MIMEType}}}, nil
		}
		var structured map[string]any
		if json.Unmarshal(raw, &structured) == nil && structured != nil {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}, StructuredContent: structured}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}}, nil
	}
}
