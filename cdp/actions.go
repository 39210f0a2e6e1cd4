package cdp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/browser"
	cdpt "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
)

// Open opens url in a new tab and returns the tab's id (also with the error
// when the tab opened but the page did not load). The tab starts on
// about:blank and loads url only once the page script is in place: a tab
// created on its URL directly ran the page's scripts before ours in about
// one open in forty, although auto-attach pauses new targets.
func (b *Browser) Open(ctx context.Context, url string) (string, error) {
	res, err := cdpt.Call(ctx, b.conn.Browser(), target.CreateTarget, target.CreateTargetParams{URL: "about:blank"})
	if err != nil {
		return "", fmt.Errorf("opening %s: %w", url, err)
	}
	tab := string(res.TargetID)
	if url == "" || url == "about:blank" {
		return tab, nil
	}
	if err := b.waitTab(ctx, tab); err != nil {
		return "", fmt.Errorf("opening %s: %w", url, err)
	}
	// A page that cannot load leaves the tab open on its error page: return
	// the tab with the error, so the caller can close or keep it.
	if err := b.Navigate(ctx, tab, url); err != nil {
		return tab, err
	}
	return tab, nil
}

// waitTab waits until a new tab is attached and set up: it wakes on each
// attach, not on a clock.
func (b *Browser) waitTab(ctx context.Context, tab string) error {
	for {
		b.mu.Lock()
		var ready chan struct{}
		for _, t := range b.targets {
			if t.kind == "page" && t.targetID == tab {
				ready = t.ready
			}
		}
		attached := b.attached
		b.mu.Unlock()
		if ready != nil {
			select {
			case <-ready:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-b.conn.Done():
			return ErrClosed
		case <-attached:
		}
	}
}

// CloseTab closes a tab.
func (b *Browser) CloseTab(ctx context.Context, tab string) error {
	if _, err := cdpt.Call(ctx, b.conn.Browser(), target.CloseTarget, target.CloseTargetParams{TargetID: target.ID(tab)}); err != nil {
		return fmt.Errorf("closing tab %s: %w", tab, err)
	}
	return nil
}

// ActivateTab brings a tab to the front.
func (b *Browser) ActivateTab(ctx context.Context, tab string) error {
	if _, err := cdpt.Call(ctx, b.conn.Browser(), target.ActivateTarget, target.ActivateTargetParams{TargetID: target.ID(tab)}); err != nil {
		return fmt.Errorf("activating tab %s: %w", tab, err)
	}
	return nil
}

// Reload reloads a tab and waits until the new document has loaded (at
// most loadWait; a page that loads longer is not an error), so that the old
// document and its tools are gone when it returns.
func (b *Browser) Reload(ctx context.Context, tab string) error {
	s := b.tabSession(tab)
	if s == nil {
		return fmt.Errorf("reloading tab %s: %w", tab, ErrTargetGone)
	}
	_, err := waitNavigation(ctx, s, func() (bool, error) {
		// Right after a navigation commits, the session may still point at
		// the old document's frame host for a moment ("Not attached to an
		// active page"): try again shortly.
		var err error
		for attempt := 0; attempt < 5; attempt++ {
			if _, err = cdpt.Call(ctx, s, page.Reload, page.ReloadParams{}); err == nil || !strings.Contains(err.Error(), "Not attached to an active page") {
				break
			}
			select {
			case <-ctx.Done():
				return false, ctx.Err()
			case <-time.After(time.Duration(50<<attempt) * time.Millisecond):
			}
		}
		return false, err
	})
	if err != nil {
		return fmt.Errorf("reloading tab %s: %w", tab, err)
	}
	return nil
}

// LoadError is the error of a navigation the browser could not complete
// (the tab then shows an error page).
type LoadError struct {
	URL  string
	Text string
}

func (e *LoadError) Error() string { return fmt.Sprintf("the page could not load: %s", e.Text) }

// Navigate loads url in a tab.
func (b *Browser) Navigate(ctx context.Context, tab, url string) error {
	s := b.tabSession(tab)
	if s == nil {
		return fmt.Errorf("navigating tab %s: %w", tab, ErrTargetGone)
	}
	res, err := cdpt.Call(ctx, s, page.Navigate, page.NavigateParams{URL: url})
	if err == nil && res.ErrorText != "" {
		err = &LoadError{URL: url, Text: res.ErrorText}
	}
	if err != nil {
		return fmt.Errorf("navigating tab %s to %s: %w", tab, url, err)
	}
	return nil
}

// tabSession returns the session of a tab once its setup is done.
func (b *Browser) tabSession(tab string) *Session {
	b.mu.Lock()
	var found *targetState
	for _, t := range b.targets {
		if t.kind == "page" && t.targetID == tab {
			found = t
		}
	}
	b.mu.Unlock()
	if found == nil {
		return nil
	}
	<-found.ready
	return found.sess
}

// BlankTab returns a tab that shows about:blank (the tab a launched browser
// starts with), or "" when there is none.
func (b *Browser) BlankTab() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range b.targets {
		if t.kind == "page" && (t.url == "about:blank" || t.url == "") {
			return t.targetID
		}
	}
	return ""
}

// Version returns the browser's product and protocol version.
func Version(ctx context.Context, c *Conn) (*browser.GetVersionResult, error) {
	v, err := cdpt.Call(ctx, c.Browser(), browser.GetVersion, cdpt.Empty{})
	if err != nil {
		return nil, fmt.Errorf("asking the browser for its version: %w", err)
	}
	return &v, nil
}
