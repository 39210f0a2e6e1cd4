package hub

import (
	"context"
	"fmt"
	"net/url"
	"sync"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file shows a page the person's language and place during a call
// (--client-hints; docs/agent-surface.md): the MCP edge puts the call's
// hints in its context (WithHints), and the hub has the tab show them
// before the call runs (Hinter). A tab shows one person's hints at a time:
// calls with the same hints share them, a call with other hints (or none)
// waits until the tab's calls are over. The language, time zone and
// position stay set after the call, so that the next call with the same
// hints costs no round trip, and are changed by the next call with other
// hints (none: the browser's own); the geolocation permission lasts only
// while calls run.

// Hinter is a Browser that can show a tab hints (cdp.Browser can). done
// undoes what lasts only while the call runs (the geolocation permission).
type Hinter interface {
	ShowHints(ctx context.Context, tab string, ch core.HintChange) (done func(), err error)
}

type hintsKey struct{}

// WithHints returns ctx whose calls show their tab h (the zero Hints: the
// browser's own, waiting for calls with other hints to end). Calls made
// with a context without hints leave the tab as it is.
func WithHints(ctx context.Context, h core.Hints) context.Context {
	return context.WithValue(ctx, hintsKey{}, h)
}

// hintsOf returns the hints of ctx, and whether it has any.
func hintsOf(ctx context.Context) (core.Hints, bool) {
	h, ok := ctx.Value(hintsKey{}).(core.Hints)
	return h, ok
}

// hintGate is a tab's hints: what it shows and the calls running with it.
type hintGate struct {
	mu    sync.Mutex
	cur   core.Hints    // what the tab shows, unless dirty
	dirty bool          // not known: a change failed
	n     int           // calls running with cur
	ready chan struct{} // closed once cur is shown (nil: shown)
	err   error         // why showing cur failed
	idle  chan struct{} // closed when n drops to 0 (nil: nobody waits)
	done  func()        // undoes the call-scoped part, when n drops to 0
	// closing: the last call is undoing the call-scoped part; no call
	// joins it.
	closing bool
}

// showHints has tab t show the hints of ctx for a call, and returns the
// func that ends the call's use of them; with no hints in ctx, or a
// browser that cannot show them, it does nothing.
func (h *Hub) showHints(ctx context.Context, t *tab) (func(), error) {
	want, ok := hintsOf(ctx)
	hn, can := h.browser.(Hinter)
	if !ok || !can {
		return func() {}, nil
	}
	g := &t.hints
	for {
		g.mu.Lock()
		switch {
		case g.n > 0 && !g.closing && !g.dirty && g.cur == want:
			g.n++
			ready := g.ready
			g.mu.Unlock()
			release := func() { g.release() }
			if ready != nil {
				select {
				case <-ready:
				case <-ctx.Done():
					release()
					return nil, ctx.Err()
				}
				g.mu.Lock()
				err := g.err
				g.mu.Unlock()
				if err != nil {
					release()
					return nil, err
				}
			}
			return release, nil
		case g.n == 0 && !g.dirty && g.cur == want && !want.Geo:
			// Shown already, and nothing lasts only for a call: no round
			// trip.
			g.n = 1
			g.mu.Unlock()
			return func() { g.release() }, nil
		case g.n == 0:
			h.mu.Lock()
			origin := originOf(t.url)
			h.mu.Unlock()
			ch := core.HintChange{From: g.cur, To: want, Reset: g.dirty, Origin: origin}
			ready := make(chan struct{})
			g.n, g.cur, g.dirty, g.ready, g.err = 1, want, false, ready, nil
			g.mu.Unlock()
			done, err := hn.ShowHints(ctx, t.id, ch)
			g.mu.Lock()
			g.done, g.ready = done, nil
			if err != nil {
				g.err, g.dirty = fmt.Errorf("showing the page the client's language and place (--client-hints) failed: %w", err), true
				err = g.err
			}
			close(ready)
			g.mu.Unlock()
			if err != nil {
				g.release()
				return nil, err
			}
			return func() { g.release() }, nil
		}
		if g.idle == nil {
			g.idle = make(chan struct{})
		}
		idle := g.idle
		g.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the tab's calls with another person's language and place to end: %w", ctx.Err())
		}
	}
}

// release ends a call's use of the hints: the last one undoes the
// call-scoped part before other hints may be shown.
func (g *hintGate) release() {
	g.mu.Lock()
	if g.n == 1 && g.done != nil {
		done := g.done
		g.done, g.closing = nil, true
		g.mu.Unlock()
		done()
		g.mu.Lock()
		g.closing = false
	}
	g.n--
	if g.n == 0 && g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
	g.mu.Unlock()
}

// originOf is the origin of rawURL ("" when it has none).
func originOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
