// Package settle holds webmcp-cdp's one rule of when pages have settled,
// shared by CI mode (hub/ci: inspect, call, test), the first tools/list of
// launch, attach and demo (StartPages) and the tabs attach finds open
// (Existing).
//
// The rule: every tracked tab has loaded; then none of them changed its
// tools for a quiet period; then the tabs ran what they had due when it
// ended (a drain: on a busy renderer a page's timer runs late, and the
// tools it registers must still count); a change the drain brought starts
// the quiet period again. The whole wait is bounded. It wakes on events
// (loads, registrations, the hub's change signal) and uses a clock only
// for the quiet period and the bound, never for a poll.
//
// The package knows no CDP and no MCP: the browser's actions (a drain, the
// wait for open tabs) come in as small interfaces and funcs, so the rule is
// tested with a fake clock (docs/decisions/2026-12-03-one-settle-rule.md).
package settle

import (
	"context"
	"time"
)

// Look is the tracked tabs' state as a wait reads it.
type Look struct {
	// Loaded is true once every tracked tab has loaded.
	Loaded bool
	// Since is when the tabs last changed (a load, a change of their
	// tools): the quiet period runs from it. It must move at each change.
	Since time.Time
	// Ready is true when the caller's own conditions hold (CI mode: the
	// hub knows the tab, the page has tools, each tool waited for is
	// there). A wait whose quiet period ended settles only when Ready.
	Ready bool
	// Err ends the wait, which returns it (CI mode: the page failed to
	// load).
	Err error
	// Changed and LoadChanged receive a value or close at the next change
	// after this look (of the tools, of the loads); either may be nil.
	Changed, LoadChanged <-chan struct{}
}

// LookFunc reads the tracked tabs at now.
type LookFunc func(now time.Time) Look

// DrainFunc returns once what the tabs had due when it was called has
// reached the hub, or when ctx ends. An error ends the wait; a drain whose
// tabs did not answer should log that and return nil, so the tabs are
// judged on what reached the hub.
type DrainFunc func(ctx context.Context) error

// Rule says how long tabs must stay unchanged and how long to wait at
// most.
type Rule struct {
	// Quiet is how long the tabs' tools must stay unchanged after the
	// later of their loads and their last change; 0 drains as soon as
	// every tab loaded.
	Quiet time.Duration
	// Limit bounds the whole wait; it must be positive.
	Limit time.Duration
	// Clock gives the time and the timers (nil: the real clock).
	Clock Clock
}

// Wait waits until the tabs that look reads have settled by the rule
// (true), until Limit passed (false, nil), or until ctx ends (its cause), a
// look reports an Err or a drain fails (that error). A drain runs with a
// context that ends at the bound; a wait whose drain the bound cut short
// still settles when nothing changed meanwhile.
func (r Rule) Wait(ctx context.Context, look LookFunc, drain DrainFunc) (bool, error) {
	clock := r.Clock
	if clock == nil {
		clock = Real()
	}
	start := clock.Now()
	bound := clock.NewTimer(r.Limit)
	defer bound.Stop()
	quiet := clock.NewTimer(r.Limit)
	defer quiet.Stop()
	var drainedFor time.Time // the Since of the last drain
	drained := false
	for {
		now := clock.Now()
		l := look(now)
		if l.Err != nil {
			return false, l.Err
		}
		// wait is how long until the quiet period ends; below zero, no
		// timer: only an event can change what the rule decides.
		wait := time.Duration(-1)
		if l.Loaded {
			due := l.Since.Add(r.Quiet)
			switch {
			case now.Before(due):
				wait = due.Sub(now)
			case !drained || !l.Since.Equal(drainedFor):
				// What the tabs had due reaches the hub before the quiet
				// period counts as over; a change it brings moves Since.
				dctx, cancel := clock.WithDeadline(ctx, start.Add(r.Limit))
				err := drain(dctx)
				cancel()
				if err != nil {
					return false, err
				}
				drained, drainedFor = true, l.Since
				continue
			case l.Ready:
				return true, nil
			}
		}
		// The quiet timer is armed or stopped right before each wait.
		if wait >= 0 {
			quiet.Reset(wait)
		} else {
			quiet.Stop()
		}
		select {
		case <-ctx.Done():
			return false, context.Cause(ctx)
		case <-bound.C():
			return false, nil
		case <-quiet.C():
		case <-l.Changed:
		case <-l.LoadChanged:
		}
	}
}
