package hub

// Subscribers get the hub's events on channels of their own: the hub never
// calls out to them, never blocks on them, and never holds its lock while
// they run. A subscription ends with the func that Watch or WatchCalls
// returns. (The call hooks, hooks.go, are the one exception: they run in
// the call's own goroutine, outside the lock, so that nothing is dropped.)

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

// WatchCalls returns a channel that receives a record of every finished
// tool call, and a func that ends the subscription. The channel buffers n
// records (at least 1); a record that finds it full is dropped, so a slow
// subscriber loses records rather than slowing calls down. A call that
// started before the subscription may go unrecorded, and one that was
// finishing as it ended may still leave a record in the channel.
func (h *Hub) WatchCalls(n int) (<-chan CallRecord, func()) {
	ch := make(chan CallRecord, max(n, 1))
	return ch, h.HookCalls(CallHooks{Record: func(r CallRecord) {
		select {
		case ch <- r:
		default:
		}
	}})
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
