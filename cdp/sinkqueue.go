package cdp

import (
	"context"
	"slices"
	"sync"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file holds the queue between the browser and its Sink. The browser
// learns things under its lock (b.mu), where their order is known, and
// enqueues them there; one goroutine at a time takes them out and calls the
// Sink with no lock of the browser held, so a Sink may call back into the
// Browser and a slow Sink holds back only later events, never the browser
// (docs/decisions/2026-11-26-sink-queue.md).
//
// Order: events reach the Sink in the order they were enqueued, which is
// the order the browser learned them under b.mu. So an Update of a
// document comes before its DropDoc (Update is enqueued only while the
// document is alive, DropDoc when it stops being so), and a tab's
// TabClosed after the DropDocs of its documents (onDetached enqueues them
// in that order).
//
// Bound: a document has at most one Update waiting (a later one takes the
// earlier one's place in line, with the refusals of both, and a DropDoc
// removes it), and a tab at most one TabOpened (its URL and title only
// change), until a TabClosed of that tab is queued after them. What else can
// wait is one DropDoc per document and one TabClosed per tab that went,
// one TabLoadedBefore per load of an old tab, and one PageServer per page
// server (at most maxPageServersPerDoc per document): a few dozen bytes
// each, not tool lists. The queue grows past the live documents and tabs
// only while the Sink does not return, by one small record per document
// that goes meanwhile; the goroutine exits whenever the queue is empty.

// sinkKind is the Sink method an event calls.
type sinkKind uint8

const (
	sinkUpdate sinkKind = iota
	sinkDropDoc
	sinkTabOpened
	sinkTabClosed
	sinkLoadedBefore
	sinkPageServer
)

// maxQueuedRefusals bounds the refusals one coalesced Update carries.
const maxQueuedRefusals = 256

// sinkEvent is one call into the Sink.
type sinkEvent struct {
	kind    sinkKind
	skip    bool // removed from the line (its document went)
	src     core.Source
	tools   []core.Tool
	refused []core.Refusal
	id      string // DropDoc's key; the tab of the tab events
	url     string
	title   string
	before  bool
	conn    core.PageConn
}

// sinkQueue delivers events to the Sink in order, from a goroutine that
// holds no lock of the browser. Its methods only enqueue: they may be
// called with b.mu held.
type sinkQueue struct {
	sink Sink // set by Start, before any event

	mu        sync.Mutex
	line      []*sinkEvent
	updates   map[string]*sinkEvent // the waiting Update of each document
	opened    map[string]*sinkEvent // the waiting TabOpened of each tab
	running   bool                  // a goroutine delivers
	queued    uint64                // events ever enqueued
	delivered uint64                // events delivered (or skipped)
	progress  chan struct{}         // closed and replaced when delivered grows
}

func newSinkQueue() *sinkQueue {
	return &sinkQueue{
		updates:  make(map[string]*sinkEvent),
		opened:   make(map[string]*sinkEvent),
		progress: make(chan struct{}),
	}
}

// push puts e at the end of the line and starts a deliverer if none runs.
// q.mu is held.
func (q *sinkQueue) pushLocked(e *sinkEvent) {
	q.line = append(q.line, e)
	q.queued++
	if !q.running {
		q.running = true
		go q.deliver()
	}
}

// Update queues Sink.Update, in the place of the document's Update still
// waiting, if any.
func (q *sinkQueue) Update(src core.Source, tools []core.Tool, refused []core.Refusal) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if e := q.updates[src.Key]; e != nil {
		e.src, e.tools = src, tools
		e.refused = append(slices.Clip(e.refused), refused...)
		if over := len(e.refused) - maxQueuedRefusals; over > 0 {
			e.refused = e.refused[over:]
		}
		return
	}
	e := &sinkEvent{kind: sinkUpdate, src: src, tools: tools, refused: refused}
	q.updates[src.Key] = e
	q.pushLocked(e)
}

// DropDoc queues Sink.DropDoc; the document's Update still waiting is of
// no use any more.
func (q *sinkQueue) DropDoc(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if e := q.updates[key]; e != nil {
		e.skip = true
		e.tools, e.refused = nil, nil
		delete(q.updates, key)
	}
	q.pushLocked(&sinkEvent{kind: sinkDropDoc, id: key})
}

// TabOpened queues Sink.TabOpened, in the place of the tab's TabOpened
// still waiting, if any.
func (q *sinkQueue) TabOpened(id, url, title string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if e := q.opened[id]; e != nil {
		e.url, e.title = url, title
		return
	}
	e := &sinkEvent{kind: sinkTabOpened, id: id, url: url, title: title}
	q.opened[id] = e
	q.pushLocked(e)
}

// TabClosed queues Sink.TabClosed. A TabOpened, or an Update of a
// document in the tab, queued after it comes after it.
func (q *sinkQueue) TabClosed(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.opened, id)
	for k, e := range q.updates {
		if e.src.Tab == id {
			delete(q.updates, k)
		}
	}
	q.pushLocked(&sinkEvent{kind: sinkTabClosed, id: id})
}

// TabLoadedBefore queues PreexistingSink.TabLoadedBefore (dropped at
// delivery when the Sink is none).
func (q *sinkQueue) TabLoadedBefore(id string, before bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pushLocked(&sinkEvent{kind: sinkLoadedBefore, id: id, before: before})
}

// PageServer queues PageServerSink.PageServer; a Sink that is none gets
// the pipe closed.
func (q *sinkQueue) PageServer(src core.Source, conn core.PageConn) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pushLocked(&sinkEvent{kind: sinkPageServer, src: src, conn: conn})
}

// deliver hands the waiting events to the Sink, in order, until none
// waits; then it ends (the next push starts another).
func (q *sinkQueue) deliver() {
	for {
		q.mu.Lock()
		batch := q.line
		q.line = nil
		// What was taken out can no longer take a later event's place.
		clear(q.updates)
		clear(q.opened)
		if len(batch) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		for _, e := range batch {
			if !e.skip {
				q.call(e)
			}
		}
		q.mu.Lock()
		q.delivered += uint64(len(batch))
		close(q.progress)
		q.progress = make(chan struct{})
		q.mu.Unlock()
	}
}

// call makes the Sink call of e.
func (q *sinkQueue) call(e *sinkEvent) {
	switch e.kind {
	case sinkUpdate:
		q.sink.Update(e.src, e.tools, e.refused)
	case sinkDropDoc:
		q.sink.DropDoc(e.id)
	case sinkTabOpened:
		q.sink.TabOpened(e.id, e.url, e.title)
	case sinkTabClosed:
		q.sink.TabClosed(e.id)
	case sinkLoadedBefore:
		if ps, ok := q.sink.(PreexistingSink); ok {
			ps.TabLoadedBefore(e.id, e.before)
		}
	case sinkPageServer:
		if ps, ok := q.sink.(PageServerSink); ok {
			ps.PageServer(e.src, e.conn)
		} else {
			e.conn.Close()
		}
	}
}

// flush waits until every event queued before it was called has reached
// the Sink, so that a caller returns only once the Sink knows what the
// call changed. It must not be called from a Sink method (that method
// holds up the delivery flush waits for); ctx bounds the wait.
func (q *sinkQueue) flush(ctx context.Context) error {
	q.mu.Lock()
	want := q.queued
	for q.delivered < want {
		progress := q.progress
		q.mu.Unlock()
		select {
		case <-progress:
		case <-ctx.Done():
			return ctx.Err()
		}
		q.mu.Lock()
	}
	q.mu.Unlock()
	return nil
}
