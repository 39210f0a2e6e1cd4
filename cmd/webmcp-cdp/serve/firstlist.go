package serve

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/hub/settle"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file holds a client's first tools/list until the start pages' tools
// have settled (docs/decisions/2026-11-26-first-list-per-page.md); the rule
// and its waits are hub/settle's.

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

// OpenURLs opens the start URLs in new tabs, all at once, and returns their
// tabs once each page's navigation has begun; the pages go on loading (see
// SettleStartPages). It then closes the empty tab the browser started with
// when closeBlank is set. (Navigating that tab instead leaves a session on
// which Page.reload fails with "Not attached to an active page".) A page
// that could not load keeps its tab, on its error page: the site may come
// back.
func (s *Session) OpenURLs(ctx context.Context, urls []string, closeBlank bool) ([]string, error) {
	blank := ""
	if closeBlank {
		blank = s.Browser.BlankTab()
	}
	tabs := make([]string, len(urls))
	errs := make([]error, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Go(func() {
			tab, loaded, err := s.Browser.OpenLoaded(ctx, u)
			if le, ok := errors.AsType[*cdp.LoadError](err); ok {
				slog.Warn("a start URL did not load", "url", u, "err", le.Text)
				err = nil
			}
			tabs[i], errs[i] = tab, err
			if tab != "" {
				go func() {
					<-loaded
					s.regs.Loaded(tab)
				}()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if blank != "" && len(urls) > 0 {
		if err := s.Browser.CloseTab(ctx, blank); err != nil {
			slog.Debug("closing the start tab", "err", err)
		}
	}
	return tabs, nil
}

// SettleStartPages releases the first tools/list once the start tabs
// settled (settle.StartPages), after WaitTools, or when ctx ends.
func (s *Session) SettleStartPages(ctx context.Context, tabs []string) {
	defer s.ReleaseFirstList()
	settle.StartPages{Tabs: tabs, Regs: s.regs, Browser: s.Browser, Quiet: s.settle, Wait: s.waitTools,
		Tools: func() int { return len(s.Hub.Tools()) }}.Run(ctx)
}

// SettleExisting holds clients' first tools/list until the tabs that were
// open before attach are read and listed (settle.Existing), at most
// WaitTools.
func (s *Session) SettleExisting(ctx context.Context) {
	defer s.ReleaseFirstList()
	settle.Existing(ctx, s.Browser, s.Server, s.waitTools)
}
