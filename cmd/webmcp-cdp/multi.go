package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/browsers"
	"github.com/webmcp-cdp/webmcp-cdp/internal/multi"
	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// This file is attach with several browsers (--browser NAME=URL, repeatable):
// one hub and one MCP server over an internal/multi.Set, each browser kept
// connected by its own supervisor.

// registerMulti adds --browser and --browser-header (and --ca-file, with
// ca: attach has it already).
func (f *endpointFlags) registerMulti(cmd *cobra.Command, ca bool) {
	fs := cmd.Flags()
	if ca {
		fs.StringVar(&f.caFile, "ca-file", "", "a PEM file of certificate authorities to trust for https:// and wss:// --browser endpoints, besides the system's")
	}
	fs.StringArrayVar(&f.browsers, "browser", nil, "a browser to serve as NAME=URL, repeatable: one server for several browsers (URL: an http(s):// debugging address or a ws(s):// WebSocket URL; NAME: 1-16 of a-z 0-9 -); a browser that drops is reconnected with backoff, its tools cached meanwhile")
	fs.StringArrayVar(&f.browserHeaders, "browser-header", nil, "an HTTP header for one --browser as NAME='Header: value', repeatable; from the environment one per line in WEBMCP_CDP_BROWSER_HEADER; values are never logged")
}

// namedEndpoint is one --browser.
type namedEndpoint struct {
	name string
	ep   cdp.Endpoint
}

// named checks --browser and --browser-header and returns the browsers, in
// the order given; none without --browser.
func (f *endpointFlags) named() ([]namedEndpoint, error) {
	if len(f.browsers) == 0 {
		if len(f.browserHeaders) > 0 {
			return nil, usageError(errors.New("--browser-header needs --browser NAME=URL"))
		}
		return nil, nil
	}
	out := make([]namedEndpoint, 0, len(f.browsers))
	index := map[string]int{}
	for _, v := range f.browsers {
		name, raw, ok := strings.Cut(v, "=")
		if !ok || strings.ContainsAny(name, ":/@?") { // a URL without a name
			return nil, usageError(fmt.Errorf("--browser %q: give NAME=URL, such as --browser local=http://127.0.0.1:9222", cdp.RedactURL(v)))
		}
		if err := multi.CheckName(name); err != nil {
			return nil, usageError(fmt.Errorf("--browser: %w", err))
		}
		if _, dup := index[name]; dup {
			return nil, usageError(fmt.Errorf("--browser: the name %q is given twice; give each browser its own name", name))
		}
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return nil, usageError(fmt.Errorf("--browser %s: the URL does not parse; give http(s)://host:port or ws(s)://...", name))
		}
		ne := namedEndpoint{name: name}
		switch u.Scheme {
		case "http", "https":
			ne.ep.BrowserURL = raw
		case "ws", "wss":
			ne.ep.WSEndpoint = raw
		default:
			return nil, usageError(fmt.Errorf("--browser %s: the URL must start with http://, https://, ws:// or wss://", name))
		}
		index[name] = len(out)
		out = append(out, ne)
	}
	lines := map[string][]string{}
	for _, v := range f.browserHeaders {
		name, line, ok := strings.Cut(v, "=")
		if _, known := index[name]; !ok || !known {
			return nil, usageError(fmt.Errorf("--browser-header: give NAME='Header: value' with NAME one of the --browser names (%s)", strings.Join(namesOf(out), ", ")))
		}
		lines[name] = append(lines[name], line)
	}
	for name, ls := range lines {
		h, err := cdp.ParseHeaders(ls)
		if err != nil {
			return nil, usageError(fmt.Errorf("--browser-header %s: %w", name, err))
		}
		out[index[name]].ep.Header = h
	}
	if f.caFile != "" {
		tc, err := cdp.TLSConfigWithCA(f.caFile)
		if err != nil {
			return nil, usageError(err)
		}
		for i := range out {
			out[i].ep.TLS = tc
		}
	}
	return out, nil
}

