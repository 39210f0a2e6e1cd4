package hub

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file holds the hub's side of MCP-B page servers: the browser hands
// over each server's pipe (PageServer, the cdp sink method), the MCP edge
// takes it (NextPageServer), runs the MCP client session over it, and puts
// the server's tools through Update like any document's, under a source key
// of the server's own with the backend core.BackendMCPB. Calls to those
// tools go to the session (PageServerClient) instead of the browser.

// maxPendingServers bounds the page servers handed over and not yet taken.
const maxPendingServers = 64

// PageServerClient is the MCP client session of one page server, as the hub
// calls it. hub/mcpserver implements it with the go-sdk client.
type PageServerClient interface {
	// CallTool runs a tool of the server; a tool error is a Result with Err
	// or an {isError} value.
	CallTool(ctx context.Context, tool string, args json.RawMessage) (core.Result, error)
}

// PageServerConn is a page server handed over by the browser.
type PageServerConn struct {
	// Source is the server's: its document's tab, frame, origin (from the
	// browser, never the page) and URL, with a key of its own.
	Source core.Source
	// Conn is the raw message pipe.
	Conn core.PageConn
}

// pageServers is the hub's page-server state. It has its own lock, apart
// from the catalog's.
type pageServers struct {
	mu      sync.Mutex
	pending []PageServerConn
	wake    chan struct{} // capacity 1
	clients map[string]liveServer
	res     map[string]*serverCatalog // resources and prompts, by source key (resources.go)
	seq     uint64                    // numbers the listings of res
	// short is what res offers under own names (--tool-names short), and
	// lost the own names that fell back, with the tabs they were seen in
	// (servernames.go).
	short   *shortIndex
	lost    map[string][]string
	timeout time.Duration // initialize's bound; 0 is pageServerInitTimeout
}

func (p *pageServers) wakeLocked() chan struct{} {
	if p.wake == nil {
		p.wake = make(chan struct{}, 1)
	}
	return p.wake
}

// PageServer takes a page server the browser found (cdp.PageServerSink).
// It only queues it; the MCP edge takes it with NextPageServer. Over
// maxPendingServers waiting, the server is refused.
func (h *Hub) PageServer(src core.Source, conn core.PageConn) {
	p := &h.ps
	p.mu.Lock()
	if len(p.pending) >= maxPendingServers {
		p.mu.Unlock()
		conn.Close()
		h.RefusePageServer(src, fmt.Sprintf("more than %d page servers wait for a session; this one is ignored", maxPendingServers))
		return
	}
	p.pending = append(p.pending, PageServerConn{Source: src, Conn: conn})
	w := p.wakeLocked()
	p.mu.Unlock()
	select {
	case w <- struct{}{}:
	default:
	}
}

// NextPageServer waits for the next page server the browser found. It
// fails when ctx ends.
func (h *Hub) NextPageServer(ctx context.Context) (PageServerConn, error) {
	p := &h.ps
	for {
		p.mu.Lock()
		if len(p.pending) > 0 {
			c := p.pending[0]
			p.pending = p.pending[1:]
			p.mu.Unlock()
			return c, nil
		}
		w := p.wakeLocked()
		p.mu.Unlock()
		select {
		case <-w:
		case <-ctx.Done():
			return PageServerConn{}, ctx.Err()
		}
	}
}

// liveServer is a page server with a session.
type liveServer struct {
	client PageServerClient
	src    core.Source
	server core.PageServer
}

// SetPageServerClient records the session of the page server server of
// src (src.Key is its source key), before its tools go through Update.
func (h *Hub) SetPageServerClient(src core.Source, server core.PageServer, c PageServerClient) {
	p := &h.ps
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.clients == nil {
		p.clients = make(map[string]liveServer)
	}
	p.clients[src.Key] = liveServer{client: c, src: src, server: server}
}

