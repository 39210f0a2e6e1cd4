package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file is the MCP client side of MCP-B page servers: for each server
// the browser found, one go-sdk client session over the page's message
// pipe (pageTransport). Its tools go into the hub like a document's; its
// resources and prompts go into the hub's server catalog (resources.go).
// The session ends when the pipe ends (the server stopped, the page
// navigated or reloaded); a new page's server gets a new session.

// Bounds of a page server session.
const (
	// pageProtocolVersion is the MCP version offered to page servers: the
	// classic initialize handshake, which MCP-B servers speak.
	pageProtocolVersion = "2025-11-25"
	// maxPageListPages bounds the pages of one listing.
	maxPageListPages = 10
	// maxMalformed is how many undecodable messages end a session.
	maxMalformed = 100
	// listRate and listBurst pace re-listings after list_changed.
	listRate  = 5
	listBurst = 10
	// floodNotifications is the count of notifications within one second
	// above which a server is reported as flooding.
	floodNotifications = 50
)

// pageTransport is an mcp.Transport over one page server's pipe.
type pageTransport struct {
	conn      core.PageConn
	malformed atomic.Int64
	// progress, notes and peek are the session's (see Read and Write).
	progress *pageProgress
	notes    *atomic.Int64
	peek     *pagePeek
	// relays are the session's client requests that relay the page's
	// questions and log messages (pagerelay.go).
	relays *pageRelays
}

func (t *pageTransport) Connect(context.Context) (mcp.Connection, error) {
	return &pageConnection{t: t}, nil
}

type pageConnection struct{ t *pageTransport }

// Read returns the next JSON-RPC message of the server. Undecodable
// messages are skipped (up to maxMalformed, then the session ends).
// notifications/progress are passed on here, in the order they came: the
// SDK would hand them to a handler after the call's result, too late for
// the client (progress stops with the result).
func (c *pageConnection) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		raw, err := c.t.conn.Recv(ctx)
		if err != nil {
			if errors.Is(err, core.ErrPageServerGone) {
				return nil, io.EOF
			}
			return nil, err
		}
		msg, err := jsonrpc.DecodeMessage(raw)
		if err == nil {
			if c.t.progress != nil && c.t.passProgress(ctx, msg) {
				continue
			}
			if req, ok := msg.(*jsonrpc.Request); ok && c.t.relays != nil {
				if isPageQuestion(req) {
					c.t.notes.Add(1)
					c.t.answerQuestion(req)
					continue
				}
				if req.Method == "notifications/message" && !req.IsCall() {
					c.t.notes.Add(1)
					c.t.passLog(ctx, req)
					continue
				}
			}
			if c.t.peek != nil {
				c.t.peek.received(msg)
			}
			return msg, nil
		}
		if c.t.malformed.Add(1) > maxMalformed {
			return nil, fmt.Errorf("the page server sent more than %d messages that are not JSON-RPC", maxMalformed)
		}
	}
}

// passProgress passes on msg if it is notifications/progress, and says so.
func (t *pageTransport) passProgress(ctx context.Context, msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.IsCall() || req.Method != "notifications/progress" {
		return false
	}
	t.notes.Add(1)
	var n mcp.ProgressNotificationParams
	if json.Unmarshal(req.Params, &n) == nil {
		if sink := t.progress.sink(n.ProgressToken); sink != nil {
			sink.forward(ctx, &n)
		}
	}
	return true
}

func (c *pageConnection) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if c.t.peek != nil {
		c.t.peek.sent(msg)
	}
	req, isReq := msg.(*jsonrpc.Request)
	return c.t.conn.Send(ctx, data, isReq && req.IsCall())
}

func (c *pageConnection) Close() error {
	c.t.conn.Close()
	return nil
}

func (c *pageConnection) SessionID() string { return "" }

// pageSession is the client session of one page server.
type pageSession struct {
	key    string
	src    core.Source
	server core.PageServer
	cs     *mcp.ClientSession
	max    int // the longest result, in bytes
	// changed holds the kinds of listing to read again (capacity 1 each).
	tools, resources, prompts chan struct{}
	notes                     atomic.Int64 // notifications in the current second
	progress                  pageProgress // tokens of the calls whose client wants progress
	peek                      pagePeek     // what the SDK's typed results drop
	relays                    pageRelays   // client requests in flight that may be asked (pagerelay.go)
}