func namesOf(eps []namedEndpoint) []string {
	out := make([]string, len(eps))
	for i, e := range eps {
		out[i] = e.name
	}
	return out
}

// supplied is one browser to serve: its name, where it comes from, and
// what to do when it cannot start or is lost.
type supplied struct {
	name string
	src  browsers.Source
	// restart: a lost browser is started again, and a start that fails
	// once a browser was up is retried (endpoints, the Grid, launch
	// --relaunch); without it the first loss is the end of it.
	restart bool
	// startFails: the first start's failure ends webmcp-cdp with failCode
	// (launch, the Grid); an endpoint is retried instead.
	startFails bool
	failCode   int
}

// endpointsSupplied are --browser's browsers, each followed again after a
// drop.
func endpointsSupplied(eps []namedEndpoint) []supplied {
	out := make([]supplied, 0, len(eps))
	for _, ne := range eps {
		out = append(out, supplied{name: ne.name, src: &browsers.Endpoint{Endpoint: ne.ep, Logger: slog.Default().With("browser", ne.name)}, restart: true})
	}
	return out
}

// runMulti serves several browsers through one hub until the client goes
// away or ctx ends. A browser that cannot be reached, at the start or
// later, is retried with backoff; the others are served meanwhile. The
// start URLs open in the first browser that a source starts afresh.
func runMulti(ctx context.Context, sup []supplied, bf *browserFlags, backend polyfill.Backend, reload bool, urls []string) error {
	if bf.relay != nil && bf.relay.enabled() {
		return usageError(errors.New("--relay serves one browser: drop --relay, or --browser, --browsers, --selenium and --relaunch"))
	}
	fresh := slices.IndexFunc(sup, func(s supplied) bool { return s.src.Fresh() })
	if len(urls) > 0 && fresh < 0 {
		return usageError(errors.New("with --browser, start pages are not given as arguments: open them in the browsers, or with webmcp_open_tab"))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	logger := slog.Default()
	names := make([]string, len(sup))
	for i, s := range sup {
		names[i] = s.name
	}
	set, err := multi.New(names, logger)
	if err != nil {
		return usageError(err)
	}
	h := hub.New(set, bf.serve.hubOptions(logger))
	defer func() {
		if err := h.Close(); err != nil {
			logger.Warn("saving the cached tools failed", "err", err)
		}
	}()
	opts := bf.serve.serverOptions(logger)
	if !bf.serve.noTabTools {
		opts.Tabs = set
	}
	if opts.Recorder, err = bf.serve.recorder(logger); err != nil {
		return err
	}
	firstList := make(chan struct{})
	opts.FirstList = firstList
	srv := mcpserver.New(ctx, h, opts)
	watchTelemetry(bf.serve.tel, h, srv, func() map[string]int {
		n := map[string]int{}
		for _, st := range set.Statuses() {
			n[st.State]++
		}
		return n
	})
	stopTelemetry, err := bf.startTelemetry()
	if err != nil {
		return err
	}
	defer stopTelemetry()
	sink := &tabLog{Hub: h, log: logger, tabs: map[string]tabSeen{}}

	var supervisors, first, ends sync.WaitGroup
	// Last: every browser a source started is ended (a Grid session
	// deleted) before runMulti returns.
	defer ends.Wait()
	defer supervisors.Wait()
	defer cancel()
	// started gets the first start of each browser whose first failure ends
	// webmcp-cdp: nil, or why it could not start.
	started := make(chan error, len(sup))
	waitStart := 0
	for i, s := range sup {
		d := &multiDialer{s: s, reload: reload, ends: &ends}
		if i == fresh {
			d.urls = urls
		}
		if s.startFails {
			d.startedC = started
			waitStart++
		}
		first.Add(1)
		d.f, d.backend, d.logger, d.first = &bf.serve, backend, logger.With("browser", s.name), first.Done
		d.marks = cdp.NewMarks()
		supervisors.Go(func() { set.Supervise(ctx, s.name, sink, d.dial, multi.DefaultBackoff()) })
	}
	// Every browser given up (a launch that failed, a fatal browser error):
	// nothing is left to serve.
	gone := make(chan struct{})
	go func() {
		supervisors.Wait()
		close(gone)
	}()
	go func() {
		defer close(firstList)
		first.Wait()
		// What the browsers reported is in the listing before the first
		// tools/list is answered.
		if bf.serve.waitTools > 0 {
			wctx, cancel := context.WithTimeout(ctx, bf.serve.waitTools)
			defer cancel()
			if err := srv.Synced(wctx); err != nil {
				logger.Info("the open tabs' tools were not listed within --wait-tools; answering tools/list without waiting for them", "err", err)
			}
		}
	}()
	for range waitStart {
		select {
		case err := <-started:
			if err != nil {
				return err
			}
		case <-ctx.Done():
			return nil
		}
	}
	if bf.http.addr == "" {
		select {
		case err := <-runStdio(ctx, srv.MCP(), srv):
			return err
		case <-gone:
			return allGone(ctx, set)
		case <-ctx.Done():
			slog.Info("interrupted; stopping")
			return nil
		}
	}
	errc := make(chan error, 1)
	hopts, err := bf.http.serveOptions(ctx)
	if err != nil {
		return err
	}
	hopts.Browser = fmt.Sprintf("%d browsers: %s", len(names), strings.Join(names, ", "))
	hopts.StatusLink = printStatusLink
	hopts.Browsers = func() []mcpserver.BrowserStatus {
		var out []mcpserver.BrowserStatus
		for _, st := range set.Statuses() {
			out = append(out, mcpserver.BrowserStatus{Name: st.Name, State: st.State, Error: st.Error, Drops: st.Drops})
		}
		return out
	}
	if m := bf.serve.servedMetrics(); m != nil {
		hopts.Metrics = m.Handler()
	}
	hs, err := srv.ServeHTTP(hopts, errc)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	defer hs.Close()
	select {
	case err := <-errc:
		return &exitError{code: 2, err: err}
	case <-gone:
		return allGone(ctx, set)
	case <-ctx.Done():
		slog.Info("interrupted; stopping")
		return nil
	}
}

// allGone is the end of runMulti once every browser was given up: nil when
// ctx ended (that is why), else exit code 2 with each browser's reason.
func allGone(ctx context.Context, set *multi.Set) error {
	if ctx.Err() != nil {
		slog.Info("interrupted; stopping")
		return nil
	}
	var errs []error
	for _, st := range set.Statuses() {
		errs = append(errs, fmt.Errorf("browser %s: %s", st.Name, st.Error))
	}
	return &exitError{code: 2, err: fmt.Errorf("every browser is gone: %w", errors.Join(errs...))}
}

// multiDialer starts one browser from its source, again after each loss,
// and follows it.
type multiDialer struct {
	s       supplied
	f       *serveFlags
	backend polyfill.Backend
	reload  bool
	logger  *slog.Logger
	// urls are the start URLs, opened in each browser started.
	urls    []string
	started bool // a browser was up once (only the supervisor's goroutine)
	// startedC, when set, gets the first attempt's error (nil when up).
	startedC chan<- error
	// first is called once the first attempt is over: failed, or connected
	// and its open tabs read, or its start pages loaded (at most
	// --wait-tools).
	first     func()
	firstOnce sync.Once
	// marks are the page script's secrets, the same on every connection to
	// this browser, so documents that outlive a dropped connection are
	// read live again on the next (cdp.Marks).
	marks cdp.Marks
	// ends counts the browsers not ended yet.
	ends *sync.WaitGroup
}

// endTimeout bounds the ending of one browser (a Grid session's
// deletion) when webmcp-cdp stops or the browser is lost. The Grid drops a
// DELETE whose client gives up, and its driver may take seconds to quit a
// browser with many tabs on a busy machine (measured: over 5 s with 26).
const endTimeout = 10 * time.Second

// dial implements multi.Dialer.
func (d *multiDialer) dial(ctx context.Context, a *multi.Attempt) (<-chan error, error) {
	br, b, err := d.start(ctx, a)
	if err != nil {
		d.firstOnce.Do(d.first)
		// A browser that cannot be started at all (no Chrome, bad flags, a
		// Grid that says no) is not tried again; one that started before
		// is, when it restarts.
		if d.s.startFails && (!d.s.restart || !d.started) {
			if !d.started && d.startedC != nil {
				if d.s.failCode != 0 {
					err = &exitError{code: d.s.failCode, err: err}
				}
				d.startedC <- err
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
	conn := br.Conn()
	d.ends.Add(1)
	go func() {
		defer d.ends.Done()
		defer d.end(ctx, br)
		var why error
		select {
		case <-conn.Done():
			why = fmt.Errorf("the connection ended: %w", conn.Err())
			if g := br.Gone(); g != nil && br.Grace() > 0 {
				grace := time.NewTimer(br.Grace())
				defer grace.Stop()
				select {
				case <-g:
					why = errors.New(br.Reason())
				case <-grace.C:
				}
			}
		case <-br.Gone():
			why = errors.New(br.Reason())
		case err := <-b.Fatal():
			why = fmt.Errorf("%w: %w", multi.ErrStop, err)
		case <-ctx.Done():
			return
		}
		if !d.s.restart && !errors.Is(why, multi.ErrStop) {
			why = fmt.Errorf("%w (pass --relaunch to start it again): %w", multi.ErrStop, why)
		}
		lost <- why
	}()
	go d.firstOnce.Do(func() {
		defer d.first()
		if d.f.waitTools <= 0 || d.s.src.Fresh() {
			return
		}
		wctx, cancel := context.WithTimeout(ctx, d.f.waitTools)
		defer cancel()
		if n, err := b.SettleExisting(wctx); err != nil {
			d.logger.Info("the open tabs were not all read within --wait-tools; answering tools/list without waiting for the rest", "tabs", n, "err", err)
		}
	})
	return lost, nil
}

// end frees what the source made for br, within endTimeout.
func (d *multiDialer) end(ctx context.Context, br *browsers.Browser) {
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), endTimeout)
	defer cancel()
	if err := br.End(ectx); err != nil {
		d.logger.Warn("ending the browser", "err", err)
	}
}

// options are the cdp options of one connection.
func (d *multiDialer) options(reload bool) cdp.Options {
	o := d.f.cdpOptions(d.backend, reload, d.logger)
	o.Marks = d.marks
	return o
}

// start gets a browser from the source and follows it; in a browser the
// source made afresh it opens the start URLs, waiting (at most
// --wait-tools) for their pages to load.
func (d *multiDialer) start(ctx context.Context, a *multi.Attempt) (*browsers.Browser, *cdp.Browser, error) {
	br, err := d.s.src.Start(ctx)
	if err != nil {
		return nil, nil, err
	}
	// Start's ctx is the connection's life; the one-off setup is bounded.
	setup, cancel := context.WithTimeout(ctx, browsers.AttachTimeout)
	defer cancel()
	b, err := d.follow(ctx, setup, br.Conn(), d.reload && !d.s.src.Fresh(), a)
	if err != nil {
		d.end(ctx, br)
		return nil, nil, err
	}
	if !d.s.src.Fresh() {
		return br, b, nil
	}
	wctx, cancel := context.WithTimeout(ctx, max(d.f.waitTools, time.Second))
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
// (--ignore-https-errors).
func (d *multiDialer) follow(ctx, setup context.Context, conn *cdp.Conn, reload bool, a *multi.Attempt) (*cdp.Browser, error) {
	b, err := cdp.NewBrowser(conn, d.options(reload))
	if err != nil {
		return nil, err
	}
	if d.f.ignoreHTTPSErrors {
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
