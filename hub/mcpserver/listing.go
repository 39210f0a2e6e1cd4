package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

// This file holds the tool-list syncer that the stdio and HTTP servers and
// the relay's connect side share: a ToolSet answers tools/list and
// tools/call of a changing set of tools from atomic snapshots (each tool
// rendered once, when it appears or changes), and sends
// notifications/tools/list_changed itself.

// ToolSetOptions configures a ToolSet. Zero values take the defaults.
type ToolSetOptions struct {
	// PageSize is the number of tools per tools/list page (default 1000,
	// as the go-sdk's).
	PageSize int
	// MinGap is the pace of list_changed notifications while changes go
	// on (default 10 ms): at most one per MinGap on average. Burst of them
	// go at once after a quiet moment; changes beyond that fold into one
	// notification at the pace, so the last change is never left
	// unannounced.
	MinGap time.Duration
	// Burst is how many notifications may go at once, without waiting for
	// the pace (default 4). A navigation is a burst of its own: the old
	// document's tools go, then the new one's come, often within a few
	// milliseconds, and its new tools should not wait a MinGap for the
	// notification of the old ones' going
	// (docs/decisions/2026-12-04-list-changed-burst.md).
	Burst int
	// FirstList, when set, holds the first page of every tools/list until
	// it is closed (or the request ends), so that a client that lists once
	// right after connecting sees the tools of the pages it was started on.
	FirstList <-chan struct{}
	// Logger receives the log (default slog.Default()).
	Logger *slog.Logger
	// Unlisted, when set, gives the handler of a tools/call whose name is
	// not in the set (a tool left out of the list, or none at all); nil
	// leaves the call to the server's own tools.
	Unlisted func(name string) mcp.ToolHandler
}

// ToolSet serves a changing set of tools on a go-sdk server next to the
// tools registered with the server itself:
//
//   - Set makes a new snapshot of the set. A snapshot is immutable; its
//     tools/list pages are written from each tool's JSON as rendered once
//     (ToolEntry.JSON, shared by the snapshots that have the tool), never
//     encoded again and never copied into one buffer per page. A client's
//     tools/list always sees one snapshot whole, never a set half-applied,
//     and a paginated listing stays on the snapshot its first page came
//     from (the cursor names it) while that snapshot is among the last few.
//   - tools/list and tools/call are answered by receiving middleware; the
//     server's own tools stay registered with the SDK and are listed on the
//     first page, before the set's tools.
//   - notifications/tools/list_changed goes to every session after a Set
//     that changed the set, paced by MinGap and Burst, and never after one that did
//     not. It is sent directly (not through the SDK's 10 ms debounce), to
//     legacy sessions as such and to 2026-07-28 sessions on their
//     subscriptions/listen stream.
type ToolSet struct {
	srv     *mcp.Server
	opts    ToolSetOptions
	log     *slog.Logger
	send    mcp.MethodHandler // the SDK's sending handler, below our middleware
	pending chan struct{}     // capacity 1: a change not yet announced

	setMu   sync.Mutex // serializes Set
	cur     atomic.Pointer[snapshot]
	keepMu  sync.Mutex  // guards recent
	recent  []*snapshot // the last few snapshots, for cursors into them
	version atomic.Uint64

	subMu sync.Mutex
	subs  map[*mcp.ServerSession]any    // session -> its tools list_changed subscription id
	seen  map[*mcp.ServerSession]uint64 // session -> the set's version when it first sent a request
	// pruneAt is the size of seen at which gone sessions are forgotten.
	pruneAt int

	ownMu   sync.Mutex
	ownKey  []*mcp.Tool
	ownJSON []byte

	spliceMu    sync.Mutex
	splicers    map[string]splicer // by session id (fast_list.go)
	httpSplicer splicer            // for the other sessions with an id
}

