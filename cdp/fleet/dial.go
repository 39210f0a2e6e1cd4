package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/multi"
)

// dialer starts one browser from its source, again after each loss, and
// follows it: its dial is the browser's multi.Dialer.
type dialer struct {
	b       Browser
	set     *multi.Set
	opts    *Options
	logger  *slog.Logger
	started bool // a browser was up once (only the supervisor's goroutine)
	// startedC, when set, gets the first attempt's error (nil when up).
	startedC chan<- error
	// first is called once the first attempt is over: failed, or connected
	// with its start pages' navigations begun.
	first     func()
	firstOnce sync.Once
	// marks are the page script's secrets, the same on every connection to
	// this browser, so documents that outlive a dropped connection are
	// read live again on the next (cdp.Marks).
	marks cdp.Marks
	// ends counts the browsers not ended yet.
	ends *sync.WaitGroup

	mu sync.Mutex
	// why is why the last browser was lost or failed for good, as the
	// browser or its source said it (no ErrStop wording); fatal: it was the
	// browser's fatal error.
	why   error
	fatal bool
}

// lost is the end of a browser served alone: its fatal error, or "lost the
// browser: " and why; nil while it was not lost.
func (d *dialer) lost() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.why == nil:
		return nil
	case d.fatal:
		return d.why
	}
	return fmt.Errorf("lost the browser: %w", d.why)
}

// dial implements multi.Dialer.
func (d *dialer) dial(ctx context.Context, a *multi.Attempt) (<-chan error, error) {
	br, b, pages, err := d.start(ctx, a)
	if err != nil {
		d.firstOnce.Do(d.first)
		// A browser that cannot be started at all (no Chrome, bad flags, a
		// Grid that says no) is not tried again; one that started before
		// is, when it restarts.
		if d.b.StartFails && (!d.b.Restart || !d.started) {
			if !d.started && d.startedC != nil {
				d.startedC <- &StartError{Name: d.b.Name, Err: err}
			}
			err = fmt.Errorf("%w: %w", multi.ErrStop, err)
		}
		return nil, err
	}
	d.firstOnce.Do(func() {
		if d.opts.OnFirst != nil {
			d.opts.OnFirst(First{Name: d.b.Name, Browser: b, Conn: br.Conn(), Fresh: d.b.Source.Fresh(), Pages: pages})
		}
		d.first()
	})
	if !d.started && d.startedC != nil {
		d.startedC <- nil
	}
	d.started = true
	lost := make(chan error, 1)
	d.ends.Add(1)
	go func() {
		defer d.ends.Done()
		defer d.end(ctx, br)
		why, fatal := d.watch(ctx, br, b)
		if why == nil {
			return
		}
		d.mu.Lock()
		d.why, d.fatal = why, fatal
		d.mu.Unlock()
		switch {
		case fatal:
			why = fmt.Errorf("%w: %w", multi.ErrStop, why)
		case !d.b.Restart:
			why = fmt.Errorf("%w (pass --relaunch to start it again): %w", multi.ErrStop, why)
		}
		lost <- why
	}()
	return lost, nil
}

// watch waits until the browser is lost and says why: its connection
// ended (the source's reason when it tells one within the browser's
// grace), the source says it is gone, or it failed for good (fatal). It
// returns nil when ctx ends first.
func (d *dialer) watch(ctx context.Context, br *browsers.Browser, b *cdp.Browser) (why error, fatal bool) {
	conn := br.Conn()
	select {
	case <-conn.Done():
		why := fmt.Errorf("the connection ended: %w", conn.Err())
		if g := br.Gone(); g != nil && br.Grace() > 0 {
			grace := time.NewTimer(br.Grace())
			defer grace.Stop()
			select {
			case <-g:
				why = errors.New(br.Reason())
			case <-grace.C:
			}
		}
		return why, false
	case <-br.Gone():
		return errors.New(br.Reason()), false
	case err := <-b.Fatal():
		return err, true
	case <-ctx.Done():
		return nil, false
	}
}

// end frees what the source made for br, within EndTimeout.
func (d *dialer) end(ctx context.Context, br *browsers.Browser) {
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.opts.EndTimeout)
	defer cancel()
	if err := br.End(ectx); err != nil {
		d.logger.Warn("ending the browser", "err", err)
	}
}

// start gets a browser from the source and follows it, and opens the
// start URLs in it (see openPages).
func (d *dialer) start(ctx context.Context, a *multi.Attempt) (*browsers.Browser, *cdp.Browser, []StartPage, error) {
	br, err := d.b.Source.Start(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	// Start's ctx is the connection's life; the one-off setup is bounded.
	setup, cancel := context.WithTimeout(ctx, browsers.AttachTimeout)
	defer cancel()
	b, err := d.follow(ctx, setup, br, a)
	if err != nil {
		d.end(ctx, br)
		return nil, nil, nil, err
	}
	return br, b, d.openPages(ctx, b), nil
}

// openPages opens the start URLs in new tabs, all at once, and returns
// them once each page's navigation has begun; the pages go on loading. In
// a browser the source made afresh it then closes the empty tab the browser
// started with. (Navigating that tab instead leaves a session on which
// Page.reload fails with "Not attached to an active page".) A page that
// could not load keeps its tab, on its error page: the site may come back;
// a URL that got no tab is logged and left out.
func (d *dialer) openPages(ctx context.Context, b *cdp.Browser) []StartPage {
	if len(d.b.URLs) == 0 {
		return nil
	}
	blank := ""
	if d.b.Source.Fresh() {
		blank = b.BlankTab()
	}
	pages := make([]StartPage, len(d.b.URLs))
	var wg sync.WaitGroup
	for i, u := range d.b.URLs {
		wg.Go(func() {
			tab, loaded, err := b.OpenLoaded(ctx, u)
			if le, ok := errors.AsType[*cdp.LoadError](err); ok {
				d.logger.Warn("a start URL did not load", "url", u, "err", le.Text)
			} else if err != nil {
				d.logger.Warn("cannot open a start page", "url", u, "err", err)
			}
			if tab != "" {
				pages[i] = StartPage{URL: u, Tab: d.set.ID(d.b.Name, tab), Loaded: loaded}
			}
		})
	}
	wg.Wait()
	pages = slices.DeleteFunc(pages, func(p StartPage) bool { return p.Tab == "" })
	if blank != "" && len(pages) > 0 {
		if err := b.CloseTab(ctx, blank); err != nil {
			d.logger.Debug("closing the start tab", "err", err)
		}
	}
	return pages
}

// follow instruments br (the browser context it names, when it names one)
// and starts following it for attempt a: ctx is the connection's life,
// setup bounds the one-off setup (IgnoreHTTPSErrors).
func (d *dialer) follow(ctx, setup context.Context, br *browsers.Browser, a *multi.Attempt) (*cdp.Browser, error) {
	conn := br.Conn()
	o := d.opts.CDP
	o.ReloadExisting = o.ReloadExisting && !d.b.Source.Fresh()
	o.Logger, o.Marks = d.logger, d.marks
	o.BrowserContext = br.BrowserContext()
	b, err := cdp.NewBrowser(conn, o)
	if err != nil {
		return nil, err
	}
	if d.opts.IgnoreHTTPSErrors {
		if err := cdp.IgnoreCertificateErrors(setup, conn); err != nil {
			return nil, fmt.Errorf("--ignore-https-errors: %w", err)
		}
	}
	a.Up(b)
	if err := b.Start(ctx, a.Sink()); err != nil {
		return nil, err
	}
	return b, nil
}
