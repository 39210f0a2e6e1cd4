package settle

import (
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Registrations notes, while clients' first tools/list is held, when each
// tab last changed its tools (Note, which the browser's sink calls with each
// update) and when each start page loaded (Loaded). It wakes the wait of
// StartPages on each, so the wait runs on the pages' events, with a clock
// only for the quiet period.
type Registrations struct {
	clock Clock
	wake  chan struct{} // capacity 1

	mu     sync.Mutex
	off    bool                 // the first list was answered: nothing more to note
	names  map[string]string    // document key → its tool names, joined
	last   map[string]time.Time // tab → last change of its tools
	loaded map[string]time.Time // start tab → when its page loaded
}

// NewRegistrations returns an empty noting on clock (nil: the real clock).
func NewRegistrations(clock Clock) *Registrations {
	if clock == nil {
		clock = Real()
	}
	return &Registrations{clock: clock, wake: make(chan struct{}, 1),
		names: map[string]string{}, last: map[string]time.Time{}, loaded: map[string]time.Time{}}
}

// Note notes a document's tools as the browser read them: a document whose
// tool names changed counts as a registration in its tab (a read that finds
// the same tools does not).
func (r *Registrations) Note(src core.Source, tools []core.Tool, refused []core.Refusal) {
	r.note(src, tools, refused, r.clock.Now())
}

// note records a document's tools read at now, and reports whether its
// tool names changed (a registration).
func (r *Registrations) note(src core.Source, tools []core.Tool, refused []core.Refusal, now time.Time) bool {
	ns := make([]string, 0, len(tools)+len(refused))
	for _, t := range tools {
		ns = append(ns, t.Name)
	}
	for _, rf := range refused {
		ns = append(ns, "refused:"+rf.Tool)
	}
	slices.Sort(ns)
	joined := strings.Join(ns, "\x00")
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.off || r.names[src.Key] == joined {
		return false
	}
	r.names[src.Key] = joined
	r.last[src.Tab] = now
	r.signal()
	return true
}

// DropDoc forgets a document (it navigated away or its frame went).
func (r *Registrations) DropDoc(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.names, key)
}

// Loaded notes that a start tab's page loaded (or failed, or stopped
// trying).
func (r *Registrations) Loaded(tab string) {
	r.pageLoaded(tab, r.clock.Now())
}

func (r *Registrations) pageLoaded(tab string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.off {
		slog.Debug("a start page loaded", "tab", tab)
		r.loaded[tab] = now
		r.signal()
	}
}

// signal wakes the wait; r.mu is held.
func (r *Registrations) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// look reads tabs for the rule: loaded once each has loaded, and quiet
// from the later of the latest load and the latest change of tools.
func (r *Registrations) look(tabs []string) Look {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := Look{Loaded: true, Ready: true, Changed: r.wake}
	for _, tab := range tabs {
		loaded, ok := r.loaded[tab]
		if !ok {
			l.Loaded = false
			return l
		}
		l.Since = latest(l.Since, loaded, r.last[tab])
	}
	return l
}

// latest returns the latest of times.
func latest(times ...time.Time) time.Time {
	var out time.Time
	for _, t := range times {
		if t.After(out) {
			out = t
		}
	}
	return out
}

// Stop ends the noting: the first list was answered.
func (r *Registrations) Stop() {
	r.mu.Lock()
	r.off = true
	r.names, r.last, r.loaded = nil, nil, nil
	r.mu.Unlock()
}