// dispatchName is the one tool the SDK registry holds for all of a
// ToolSet's tools: tools/call of a set tool goes through the SDK's own
// tools/call path under this name (so its multi round-trip handling and
// result checks apply), then to the tool's handler. It is never listed.
const dispatchName = "webmcp_cdp_toolset_dispatch"

// keepSnapshots is how many snapshots a cursor can still refer to.
const keepSnapshots = 4

// snapshot is one version of the set.
type snapshot struct {
	version uint64
	tools   []ToolEntry // sorted by name, each name once
	size    int         // page size
	// plain and apps are what tools/list holds for a client that does
	// not, and one that does, declare MCP Apps: tools itself unless an
	// entry has an App form or is AppOnly.
	plain, apps listView
}

// listView is the tools one kind of client lists, and their pages.
type listView struct {
	tools []ToolEntry
	pages int // at least 1
}

func newView(tools []ToolEntry, size int) listView {
	return listView{tools: tools, pages: max(1, (len(tools)+size-1)/size)}
}

// view returns the listing for a client that declares MCP Apps, or not.
func (s *snapshot) view(apps bool) *listView {
	if apps {
		return &s.apps
	}
	return &s.plain
}

// page returns page i of a view's tools. It is a view of the snapshot's
// entries, not a copy: the tools' JSON, rendered once per tool and shared
// by every snapshot that has the tool, is written out as it is.
func (s *snapshot) page(v *listView, i int) toolsPage {
	lo, hi := i*s.size, min((i+1)*s.size, len(v.tools))
	return toolsPage(v.tools[lo:hi:hi])
}

// find returns the index of the tool of that name: a binary search of the
// sorted tools, so that a snapshot needs no map of its own.
func (s *snapshot) find(name string) (int, bool) {
	return slices.BinarySearchFunc(s.tools, name, func(e ToolEntry, n string) int { return strings.Compare(e.Name, n) })
}

