package hub

import (
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Subscribers get the hub's events on channels of their own: the hub never
// calls out to them, never blocks on them, and never holds its lock while
// they run. A subscription ends with the func that Watch or WatchCalls
// returns. (ObserveCalls is the one exception: a recorder is told of each
// call in the call's own goroutine, outside the lock, so that nothing is
// dropped.)

// watcher is one subscriber to catalog changes.
type watcher struct {
	ch chan struct{} // capacity 1: a pending change
}

// Watch returns a channel that receives after each change of the catalog,
// and a func that ends the subscription (the channel is then never sent to
// again; it is not closed). Changes that come while the subscriber is busy
// fold into one pending signal, so a slow subscriber never holds the hub up
// and, when it reads, reads the latest catalog.
func (h *Hub) Watch() (<-chan struct{}, func()) { return h.subscribe(h.watchers) }

// WatchUse returns a channel that receives when the tab used last changes
// (a call into another tab than the last one called, opened or activated,
// or another tab made active): the order of TabOrder changed, though the
// catalog may not have. Signals fold as Watch's do; the func ends the
// subscription. A list that follows the tabs' use (the MCP server's --list
// active, --max-listed-tools) is made again on it.
func (h *Hub) WatchUse() (<-chan struct{}, func()) { return h.subscribe(h.useWatchers) }

// subscribe adds a watcher to set, which h.mu guards.
func (h *Hub) subscribe(set map[*watcher]struct{}) (<-chan struct{}, func()) {
	w := &watcher{ch: make(chan struct{}, 1)}
	h.mu.Lock()
	set[w] = struct{}{}
	h.mu.Unlock()
	return w.ch, func() {
		h.mu.Lock()
		delete(set, w)
		h.mu.Unlock()
	}
}

// notifyLocked signals every watcher without blocking.
func (h *Hub) notifyLocked() { signal(h.watchers) }

// signal signals the watchers of set without blocking; h.mu is held.
func signal(set map[*watcher]struct{}) {
	for w := range set {
		select {
		case w.ch <- struct{}{}:
		default:
		}
	}
}

// callWatcher is one subscriber to call records.
type callWatcher struct {
	ch chan CallRecord
}

// callWatchers is the set of subscribers to call records. Calls read it
// through an atomic snapshot, so sending records never takes a lock, and
// never the catalog's; subscribing and ending a subscription replace the
// snapshot under a small lock of its own.
type callWatchers struct {
	mu   sync.Mutex
	list atomic.Pointer[[]*callWatcher] // never modified in place
}

// load returns the current subscribers; the slice must not be modified.
func (c *callWatchers) load() []*callWatcher {
	if p := c.list.Load(); p != nil {
		return *p
	}
	return nil
}

func (c *callWatchers) add(w *callWatcher) {
	c.mu.Lock()
	defer c.mu.Unlock()
	list := append(slices.Clone(c.load()), w)
	c.list.Store(&list)
}

func (c *callWatchers) remove(w *callWatcher) {
	c.mu.Lock()
	defer c.mu.Unlock()
	list := slices.DeleteFunc(slices.Clone(c.load()), func(x *callWatcher) bool { return x == w })
	c.list.Store(&list)
}

// WatchCalls returns a channel that receives a record of every finished
// tool call, and a func that ends the subscription. The channel buffers n
// records (at least 1); a record that finds it full is dropped, so a slow
// subscriber loses records rather than slowing calls down. A call that
// started before the subscription may go unrecorded, and one that was
// finishing as it ended may still leave a record in the channel.
func (h *Hub) WatchCalls(n int) (<-chan CallRecord, func()) {
	w := &callWatcher{ch: make(chan CallRecord, max(n, 1))}
	h.callWatchers.add(w)
	return w.ch, func() { h.callWatchers.remove(w) }
}

// Changed returns a channel that is closed at the next change of the
// catalog or of the open tabs (one opened, or its URL or title changed).
// Wait on it, read what you need, and call Changed again: a change made
// between the read and the next call is not missed, since the read sees it.
func (h *Hub) Changed() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changed
}

// wakeLocked closes the changed channel and makes a new one.
func (h *Hub) wakeLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// CallDetail is a finished call of a page tool with what a recorder needs
// to make it again: where it went, its arguments and its result.
type CallDetail struct {
	CallRecord
	// Page is the page's own name of the tool.
	Page string
	// URL is the URL of the tab the call went to (the document's, for a
	// cached tool whose page did not open).
	URL string
	// Args are the arguments as the client sent them (empty for none).
	Args json.RawMessage
	// Schema is the tool's inputSchema, nil when it has none.
	Schema json.RawMessage
	// Result is the call's result.
	Result core.Outcome
}

// callObserver is one ObserveCalls subscription.
type callObserver struct {
	fn func(CallDetail)
}

// callObservers is the set of ObserveCalls subscriptions, read through an
// atomic snapshot as callWatchers is.
type callObservers struct {
	mu   sync.Mutex
	list atomic.Pointer[[]*callObserver] // never modified in place
}

func (c *callObservers) load() []*callObserver {
	if p := c.list.Load(); p != nil {
		return *p
	}
	return nil
}

func (c *callObservers) change(f func([]*callObserver) []*callObserver) {
	c.mu.Lock()
	defer c.mu.Unlock()
	list := f(slices.Clone(c.load()))
	c.list.Store(&list)
}

// ObserveCalls has fn told of every finished call that reached a page tool
// (not of a name no page has), in the calling goroutine, before the result
// goes back to the caller: a recorder that writes in fn has the call on
// disk before the client sees it. fn must be quick and must not call the
// hub's Call. The returned func ends the subscription.
func (h *Hub) ObserveCalls(fn func(CallDetail)) (stop func()) {
	o := &callObserver{fn: fn}
	h.callObservers.change(func(l []*callObserver) []*callObserver { return append(l, o) })
	return func() {
		h.callObservers.change(func(l []*callObserver) []*callObserver {
			return slices.DeleteFunc(l, func(x *callObserver) bool { return x == o })
		})
	}
}
