// Package mcpserver serves a hub's routed tools over MCP with the go-sdk:
// it keeps the server's tool list in step with the catalog (the SDK then
// sends notifications/tools/list_changed) and adds a few tools of its own
// for agents: list, open, activate, reload and close tabs, and
// webmcp_list_tools and webmcp_call for clients that never refresh their
// tool list.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
)

// Tabs is what the tab tools need from a browser.
type Tabs interface {
	Open(ctx context.Context, url string) (string, error)
	CloseTab(ctx context.Context, tab string) error
	ActivateTab(ctx context.Context, tab string) error
	Reload(ctx context.Context, tab string) error
}

// Options configures a Server.
type Options struct {
	// Version is reported to clients.
	Version string
	// Tabs enables the tab tools when set.
	Tabs Tabs
	// Logger receives the log (default slog.Default()).
	Logger *slog.Logger
	// Dialogs is what happens to a page dialog when the client cannot be
	// asked (default DialogsFail).
	Dialogs DialogPolicy
	// Confirm says which tools need the client's go-ahead (default none).
	Confirm ConfirmPolicy
	// CallTimeout is how long a call, or a question to the client, may wait
	// (default 30 s).
	CallTimeout time.Duration
	// FirstList, when set, holds every client's first tools/list until it
	// is closed (see ToolSetOptions.FirstList); cmd/webmcp-cdp closes it
	// once the start pages' tools have settled.
	FirstList <-chan struct{}
}

// Server is an MCP server over a hub.
type Server struct {
	hub    *hub.Hub
	mcp    *mcp.Server
	opts   Options
	logger *slog.Logger
	tools  *ToolSet
	listed map[string]pageTool // by routed name: what the last sync listed
	calls  callLog
	hitl   *hitl
	// pages and served are the MCP-B page servers' sessions and what of
	// their resources and prompts is served (pageserver.go, resources.go).
	pages  pageSessions
	served servedCatalog
}

// callLog keeps the last calls for the status page.
type callLog struct {
	mu   sync.Mutex
	recs []hub.CallRecord
}

func (l *callLog) add(r hub.CallRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r)
	if len(l.recs) > 50 {
		l.recs = l.recs[len(l.recs)-50:]
	}
}

// list returns the calls, newest first.
func (l *callLog) list() []hub.CallRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]hub.CallRecord, len(l.recs))
	for i, r := range l.recs {
		out[len(out)-1-i] = r
	}
	return out
}

// New returns a server over h. It follows the catalog until ctx ends.
func New(ctx context.Context, h *hub.Hub, opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Dialogs == "" {
		opts.Dialogs = DialogsFail
	}
	if opts.Confirm == "" {
		opts.Confirm = ConfirmNone
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 30 * time.Second
	}
	s := &Server{
		hitl:   newHITL(),
		hub:    h,
		opts:   opts,
		logger: opts.Logger,
		listed: make(map[string]pageTool),
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "webmcp-cdp", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: "Tools named <site>_<tool> come from web pages open in a browser; " +
			"<site>_tab<N>_<tool> reaches one tab when several have the tool. " +
			"Page tools appear and disappear as pages load; webmcp_list_tabs shows what is open.",
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true}},
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: s.unsubscribe,
		Logger:             opts.Logger,
	})
	go s.runPageServers(ctx)
	s.tools = NewToolSet(s.mcp, ToolSetOptions{Logger: opts.Logger, FirstList: opts.FirstList})
	go s.tools.Run(ctx)
	s.addOwnTools()
	changes, stopChanges := h.Watch()
	calls, stopCalls := h.WatchCalls(64)
	s.sync()
	go func() {
		defer stopCalls()
		for {
			select {
			case <-ctx.Done():
				return
			case r := <-calls:
				s.calls.add(r)
			}
		}
	}()
	go func() {
		defer stopChanges()
		s.follow(ctx, changes)
	}()
	return s
}

// MCP returns the go-sdk server, to run on a transport.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// follow applies catalog changes one sync at a time; changes that arrive
// while a sync runs fold into one more sync (the hub's watch channel holds
// one pending signal), so the last change is never lost. Pacing the
// notifications is the ToolSet's.
func (s *Server) follow(ctx context.Context, changes <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-changes:
			s.sync()
		}
	}
}

// pageTool is a routed tool as the last sync listed it.
type pageTool struct {
	rt      hub.RoutedTool
	json    json.RawMessage
	handler mcp.ToolHandler
}

