// Package serve runs what webmcp-cdp serves: a browser followed with cdp,
// the hub over it and the MCP server over the hub, on stdio, streamable
// HTTP or the relay, until the client goes away, the browser is lost or
// the context ends. One browser is a Session; several, from their sources
// (cdp/fleet), are served by Fleet. Package main turns flags into its
// Options; the exit status of a failure is the cli.ExitError it returns.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/fleet"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/multi"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/hub/telemetry"
	"github.com/webmcp-cdp/webmcp-cdp/internal/userscript"
)

// Options are what a served browser is made of.
type Options struct {
	// CDP are the options of each browser followed.
	CDP cdp.Options
	// Hub are the hub's options.
	Hub hub.Options
	// Server are the MCP server's options; Tabs and FirstList are set
	// here.
	Server mcpserver.Options
	// TabTools serves the webmcp_* tools of the browser's tabs.
	TabTools bool
	// IgnoreHTTPSErrors loads pages whose certificate is not valid, in
	// every tab.
	IgnoreHTTPSErrors bool
	// Telemetry is what --metrics, --http and OTEL_* turned on (nil: off).
	Telemetry *telemetry.Telemetry
	// WaitTools bounds the hold of clients' first tools/list (0: none).
	WaitTools time.Duration
	// Settle is how long a start page's tools stay unchanged to count as
	// settled.
	Settle time.Duration

	// inSpace: the session is one person's space of several (Spaces), whose
	// gauges the Spaces report together.
	inSpace bool
}

// Session is one browser served alone: a fleet of one (cdp/fleet), the
// hub and the MCP server over it. It is not started again when lost: the
// session ends, and Err says why.
type Session struct {
	// Browser is the browser followed with cdp, over Conn.
	Browser *cdp.Browser
	Conn    *cdp.Conn
	// Hub is the catalog and router over it.
	Hub *hub.Hub
	// Server is the MCP server over the hub.
	Server *mcpserver.Server

	fleet *fleet.Fleet
	first *firstList
	tel   *telemetry.Telemetry
	// stop ends the fleet's supervisor; the browser is then ended.
	stop context.CancelFunc
	// began is when Start was called.
	began time.Time
	// scripts are the userscripts in force; runs the documents each ran
	// in (userscripts.go).
	scripts *userscript.Set
	runs    *userscript.Runs
}

// Start starts the browser sup describes, served alone: its source starts
// it (a launch, an endpoint, the person's own Chrome), cdp follows it, its
// start URLs (sup.URLs) open, and the hub and the MCP server are built over
// it. Clients' first tools/list waits until its start pages settled, or the
// tabs it had open were read (at most opts.WaitTools). Close ends it.
func Start(ctx context.Context, sup Supplied, opts *Options) (*Session, error) {
	logger := slog.Default()
	began := time.Now()
	sup.Name = "" // served alone: its ids stay the browser's own
	first := newFirstList(opts)
	up := make(chan fleet.First, 1)
	fctx, stop := context.WithCancel(ctx)
	cdpOpts, runs := opts.cdpWithRuns()
	fl, err := fleet.New([]fleet.Browser{sup.Browser}, fleet.Options{
		CDP:               cdpOpts,
		IgnoreHTTPSErrors: opts.IgnoreHTTPSErrors,
		Logger:            logger,
		OnFirst: func(f fleet.First) {
			up <- f
			first.onFirst(fctx)(f)
		},
	})
	if err != nil {
		stop()
		return nil, err
	}
	set := fl.Set()
	h := hub.New(set, opts.Hub)
	srv := opts.server(ctx, h, tabsOf(set), set.Titles, first.ch)
	first.over(set, h, srv)
	if !opts.inSpace {
		watchTelemetry(opts.Telemetry, h, srv, set)
	}
	s := &Session{Hub: h, Server: srv, fleet: fl, first: first, tel: opts.Telemetry, stop: stop, began: began, scripts: opts.CDP.Userscripts, runs: runs}
	warnIgnoreHTTPS(opts)
	fl.Run(fctx, noting{tabLog: newTabLog(h, logger), regs: first.regs})
	if err := fl.Started(ctx); err != nil {
		s.Close()
		if se, ok := errors.AsType[*fleet.StartError](err); ok && sup.FailCode != 0 {
			return nil, &cli.ExitError{Code: sup.FailCode, Err: se}
		}
		return nil, err
	}
	select {
	case f := <-up:
		s.Browser, s.Conn = f.Browser, f.Conn
	default: // ctx ended before the browser was up
		s.Close()
		return nil, fmt.Errorf("starting the browser: %w", context.Cause(ctx))
	}
	go first.releaseAfter(fl)
	// Off the path to the start pages: asking costs a round trip.
	if !opts.inSpace {
		go func() {
			if v, err := cdp.Version(ctx, s.Conn); err == nil {
				logger.Info("browser ready", "product", v.Product, "backend", opts.CDP.Backend)
			}
		}()
	}
	return s, nil
}

