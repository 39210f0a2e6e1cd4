// Package mcpserver serves a hub's routed tools over MCP with the go-sdk:
// it keeps the server's tool list in step with the catalog (the SDK then
// sends notifications/tools/list_changed) and adds a few tools of its own
// for agents (own.go): list, open, activate, reload and close tabs, tool
// search (webmcp_list_tools) and webmcp_call, which reach every page tool
// whether or not the client's list holds it (listfilter.go).
package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/record"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
	"github.com/webmcp-cdp/webmcp-cdp/internal/sdklog"
)

// Tabs is what the tab tools need from a browser.
type Tabs interface {
	Open(ctx context.Context, url string) (string, error)
	CloseTab(ctx context.Context, tab string) error
	ActivateTab(ctx context.Context, tab string) error
	Reload(ctx context.Context, tab string) error
}

// BrowserOpener is Tabs over several browsers (cdp/multi.Set): then
// webmcp_open_tab takes an optional browser name.
type BrowserOpener interface {
	OpenIn(ctx context.Context, browser, url string) (string, error)
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
	// QuestionGather is how long after a page server's question to the
	// client further ones are awaited to go into the same input-required
	// result (default 30 ms). The round also lasts until the page has
	// answered a ping sent after its first question, so the questions a
	// page sends together are one result however far apart the browser
	// delivers them (pagerelay.go, questionsArrived).
	QuestionGather time.Duration
	// FirstList, when set, holds every client's first tools/list until it
	// is closed (see ToolSetOptions.FirstList); cmd/webmcp-cdp closes it
	// once the start pages' tools have settled.
	FirstList <-chan struct{}
	// List says which page tools tools/list holds (default all of them;
	// see listfilter.go).
	List ListPolicy
	// Recorder records the session's calls (--record), each from the
	// first; the server tells it of the tab tools that change tabs. When
	// nil, the server keeps a recorder of its own, in memory only, for the
	// status page's download of the session as a spec, told of the calls
	// from the first request of the status page or of that download on
	// (status.go): until someone looks, calls pay nothing for it.
	Recorder *record.Recorder
	// TraceContext, when set, is given the W3C traceparent and tracestate
	// a client sent in a tools/call's _meta, and returns the context the
	// call runs in (hub/telemetry makes the client's span the parent
	// of the call's). Nil: the keys are not read.
	TraceContext func(ctx context.Context, traceparent, tracestate string) context.Context
	// Titles, when set, returns the server's tabs' current titles by tab
	// id, for its status page when HTTPOptions.Titles is not set: a
	// space's server (spaces_http.go), whose tabs are its own.
	Titles func(ctx context.Context) (map[string]string, error)
	// ClientHints shows a call's page the person's language and place
	// from the call's _meta (--client-hints; hints.go). Calls then take
	// the SDK's path, where the request's _meta is read.
	ClientHints bool
	// Tasks configures the Tasks extension (tasks.go; on by default).
	Tasks TaskOptions
}

