package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

// This file passes progress on to the client that made a call. A call whose
// client asked for progress (a progressToken) carries a progressSink in its
// context: a WebMCP tool cannot report progress, so the sink gets a
// heartbeat while the page works (hitl.go's wait); a page server's tool
// gets a token of our own in its tools/call, and the page server's
// notifications/progress for it come back here with the client's token
// (pageSession.CallTool). Once a page server reports, heartbeats stop, so
// the client sees one increasing series.

// Bounds of the progress passed on from a page server.
const (
	// progressRate and progressBurst bound the notifications of one call
	// passed on to the client; the rest are dropped (the next one carries
	// the news anyway).
	progressRate  = 20
	progressBurst = 20
	// maxProgressMessage bounds a progress message, in bytes.
	maxProgressMessage = 1024
	// progressSendTimeout bounds sending one notification to the client,
	// so a slow client does not hold the page server's session.
	progressSendTimeout = 5 * time.Second
)

// progressSink is where the progress of one call goes: the session and
// token of the client's latest request for it (a call resumed after a
// question has a new request).
type progressSink struct {
	mu      sync.Mutex
	session *mcp.ServerSession
	token   any
	client  *mcp.ServerSession // the waiting request's client, for log messages
	// reqCtx is the waiting request's context: a notification sent with
	// it goes with that request (on its stream, over HTTP).
	reqCtx context.Context
	last   float64
	sent   bool // something was sent; last holds its progress
	page   bool // a page server reports this call's progress
	limit  *rate.Limiter
}

type progressKey struct{}

func newProgressSink() *progressSink {
	return &progressSink{limit: rate.NewLimiter(progressRate, progressBurst)}
}

// withProgress returns a context whose calls report progress to p.
func withProgress(ctx context.Context, p *progressSink) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// progressFrom returns the progress sink of ctx, or nil.
func progressFrom(ctx context.Context) *progressSink {
	p, _ := ctx.Value(progressKey{}).(*progressSink)
	return p
}

// target points the sink at the client request now waiting for the call
// (before the call starts, so the page server's tools/call carries a
// token); a request without a progress token, or nil, stops the sink.
func (p *progressSink) target(ctx context.Context, ss *mcp.ServerSession, token any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.session, p.token, p.sent = nil, nil, false
	p.client, p.reqCtx = ss, ctx
	if ss != nil && token != nil {
		p.session, p.token = ss, token
	}
}

// log passes a page server's log message on to the client of the request
// now waiting for the call, at the level that client chose.
func (p *progressSink) log(ctx context.Context, m *mcp.LoggingMessageParams) {
	p.mu.Lock()
	ss := p.client
	if p.reqCtx != nil {
		ctx = p.reqCtx
	}
	p.mu.Unlock()
	if ss == nil || !p.limit.Allow() {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, progressSendTimeout)
	defer cancel()
	ss.Log(sctx, m)
}

// wanted says whether the client asked for progress; it marks the call as
// reported by a page server, which ends the heartbeats.
func (p *progressSink) wanted() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.token == nil {
		return false
	}
	p.page = true
	return true
}

// heartbeat tells the client the call still runs, unless a page server
// reports the call's progress itself.
func (p *progressSink) heartbeat(ctx context.Context, secs float64, msg string) {
	p.mu.Lock()
	if p.page {
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.send(ctx, &mcp.ProgressNotificationParams{Progress: secs, Message: msg})
}

// forward passes on a page server's progress: bounded in rate and size,
// and only when it increases, as MCP requires.
func (p *progressSink) forward(ctx context.Context, in *mcp.ProgressNotificationParams) {
	if !p.limit.Allow() {
		return
	}
	p.send(ctx, &mcp.ProgressNotificationParams{Progress: in.Progress, Total: in.Total, Message: cut(in.Message, maxProgressMessage)})
}

// send sends n with the client's token when its progress increases.
func (p *progressSink) send(ctx context.Context, n *mcp.ProgressNotificationParams) {
	p.mu.Lock()
	ss, token := p.session, p.token
	if ss == nil || (p.sent && n.Progress <= p.last) {
		p.mu.Unlock()
		return
	}
	p.sent, p.last = true, n.Progress
	if p.reqCtx != nil {
		ctx = p.reqCtx
	}
	p.mu.Unlock()
	n.ProgressToken = token
	sctx, cancel := context.WithTimeout(ctx, progressSendTimeout)
	defer cancel()
	ss.NotifyProgress(sctx, n)
}

// pageProgress are the progress tokens a page session gave its calls in
// flight, each to its call's sink.
type pageProgress struct {
	mu    sync.Mutex
	next  uint64
	sinks map[string]*progressSink
}

// add gives sink a new token for the page server; done forgets it.
func (pp *pageProgress) add(sink *progressSink) (token string, done func()) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.next++
	token = fmt.Sprintf("webmcp-cdp-%d", pp.next)
	if pp.sinks == nil {
		pp.sinks = make(map[string]*progressSink)
	}
	pp.sinks[token] = sink
	return token, func() {
		pp.mu.Lock()
		delete(pp.sinks, token)
		pp.mu.Unlock()
	}
}

// sink returns the sink of a token the page server sent back, or nil for
// a token that is not one of ours (or whose call is over).
func (pp *pageProgress) sink(token any) *progressSink {
	t, ok := token.(string)
	if !ok {
		return nil
	}
	pp.mu.Lock()
	defer pp.mu.Unlock()
	return pp.sinks[t]
}
