package cdp

import (
	"maps"
	"slices"

	"github.com/chromedp/cdproto/runtime"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file holds the Go end of the MCP-B page-server pipe: the page
// script's proxy client (polyfill/pageserver.js) queues what page servers
// post and pings the binding with pageServerPing; Go takes the queue
// through the bridge and hands each server's messages to a core.PageConn
// (pagePipe, pagepipe.go). The pipe carries raw JSON-RPC bytes: the MCP
// session over it is the sink's (cdp knows no MCP).

// pageServerPing is the binding payload of the page script's page-server
// shim: "messages wait" (it carries no data).
const pageServerPing = "mcpb"

// Bounds of the pipe.
const (
	// maxPageServerTake is the most characters one take reads.
	maxPageServerTake = 4 << 20
	// pageServerBacklog is the most messages of one server waiting for its
	// reader; more are dropped (reason "backlog").
	// One take holds up to the page's queue (pageQueueMessages), and a
	// take that waited for an earlier one is delivered right after it
	// (deliverTakeLocked): room for two.
	pageServerBacklog = 2 * pageQueueMessages
	// pageServerBacklogBytes bounds the bytes of those messages: twice
	// what the page queues (MCPB_MAX_QUEUED_CHARS of pageserver.js), so a
	// page cannot make Go hold its 1 MiB messages by the thousand.
	pageServerBacklogBytes = 2 * pageQueueChars
	// pageQueueChars is MCPB_MAX_QUEUED_CHARS of polyfill/pageserver.js.
	pageQueueChars = 8 << 20
	// pageQueueMessages is MCPB_MAX_QUEUED of polyfill/pageserver.js: the
	// most messages waiting in the page, and so in one take.
	pageQueueMessages = 512
	// maxPageServersPerDoc bounds the servers of one document.
	maxPageServersPerDoc = 8
	// pageServerHoldMs is how long the page holds the answer to the send
	// of a request, waiting for what the server sends next: an answer within
	// it comes back with the send (one CDP round trip per call); a later one
	// comes through the standing wait.
	pageServerHoldMs = 20
	// maxEarlyTakes bounds the takes kept while an earlier one is still on
	// its way (psDoc.early); past it they are delivered as they are.
	maxEarlyTakes = 16
)

// PageServerSink is what a Sink implements to receive MCP-B page servers
// (*hub.Hub does). It is called like the Sink's methods, in order, with no
// lock of the browser held; a Sink that is no PageServerSink gets each
// pipe closed.
type PageServerSink interface {
	// PageServer hands over the pipe to a page server that said it is
	// ready. src is its document's, with a key of the server's own and the
	// backend core.BackendMCPB; the pipe ends when the server stops or the
	// document goes.
	PageServer(src core.Source, conn core.PageConn)
}

// psDoc is the page-server state of one document.
type psDoc struct {
	busy    bool // a take loop runs
	dirty   bool // another take is needed
	missed  bool // pinged before the bridge was adopted
	waiting bool // the standing wait runs (waitPageServers)
	pipes   map[string]*pagePipe
	// Takes come back through the standing wait, a pull and the sends of
	// requests, so each is numbered in the page: seq is the last delivered,
	// early holds the takes that came before an earlier one.
	seq   uint64
	early map[uint64]psTake
	// skip: a take call failed, and the page may have used up its number:
	// the next numbered take is taken as the next in order.
	skip bool
}

// pageServersLocked returns the page-server state of d, made on first use.
func (b *Browser) pageServersLocked(d *docState) *psDoc {
	if b.mcpb == nil {
		b.mcpb = make(map[string]*psDoc)
	}
	p := b.mcpb[d.key]
	if p == nil {
		p = &psDoc{pipes: make(map[string]*pagePipe)}
		b.mcpb[d.key] = p
	}
	return p
}

// endPageServersLocked ends the pipes of a document that went away.
func (b *Browser) endPageServersLocked(key string) {
	p := b.mcpb[key]
	if p == nil {
		return
	}
	delete(b.mcpb, key)
	for _, pp := range p.pipes {
		pp.end()
	}
}

// adoptedPageServers takes the queue of a document whose shim pinged
// before its bridge was adopted.
func (b *Browser) adoptedPageServers(d *docState) {
	b.mu.Lock()
	p := b.mcpb[d.key]
	missed := p != nil && p.missed
	b.mu.Unlock()
	if missed {
		b.pullPageServers(d)
	}
}

type psEntry struct {
	T       string `json:"t"`
	S       string `json:"s"`
	D       string `json:"d"`
	Channel string `json:"channel"`
	Kind    string `json:"kind"`
	Origin  string `json:"origin"`
}

// psTake is what one take of the page's queue returns.
type psTake struct {
	Msgs    []psEntry      `json:"msgs"`
	Dropped map[string]int `json:"dropped"`
	More    bool           `json:"more"`
	Seq     uint64         `json:"seq"`
}

// deliverTakeLocked delivers q, and the takes that waited for it, in the
// order the page took them. A take that never comes (its call failed)
// holds up at most maxEarlyTakes others: then they go in their order.
func (b *Browser) deliverTakeLocked(d *docState, p *psDoc, q psTake) {
	if p.skip && q.Seq != 0 {
		p.skip = false
		p.seq = max(p.seq, q.Seq-1)
	}
	if q.Seq > p.seq+1 {
		if p.early == nil {
			p.early = make(map[uint64]psTake)
		}
		p.early[q.Seq] = q
		if len(p.early) <= maxEarlyTakes {
			return
		}
		for _, s := range slices.Sorted(maps.Keys(p.early)) {
			e := p.early[s]
			b.deliverLocked(d, p, e.Msgs, e.Dropped)
			p.seq = s
		}
		clear(p.early)
		return
	}
	// Next in order, unnumbered, or late (after such a flush): now.
	for {
		b.deliverLocked(d, p, q.Msgs, q.Dropped)
		p.seq = max(p.seq, q.Seq)
		next, ok := p.early[p.seq+1]
		if !ok {
			return
		}
		delete(p.early, p.seq+1)
		q = next
	}
}

// lostTakeLocked is called when a take call failed: the page may have
// taken messages under a number that will never reach Go, so the takes
// held for it go now, in order, and the next one is not held for it.
func (b *Browser) lostTakeLocked(d *docState, p *psDoc) {
	for _, s := range slices.Sorted(maps.Keys(p.early)) {
		e := p.early[s]
		b.deliverLocked(d, p, e.Msgs, e.Dropped)
		p.seq = s
	}
	clear(p.early)
	p.skip = true
}

// pullPageServers takes what the page servers of d posted, until the queue
// is empty. Pings during a take fold into one more take.
func (b *Browser) pullPageServers(d *docState) {
	b.mu.Lock()
	if !d.alive {
		b.mu.Unlock()
		return
	}
	p := b.pageServersLocked(d)
	if d.bridge == "" || d.bridge == "pending" {
		p.missed = true
		b.mu.Unlock()
		return
	}
	if p.waiting {
		b.mu.Unlock()
		return
	}
	if p.busy {
		p.dirty = true
		b.mu.Unlock()
		return
	}
	p.missed = false
	p.busy = true
	bridge := d.bridge
	b.mu.Unlock()
	for {
		var q psTake
		err := b.callBridge(b.life, d.t.sess, bridge, "function(m){return this.mcpbTake(m)}", []any{maxPageServerTake}, &q)
		b.mu.Lock()
		if !d.alive {
			p.busy = false
			b.mu.Unlock()
			return
		}
		if err != nil {
			b.logger.Debug("reading a page's page-server messages failed", "url", d.url, "err", err)
			b.lostTakeLocked(d, p)
		} else {
			b.deliverTakeLocked(d, p, q)
		}
		again := p.dirty || (err == nil && q.More)
		p.dirty = false
		p.busy = again
		wait := !again && len(p.pipes) > 0 && !p.waiting
		if wait {
			p.waiting = true
		}
		b.mu.Unlock()
		if wait {
			go b.waitPageServers(d, p, bridge)
		}
		if !again {
			return
		}
	}
}

// waitPageServers keeps one call waiting in the page for the page servers'
// messages, from the first server found until the document goes: a
// message then reaches Go as that call's answer, with no ping and no
// second round trip. Only the sends of requests take the queue before it
// (pagePipe.Send); takes are numbered, so messages are delivered in order.
func (b *Browser) waitPageServers(d *docState, p *psDoc, bridge runtime.RemoteObjectID) {
	for {
		var q psTake
		err := b.callBridge(b.life, d.t.sess, bridge, "function(m){return this.mcpbWait(m)}", []any{maxPageServerTake}, &q)
		b.mu.Lock()
		// alive and url as read under the lock: the target's events and
		// the tools' reads change them.
		if alive, url := d.alive, d.url; err != nil || !alive {
			p.waiting = false
			if err != nil && alive {
				b.lostTakeLocked(d, p)
			}
			b.mu.Unlock()
			if err != nil && alive {
				b.logger.Debug("waiting for a page's page-server messages failed", "url", url, "err", err)
			}
			return
		}
		b.deliverTakeLocked(d, p, q)
		b.mu.Unlock()
	}
}

// deliverLocked hands the taken messages to their pipes.
func (b *Browser) deliverLocked(d *docState, p *psDoc, msgs []psEntry, dropped map[string]int) {
	for reason, n := range dropped {
		b.logger.Warn("dropped page-server messages", "url", d.url, "reason", reason, "count", n)
		for _, pp := range p.pipes {
			pp.drop(reason, n)
		}
	}
	for _, m := range msgs {
		pp := p.pipes[m.S]
		switch m.T {
		case "ready":
			if pp != nil || len(p.pipes) >= maxPageServersPerDoc {
				continue
			}
			pp = &pagePipe{
				b: b, d: d, bridge: d.bridge,
				info:     core.PageServer{ID: m.S, Channel: m.Channel, Kind: m.Kind, FrameOrigin: m.Origin},
				in:       make(chan []byte, pageServerBacklog),
				done:     make(chan struct{}),
				dropWake: make(chan struct{}, 1),
			}
			p.pipes[m.S] = pp
			src := b.sourceOf(d)
			src.Key = d.key + "#mcpb:" + m.S
			src.Backend = core.BackendMCPB
			b.logger.Debug("found a page server", "url", d.url, "channel", m.Channel, "kind", m.Kind)
			b.sink.PageServer(src, pp)
		case "stopped":
			if pp != nil {
				delete(p.pipes, m.S)
				pp.end()
			}
		case "msg":
			if pp != nil {
				pp.deliver([]byte(m.D))
			}
		}
	}
}
