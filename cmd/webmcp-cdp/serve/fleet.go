package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/fleet"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
)

// This file serves several browsers through one hub: one MCP server over
// a cdp/multi.Set of cdp/fleet's, each browser kept by its own supervisor.

// Supplied is one browser to serve (its name, source and policy), and the
// exit code when its first start fails.
type Supplied struct {
	fleet.Browser
	// FailCode is that exit code (the Grid's 2); 0 leaves it to main (1).
	FailCode int
}

// Numbered makes n browsers named base (one) or base1 to baseN.
func Numbered(base string, n int, one func(name string) Supplied) []Supplied {
	if n == 1 {
		return []Supplied{one(base)}
	}
	out := make([]Supplied, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, one(fmt.Sprintf("%s%d", base, i)))
	}
	return out
}

// EndpointBrowsers are --browser's browsers, each followed again after a
// drop.
func EndpointBrowsers(eps []cli.NamedEndpoint) []Supplied {
	out := make([]Supplied, 0, len(eps))
	for _, ne := range eps {
		src := &browsers.Endpoint{Endpoint: ne.Endpoint, Logger: slog.Default().With("browser", ne.Name)}
		out = append(out, Supplied{Browser: fleet.Browser{Name: ne.Name, Source: src, Restart: true}})
	}
	return out
}

// GridBrowsers are n browsers on the Grid, named grid (one) or grid1 to
// gridN. Before the first is started, the sessions earlier processes left
// on the Grid are named in the log.
func GridBrowsers(ctx context.Context, opts browsers.GridOptions, n int) []Supplied {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if left, err := browsers.NewGrid(opts).Leftovers(lctx); err == nil && len(left) > 0 {
		ids := make([]string, len(left))
		for i, l := range left {
			ids[i] = l.String()
		}
		slog.Warn("the Grid has sessions another webmcp-cdp created: left behind by one that did not end cleanly (the Grid's idle timeout ends them), or held by one still running", "sessions", strings.Join(ids, "; "))
	}
	return Numbered("grid", n, func(name string) Supplied {
		o := opts
		o.Logger = slog.Default().With("browser", name)
		return Supplied{Browser: fleet.Browser{Name: name, Source: browsers.NewGrid(o), Restart: true, StartFails: true}, FailCode: 2}
	})
}

// RunFleet serves several browsers through one hub until the client goes
// away or ctx ends. A browser that cannot be reached, at the start or
// later, is retried with backoff; the others are served meanwhile. The
// start URLs open in the first browser that a source starts afresh.
func RunFleet(ctx context.Context, sup []Supplied, opts *Options, serving Serving, urls []string) error {
	if serving.Relay != nil {
		return cli.Usage(errors.New("--relay serves one browser: drop --relay, or --browser, --browsers, --selenium and --relaunch"))
	}
	fresh := slices.IndexFunc(sup, func(s Supplied) bool { return s.Source.Fresh() })
	if len(urls) > 0 && fresh < 0 {
		return cli.Usage(errors.New("with --browser, start pages are not given as arguments: open them in the browsers, or with webmcp_open_tab"))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	logger := slog.Default()
	bs := make([]fleet.Browser, len(sup))
	names := make([]string, len(sup))
	failCode := map[string]int{}
	for i, s := range sup {
		bs[i], names[i], failCode[s.Name] = s.Browser, s.Name, s.FailCode
	}
	if fresh >= 0 {
		bs[fresh].URLs = urls
	}
	first := newFirstList(opts)
	cdpOpts, runs := opts.cdpWithRuns()
	fl, err := fleet.New(bs, fleet.Options{
		CDP:               cdpOpts,
		IgnoreHTTPSErrors: opts.IgnoreHTTPSErrors,
		Logger:            logger,
		OnFirst:           first.onFirst(ctx),
	})
	if err != nil {
		return cli.Usage(err)
	}
	set := fl.Set()
	h := hub.New(set, opts.Hub)
	defer closeHub(h)
	srv := opts.server(ctx, h, set, set.Titles, first.ch)
	first.over(set, h, srv)
	watchTelemetry(opts.Telemetry, h, srv, set)
	stopTelemetry, err := startTelemetry(opts.Telemetry, serving.MetricsAddr)
	if err != nil {
		return err
	}
	defer stopTelemetry()
	warnIgnoreHTTPS(opts)
	// Last: every browser a source started is ended (a Grid session
	// deleted) before RunFleet returns.
	defer fl.Wait()
	defer cancel()
	fl.Run(ctx, noting{tabLog: newTabLog(h, logger), regs: first.regs})
	go first.releaseAfter(fl)
	if err := fl.Started(ctx); err != nil {
		var se *fleet.StartError
		if errors.As(err, &se) && failCode[se.Name] != 0 {
			return &cli.ExitError{Code: failCode[se.Name], Err: err}
		}
		return err
	}
	if serving.HTTP == nil {
		select {
		case err := <-RunStdio(ctx, srv.MCP(), srv):
			return err
		case <-fl.Gone():
			return allGone(ctx, fl)
		case <-ctx.Done():
			slog.Info("interrupted; stopping")
			return nil
		}
	}
	errc := make(chan error, 1)
	hopts := *serving.HTTP
	hopts.Browser = fmt.Sprintf("%d browsers: %s", len(names), strings.Join(names, ", "))
	hopts.Browsers = func() []mcpserver.BrowserStatus {
		var out []mcpserver.BrowserStatus
		for _, st := range set.Statuses() {
			out = append(out, mcpserver.BrowserStatus{Name: st.Name, State: st.State, Error: st.Error, Drops: st.Drops})
		}
		return out
	}
	if m := metricsOf(opts.Telemetry); m != nil {
		hopts.Metrics = m.Handler()
	}
	hopts.Userscripts = userscriptStatus(opts.CDP.Userscripts, runs)
	hs, err := srv.ServeHTTP(hopts, errc)
	if err != nil {
		return &cli.ExitError{Code: 2, Err: err}
	}
	defer hs.Close()
	select {
	case err := <-errc:
		return &cli.ExitError{Code: 2, Err: err}
	case <-fl.Gone():
		return allGone(ctx, fl)
	case <-ctx.Done():
		slog.Info("interrupted; stopping")
		return nil
	}
}

// allGone is the end of RunFleet once every browser was given up: nil when
// ctx ended (that is why), else exit code 2 with each browser's reason.
func allGone(ctx context.Context, fl *fleet.Fleet) error {
	if ctx.Err() != nil || fl.Stopped() {
		slog.Info("interrupted; stopping")
		return nil
	}
	return &cli.ExitError{Code: 2, Err: fl.Err()}
}
