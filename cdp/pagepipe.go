package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"sync"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/runtime"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file holds one page server's end of the pipe (pageserver.go takes
// the page's queue and hands each server's messages here): its backlog,
// what it dropped, and the sends to the server.

// pagePipe is the core.PageConn of one page server.
type pagePipe struct {
	b      *Browser
	d      *docState
	bridge runtime.RemoteObjectID
	info   core.PageServer
	in     chan []byte
	done   chan struct{}
	once   sync.Once

	mu       sync.Mutex
	dropped  map[string]int
	dropWake chan struct{} // capacity 1
	queued   int           // bytes in in, bounded by pageServerBacklogBytes
}

var _ core.PageConn = (*pagePipe)(nil)

func (p *pagePipe) Server() core.PageServer { return p.info }

func (p *pagePipe) Done() <-chan struct{} { return p.done }

func (p *pagePipe) end() { p.once.Do(func() { close(p.done) }) }

// Close ends the pipe; the page's server is left as it is. It takes the
// browser's lock: the Sink gets pipes with none held (PageServerSink).
func (p *pagePipe) Close() {
	p.end()
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	if ps := p.b.mcpb[p.d.key]; ps != nil && ps.pipes[p.info.ID] == p {
		delete(ps.pipes, p.info.ID)
	}
}

func (p *pagePipe) deliver(msg []byte) {
	p.mu.Lock()
	full := p.queued+len(msg) > pageServerBacklogBytes
	if !full {
		p.queued += len(msg)
	}
	p.mu.Unlock()
	if full {
		p.drop("backlog", 1)
		return
	}
	select {
	case p.in <- msg:
	default:
		p.took(msg)
		p.drop("backlog", 1)
	}
}

// took counts msg out of the pipe's backlog.
func (p *pagePipe) took(msg []byte) {
	p.mu.Lock()
	p.queued -= len(msg)
	p.mu.Unlock()
}

func (p *pagePipe) drop(reason string, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dropped == nil {
		p.dropped = make(map[string]int)
	}
	p.dropped[reason] += n
	select {
	case p.dropWake <- struct{}{}:
	default:
	}
}

func (p *pagePipe) DropSignal() <-chan struct{} { return p.dropWake }

func (p *pagePipe) Dropped() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := maps.Clone(p.dropped)
	clear(p.dropped)
	return out
}

func (p *pagePipe) Recv(ctx context.Context) ([]byte, error) {
	// Messages that arrived before the end are still read.
	select {
	case m := <-p.in:
		p.took(m)
		return m, nil
	default:
	}
	select {
	case m := <-p.in:
		p.took(m)
		return m, nil
	case <-p.done:
		return nil, core.ErrPageServerGone
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Send posts msg to the server. For a request (call), the page holds the
// answer to the send for up to pageServerHoldMs, and what the server sends
// in that time (its answer, as a rule) comes back with it: one CDP round
// trip carries both. That take is delivered even when ctx ends first, so
// nothing the page took is lost.
func (p *pagePipe) Send(ctx context.Context, msg []byte, call bool) error {
	select {
	case <-p.done:
		return core.ErrPageServerGone
	default:
	}
	if !json.Valid(msg) {
		return fmt.Errorf("sending to a page server: the message is not JSON")
	}
	hold := 0
	if call {
		hold = pageServerHoldMs
	}
	pend, err := p.d.t.sess.Send(runtime.CommandCallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: "function(i,t,m,h,s){return this.mcpbSend(i,t,m,h,s)}",
		ObjectID:            p.bridge,
		Arguments: []*runtime.CallArgument{
			{Value: jsonString(p.info.ID)}, {Value: jsonString(string(msg))},
			{Value: jsonv2.Value(strconv.Itoa(maxPageServerTake))}, {Value: jsonv2.Value(strconv.Itoa(hold))},
			// The page times a tools/call when traces want it
			// (core.Result.PageTook, via hub/mcpserver's pageTook).
			{Value: jsonv2.Value(strconv.FormatBool(call && p.b.opts.PageTimes))},
		},
		AwaitPromise:  ptr(true),
		ReturnByValue: ptr(true),
		Silent:        ptr(true),
	})
	if err != nil {
		return p.sendError(err)
	}
	select {
	case <-pend.done:
	case <-ctx.Done():
		go p.sent(pend)
		return ctx.Err()
	}
	status, err := p.sent(pend)
	if err != nil {
		return p.sendError(err)
	}
	switch status {
	case "ok":
		return nil
	case "gone":
		p.end()
		return core.ErrPageServerGone
	}
	return fmt.Errorf("sending to a page server: the page script refused the message (%s)", status)
}

// sent reads the answer to a send and delivers the take it brings.
func (p *pagePipe) sent(pend *Pending) (string, error) {
	var q struct {
		Status string `json:"status"`
		psTake
	}
	if err := bridgeResult(p.b.life, pend, &q); err != nil {
		b := p.b
		b.mu.Lock()
		if ps := b.mcpb[p.d.key]; ps != nil && p.d.alive {
			b.lostTakeLocked(p.d, ps)
		}
		b.mu.Unlock()
		return "", err
	}
	if q.Seq != 0 {
		b := p.b
		b.mu.Lock()
		ps := b.mcpb[p.d.key]
		if ps != nil && p.d.alive {
			b.deliverTakeLocked(p.d, ps, q.psTake)
		}
		b.mu.Unlock()
		if q.More {
			go b.pullPageServers(p.d)
		}
	}
	return q.Status, nil
}

// sendError words the failure of a send.
func (p *pagePipe) sendError(err error) error {
	if p.b.callError(p.d, err) == ErrNavigated {
		p.end()
		return core.ErrPageServerGone
	}
	return fmt.Errorf("sending to a page server: %w", err)
}
