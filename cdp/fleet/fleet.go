// Package fleet is the one supervisor of the browsers served through one
// hub: each Browser comes from its cdp/browsers.Source (a local launch,
// a CDP endpoint, a Selenium Grid session), is followed with cdp as a member
// of one cdp/multi.Set, and is asked of its source again when it is
// lost, as its policy says (restart or stop, and whether a first start that
// fails ends the start of all).
//
// It is the only package that knows sources, cdp's Browser and the set
// together: cdp/multi stays free of CDP, cdp/browsers of the page
// script. It knows neither the hub nor MCP: cmd/webmcp-cdp turns flags into
// Browsers and Options, gives the Set to the hub and the MCP server, and
// maps a StartError to its exit code.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/multi"
)

// Browser is one browser to serve: its name, where it comes from, and what
// to do when it cannot start or is lost.
type Browser struct {
	// Name is its name in the set (multi.CheckName).
	Name   string
	Source browsers.Source
	// Restart: a lost browser is started again, and a start that fails
	// once a browser was up is retried (endpoints, the Grid, launch
	// --relaunch); without it the first loss is the end of it.
	Restart bool
	// StartFails: the first start's failure ends the fleet's start
	// (Started returns a *StartError), and that browser is not tried
	// again (launch, the Grid); without it (an endpoint) the start is
	// retried with backoff.
	StartFails bool
	// URLs are the start URLs, opened in new tabs of the browser each time
	// it is started (all at once); in a browser the source made afresh the
	// empty tab it started with is then closed.
	URLs []string
}

// First is a browser's first start, for Options.OnFirst.
type First struct {
	// Name is the browser's (Browser.Name).
	Name string
	// Browser is the browser followed with cdp, over Conn.
	Browser *cdp.Browser
	Conn    *cdp.Conn
	// Fresh: the source made it afresh (Source.Fresh).
	Fresh bool
	// Pages are its start pages, their navigation begun.
	Pages []StartPage
}

// StartPage is a start URL opened in a tab.
type StartPage struct {
	URL string
	// Tab is the set's id of its tab (multi.Set.ID).
	Tab string
	// Loaded is closed once the page loaded or gave up.
	Loaded <-chan struct{}
}

// Options are what every browser of a fleet shares.
type Options struct {
	// CDP are the options of each connection. The fleet sets Logger (the
	// browser's) and Marks (one per browser, the same on every connection
	// to it), and keeps ReloadExisting only for a source that is not
	// Fresh.
	CDP cdp.Options
	// IgnoreHTTPSErrors tells each browser to ignore certificate errors.
	IgnoreHTTPSErrors bool
	// OnFirst, when set, is called once for each browser, on its first
	// start, before FirstAttempts or Started counts it: the caller's first
	// tools/list waits on what it starts (hub/settle). It must not block.
	OnFirst func(First)
	// Logger is the fleet's logger; nil: slog.Default().
	Logger *slog.Logger
	// Backoff spaces the attempts to start a browser again; zero:
	// multi.DefaultBackoff().
	Backoff multi.Backoff
	// EndTimeout bounds the ending of one browser; zero: EndTimeout.
	EndTimeout time.Duration
}

// EndTimeout bounds the ending of one browser (a Grid session's deletion)
// when the fleet stops or the browser is lost. The Grid drops a DELETE
// whose client gives up, and its driver may take seconds to quit a browser
// with many tabs on a busy machine (measured: over 5 s with 26).
const EndTimeout = 10 * time.Second

// StartError is Started's error: the first start of a browser whose
// failure ends the start of all (Browser.StartFails) failed. Its text is
// Err's.
type StartError struct {
	// Name is the browser's.
	Name string
	Err  error
}

