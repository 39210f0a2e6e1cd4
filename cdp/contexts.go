package cdp

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/chromedp/cdproto"
	cdpt "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
)

// This file holds browser contexts: making and ending one on a connection,
// and a Browser that follows the targets of one context only
// (Options.BrowserContext), so that several Browsers, each on a connection
// of its own, share one browser without seeing each other's tabs: a
// browser space per person (docs/decisions/2026-12-03-space-browser-context.md).
//
// Measured on Chromium 156 with two connections to one browser:
//   - Browser-level auto-attach on one connection attaches to the targets
//     of every context, those another connection made included, and
//     Target.getBrowserContexts on one lists the contexts of all.
//   - Auto-attach with waitForDebuggerOnStart pauses a new target for every
//     connection, but Runtime.runIfWaitingForDebugger from any one of them
//     lets it run for all: a Browser that resumed another space's popup
//     would let it run before that space's Browser has put the page script
//     in, and its early tools would be lost. Detaching without resuming
//     leaves the target paused for the others (and, with no other, paused
//     for ever).
//   - A context made with disposeOnDetach over a WebSocket is disposed, its
//     tabs closed, when that WebSocket closes.

// ContextOptions configures NewBrowserContext.
type ContextOptions struct {
	// KeepAfterDisconnect keeps the context, its tabs, cookies and storage,
	// after the connection that made it ends. By default the browser
	// disposes of it then (Target.createBrowserContext's disposeOnDetach):
	// a space whose program died or lost its connection leaves no tabs and
	// no signed-in cookies behind in a shared browser, and no context that
	// nobody follows (its popups would stay paused, see above). The price is
	// that a dropped connection ends the space's tabs too; keep it, and call
	// DisposeBrowserContext yourself, when that is worse.
	KeepAfterDisconnect bool
}

// NewBrowserContext makes a browser context on conn: a fresh, empty
// profile in memory (cookies, storage, cache and permissions of its own),
// like an incognito window, of which a browser can hold many. It returns
// the context's id, for Options.BrowserContext and DisposeBrowserContext.
// opts may be nil. Unless opts.KeepAfterDisconnect, the context ends with
// conn: make it on the connection of the Browser that follows it.
func NewBrowserContext(ctx context.Context, conn *Conn, opts *ContextOptions) (string, error) {
	if opts == nil {
		opts = new(ContextOptions)
	}
	res, err := cdpt.Call(ctx, conn.Browser(), target.CreateBrowserContext, target.CreateBrowserContextParams{
		DisposeOnDetach: ptr(!opts.KeepAfterDisconnect),
	})
	if err != nil {
		return "", fmt.Errorf("making a browser context (Target.createBrowserContext; a browser service may not allow it): %w", err)
	}
	if res.BrowserContextID == "" {
		return "", errors.New("making a browser context: the browser answered Target.createBrowserContext without a context id")
	}
	return string(res.BrowserContextID), nil
}

// DisposeBrowserContext ends the browser context id: the browser closes
// its tabs (without their beforeunload handlers) and drops its cookies,
// storage and cache. A Browser that follows it reports its tabs closed
// and goes on, following nothing, until its connection is closed.
func DisposeBrowserContext(ctx context.Context, conn *Conn, id string) error {
	if id == "" {
		return errors.New("disposing of a browser context: no context id given (the browser's default context cannot be disposed of)")
	}
	if _, err := cdpt.Call(ctx, conn.Browser(), target.DisposeBrowserContext, target.DisposeBrowserContextParams{BrowserContextID: cdpt.BrowserContextID(id)}); err != nil {
		return fmt.Errorf("disposing of browser context %s: %w", id, err)
	}
	return nil
}

