package main

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file holds a client's first tools/list until the start pages' tools
// have settled (docs/decisions/2026-11-24-first-list.md).

// Each start page must have been loaded and registered nothing for
// --settle (ci.DefaultSettle, CI mode's rule) before the first tools/list
// is answered: long enough that a page registering a tool a second after
// load (a timer, a fetched configuration) is in it. (The tabs attach finds
// open need no quiet period: settleExisting releases the list once they
// have been read.)

// registrations sits between the browser and the hub while the first list
// is held, and notes when each tab last changed its tools and when each
// start page loaded. It wakes the wait on each change, so the wait runs on
// the page's events, with a clock only for the quiet period.
type registrations struct {
	*tabLog
	wake chan struct{} // capacity 1

	mu     sync.Mutex
	off    bool                 // the first list was answered: nothing more to note
	names  map[string]string    // document key → its tool names, joined
	last   map[string]time.Time // tab → last change of its tools
	loaded map[string]time.Time // start tab → when its page loaded
}

func newRegistrations(tl *tabLog) *registrations {
	return &registrations{tabLog: tl, wake: make(chan struct{}, 1),
		names: map[string]string{}, last: map[string]time.Time{}, loaded: map[string]time.Time{}}
}

// Update implements cdp.Sink: a document whose tool names changed counts
// as a registration in its tab (a read that finds the same tools does not).
func (r *registrations) Update(src core.Source, tools []core.Tool, refused []core.Refusal) {
	r.note(src, tools, refused, time.Now())
	r.tabLog.Update(src, tools, refused)
}

// note records a document's tools read at now, and reports whether its
// tool names changed (a registration).
func (r *registrations) note(src core.Source, tools []core.Tool, refused []core.Refusal, now time.Time) bool {
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

// DropDoc implements cdp.Sink.
func (r *registrations) DropDoc(key string) {
	r.mu.Lock()
	delete(r.names, key)
	r.mu.Unlock()
	r.tabLog.DropDoc(key)
}

// pageLoaded notes that a start tab's page loaded (or failed, or stopped
// trying).
func (r *registrations) pageLoaded(tab string, now time.Time) {
	r.mu.Lock()
	if !r.off {
		slog.Debug("a start page loaded", "tab", tab)
		r.loaded[tab] = now
		r.signal()
	}
	r.mu.Unlock()
}

// signal wakes the wait; r.mu is held.
func (r *registrations) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// settledAt returns when every tab will have been loaded and without a
// registration for quiet, and false while one has not loaded yet.
func (r *registrations) settledAt(tabs []string, quiet time.Duration) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var at time.Time
	for _, tab := range tabs {
		loaded, ok := r.loaded[tab]
		if !ok {
			return time.Time{}, false
		}
		quietFrom := loaded
		if last := r.last[tab]; last.After(quietFrom) {
			quietFrom = last
		}
		if due := quietFrom.Add(quiet); due.After(at) {
			at = due
		}
	}
	return at, true
}

// stop ends the noting: the first list was answered.
func (r *registrations) stop() {
	r.mu.Lock()
	r.off = true
	r.names, r.last, r.loaded = nil, nil, nil
	r.mu.Unlock()
}

// openURLs opens the start URLs in new tabs, all at once, and returns their
// tabs once each page's navigation has begun; the pages go on loading (see
// settleStartPages). It then closes the empty tab the browser started with
// when closeBlank is set. (Navigating that tab instead leaves a session on
// which Page.reload fails with "Not attached to an active page".) A page
// that could not load keeps its tab, on its error page: the site may come
// back.
func (s *session) openURLs(ctx context.Context, urls []string, closeBlank bool) ([]string, error) {
	blank := ""
	if closeBlank {
		blank = s.browser.BlankTab()
	}
	tabs := make([]string, len(urls))
	errs := make([]error, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Go(func() {
			tab, loaded, err := s.browser.OpenLoaded(ctx, u)
			if le, ok := errors.AsType[*cdp.LoadError](err); ok {
				slog.Warn("a start URL did not load", "url", u, "err", le.Text)
				err = nil
			}
			tabs[i], errs[i] = tab, err
			if tab != "" {
				go func() {
					<-loaded
					s.regs.pageLoaded(tab, time.Now())
				}()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if blank != "" && len(urls) > 0 {
		if err := s.browser.CloseTab(ctx, blank); err != nil {
			slog.Debug("closing the start tab", "err", err)
		}
	}
	return tabs, nil
}

// settleStartPages releases the first tools/list once every start tab has
// loaded, registered nothing for --settle (so a page that registers a tool
// a second after load is in a one-shot client's first list) and run what
// it had due by then (cdp.Browser.Drain), after max, or when ctx ends. It wakes on the pages' loads and registrations and
// at the moment the last quiet period ends, not on a poll.
func (s *session) settleStartPages(ctx context.Context, tabs []string, max time.Duration) {
	defer s.releaseFirstList()
	if max <= 0 {
		return
	}
	limit := time.NewTimer(max)
	defer limit.Stop()
	quiet := time.NewTimer(max)
	defer quiet.Stop()
	start := time.Now()
	drained := false
	for {
		if at, ok := s.regs.settledAt(tabs, s.settle); ok {
			wait := time.Until(at)
			if wait <= 0 && !drained {
				// What the pages had due (a timer a busy renderer runs
				// late) reaches the hub before the quiet period counts as
				// over; a registration it brings moves at.
				dctx, cancel := context.WithDeadline(ctx, start.Add(max))
				s.browser.DrainTabs(dctx, tabs)
				cancel()
				drained = true
				continue
			}
			if wait <= 0 {
				slog.Debug("the start pages loaded and their tools settled; answering tools/list", "pages", len(tabs), "after", time.Since(start).Round(time.Millisecond))
				return
			}
			drained = false
			quiet.Reset(wait)
		}
		select {
		case <-s.regs.wake:
		case <-quiet.C:
		case <-limit.C:
			slog.Info("the start pages' tools did not settle within --wait-tools; answering tools/list with the tools so far", "wait", max, "tools", len(s.hub.Tools()))
			return
		case <-ctx.Done():
			return
		}
	}
}