// CallTool forwards tools/call; the client's cancellation reaches the page
// server as notifications/cancelled when ctx ends, and when the client asked
// for progress (a sink in ctx) the call carries a token of ours, whose
// notifications/progress go back to the client with its own token.
func (p *pageSession) CallTool(ctx context.Context, tool string, args json.RawMessage) (core.Result, error) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	meta, leave := p.relayMeta(ctx)
	defer leave()
	params := &mcp.CallToolParams{Meta: meta, Name: tool, Arguments: args}
	if sink := progressFrom(ctx); sink != nil && sink.wanted() {
		token, done := p.progress.add(sink)
		defer done()
		params.SetProgressToken(token)
	}
	res, err := p.cs.CallTool(ctx, params)
	if err != nil {
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			return core.Result{Err: "the page server refused the call: " + werr.Message, Protocol: true}, nil
		}
		if errors.Is(err, mcp.ErrConnectionClosed) {
			return core.Result{}, core.ErrPageServerGone
		}
		return core.Result{}, err
	}
	took, timed := pageTook(res)
	raw, err := json.Marshal(res)
	if err != nil {
		return core.Result{}, fmt.Errorf("encoding the page server's result: %w", err)
	}
	r := core.Result{Kind: core.KindJSON, Value: string(raw), PageTook: took, PageTimed: timed}
	if len(raw) > p.max {
		r.Kind, r.Value, r.Truncated = core.KindString, string(raw[:p.max]), len(raw)
	}
	return r, nil
}

// pageTookMeta is the key of _meta under which the page script puts the
// microseconds a tools/call took in the page (MCPB_TOOK_KEY of
// polyfill/pageserver.js).
const pageTookMeta = "webmcp-cdp/pageTookUs"

// pageTook takes the page's time out of a result (so the client never
// sees it) and returns it.
func pageTook(res *mcp.CallToolResult) (time.Duration, bool) {
	v, ok := res.Meta[pageTookMeta]
	if !ok {
		return 0, false
	}
	delete(res.Meta, pageTookMeta)
	if len(res.Meta) == 0 {
		res.Meta = nil
	}
	us, ok := v.(float64)
	if !ok || us < 0 || us > float64(time.Hour/time.Microsecond) {
		return 0, false
	}
	return time.Duration(us) * time.Microsecond, true
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// pageSessions are the live page-server sessions, by source key.
type pageSessions struct {
	mu sync.Mutex
	m  map[string]*pageSession
}

func (ps *pageSessions) get(key string) *pageSession {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.m[key]
}

func (ps *pageSessions) set(key string, p *pageSession) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.m == nil {
		ps.m = make(map[string]*pageSession)
	}
	if p == nil {
		delete(ps.m, key)
	} else {
		ps.m[key] = p
	}
}

// runPageServers starts a session for every page server the browser finds,
// until ctx ends.
func (s *Server) runPageServers(ctx context.Context) {
	for {
		c, err := s.hub.NextPageServer(ctx)
		if err != nil {
			return
		}
		go s.servePage(ctx, c)
	}
}

// servePage runs one page server's session: initialize (bounded by the
// hub's timeout, so a silent server holds only its own goroutine), the
// first listings, then re-listings on list_changed, until the pipe ends.
func (s *Server) servePage(ctx context.Context, c hub.PageServerConn) {
	p := &pageSession{
		key: c.Source.Key, src: c.Source, server: c.Conn.Server(), max: 1 << 20,
		tools: make(chan struct{}, 1), resources: make(chan struct{}, 1), prompts: make(chan struct{}, 1),
	}
	log := s.logger.With("url", c.Source.URL, "channel", p.server.Channel, "kind", p.server.Kind)
	note := func(ch chan struct{}) {
		p.notes.Add(1)
		signal(ch)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "webmcp-cdp", Version: s.opts.Version}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { note(p.tools) },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { note(p.resources) },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { note(p.prompts) },
		ResourceUpdatedHandler: func(ctx context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			p.notes.Add(1)
			s.pageResourceUpdated(ctx, p, r.Params.URI)
		},
		Logger: slog.New(slog.DiscardHandler),
		// What a page server may ask: the hub relays it to the client of
		// the request it serves (pagerelay.go), which answers the
		// requests before the SDK sees them.
		Capabilities: &mcp.ClientCapabilities{
			RootsV2:     &mcp.RootCapabilities{},
			Sampling:    &mcp.SamplingCapabilities{},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		},
	})
	tr := &pageTransport{conn: c.Conn, progress: &p.progress, notes: &p.notes, peek: &p.peek, relays: &p.relays}
	initCtx, cancel := context.WithTimeout(ctx, s.hub.PageServerInitTimeout())
	cs, err := client.Connect(initCtx, tr, &mcp.ClientSessionOptions{ProtocolVersion: pageProtocolVersion})
	cancel()
	if err != nil {
		reason := fmt.Sprintf("the MCP session did not start: %v", err)
		if initCtx.Err() != nil {
			reason = fmt.Sprintf("the server did not answer initialize within %s; it is ignored until the page loads again", s.hub.PageServerInitTimeout())
		}
		log.Warn("a page server failed to start", "reason", reason)
		s.hub.RefusePageServer(c.Source, reason)
		c.Conn.Close()
		return
	}
	p.cs = cs
	// A round of the page's questions ends with its answer to a ping
	// (questionsArrived).
	p.relays.setSync(func(ctx context.Context) error { return cs.Ping(ctx, nil) })
	log.Debug("page server session started", "server", cs.InitializeResult().ServerInfo)
	s.pages.set(p.key, p)
	s.hub.SetPageServerClient(p.src, p.server, p)
	defer func() {
		cs.Close()
		s.pages.set(p.key, nil)
		s.hub.EndPageServer(p.key)
		s.syncServerCatalog()
		log.Debug("page server session ended")
	}()
	caps := cs.InitializeResult().Capabilities
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	if caps.Tools != nil {
		signal(p.tools)
	}
	if caps.Logging != nil {
		// The page logs from level info up; each client gets what its own
		// level lets through (pagerelay.go).
		lctx, cancel := context.WithTimeout(ctx, s.hub.PageServerInitTimeout())
		cs.SetLoggingLevel(lctx, &mcp.SetLoggingLevelParams{Level: "info"})
		cancel()
	}
	if caps.Resources != nil || caps.Prompts != nil {
		s.listServerCatalog(ctx, p, caps)
	}
	limit := rate.NewLimiter(listRate, listBurst)
	second := time.Now()
	flooded := time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.Conn.Done():
			return
		case <-c.Conn.DropSignal():
			s.reportDropped(p, c.Conn.Dropped())
			continue
		case <-p.tools:
			if err := limit.Wait(ctx); err != nil {
				return
			}
			s.listPageTools(ctx, p)
		case <-p.resources:
			if err := limit.Wait(ctx); err != nil {
				return
			}
			s.listServerCatalog(ctx, p, caps)
		case <-p.prompts:
			if err := limit.Wait(ctx); err != nil {
				return
			}
			s.listServerCatalog(ctx, p, caps)
		}
		if now := time.Now(); now.Sub(second) >= time.Second {
			n := p.notes.Swap(0)
			second = now
			if n > floodNotifications && now.Sub(flooded) > time.Minute {
				flooded = now
				s.hub.RefusePageServer(p.src, fmt.Sprintf("it sent %d notifications in about a second (over %d): they are throttled to %d listings a second", n, floodNotifications, listRate))
			}
		}
	}
}