// EndPageServer forgets a page server whose session ended: its tools,
// resources and prompts leave the catalog.
func (h *Hub) EndPageServer(key string) {
	h.ps.mu.Lock()
	delete(h.ps.clients, key)
	h.ps.mu.Unlock()
	h.dropServerCatalog(key)
	h.DropDoc(key)
}

// PageServerInfo is a page server with a session, as the status page shows
// it under its tab.
type PageServerInfo struct {
	// Tab is the browser's id of the server's tab.
	Tab string
	// Channel, Kind and FrameOrigin are the server's (core.PageServer).
	Channel, Kind, FrameOrigin string
	// Tools, Resources, Templates and Prompts count what the server
	// lists that the hub admitted.
	Tools, Resources, Templates, Prompts int
}

// PageServers lists the page servers with a session, by tab, then kind and
// channel.
func (h *Hub) PageServers() []PageServerInfo {
	var out []PageServerInfo
	var keys []string
	h.ps.mu.Lock()
	for key, l := range h.ps.clients {
		i := PageServerInfo{Tab: l.src.Tab, Channel: l.server.Channel, Kind: l.server.Kind, FrameOrigin: l.server.FrameOrigin}
		if c := h.ps.res[key]; c != nil {
			i.Resources, i.Templates, i.Prompts = len(c.resources), len(c.templates), len(c.prompts)
		}
		out = append(out, i)
		keys = append(keys, key)
	}
	h.ps.mu.Unlock()
	h.mu.Lock()
	for i, key := range keys {
		if d := h.docs[key]; d != nil {
			out[i].Tools = len(d.tools)
		}
	}
	h.mu.Unlock()
	slices.SortFunc(out, func(a, b PageServerInfo) int {
		return cmp.Or(strings.Compare(a.Tab, b.Tab), strings.Compare(b.Kind, a.Kind), strings.Compare(a.Channel, b.Channel), strings.Compare(a.FrameOrigin, b.FrameOrigin))
	})
	return out
}

// RefusePageServer records what the hub or the MCP edge refused of a page
// server (it did not initialize in time, flooded notifications, sent
// messages over the bounds), in the refusal log with the reason.
func (h *Hub) RefusePageServer(src core.Source, detail string) {
	h.mu.Lock()
	t := h.tabLocked(src.Tab)
	h.refuseLocked(t, src, "*", core.ReasonPage, "page server: "+detail)
	h.mu.Unlock()
}

// errNoSession is the error of a call to a page server with no session.
var errNoSession = errors.New("the page server's session ended")

// invokeDoc runs a tool of a document: through the browser, or through the
// page server's session for an MCP-B document.
func (h *Hub) invokeDoc(ctx context.Context, d *doc, tool string, args json.RawMessage) (core.Result, error) {
	if d.Backend != core.BackendMCPB {
		return h.browser.Invoke(ctx, d.Key, tool, args)
	}
	h.ps.mu.Lock()
	c := h.ps.clients[d.Key].client
	h.ps.mu.Unlock()
	if c == nil {
		return core.Result{}, errNoSession
	}
	return c.CallTool(ctx, tool, args)
}

// TabNumber returns the number of the tab with browser id id, or 0.
func (h *Hub) TabNumber(id string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t := h.tabs[id]; t != nil {
		return t.n
	}
	return 0
}

// pageServerInitTimeout is how long a page server may take to answer
// initialize and its first listings.
const pageServerInitTimeout = 10 * time.Second

// PageServerInitTimeout returns how long the MCP edge waits for a page
// server's initialize (and for each listing), 10 s unless set.
func (h *Hub) PageServerInitTimeout() time.Duration {
	h.ps.mu.Lock()
	defer h.ps.mu.Unlock()
	if h.ps.timeout > 0 {
		return h.ps.timeout
	}
	return pageServerInitTimeout
}

// SetPageServerInitTimeout sets how long the MCP edge waits for a page
// server's initialize; 0 restores the default.
func (h *Hub) SetPageServerInitTimeout(d time.Duration) {
	h.ps.mu.Lock()
	defer h.ps.mu.Unlock()
	h.ps.timeout = d
}