// NewToolSet installs a ToolSet on srv, which must have no sessions yet.
// Run announces its changes.
func NewToolSet(srv *mcp.Server, opts ToolSetOptions) *ToolSet {
	if opts.PageSize <= 0 {
		opts.PageSize = 1000
	}
	if opts.MinGap <= 0 {
		opts.MinGap = 10 * time.Millisecond
	}
	if opts.Burst <= 0 {
		opts.Burst = 4
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	ts := &ToolSet{
		srv:     srv,
		opts:    opts,
		log:     opts.Logger,
		pending: make(chan struct{}, 1),
		subs:    make(map[*mcp.ServerSession]any),
		seen:    make(map[*mcp.ServerSession]uint64),
		pruneAt: 256,
	}
	empty := ts.newSnapshot(nil)
	ts.cur.Store(empty)
	ts.recent = []*snapshot{empty}
	srv.AddTool(&mcp.Tool{Name: dispatchName, InputSchema: json.RawMessage(`{"type":"object"}`)}, ts.dispatch)
	srv.AddSendingMiddleware(ts.sending)
	srv.AddReceivingMiddleware(ts.receiving)
	return ts
}

func (ts *ToolSet) newSnapshot(tools []ToolEntry) *snapshot {
	s := &snapshot{version: ts.version.Add(1), tools: tools, size: ts.opts.PageSize}
	s.plain = newView(tools, s.size)
	s.apps = s.plain
	if !slices.ContainsFunc(tools, func(e ToolEntry) bool { return e.App != nil || e.AppOnly }) {
		return s
	}
	plain := make([]ToolEntry, 0, len(tools))
	apps := make([]ToolEntry, 0, len(tools))
	for _, e := range tools {
		if !e.AppOnly {
			plain = append(plain, e)
		}
		if e.App != nil {
			e.JSON = e.App
		}
		apps = append(apps, e)
	}
	s.plain, s.apps = newView(plain, s.size), newView(apps, s.size)
	return s
}

// Set makes the set exactly entries (the slice is the ToolSet's from now
// on; duplicate names keep the first) and reports whether that changed
// anything a client can see. A change is announced to clients.
func (ts *ToolSet) Set(entries []ToolEntry) bool {
	slices.SortStableFunc(entries, func(a, b ToolEntry) int { return strings.Compare(a.Name, b.Name) })
	entries = slices.CompactFunc(entries, func(a, b ToolEntry) bool { return a.Name == b.Name })
	ts.setMu.Lock()
	defer ts.setMu.Unlock()
	old := ts.cur.Load()
	if sameTools(old.tools, entries) {
		// Handlers may be new closures; keep the listing, take the handlers.
		s := *old
		s.tools = entries
		ts.cur.Store(&s)
		return false
	}
	s := ts.newSnapshot(entries)
	ts.keepMu.Lock()
	ts.recent = append(ts.recent, s)
	if len(ts.recent) > keepSnapshots {
		ts.recent = slices.Delete(ts.recent, 0, len(ts.recent)-keepSnapshots)
	}
	ts.keepMu.Unlock()
	ts.cur.Store(s)
	select {
	case ts.pending <- struct{}{}:
	default:
	}
	return true
}

func sameTools(a, b []ToolEntry) bool {
	return slices.EqualFunc(a, b, func(x, y ToolEntry) bool {
		return x.Name == y.Name && bytes.Equal(x.JSON, y.JSON) && bytes.Equal(x.App, y.App) && x.AppOnly == y.AppOnly
	})
}

// Len returns the number of tools in the set.
func (ts *ToolSet) Len() int { return len(ts.cur.Load().tools) }

// Has reports whether the set has a tool of that name.
func (ts *ToolSet) Has(name string) bool {
	_, ok := ts.cur.Load().find(name)
	return ok
}

// Run sends list_changed after changes until ctx ends: at once while the
// burst lasts (Burst notifications, refilled at one per MinGap), then at
// most once per MinGap while changes go on. Changes made before Run are
// announced when it starts.
func (ts *ToolSet) Run(ctx context.Context) {
	pace := rate.NewLimiter(rate.Every(ts.opts.MinGap), ts.opts.Burst)
	for {
		select {
		case <-ctx.Done():
			return
		case <-ts.pending:
		}
		if err := pace.Wait(ctx); err != nil {
			return // ctx ended
		}
		// The notification about to go covers every change made so far:
		// one made while it waited needs no notification of its own.
		select {
		case <-ts.pending:
		default:
		}
		ts.notifyAll(ctx)
	}
}

// protocol20260728 is the first MCP version in which list_changed goes on
// a subscriptions/listen stream.
const protocol20260728 = "2026-07-28"

// notifyAll sends list_changed to every session that can take it.
func (ts *ToolSet) notifyAll(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ts.subMu.Lock()
	live := ts.pruneLocked()
	ts.subMu.Unlock()
	for ss := range live {
		p := ss.InitializeParams()
		if p == nil {
			continue // not initialized: it lists when it is
		}
		params := &mcp.ToolListChangedParams{}
		if p.ProtocolVersion >= protocol20260728 {
			ts.subMu.Lock()
			id, ok := ts.subs[ss]
			ts.subMu.Unlock()
			if !ok {
				continue // no subscription to tool changes
			}
			params.Meta = mcp.Meta{mcp.MetaKeySubscriptionID: id}
		}
		req := &mcp.ServerRequest[*mcp.ToolListChangedParams]{Session: ss, Params: params}
		if _, err := ts.send(ctx, "notifications/tools/list_changed", req); err != nil {
			ts.log.Debug("sending tools/list_changed", "session", ss.ID(), "err", err)
		}
	}
}

// pruneLocked forgets the sessions that are gone and returns the live
// ones.
func (ts *ToolSet) pruneLocked() map[*mcp.ServerSession]bool {
	live := make(map[*mcp.ServerSession]bool)
	for ss := range ts.srv.Sessions() {
		live[ss] = true
	}
	for ss := range ts.seen {
		if !live[ss] {
			delete(ts.seen, ss)
		}
	}
	ts.pruneAt = max(256, 2*len(ts.seen))
	return live
}

// sending is sending middleware: it keeps the handler below it for
// notifyAll, and learns each session's tool-change subscription from the
// SDK's acknowledgement of subscriptions/listen.
func (ts *ToolSet) sending(next mcp.MethodHandler) mcp.MethodHandler {
	ts.send = next
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "notifications/subscriptions/acknowledged" {
			return next(ctx, method, req)
		}
		p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams)
		ss, ok2 := req.GetSession().(*mcp.ServerSession)
		if !ok || !ok2 || !p.Notifications.ToolsListChanged {
			return next(ctx, method, req)
		}
		id := p.Meta[mcp.MetaKeySubscriptionID]
		ts.subMu.Lock()
		ts.subs[ss] = id
		first, known := ts.seen[ss]
		ts.subMu.Unlock()
		res, err := next(ctx, method, req)
		if err == nil && known && ts.cur.Load().version != first {
			// The set changed after the session began and before it
			// subscribed: that change was announced to nobody here.
			lc := &mcp.ServerRequest[*mcp.ToolListChangedParams]{Session: ss,
				Params: &mcp.ToolListChangedParams{Meta: mcp.Meta{mcp.MetaKeySubscriptionID: id}}}
			if _, err := next(ctx, "notifications/tools/list_changed", lc); err != nil {
				ts.log.Debug("sending tools/list_changed", "session", ss.ID(), "err", err)
			}
		}
		return res, err
	}
}