func (e *StartError) Error() string { return e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// Fleet is several browsers served as one multi.Set, each kept by its own
// supervisor. New makes it, Run starts it; Wait returns once it stopped.
type Fleet struct {
	set     *multi.Set
	dialers []*dialer
	opts    Options

	// started gets the first start of each browser whose first failure
	// ends the start: nil, or why it could not start.
	started   chan error
	waitStart int
	firsts    sync.WaitGroup
	first     chan struct{}

	supervisors sync.WaitGroup
	// ends counts the browsers started and not ended yet.
	ends sync.WaitGroup
	gone chan struct{}
	run  sync.Once
	// runCtx is Run's ctx (nil before Run): its end is a stop, not a loss.
	runCtx atomic.Pointer[context.Context]
}

// New checks the browsers' names and returns their fleet, each member
// connecting until Run starts it.
func New(bs []Browser, opts Options) (*Fleet, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Backoff == (multi.Backoff{}) {
		opts.Backoff = multi.DefaultBackoff()
	}
	if opts.EndTimeout <= 0 {
		opts.EndTimeout = EndTimeout
	}
	names := make([]string, len(bs))
	for i, b := range bs {
		names[i] = b.Name
	}
	set, err := multi.New(names, opts.Logger)
	if err != nil {
		return nil, err
	}
	f := &Fleet{set: set, opts: opts, started: make(chan error, len(bs)), first: make(chan struct{}), gone: make(chan struct{})}
	for _, b := range bs {
		logger := opts.Logger
		if b.Name != "" {
			logger = logger.With("browser", b.Name)
		}
		d := &dialer{b: b, set: set, opts: &f.opts, logger: logger, marks: cdp.NewMarks(), ends: &f.ends, first: f.firsts.Done}
		if b.StartFails {
			d.startedC = f.started
			f.waitStart++
		}
		f.firsts.Add(1)
		f.dialers = append(f.dialers, d)
	}
	return f, nil
}

// Set is the browsers as one, for the hub and the MCP server.
func (f *Fleet) Set() *multi.Set { return f.set }

// Run starts a supervisor per browser, reporting to sink (the hub), until
// ctx ends; it returns at once. Only the first call does anything.
func (f *Fleet) Run(ctx context.Context, sink multi.Sink) {
	f.run.Do(func() {
		f.runCtx.Store(&ctx)
		for _, d := range f.dialers {
			f.supervisors.Go(func() { f.set.Supervise(ctx, d.b.Name, sink, d.dial, f.opts.Backoff) })
		}
		go func() {
			f.supervisors.Wait()
			close(f.gone)
		}()
		go func() {
			f.firsts.Wait()
			close(f.first)
		}()
	})
}

// Started waits for the first start of each browser whose failure ends the
// start (Browser.StartFails) and returns the first failure, a *StartError;
// nil when all started or ctx ended first.
func (f *Fleet) Started(ctx context.Context) error {
	for range f.waitStart {
		select {
		case err := <-f.started:
			if err != nil {
				return err
			}
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// FirstAttempts is closed once every browser's first attempt is over:
// failed, or connected with its start pages' navigations begun (and
// Options.OnFirst called).
func (f *Fleet) FirstAttempts() <-chan struct{} { return f.first }

// Gone is closed once every supervisor ended: Run's ctx ended, or every
// browser was given up (a start that failed, a fatal browser error, a loss
// without Restart).
func (f *Fleet) Gone() <-chan struct{} { return f.gone }

// Stopped reports whether Run's ctx has ended: the browsers were given up
// because the fleet was told to stop, not lost. Check it, not only the
// caller's own context, when Gone closes: a context's children are ended
// one after another, so the fleet's may have ended (and Gone closed)
// while a sibling of it, the caller's, has not been told yet.
func (f *Fleet) Stopped() bool {
	ctx := f.runCtx.Load()
	return ctx != nil && (*ctx).Err() != nil
}

// Err says, once Gone is closed, why each browser was given up. A browser
// served alone (a fleet of one, named "") says what became of it: its
// fatal error, or "lost the browser: " and why.
func (f *Fleet) Err() error {
	if len(f.dialers) == 1 && f.dialers[0].b.Name == "" {
		if err := f.dialers[0].lost(); err != nil {
			return err
		}
	}
	var errs []error
	for _, st := range f.set.Statuses() {
		errs = append(errs, fmt.Errorf("browser %s: %s", st.Name, st.Error))
	}
	return fmt.Errorf("every browser is gone: %w", errors.Join(errs...))
}

// Wait waits for the supervisors to end (cancel Run's ctx first), then for
// every browser a source started to be ended (a Grid session deleted; each
// at most Options.EndTimeout).
func (f *Fleet) Wait() {
	f.supervisors.Wait()
	f.ends.Wait()
}
