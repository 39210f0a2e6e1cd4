package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
)

// This file holds the server's own tools: webmcp_list_tabs, webmcp_call,
// webmcp_list_tools and the tab tools.

// The own tools' schemas, written out: the fewest bytes a model needs
// (every byte of tools/list is context the agent pays for on each turn; the
// argument names speak for themselves, and each description says when to
// use the tool). Their handlers return structured output without an
// outputSchema, for the same reason.
var (
	schemaNone      = json.RawMessage(`{"type":"object"}`)
	schemaTab       = json.RawMessage(`{"type":"object","properties":{"tab":{"type":"integer"}},"required":["tab"]}`)
	schemaTabWait   = json.RawMessage(`{"type":"object","properties":{"tab":{"type":"integer"},"wait_ms":{"type":"integer"}},"required":["tab"]}`)
	schemaOpen      = json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"},"wait_ms":{"type":"integer"}},"required":["url"]}`)
	schemaOpenIn    = json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"},"browser":{"type":"string"},"wait_ms":{"type":"integer"}},"required":["url"]}`)
	schemaCall      = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"arguments":{"type":"object"}},"required":["name"]}`)
	schemaListTools = json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"},"schema":{"type":"boolean"}}}`)
)

type tabArgs struct {
	Tab int `json:"tab"`
}

type openArgs struct {
	URL string `json:"url"`
	// Browser names the browser to open it in, when the server serves
	// several (BrowserOpener).
	Browser string `json:"browser,omitempty"`
	WaitMS  int    `json:"wait_ms,omitempty"`
}

type callArgs struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

type tabsOut struct {
	Tabs []hub.TabInfo `json:"tabs"`
}

// listToolsArgs are webmcp_list_tools's arguments.
type listToolsArgs struct {
	// Query is words to look for in the tools' names, titles,
	// descriptions and sites; empty lists every tool.
	Query string `json:"query,omitempty"`
	// Limit is the most tools returned (default defaultSearchLimit).
	Limit int `json:"limit,omitempty"`
	// Schema asks for each tool's inputSchema.
	Schema bool `json:"schema,omitempty"`
}

// defaultSearchLimit is how many tools webmcp_list_tools returns unless
// told otherwise.
const defaultSearchLimit = 20

// listedTool is one page tool in webmcp_list_tools's compact listing.
type listedTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema,omitempty"`
}

// listToolsOut is webmcp_list_tools's answer.
type listToolsOut struct {
	Tools []listedTool `json:"tools"`
	// More is how many more tools matched than were returned.
	More int `json:"more,omitempty"`
	// Note says what the agent may want to know next: that more matched,
	// or that some tools are not in its tool list and how to call them.
	Note string `json:"note,omitempty"`
}

// The number of the server's own tools: the three that are always there
// (list tabs, call, list tools) and the four tab tools (open, reload,
// activate, close).
const (
	ownToolsBase = 3
	ownTabTools  = 4
)