// Server is an MCP server over a hub.
type Server struct {
	hub    *hub.Hub
	mcp    *mcp.Server
	opts   Options
	logger *slog.Logger
	tools  *ToolSet
	// listedFrom is the catalog the last sync listed, sorted by routed
	// name: the hub's own slice (hub.SharedTools) or a filtered copy, read
	// only. listed[i] is listedFrom[i] as listed, nil when it was not.
	listedFrom []hub.RoutedTool
	listed     []*pageTool
	// flush asks follow for a sync now; it closes the channel sent when
	// the sync is done (Synced).
	flush  chan chan struct{}
	calls  callLog
	recent recentClients // stateless clients, for the status page
	// recorder records the calls, for --record and the status page;
	// recording says since when it is told of them.
	recorder  *record.Recorder
	recording recording
	hitl      *hitl
	// pages and served are the MCP-B page servers' sessions and what of
	// their resources and prompts is served (pageserver.go, resources.go).
	pages  pageSessions
	served servedCatalog
	// ownCount is the number of the server's own tools; unlisted counts
	// the page tools the list policy leaves out of tools/list.
	ownCount int
	unlisted atomic.Int64
	// texts renders the fast path's one-text-block results (fast_result.go).
	texts textTemplates
	// space is the Server's HTTP handlers when it serves a person's space
	// (spaces_http.go), built at the space's first request.
	space spaceHandlers
	// tasks are the calls made tasks (tasks.go).
	tasks *taskStore
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
	recordAll := opts.Recorder != nil
	if !recordAll {
		// In memory only: New cannot fail without a file.
		opts.Recorder, _ = record.New(record.Options{Logger: opts.Logger})
	}
	s := &Server{
		recorder: opts.Recorder,
		hitl:     newHITL(h.Call, opts.CallTimeout, opts.QuestionGather),
		hub:      h,
		opts:     opts,
		logger:   opts.Logger,
		flush:    make(chan chan struct{}),
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "webmcp-cdp", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: "Tools named <site>_<tool> come from web pages open in a browser; " +
			"<site>_tab<N>_<tool> reaches one tab when several have the tool. " +
			"Page tools appear and disappear as pages load; webmcp_list_tabs shows what is open.",
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true}},
		SetCacheable:       cacheHints,
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: s.unsubscribe,
		CompletionHandler:  s.completePage,
		Logger:             sdklog.Quiet(opts.Logger),
	})
	s.mcp.AddReceivingMiddleware(advertiseApps)
	go s.runPageServers(ctx)
	s.tools = NewToolSet(s.mcp, ToolSetOptions{Logger: opts.Logger, FirstList: opts.FirstList, Unlisted: s.unlistedTool})
	go s.tools.Run(ctx)
	s.addOwnTools()
	s.tasks = newTaskStore(opts.Tasks)
	s.opts.Tasks = s.tasks.opts
	s.registerTasks()
	if m := opts.List.Max; m > 0 && m < s.ownCount {
		// ParseListPolicy refuses such a cap; a caller that set it directly
		// gets its own tools listed all the same, over the cap.
		s.logger.Warn("the list cap is below the server's own tools; they are listed anyway", "max", m, "own", s.ownCount)
	}
	changes, stopChanges := h.Watch()
	// A list that follows the tabs' use is made again when the tab used
	// last changes, as by a call into another tab (listfilter.go).
	var used <-chan struct{}
	stopUsed := func() {}
	if p := opts.List; p.Mode == ListActive || p.Max > 0 {
		used, stopUsed = h.WatchUse()
	}
	context.AfterFunc(ctx, h.HookCalls(hub.CallHooks{Record: s.calls.add}))
	context.AfterFunc(ctx, s.stopRecording)
	s.recording.lazy = !recordAll
	if recordAll {
		s.startRecording()
	}
	s.sync()
	go func() {
		defer stopChanges()
		defer stopUsed()
		s.follow(ctx, changes, used)
	}()
	return s
}

// MCP returns the go-sdk server, to run on a transport.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// follow applies catalog changes, and changes of the tab used last (used,
// nil when the list does not follow them), one sync at a time; changes that
// arrive while a sync runs fold into one more sync (the hub's watch
// channels hold one pending signal), so the last change is never lost.
// Pacing the notifications is the ToolSet's.
func (s *Server) follow(ctx context.Context, changes, used <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-changes:
			s.sync()
		case <-used:
			s.sync()
		case done := <-s.flush:
			s.sync()
			close(done)
		}
	}
}