// sync makes the listed tools equal to the catalog: one new snapshot of the
// ToolSet, in which only the tools that changed are rendered again.
func (s *Server) sync() {
	tools := s.hub.Tools()
	entries := make([]ToolEntry, 0, len(tools))
	listed := make(map[string]pageTool, len(tools))
	for _, rt := range tools {
		name := rt.Name
		if old, ok := s.listed[name]; ok && reflect.DeepEqual(old.rt, rt) {
			listed[name] = old
			entries = append(entries, ToolEntry{Name: name, JSON: old.json, Handler: old.handler})
			continue
		}
		if strings.HasPrefix(strings.ToLower(name), hub.ReservedPrefix) {
			// The hub never names a page tool so; never let one replace ours.
			s.logger.Error("not listing a page tool with a reserved name", "name", name)
			continue
		}
		t := MCPTool(rt, s.logger)
		if err := CheckTool(t); err != nil {
			s.logger.Error("not listing a page tool the MCP SDK would refuse", "name", name, "err", err)
			continue
		}
		raw, err := RenderTool(t)
		if err != nil {
			s.logger.Error("not listing a page tool", "name", name, "err", err)
			continue
		}
		pt := pageTool{rt: rt, json: raw, handler: s.callHandler(name)}
		if old, ok := s.listed[name]; ok {
			pt.handler = old.handler
		}
		listed[name] = pt
		entries = append(entries, ToolEntry{Name: name, JSON: raw, Handler: pt.handler})
	}
	s.listed = listed
	if s.tools.Set(entries) {
		s.logger.Debug("tool list synced", "tools", len(entries))
	}
}

// callHandler is the handler of a page tool. A call that cannot need the
// client's answer (no answer being returned, no confirmation policy, a
// client without elicitation, no progress asked for) runs in the request's
// own goroutine; any other goes through handleCall, which runs it in the
// background so it can ask the client.
func (s *Server) callHandler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		p := req.Params
		if p.RequestState == "" && p.GetProgressToken() == nil && s.opts.Confirm == ConfirmNone && !canElicit(req.Session) {
			return s.callNow(ctx, name, p.Arguments)
		}
		return s.handleCall(ctx, req, name, p.Arguments)
	}
}

// callNow runs a call that cannot ask the client anything: a page dialog
// is handled by the --dialogs policy (newPending's, for a client without
// elicitation), and a client that cancels aborts the page's call.
func (s *Server) callNow(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	pc := s.newPending(name, args, false)
	defer pc.cancel()
	stop := context.AfterFunc(ctx, pc.cancel)
	defer stop()
	res := CallToolResult(s.hub.Call(pc.runCtx, name, args))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pc.mu.Lock()
	failed := pc.failed
	pc.mu.Unlock()
	if failed != "" {
		return errResult("%s: %s", name, failed), nil
	}
	return res, nil
}

// safeSchema returns an input schema the SDK accepts: a JSON object whose
// type is "object". A schema without a type gets it; any other schema is
// replaced by {"type":"object"} (and logged), since the hub validates
// arguments against the page's schema anyway.
func safeSchema(name string, schema json.RawMessage, logger *slog.Logger) json.RawMessage {
	fallback := json.RawMessage(`{"type":"object"}`)
	if len(schema) == 0 {
		return fallback
	}
	var m map[string]any
	if err := json.Unmarshal(schema, &m); err != nil || m == nil {
		logger.Warn("a page tool's inputSchema is not a JSON object; listing it as {\"type\":\"object\"}", "name", name)
		return fallback
	}
	switch m["type"] {
	case "object":
		return schema
	case nil:
		m["type"] = "object"
		if out, err := json.Marshal(m); err == nil {
			return out
		}
	}
	logger.Warn("a page tool's inputSchema does not have type object; listing it as {\"type\":\"object\"}", "name", name, "type", m["type"])
	return fallback
}

// MCPTool turns a routed tool into its MCP definition: the page's schema
// made one the MCP SDK accepts (a JSON object of type "object"; a bad one is
// logged to logger, which may be nil), the provenance in
// _meta["webmcp-cdp/source"], MCP's hints as annotations and the
// WebMCP-only hints in _meta["webmcp-cdp/annotations"]. The relay lists
// tools with it too.
func MCPTool(rt hub.RoutedTool, logger *slog.Logger) *mcp.Tool {
	if logger == nil {
		logger = slog.Default()
	}
	schema := safeSchema(rt.Name, rt.Tool.InputSchema, logger)
	t := &mcp.Tool{
		Name:        rt.Name,
		Title:       rt.Tool.Title,
		Description: described(rt),
		InputSchema: schema,
		Meta:        mcp.Meta{SourceMetaKey: rt.Source},
	}
	a := rt.Tool.Annotations
	if len(a) > 0 {
		ann := &mcp.ToolAnnotations{}
		ann.ReadOnlyHint, _ = a["readOnlyHint"].(bool)
		ann.IdempotentHint, _ = a["idempotentHint"].(bool)
		ann.Title, _ = a["title"].(string)
		if v, ok := a["destructiveHint"].(bool); ok {
			ann.DestructiveHint = &v
		}
		if v, ok := a["openWorldHint"].(bool); ok {
			ann.OpenWorldHint = &v
		}
		t.Annotations = ann
		extra := map[string]any{}
		for _, k := range []string{"untrustedContentHint", "consequentialHint", "debugging", "cache"} {
			if v, ok := a[k]; ok {
				extra[k] = v
			}
		}
		if len(extra) > 0 {
			t.Meta["webmcp-cdp/annotations"] = extra
		}
	}
	return t
}

// ---- tools of our own ---------------------------------------------------

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
