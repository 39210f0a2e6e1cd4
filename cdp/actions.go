package cdp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/browser"
	cdpt "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
)

// closeTabTimeout bounds closing a tab that Open made but cannot hand back:
// the caller's context may have ended already.
const closeTabTimeout = 5 * time.Second

// Open opens url in a new tab and returns the tab's id. When the page could
// not load (a *LoadError), the tab stays open on its error page and Open
// returns its id with the error, so the caller can close or keep it. On any
// other failure (ctx ended, the browser went away) Open closes the tab it
// made and returns no id.
//
// The tab starts on about:blank and loads url only once the page script is
// in place: a tab created on its URL directly ran the page's scripts before
// ours in about one open in forty, although auto-attach pauses new targets.
func (b *Browser) Open(ctx context.Context, url string) (string, error) {
	return b.open(ctx, url, nil)
}

// OpenLoaded is Open that also returns a channel closed once the page fired
// its load event (or did not load, or 15 s passed, or the tab or ctx ended):
// a caller can then tell a page that has run its scripts from one still
// loading, without Open waiting for it.
func (b *Browser) OpenLoaded(ctx context.Context, url string) (string, <-chan struct{}, error) {
	loaded := make(chan struct{})
	tab, err := b.open(ctx, url, loaded)
	return tab, loaded, err
}

// open is Open; when loaded is not nil, open closes it once the page loaded
// (see OpenLoaded).
func (b *Browser) open(ctx context.Context, url string, loaded chan struct{}) (string, error) {
	handed := false // loaded is navigateLoaded's to close
	if loaded != nil {
		defer func() {
			if !handed {
				close(loaded)
			}
		}()
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("opening %s: %w", url, err)
	}
	p, err := b.conn.Browser().Send(target.CommandCreateTarget, &target.CreateTargetParams{URL: "about:blank", BrowserContextID: cdpt.BrowserContextID(b.opts.BrowserContext)})
	if err != nil {
		return "", fmt.Errorf("opening %s: %w", url, err)
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		// The browser makes the tab anyway: close it once it says which.
		go b.closeLateTab(ctx, p)
		return "", fmt.Errorf("opening %s: %w", url, ctx.Err())
	}
	var res target.CreateTargetResult
	if err := p.Wait(ctx, &res); err != nil {
		return "", fmt.Errorf("opening %s: %w", url, err)
	}
	tab := string(res.TargetID)
	if url == "" || url == "about:blank" {
		return tab, nil
	}
	if err := b.waitTab(ctx, tab); err != nil {
		b.closeNewTab(ctx, tab)
		return "", fmt.Errorf("opening %s: %w", url, err)
	}
	if loaded != nil {
		handed = true
		err = b.navigateLoaded(ctx, tab, url, loaded)
	} else {
		err = b.Navigate(ctx, tab, url)
	}
	if err != nil {
		if _, ok := errors.AsType[*LoadError](err); ok {
			return tab, err
		}
		b.closeNewTab(ctx, tab)
		return "", err
	}
	return tab, nil
}

// closeNewTab closes a tab that Open made and cannot hand back, with a
// context of its own: ctx may have ended.
func (b *Browser) closeNewTab(ctx context.Context, tab string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTabTimeout)
	defer cancel()
	if err := b.CloseTab(cctx, tab); err != nil && !errors.Is(err, ErrClosed) {
		b.logger.Warn("could not close the tab opened for a call that failed; it may be left open", "tab", tab, "err", err)
	}
}

// closeLateTab waits a while for the answer to a Target.createTarget whose
// caller gave up, and closes the tab it made.
func (b *Browser) closeLateTab(ctx context.Context, p *Pending) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTabTimeout)
	defer cancel()
	var res target.CreateTargetResult
	if err := p.Wait(cctx, &res); err != nil || res.TargetID == "" {
		return
	}
	b.closeNewTab(ctx, string(res.TargetID))
}

// waitTab waits until a new tab is attached and set up: it wakes on each
// attach, not on a clock, and stops when the connection ends.
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
			case <-b.conn.Done():
				return ErrClosed
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

// CloseTab closes a tab. With Options.BrowserContext, a tab of another
// context is not closed: it fails as a tab that does not exist.
func (b *Browser) CloseTab(ctx context.Context, tab string) error {
	if err := b.checkOwnTab(ctx, tab); err != nil {
		return fmt.Errorf("closing tab %s: %w", tab, err)
	}
	if _, err := cdpt.Call(ctx, b.conn.Browser(), target.CloseTarget, target.CloseTargetParams{TargetID: target.ID(tab)}); err != nil {
		return fmt.Errorf("closing tab %s: %w", tab, err)
	}
	return nil
}