// checkContext, when the Browser follows one context, asks the browser
// for its contexts: the one followed must be there, and the default
// context's id tells the targets of other spaces from the browser's own
// (otherContext). It runs in Start, before auto-attach.
func (b *Browser) checkContext(ctx context.Context) error {
	id := b.opts.BrowserContext
	if id == "" {
		return nil
	}
	res, err := cdpt.Call(ctx, b.conn.Browser(), target.GetBrowserContexts, cdpt.Empty{})
	if err != nil {
		return fmt.Errorf("following browser context %s: asking the browser for its contexts: %w", id, err)
	}
	def := string(res.DefaultBrowserContextID)
	if id != def && !slices.Contains(res.BrowserContextIDs, cdpt.BrowserContextID(id)) {
		return fmt.Errorf("following browser context %s: the browser has no such context (disposed of, or its connection ended: see ContextOptions.KeepAfterDisconnect)", id)
	}
	if def == "" {
		b.logger.Warn("the browser does not say which context is its default one: new targets of other contexts are resumed when left, which may let another space's popup run before its page script is in", "context", id)
	}
	b.mu.Lock()
	b.defaultContext = def
	b.mu.Unlock()
	return nil
}

// leftToOtherContext leaves a new top-level target at once, and says so,
// when it belongs to a browser context other than the one the Browser
// follows (never when it follows every context). Frames and workers are in
// their page's context and are not checked. A target of a context made by
// Target.createBrowserContext is another space's, whose own Browser
// resumes it once its page script is in: it is detached from without being
// resumed (resuming it here would let it run before). A target of the
// browser's default context, or of no context the browser names, has
// nobody else to resume it, and is released as unwantedTarget's are.
func (b *Browser) leftToOtherContext(ev *target.EventAttachedToTarget) bool {
	info := ev.TargetInfo
	want := b.opts.BrowserContext
	if want == "" || string(info.BrowserContextID) == want {
		return false
	}
	b.mu.Lock()
	def := b.defaultContext
	b.mu.Unlock()
	if !ev.WaitingForDebugger || info.BrowserContextID == "" || def == "" || string(info.BrowserContextID) == def {
		b.release(ev.SessionID, ev.WaitingForDebugger, nil, "a target of another browser context", info)
		return true
	}
	b.logger.Debug("leaving a paused target of another browser context to its own follower", "type", info.Type, "context", info.BrowserContextID, "target", info.TargetID)
	if _, err := b.conn.Browser().Send(target.CommandDetachFromTarget, &target.DetachFromTargetParams{SessionID: ev.SessionID}); err != nil {
		b.logger.Debug("detaching from a target failed", "target", info.TargetID, "err", err)
	}
	return true
}

// checkOwnTab refuses, when the Browser follows one context, a tab of any
// other: CloseTab and ActivateTab name a tab by its id, and one space must
// not close or raise another's. The answer is the same as for a tab that
// does not exist (ErrTargetGone), so a space learns nothing of another's.
// A tab being followed is checked without asking the browser; one not yet
// attached (Open's own, closed when Open gives up) is looked up.
func (b *Browser) checkOwnTab(ctx context.Context, tab string) error {
	if b.opts.BrowserContext == "" {
		return nil
	}
	b.mu.Lock()
	followed := false
	for _, t := range b.targets {
		if t.kind == "page" && t.targetID == tab {
			followed = true
			break
		}
	}
	b.mu.Unlock()
	if followed {
		return nil
	}
	res, err := cdpt.Call(ctx, b.conn.Browser(), target.GetTargetInfo, target.GetTargetInfoParams{TargetID: target.ID(tab)})
	if _, ok := errors.AsType[*cdproto.Error](err); ok {
		return ErrTargetGone // the browser has no such target
	}
	if err != nil {
		return err
	}
	if res.TargetInfo == nil || string(res.TargetInfo.BrowserContextID) != b.opts.BrowserContext {
		return ErrTargetGone
	}
	return nil
}

// inContext says whether a target the browser listed is one the Browser
// may show: any, when it follows every context.
func (b *Browser) inContext(info *target.Info) bool {
	return b.opts.BrowserContext == "" || string(info.BrowserContextID) == b.opts.BrowserContext
}
