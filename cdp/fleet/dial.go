package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/multi"
)

// dialer starts one browser from its source, again after each loss, and
// follows it: its dial is the browser's multi.Dialer.
type dialer struct {
	b      Browser
	opts   *Options
	logger *slog.Logger
	// urls are the start URLs, opened in each browser started.
	urls    []string
	started bool // a browser was up once (only the supervisor's goroutine)
	// startedC, when set, gets the first attempt's error (nil when up).
	startedC chan<- error
	// first is called once the first attempt is over: failed, or connected
	// and its open tabs read, or its start pages loaded (at most
	// WaitTools).
	first     func()
	firstOnce sync.Once
	// marks are the page script's secrets, the same on every connection to
	// this browser, so documents that outlive a dropped connection are
	// read live again on the next (cdp.Marks).
	marks cdp.Marks
	// ends counts the browsers not ended yet.
	ends *sync.WaitGroup
}

// dial implements multi.Dialer.
func (d *dialer) dial(ctx context.Context, a *multi.Attempt) (<-chan error, error) {
	br, b, err := d.start(ctx, a)
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
	if !d.started && d.startedC != nil {
		d.startedC <- nil
	}
	d.started = true
	lost := make(chan error, 1)
	d.ends.Add(1)
	go func() {
		defer d.ends.Done()
		defer d.end(ctx, br)
		why := d.watch(ctx, br, b)
		if why == nil {
			return
		}
		if !d.b.Restart && !errors.Is(why, multi.ErrStop) {
			why = fmt.Errorf("%w (pass --relaunch to start it again): %w", multi.ErrStop, why)
		}
		lost <- why
	}()
	go d.firstOnce.Do(func() {
		defer d.first()
		if d.opts.WaitTools <= 0 || d.b.Source.Fresh() {
			return
		}
		wctx, cancel := context.WithTimeout(ctx, d.opts.WaitTools)
		defer cancel()
		if n, err := b.SettleExisting(wctx); err != nil {
			d.logger.Info("the open tabs were not all read within --wait-tools; answering tools/list without waiting for the rest", "tabs", n, "err", err)
		}
	})
	return lost, nil
}

// watch waits until the browser is lost and says why: its connection
// ended (the source's reason when it tells one within the browser's
// grace), the source says it is gone, or it failed for good (wrapping
// multi.ErrStop). It returns nil when ctx ends first.
func (d *dialer) watch(ctx context.Context, br *browsers.Browser, b *cdp.Browser) error {
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
		return why
	case <-br.Gone():
		return errors.New(br.Reason())
	case err := <-b.Fatal():
		return fmt.Errorf("%w: %w", multi.ErrStop, err)
	case <-ctx.Done():
		return nil
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

// start gets a browser from the source and follows it; in a browser the
// source made afresh it opens the start URLs, waiting (at most WaitTools,
// at least a second) for their pages to load.
func (d *dialer) start(ctx context.Context, a *multi.Attempt) (*browsers.Browser, *cdp.Browser, error) {
	fresh := d.b.Source.Fresh()
	br, err := d.b.Source.Start(ctx)
	if err != nil {
		return nil, nil, err
	}
	// Start's ctx is the connection's life; the one-off setup is bounded.
	setup, cancel := context.WithTimeout(ctx, browsers.AttachTimeout)
	defer cancel()
	b, err := d.follow(ctx, setup, br.Conn(), a)
	if err != nil {
		d.end(ctx, br)
		return nil, nil, err
	}
	if !fresh {
		return br, b, nil
	}
	wctx, cancel := context.WithTimeout(ctx, max(d.opts.WaitTools, time.Second))
	defer cancel()
	for _, u := range d.urls {
		_, loaded, err := b.OpenLoaded(wctx, u)
		if err != nil {
			d.logger.Warn("cannot open a start page", "url", u, "err", err)
			continue
		}
		select {
		case <-loaded:
		case <-wctx.Done():
		}
	}
	return br, b, nil
}

// follow instruments the browser behind conn and starts following it for
// attempt a: ctx is the connection's life, setup bounds the one-off setup
// (IgnoreHTTPSErrors).
func (d *dialer) follow(ctx, setup context.Context, conn *cdp.Conn, a *multi.Attempt) (*cdp.Browser, error) {
	o := d.opts.CDP
	o.ReloadExisting = o.ReloadExisting && !d.b.Source.Fresh()
	o.Logger, o.Marks = d.logger, d.marks
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