// OwnToolCount is the number of the server's own webmcp_* tools, with the
// tab tools (Options.Tabs set) or without: tools/list always holds them,
// and ListPolicy.Max counts them.
func OwnToolCount(tabTools bool) int {
	if tabTools {
		return ownToolsBase + ownTabTools
	}
	return ownToolsBase
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

// listTools is webmcp_list_tools: the page tools that match the query,
// best first, compactly.
func (s *Server) listTools(in listToolsArgs) listToolsOut {
	limit := in.Limit
	if limit <= 0 {
		limit = defaultSearchLimit
	}
	hits, total := s.hub.Search(in.Query, limit)
	out := listToolsOut{Tools: make([]listedTool, 0, len(hits)), More: total - len(hits)}
	for _, hit := range hits {
		rt := hit.Tool
		if appOnly(rt.Tool.Meta) {
			continue // a view's tool, kept from the model (apps.go)
		}
		lt := listedTool{Name: rt.Name, Description: compactDescription(described(rt))}
		if in.Schema {
			if err := json.Unmarshal(safeSchema(rt.Name, rt.Tool.InputSchema, s.logger), &lt.InputSchema); err != nil {
				s.logger.Warn("cannot list a page tool's inputSchema", "name", rt.Name, "err", err)
			}
		}
		out.Tools = append(out.Tools, lt)
	}
	var notes []string
	if out.More > 0 {
		notes = append(notes, fmt.Sprintf("%d more match: raise limit or add words to the query", out.More))
	}
	if n := s.unlisted.Load(); n > 0 {
		notes = append(notes, fmt.Sprintf("%d page tools are not in your tool list (%s); call any tool by its name or with webmcp_call", n, s.listPolicy()))
	}
	if len(hits) == 0 && in.Query != "" {
		notes = append(notes, "no tool matches; try other words, or none to list every tool")
	}
	out.Note = strings.Join(notes, "; ")
	return out
}

func (s *Server) addOwnTools() {
	s.mcp.AddReceivingMiddleware(s.teachUnknown, s.noteClients)
	s.mcp.AddReceivingMiddleware(callerFromToken) // oauth.go
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "webmcp_list_tabs", Annotations: ro, InputSchema: schemaNone,
		Description: "List the open tabs (number, URL, title, active) and their tools."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return nil, tabsOut{Tabs: s.hub.Tabs()}, nil
		})
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "webmcp_call", InputSchema: schemaCall,
		Description: "Call a page tool by name with its arguments, such as one webmcp_list_tools found that is not in your tool list."},
		func(ctx context.Context, req *mcp.CallToolRequest, in callArgs) (*mcp.CallToolResult, any, error) {
			args, err := json.Marshal(in.Arguments)
			if err != nil {
				return nil, nil, fmt.Errorf("encoding the arguments: %w", err)
			}
			res, err := s.handleCall(ctx, req, in.Name, args)
			return res, nil, err
		})
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "webmcp_list_tools", Annotations: ro, InputSchema: schemaListTools,
		Description: "Search the page tools of every open tab by words (query), best first; schema:true adds their inputSchemas. " +
			"Use it when a tool you need is not in your list, or a call says it is gone."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in listToolsArgs) (*mcp.CallToolResult, any, error) {
			return nil, s.listTools(in), nil
		})
	s.ownCount = OwnToolCount(s.opts.Tabs != nil)
	if s.opts.Tabs == nil {
		return
	}
	openTool := &mcp.Tool{Name: "webmcp_open_tab", InputSchema: schemaOpen,
		Description: "Open a URL in a new tab; returns its tools once the page has them."}
	bo, several := s.opts.Tabs.(BrowserOpener)
	if several {
		openTool.InputSchema = schemaOpenIn
		openTool.Description = "Open a URL in a new tab of a browser (default: the one that had the site, else the first; webmcp_list_tabs names them); returns its tools once the page has them."
	}
	mcp.AddTool(s.mcp, openTool,
		func(ctx context.Context, _ *mcp.CallToolRequest, in openArgs) (*mcp.CallToolResult, any, error) {
			wait := toolWait(in.WaitMS)
			var id string
			var err error
			switch {
			case in.Browser == "":
				id, err = s.opts.Tabs.Open(ctx, in.URL)
			case several:
				id, err = bo.OpenIn(ctx, in.Browser, in.URL)
			default:
				return nil, nil, errors.New("this server serves one browser: call webmcp_open_tab without browser")
			}
			if err != nil && id != "" {
				return nil, nil, s.openFailed(ctx, id, in.URL, err)
			}
			if err != nil {
				return nil, nil, err
			}
			ti, ok := s.waitTools(ctx, id, wait, true, false)
			if !ok {
				return nil, nil, fmt.Errorf("the tab opened on %s was closed before its page was ready (the person or the page closed it); call webmcp_open_tab again to open it anew", in.URL)
			}
			s.recorder.TabOpened(ti.N, ti.URL)
			return nil, ti, nil
		})
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "webmcp_reload_tab", InputSchema: schemaTabWait,
		Description: "Reload a tab whose page is stuck or lost its tools; returns its tools once back."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in reloadArgs) (*mcp.CallToolResult, any, error) {
			ti, ok := s.hub.Tab(in.Tab)
			if !ok {
				return nil, nil, noTab(in.Tab)
			}
			// The whole reload, load and tools, within the wait: a page that
			// takes longer is reported as it is then.
			wait := toolWait(in.WaitMS)
			deadline := time.Now().Add(wait)
			rctx, cancel := context.WithDeadline(ctx, deadline)
			defer cancel()
			if err := s.opts.Tabs.Reload(rctx, ti.ID); err != nil && (rctx.Err() == nil || ctx.Err() != nil) {
				return nil, nil, err
			}
			s.recorder.TabReloaded(ti.N)
			// Reload returns once the new document loaded, so the old one's
			// tools are gone: wait for the new one's to settle. A page that
			// had no tools is not waited for beyond the quiet period.
			now, ok := s.waitTools(ctx, ti.ID, time.Until(deadline), len(ti.Tools) > 0, true)
			if !ok {
				return nil, nil, fmt.Errorf("tab %d was closed while it reloaded; webmcp_open_tab opens its page again (url %s)", ti.N, ti.URL)
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
		mcp.AddTool(s.mcp, &mcp.Tool{Name: name, Description: desc, InputSchema: schemaTab},
			func(ctx context.Context, _ *mcp.CallToolRequest, in tabArgs) (*mcp.CallToolResult, any, error) {
				ti, ok := s.hub.Tab(in.Tab)
				if !ok {
					return nil, nil, noTab(in.Tab)
				}
				if err := do(ctx, ti); err != nil {
					return nil, nil, err
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("done: tab %d (%s)", ti.N, ti.URL)}}}, nil, nil
			})
	}
	tabTool("webmcp_activate_tab", "Bring a tab to the front: site-level tool names then go to it, and its tools lead your list.", func(ctx context.Context, ti hub.TabInfo) error {
		if err := s.opts.Tabs.ActivateTab(ctx, ti.ID); err != nil {
			return err
		}
		s.hub.SetActive(ti.ID)
		return nil
	})
	tabTool("webmcp_close_tab", "Close a tab and its tools.", func(ctx context.Context, ti hub.TabInfo) error {
		if err := s.opts.Tabs.CloseTab(ctx, ti.ID); err != nil {
			return err
		}
		s.recorder.TabClosed(ti.N)
		return nil
	})
}

