package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/fleet"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/multi"
	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// This file is attach with several browsers (--browser NAME=URL, repeatable):
// one hub and one MCP server over a cdp/multi.Set, each browser kept
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

// supplied is one browser to serve (its name, source and policy), and the
// exit code when its first start fails.
type supplied struct {
	fleet.Browser
	// failCode is that exit code (the Grid's 2); 0 leaves it to main (1).
	failCode int
}

// endpointsSupplied are --browser's browsers, each followed again after a
// drop.
func endpointsSupplied(eps []namedEndpoint) []supplied {
	out := make([]supplied, 0, len(eps))
	for _, ne := range eps {
		src := &browsers.Endpoint{Endpoint: ne.ep, Logger: slog.Default().With("browser", ne.name)}
		out = append(out, supplied{Browser: fleet.Browser{Name: ne.name, Source: src, Restart: true}})
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
	if len(urls) > 0 && !slices.ContainsFunc(sup, func(s supplied) bool { return s.Source.Fresh() }) {
		return usageError(errors.New("with --browser, start pages are not given as arguments: open them in the browsers, or with webmcp_open_tab"))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	logger := slog.Default()
	bs := make([]fleet.Browser, len(sup))
	names := make([]string, len(sup))
	failCode := map[string]int{}
	for i, s := range sup {
		bs[i], names[i], failCode[s.Name] = s.Browser, s.Name, s.failCode
	}
	fl, err := fleet.New(bs, fleet.Options{
		CDP:               bf.serve.cdpOptions(backend, reload, logger),
		IgnoreHTTPSErrors: bf.serve.ignoreHTTPSErrors,
		URLs:              urls,
		WaitTools:         bf.serve.waitTools,
		Logger:            logger,
	})
	if err != nil {
		return usageError(err)
	}
	set := fl.Set()
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
	// Last: every browser a source started is ended (a Grid session
	// deleted) before runMulti returns.
	defer fl.Wait()
	defer cancel()
	fl.Run(ctx, &tabLog{Hub: h, log: logger, tabs: map[string]tabSeen{}})
	go func() {
		defer close(firstList)
		<-fl.FirstAttempts()
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
	if err := fl.Started(ctx); err != nil {
		var se *fleet.StartError
		if errors.As(err, &se) && failCode[se.Name] != 0 {
			return &exitError{code: failCode[se.Name], err: err}
		}
		return err
	}
	if bf.http.addr == "" {
		select {
		case err := <-runStdio(ctx, srv.MCP(), srv):
			return err
		case <-fl.Gone():
			return allGone(ctx, fl)
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
	case <-fl.Gone():
		return allGone(ctx, fl)
	case <-ctx.Done():
		slog.Info("interrupted; stopping")
		return nil
	}
}

// allGone is the end of runMulti once every browser was given up: nil when
// ctx ended (that is why), else exit code 2 with each browser's reason.
func allGone(ctx context.Context, fl *fleet.Fleet) error {
	if ctx.Err() != nil {
		slog.Info("interrupted; stopping")
		return nil
	}
	return &exitError{code: 2, err: fl.Err()}
}
