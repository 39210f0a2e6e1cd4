package serve

import (
	"context"
	"sync"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp/fleet"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/multi"
	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/hub/settle"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file holds a client's first tools/list until each browser's first
// start has settled (docs/decisions/2026-11-26-first-list-per-page.md):
// its start pages, or the tabs it had open. The rule and its waits are
// hub/settle's; a browser served alone and a fleet settle the same way.

// firstList is the hold of clients' first tools/list over a fleet.
type firstList struct {
	ch   chan struct{} // closed once a first tools/list may be answered
	once sync.Once
	// regs notes the start pages' loads and registrations until then.
	regs *settle.Registrations
	// settling counts the browsers whose first start is settling.
	settling sync.WaitGroup

	set         *multi.Set
	hub         *hub.Hub
	srv         *mcpserver.Server
	quiet, wait time.Duration
}

// newFirstList returns the hold, its channel for the MCP server's
// FirstList.
func newFirstList(o *Options) *firstList {
	return &firstList{ch: make(chan struct{}), regs: settle.NewRegistrations(nil), quiet: o.Settle, wait: o.WaitTools}
}

// over sets what the waits read: the fleet's set, its hub and the MCP
// server over it.
func (f *firstList) over(set *multi.Set, h *hub.Hub, srv *mcpserver.Server) {
	f.set, f.hub, f.srv = set, h, srv
}

// onFirst is the fleet's Options.OnFirst: a browser's start pages settle
// by the rule (settle.StartPages); a browser that was running already, with
// no start pages, has its open tabs read (settle.Existing); a fresh one
// with none holds nothing.
func (f *firstList) onFirst(ctx context.Context) func(fleet.First) {
	return func(first fleet.First) {
		switch {
		case len(first.Pages) > 0:
			tabs := make([]string, len(first.Pages))
			for i, p := range first.Pages {
				tabs[i] = p.Tab
				go func() {
					<-p.Loaded
					f.regs.Loaded(p.Tab)
				}()
			}
			f.settling.Go(func() {
				settle.StartPages{Tabs: tabs, Regs: f.regs, Browser: f.set, Quiet: f.quiet, Wait: f.wait,
					Tools: func() int { return len(f.hub.Tools()) }}.Run(ctx)
			})
		case !first.Fresh:
			f.settling.Go(func() { settle.Existing(ctx, first.Browser, f.srv, f.wait) })
		}
	}
}

// releaseAfter lets clients' first tools/list be answered once every
// browser's first attempt is over and each first start has settled.
func (f *firstList) releaseAfter(fl *fleet.Fleet) {
	<-fl.FirstAttempts()
	f.settling.Wait()
	f.release()
}

// release lets clients' first tools/list be answered.
func (f *firstList) release() {
	f.once.Do(func() {
		close(f.ch)
		f.regs.Stop()
	})
}

// noting is the hub as the browser's sink (tabLog) with each update noted
// on the way for the first list's wait (settle.Registrations).
type noting struct {
	*tabLog
	regs *settle.Registrations
}

// Update implements cdp.Sink.
func (n noting) Update(src core.Source, tools []core.Tool, refused []core.Refusal) {
	n.regs.Note(src, tools, refused)
	n.tabLog.Update(src, tools, refused)
}

// DropDoc implements cdp.Sink.
func (n noting) DropDoc(key string) {
	n.regs.DropDoc(key)
	n.tabLog.DropDoc(key)
}