// Synced returns once the listed tools include every catalog change made
// before it was called: a tools/list released after it lists them. (The
// catalog's changes reach the list on a goroutine of their own.)
func (s *Server) Synced(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	done := make(chan struct{})
	select {
	case s.flush <- done:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pageTool is a routed tool as the last sync listed it. (The routed tool
// itself is in Server.listedFrom, not copied here.)
type pageTool struct {
	json    json.RawMessage
	handler mcp.ToolHandler
	// app and appOnly are the tool's MCP Apps form (apps.go); views is
	// what its view URIs resolved to, and ui says it has ui keys.
	app     json.RawMessage
	appOnly bool
	views   string
	ui      bool
}

// sync makes the listed tools equal to the catalog: one new snapshot of the
// ToolSet, in which only the tools that changed are rendered again.
func (s *Server) sync() {
	tools := s.listedTools() // sorted by name
	entries := make([]ToolEntry, 0, len(tools))
	listed := make([]*pageTool, len(tools))
	for i, rt := range tools {
		name := rt.Name
		oldRT, old := s.lastListed(name)
		if old != nil && oldRT.Same(rt) && (!old.ui || s.viewsOf(rt) == old.views) {
			listed[i] = old
			entries = append(entries, ToolEntry{Name: name, JSON: old.json, Handler: old.handler, App: old.app, AppOnly: old.appOnly})
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
		raw, app, appOnly, views, err := s.appForms(rt, t)
		if err != nil {
			s.logger.Error("not listing a page tool", "name", name, "err", err)
			continue
		}
		pt := &pageTool{json: raw, handler: s.callHandler(name), app: app, appOnly: appOnly, views: views, ui: app != nil}
		if old != nil {
			pt.handler = old.handler
		}
		listed[i] = pt
		entries = append(entries, ToolEntry{Name: name, JSON: raw, Handler: pt.handler, App: app, AppOnly: appOnly})
	}
	s.listedFrom, s.listed = tools, listed
	if s.tools.Set(entries) {
		s.logger.Debug("tool list synced", "tools", len(entries))
	}
}

// lastListed returns the tool of that name as the last sync listed it:
// the routed tool, and how it was listed (nil when it was not). (A slice
// searched by name rather than a map: one sync after another keeps no map
// of a thousand tools alive, nor builds one.)
func (s *Server) lastListed(name string) (hub.RoutedTool, *pageTool) {
	i, ok := slices.BinarySearchFunc(s.listedFrom, name, func(rt hub.RoutedTool, n string) int { return strings.Compare(rt.Name, n) })
	if !ok {
		return hub.RoutedTool{}, nil
	}
	return s.listedFrom[i], s.listed[i]
}

// callHandler is the handler of a page tool. A call that cannot need the
// client's answer (no answer being returned, no confirmation policy, a
// client without elicitation or sampling, no progress asked for, not a
// page server's tool) runs in the request's own goroutine; any other goes
// through handleCall, which runs it in the background so it can ask the
// client. (The session's capabilities decide here, which costs nothing; the
// relay reads the request's own, 2026-07-28 _meta, in handleCall.)
func (s *Server) callHandler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		p := req.Params
		ctx = s.traceContext(ctx, p.Meta)
		ctx = s.hintContext(ctx, req)
		if slot := taskSlotFrom(ctx); slot != nil {
			if support := s.taskSupport(name); support != taskForbidden {
				return s.taskCall(ctx, req, name, support, slot)
			}
		}
		if p.RequestState == "" && p.GetProgressToken() == nil && s.opts.Confirm == ConfirmNone && !canAsk(req.Session) && !s.pageServerTool(name) {
			return s.callNow(ctx, name, p.Arguments)
		}
		return s.handleCall(ctx, req, name, p.Arguments)
	}
}

// pageServerTool says whether name is a page server's tool: its server may
// ask the client something, and must learn the client's capabilities
// (pagerelay.go), so its calls go through handleCall.
func (s *Server) pageServerTool(name string) bool {
	rt, ok := s.hub.Tool(name)
	return ok && rt.Source.Backend == core.BackendMCPB
}

// callNow runs a call that cannot ask the client anything: a page dialog
// is handled by the --dialogs policy, and a client that cancels aborts the
// page's call.
func (s *Server) callNow(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	res := s.hitl.runNow(ctx, name, args, s.opts.Dialogs)
	if err := ctx.Err(); err != nil {
		return nil, err
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
// WebMCP-only hints in _meta["webmcp-cdp/annotations"], beside the page's
// own outputSchema, icons and _meta (carried.go). The relay lists tools
// with it too.
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
	carryTo(t, rt.Tool, logger)
	return t
}