// Close ends the session's browser (the process a source started, the
// connection to one it followed) and waits until it is ended.
func (s *Session) Close() {
	s.stop()
	s.fleet.Wait()
}

// Gone is closed once the browser is lost (or Close was called).
func (s *Session) Gone() <-chan struct{} { return s.fleet.Gone() }

// Err says, once Gone is closed, why the browser was lost: "lost the
// browser: " and why (a launched process's exit status when it told one),
// or the browser's fatal error.
func (s *Session) Err() error { return s.fleet.Err() }

// lost reports whether the browser is gone by a loss, not because ctx (or
// the context the session started with) ended. The session's own context
// is checked too: its end reaches the fleet and ctx one after the other,
// and Gone may close before ctx is told.
func (s *Session) lost(ctx context.Context) bool {
	return ctx.Err() == nil && !s.fleet.Stopped()
}

// tabsOnly is a set as the MCP server's tab tools see one browser: without
// OpenIn, so webmcp_open_tab takes no browser name.
type tabsOnly struct{ set *multi.Set }

func tabsOf(set *multi.Set) mcpserver.Tabs { return tabsOnly{set} }

func (t tabsOnly) Open(ctx context.Context, url string) (string, error) { return t.set.Open(ctx, url) }
func (t tabsOnly) CloseTab(ctx context.Context, tab string) error       { return t.set.CloseTab(ctx, tab) }
func (t tabsOnly) ActivateTab(ctx context.Context, tab string) error {
	return t.set.ActivateTab(ctx, tab)
}
func (t tabsOnly) Reload(ctx context.Context, tab string) error { return t.set.Reload(ctx, tab) }

// warnIgnoreHTTPS says, once, what --ignore-https-errors does.
func warnIgnoreHTTPS(o *Options) {
	if o.IgnoreHTTPSErrors {
		slog.Warn("--ignore-https-errors: the browser loads pages whose certificate is not valid, in every tab")
	}
}

// server builds the MCP server over h, with tabs as its tab tools' browser
// when they are served and titles as its status page's, answering clients' first tools/list once firstList
// is closed.
func (o *Options) server(ctx context.Context, h *hub.Hub, tabs mcpserver.Tabs, titles func(context.Context) (map[string]string, error), firstList <-chan struct{}) *mcpserver.Server {
	sopts := o.Server
	if o.TabTools {
		sopts.Tabs = tabs
	}
	sopts.FirstList = firstList
	sopts.Titles = titles
	return mcpserver.New(ctx, h, sopts)
}

// closeHub lets a state-file write in progress finish before the process
// goes.
func closeHub(h *hub.Hub) {
	if err := h.Close(); err != nil {
		slog.Warn("saving the cached tools failed", "err", err)
	}
}

// ReleaseFirstList lets clients' first tools/list be answered now.
func (s *Session) ReleaseFirstList() { s.first.release() }

// serveStdio serves MCP on stdin/stdout until the client goes away (nil),
// the browser goes away, or ctx ends, ending as RunStdio says.
func (s *Session) serveStdio(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return s.until(ctx, RunStdio(ctx, s.Server.MCP(), s.Server), 0)
}

// until serves until done gives the session's end (an error from done
// exits with status code, when not 0, else as it is), the browser goes
// away (exit status 2 with Err), or ctx ends.
func (s *Session) until(ctx context.Context, done <-chan error, code int) error {
	select {
	case err := <-done:
		if err != nil && code != 0 {
			return &cli.ExitError{Code: code, Err: err}
		}
		return err
	case <-s.Gone():
		if s.lost(ctx) {
			return &cli.ExitError{Code: 2, Err: s.Err()}
		}
	case <-ctx.Done():
	}
	slog.Info("interrupted; stopping")
	return nil
}

// RunStdio runs srv on stdin/stdout over mcpserver.StdioTransport, so a bad
// line from the client gets an error reply and the session goes on; fast,
// when set, is the local Server behind srv, whose page-tool calls then skip
// the SDK. The channel gets the command's result when the session ends: nil
// for the end of stdin ("the client went away") or ctx ending (not logged:
// the caller knows why it ended ctx), and exit code 1 with the reason for any
// other end (stdout closed).
func RunStdio(ctx context.Context, srv *mcp.Server, fast *mcpserver.Server) <-chan error {
	done := make(chan error, 1)
	tr := &mcpserver.StdioTransport{In: os.Stdin, Out: os.Stdout, Server: fast}
	go func() {
		err := srv.Run(ctx, tr)
		switch {
		case ctx.Err() != nil:
			done <- nil // the caller says why ctx ended
		case err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF):
			done <- &cli.ExitError{Code: 1, Err: fmt.Errorf("the MCP session on stdio ended: %w", err)}
		default:
			slog.Info("the MCP client went away; stopping")
			done <- nil
		}
	}()
	return done
}
