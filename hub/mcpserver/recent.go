package mcpserver

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 2026-07-28 client over HTTP has no session: each request is a session
// of its own, gone when the request ends. The status page shows such
// clients as they were last seen, from the clientInfo in their requests'
// _meta, so that a person sees the agent that uses the browser.

// recentWindow is how long a stateless client is shown after its last
// request; maxRecent bounds how many are kept (the names come from clients,
// so the count is theirs to inflate).
const (
	recentWindow = 10 * time.Minute
	maxRecent    = 64
)

// recentClients records the stateless clients seen lately.
type recentClients struct {
	mu   sync.Mutex
	seen map[recentKey]time.Time
}

type recentKey struct{ name, version string }

// stateless says whether ss is the session of one request of a
// 2026-07-28 client (no session id, the version from the request).
func stateless(ss *mcp.ServerSession) bool {
	if ss == nil || ss.ID() != "" {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= protocol20260728
}

// note records a request of ss when it is a stateless new-revision one.
func (r *recentClients) note(ss *mcp.ServerSession, now time.Time) {
	if !stateless(ss) {
		return
	}
	p := ss.InitializeParams()
	k := recentKey{name: "unknown"}
	if p.ClientInfo != nil {
		k = recentKey{name: cut(p.ClientInfo.Name, 100), version: cut(p.ClientInfo.Version, 40)}
	}
	r.add(k, now)
}

// add records client k as seen at now.
func (r *recentClients) add(k recentKey, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = make(map[recentKey]time.Time)
	}
	if _, ok := r.seen[k]; !ok && len(r.seen) >= maxRecent {
		r.evictLocked(now)
	}
	r.seen[k] = now
}

// evictLocked forgets the clients past the window, or else the one seen
// longest ago.
func (r *recentClients) evictLocked(now time.Time) {
	var oldest recentKey
	var at time.Time
	for k, t := range r.seen {
		if now.Sub(t) > recentWindow {
			delete(r.seen, k)
			continue
		}
		if at.IsZero() || t.Before(at) {
			oldest, at = k, t
		}
	}
	if len(r.seen) >= maxRecent {
		delete(r.seen, oldest)
	}
}

// list returns the clients seen within the window, most recent first.
func (r *recentClients) list(now time.Time) []statusClient {
	r.mu.Lock()
	type entry struct {
		k recentKey
		t time.Time
	}
	var es []entry
	for k, t := range r.seen {
		if now.Sub(t) <= recentWindow {
			es = append(es, entry{k, t})
		}
	}
	r.mu.Unlock()
	slices.SortFunc(es, func(a, b entry) int { return b.t.Compare(a.t) })
	out := make([]statusClient, len(es))
	for i, e := range es {
		out[i] = statusClient{Name: e.k.name, Version: e.k.version,
			Session: "none (2026-07-28), last request " + roundDuration(now.Sub(e.t)) + " ago"}
	}
	return out
}

// noteClients is receiving middleware: it records the stateless clients.
func (s *Server) noteClients(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
			s.recent.note(ss, time.Now())
		}
		return next(ctx, method, req)
	}
}
