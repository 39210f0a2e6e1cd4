package settle

import (
	"context"
	"log/slog"
	"time"
)

// This file holds the two waits of MCP clients' first tools/list
// (docs/decisions/2026-11-26-first-list-per-page.md,
// 2026-11-26-attach-first-list.md): for the start pages, and for the tabs
// attach found open.

// Drainer runs what tabs had due (cdp.Browser.DrainTabs).
type Drainer interface {
	// DrainTabs returns when each tab answered or gave up.
	DrainTabs(ctx context.Context, tabs []string)
}

// StartPages is the wait of a first tools/list for the start pages.
type StartPages struct {
	// Tabs are the start pages' tabs.
	Tabs []string
	// Regs notes their loads and registrations.
	Regs *Registrations
	// Browser drains the tabs.
	Browser Drainer
	// Quiet is --settle, Wait --wait-tools (0: no wait).
	Quiet, Wait time.Duration
	// Tools counts the tools listed so far, for the log of a wait that
	// reached Wait.
	Tools func() int
	// Clock is the wait's clock (nil: the real clock).
	Clock Clock
}

// Run returns once every start tab has loaded, registered nothing for
// Quiet (so a page that registers a tool a second after load is in a
// one-shot client's first list) and run what it had due by then; or after
// Wait, or when ctx ends. The caller then answers the first list.
func (p StartPages) Run(ctx context.Context) {
	if p.Wait <= 0 {
		return
	}
	clock := p.Clock
	if clock == nil {
		clock = Real()
	}
	start := clock.Now()
	look := func(time.Time) Look { return p.Regs.look(p.Tabs) }
	drain := func(ctx context.Context) error {
		p.Browser.DrainTabs(ctx, p.Tabs)
		return nil
	}
	settled, err := Rule{Quiet: p.Quiet, Limit: p.Wait, Clock: clock}.Wait(ctx, look, drain)
	switch {
	case settled:
		slog.Debug("the start pages loaded and their tools settled; answering tools/list", "pages", len(p.Tabs), "after", clock.Now().Sub(start).Round(time.Millisecond))
	case err == nil:
		slog.Info("the start pages' tools did not settle within --wait-tools; answering tools/list with the tools so far", "wait", p.Wait, "tools", p.Tools())
	}
}

// OpenTabs is what Existing asks of the browser (cdp.Browser).
type OpenTabs interface {
	// SettleExisting returns, with their count, once the tabs open
	// before attach are set up and each of their documents was read.
	SettleExisting(ctx context.Context) (int, error)
}

// Listing is the MCP server's tool listing (mcpserver.Server).
type Listing interface {
	// Synced returns once the listing holds what the hub held when it was
	// called.
	Synced(ctx context.Context) error
}

// Existing returns once the tabs that were open before attach are set up
// (native tools replayed, the page script run in their documents and their
// own polyfills adopted), each of their documents has been read and the
// listing holds their tools; at most wait (0: at once). By the rule, their
// load is SettleExisting returning and the quiet period is 0: they had
// loaded, and what they register later comes with list_changed. The drain
// is the listing's Synced.
func Existing(ctx context.Context, tabs OpenTabs, listing Listing, wait time.Duration) {
	if wait <= 0 {
		return
	}
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var n int
	var readErr error
	read := make(chan struct{})
	go func() {
		defer close(read)
		n, readErr = tabs.SettleExisting(wctx)
	}()
	look := func(time.Time) Look {
		select {
		case <-read:
			return Look{Loaded: true, Ready: true, Err: readErr}
		default:
			return Look{LoadChanged: read}
		}
	}
	settled, err := Rule{Limit: wait}.Wait(wctx, look, listing.Synced)
	<-read // ends with wctx at the latest
	switch {
	case readErr != nil:
		slog.Info("the open tabs were not all read within --wait-tools; answering tools/list without waiting for the rest", "tabs", n, "err", readErr)
	case !settled:
		if err == nil {
			err = context.DeadlineExceeded
		}
		slog.Info("the open tabs' tools were not listed within --wait-tools; answering tools/list without waiting for them", "err", err)
	default:
		slog.Debug("the open tabs are read; answering tools/list", "tabs", n, "after", time.Since(start).Round(time.Millisecond))
	}
}