// reportDropped records the server's messages the browser dropped.
func (s *Server) reportDropped(p *pageSession, dropped map[string]int) {
	for _, reason := range slices.Sorted(maps.Keys(dropped)) {
		n := dropped[reason]
		var why string
		switch reason {
		case "rate":
			why = "over the rate of messages a page may send"
		case "size":
			why = "over the size limit of 1 MiB per message"
		case "queue", "backlog":
			why = "more than the queue of waiting messages holds"
		case "source":
			why = "posted by another frame or window than a server's (forged; ignored)"
		case "malformed":
			why = "not MCP-B messages (malformed)"
		case "origin":
			why = "from a frame whose origin changed since its server said it was ready"
		case "servers":
			why = "ready messages of more than 8 servers in one document"
		default:
			why = reason
		}
		s.hub.RefusePageServer(p.src, fmt.Sprintf("%d messages dropped: %s", n, why))
	}
}

// listPageTools reads the server's tools and hands them to the hub.
func (s *Server) listPageTools(ctx context.Context, p *pageSession) {
	lctx, cancel := context.WithTimeout(ctx, s.hub.PageServerInitTimeout())
	defer cancel()
	var tools []core.Tool
	params := &mcp.ListToolsParams{}
	p.peek.startListing()
	for range maxPageListPages {
		res, err := p.cs.ListTools(lctx, params)
		if err != nil {
			s.hub.RefusePageServer(p.src, fmt.Sprintf("tools/list failed: %v", err))
			return
		}
		for _, t := range res.Tools {
			ann, cacheOK := p.peek.toolAnnotations(t.Name)
			ct := coreTool(t, ann, cacheOK)
			ct.TaskSupport = p.peek.taskSupport(t.Name)
			tools = append(tools, ct)
		}
		if res.NextCursor == "" {
			break
		}
		params.Cursor = res.NextCursor
	}
	s.hub.Update(p.src, tools, nil)
}

// coreTool turns a page server's tool into the hub's form, with the
// annotations ann as the server gave them (pagePeek), and its
// outputSchema, icons and _meta (carried.go). annotations.cache
// counts only from a server that declared browser.cacheSupported, as
// MCP-B has it; from another it is left out, and the tool is not cached.
func coreTool(t *mcp.Tool, ann map[string]any, cacheSupported bool) core.Tool {
	out := core.Tool{Name: t.Name, Title: t.Title, Description: t.Description}
	if t.InputSchema != nil {
		if raw, err := json.Marshal(t.InputSchema); err == nil {
			out.InputSchema = raw
		}
	}
	if len(ann) > 0 {
		out.Annotations = ann
		if _, ok := ann["cache"]; ok && !cacheSupported {
			out.Annotations = maps.Clone(ann)
			delete(out.Annotations, "cache")
		}
	}
	if out.Title == "" {
		out.Title, _ = ann["title"].(string)
	}
	out.Description = strings.TrimSpace(out.Description)
	carriedFrom(&out, t)
	return out
}