// loadFailure is the error of a page the browser could not load: its
// LoadFailure says why, as the browser put it (cdp.LoadError has it).
type loadFailure interface {
	error
	LoadFailure() string
}

// closeFailedTimeout bounds closing the tab of a page that could not load.
const closeFailedTimeout = 5 * time.Second

// openFailed is webmcp_open_tab's error when Tabs.Open made tab id but the
// page could not load: the tab, which shows the browser's error page and
// no tools, is closed, and the error says what to check.
func (s *Server) openFailed(ctx context.Context, id, url string, err error) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeFailedTimeout)
	defer cancel()
	if cerr := s.opts.Tabs.CloseTab(cctx, id); cerr != nil {
		s.logger.Warn("could not close the tab of a page that did not load", "url", url, "err", cerr)
	}
	why := err.Error()
	if lf, ok := errors.AsType[loadFailure](err); ok {
		why = lf.LoadFailure()
	}
	return fmt.Errorf("the page %s could not load (%s), so its tab was closed; check the URL and that the site is up, then call webmcp_open_tab again", url, why)
}

// noTab is the error of a tab tool given a tab that is not open.
func noTab(n int) error {
	return fmt.Errorf("no tab %d is open (it may have been closed): webmcp_list_tabs lists the open tabs, and webmcp_open_tab opens a page again", n)
}