// ActivateTab brings a tab to the front. With Options.BrowserContext, a
// tab of another context is not: it fails as a tab that does not exist.
func (b *Browser) ActivateTab(ctx context.Context, tab string) error {
	if err := b.checkOwnTab(ctx, tab); err != nil {
		return fmt.Errorf("activating tab %s: %w", tab, err)
	}
	if _, err := cdpt.Call(ctx, b.conn.Browser(), target.ActivateTarget, target.ActivateTargetParams{TargetID: target.ID(tab)}); err != nil {
		return fmt.Errorf("activating tab %s: %w", tab, err)
	}
	return nil
}

// Reload reloads a tab and waits until the new document has loaded (at
// most loadWait; a page that loads longer is not an error) and the Sink
// knows, so that the old document and its tools are gone when it returns.
func (b *Browser) Reload(ctx context.Context, tab string) error {
	s, err := b.readyTab(ctx, tab)
	if err != nil {
		return fmt.Errorf("reloading tab %s: %w", tab, err)
	}
	_, err = waitNavigation(ctx, s, cdpt.FrameID(tab), func() (navStart, error) {
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
				return navStart{}, ctx.Err()
			case <-time.After(time.Duration(50<<attempt) * time.Millisecond):
			}
		}
		return navStart{}, err
	})
	if err == nil {
		err = b.sink.flush(ctx)
	}
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

// LoadFailure says why the page could not load, as the browser put it
// (net::ERR_CONNECTION_REFUSED): layers that do not know CDP read it
// through an interface of this one method.
func (e *LoadError) LoadFailure() string { return e.Text }

// Navigate loads url in a tab.
func (b *Browser) Navigate(ctx context.Context, tab, url string) error {
	s, err := b.readyTab(ctx, tab)
	if err != nil {
		return fmt.Errorf("navigating tab %s: %w", tab, err)
	}
	if _, err := navigateCall(ctx, s, url); err != nil {
		return fmt.Errorf("navigating tab %s to %s: %w", tab, url, err)
	}
	return nil
}

// navigateCall sends Page.navigate and says what the navigation is to wait
// for; a page that could not load is a *LoadError.
func navigateCall(ctx context.Context, s *Session, url string) (navStart, error) {
	res, err := cdpt.Call(ctx, s, page.Navigate, page.NavigateParams{URL: url})
	if err == nil && res.ErrorText != "" {
		err = &LoadError{URL: url, Text: res.ErrorText}
	}
	return navStart{sameDocument: res.LoaderID == "" || res.IsDownload, loader: res.LoaderID}, err
}

// navigateLoaded is Navigate that also closes loaded once the page fired
// its load event (loadWatch, at most loadWait) and the Sink knows what the
// browser learned until then, or once it could not load.
func (b *Browser) navigateLoaded(ctx context.Context, tab, url string, loaded chan struct{}) error {
	s, err := b.readyTab(ctx, tab)
	if err != nil {
		close(loaded)
		return fmt.Errorf("navigating tab %s: %w", tab, err)
	}
	// Followed from before the navigation, so a fast load is not missed.
	w := watchLoad(s, cdpt.FrameID(tab))
	started, err := navigateCall(ctx, s, url)
	if err != nil {
		w.stop()
		close(loaded)
		return fmt.Errorf("navigating tab %s to %s: %w", tab, url, err)
	}
	go func() {
		defer close(loaded)
		defer w.stop()
		if _, err := w.wait(ctx, started); err == nil {
			b.sink.flush(ctx)
		}
	}()
	return nil
}

// readyTab returns the session of a tab once its setup is done. It fails
// with ErrTargetGone when there is no such tab, and when ctx ends or the
// connection closes first (the browser may stall in a setup step).
func (b *Browser) readyTab(ctx context.Context, tab string) (*Session, error) {
	b.mu.Lock()
	var found *targetState
	for _, t := range b.targets {
		if t.kind == "page" && t.targetID == tab {
			found = t
		}
	}
	b.mu.Unlock()
	if found == nil {
		return nil, ErrTargetGone
	}
	select {
	case <-found.ready:
		return found.sess, nil
	default:
	}
	select {
	case <-found.ready:
		return found.sess, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the tab's setup: %w", ctx.Err())
	case <-b.conn.Done():
		return nil, ErrClosed
	}
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