// dispatchKey carries a set tool's call from the middleware to dispatch.
type dispatchKey struct{}

type dispatched struct {
	handler mcp.ToolHandler
	name    string // the tool's own name
}

// receiving is receiving middleware: tools/list and tools/call of the set,
// and the end of a subscriptions/listen.
func (ts *ToolSet) receiving(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
			ts.subMu.Lock()
			if _, ok := ts.seen[ss]; !ok {
				ts.seen[ss] = ts.cur.Load().version
				if len(ts.seen) >= ts.pruneAt {
					ts.pruneLocked()
				}
			}
			ts.subMu.Unlock()
		}
		switch method {
		case "tools/list":
			if r, ok := req.(*mcp.ListToolsRequest); ok {
				return ts.list(ctx, next, r)
			}
		case "tools/call":
			r, ok := req.(*mcp.CallToolRequest)
			if !ok || r.Params == nil {
				break
			}
			if r.Params.Name == dispatchName {
				return nil, unknownTool(r.Params.Name)
			}
			s := ts.cur.Load()
			var h mcp.ToolHandler
			if i, ok := s.find(r.Params.Name); ok {
				h = s.tools[i].Handler
			} else if ts.opts.Unlisted != nil {
				h = ts.opts.Unlisted(r.Params.Name)
			}
			if h == nil {
				break
			}
			p := *r.Params
			p.Name = dispatchName
			ctx = context.WithValue(ctx, dispatchKey{}, dispatched{handler: h, name: r.Params.Name})
			return next(ctx, method, &mcp.CallToolRequest{Session: r.Session, Params: &p, Extra: r.Extra})
		case "subscriptions/listen":
			res, err := next(ctx, method, req)
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				ts.subMu.Lock()
				delete(ts.subs, ss)
				ts.subMu.Unlock()
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

// dispatch is the SDK-registered handler behind every set tool. It takes
// the request as the SDK hands it over (for a client without multi
// round-trip results, the SDK's retry carries the client's answers) and
// gives it back its tool's name.
func (ts *ToolSet) dispatch(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	d, ok := ctx.Value(dispatchKey{}).(dispatched)
	if !ok {
		return nil, unknownTool(dispatchName)
	}
	p := *req.Params
	p.Name = d.name
	return d.handler(ctx, &mcp.CallToolRequest{Session: req.Session, Params: &p, Extra: req.Extra})
}

func unknownTool(name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
}
