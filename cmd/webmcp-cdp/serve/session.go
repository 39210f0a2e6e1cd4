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
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/hub/settle"
	"github.com/webmcp-cdp/webmcp-cdp/hub/telemetry"
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
}

// Session is one browser being served: the instrumented browser, the hub
// and the MCP server over it.
type Session struct {
	// Browser is the browser followed with cdp.
	Browser *cdp.Browser
	// Hub is the catalog and router over it.
	Hub *hub.Hub
	// Server is the MCP server over the hub.
	Server *mcpserver.Server
	// Conn is the browser's CDP connection.
	Conn *cdp.Conn

	// firstList is closed once a client's first tools/list may be
	// answered (SettleStartPages, SettleExisting).
	firstList chan struct{}
	listOnce  sync.Once
	waitTools time.Duration
	settle    time.Duration
	// regs notes the start pages' loads and registrations until then.
	regs *settle.Registrations
	tel  *telemetry.Telemetry
}

// Start instruments the browser behind conn and builds the hub and the MCP
// server over it.
func Start(ctx context.Context, conn *cdp.Conn, opts *Options) (*Session, error) {
	logger := slog.Default()
	b, err := cdp.NewBrowser(conn, opts.CDP)
	if err != nil {
		return nil, err
	}
	if opts.IgnoreHTTPSErrors {
		if err := cdp.IgnoreCertificateErrors(ctx, conn); err != nil {
			return nil, fmt.Errorf("--ignore-https-errors: %w", err)
		}
		logger.Warn("--ignore-https-errors: the browser loads pages whose certificate is not valid, in every tab")
	}
	h := hub.New(b, opts.Hub)
	srv, firstList := opts.server(ctx, h, b)
	watchTelemetry(opts.Telemetry, h, srv, nil)
	regs := settle.NewRegistrations(nil)
	if err := b.Start(ctx, noting{tabLog: newTabLog(h, logger), regs: regs}); err != nil {
		return nil, err
	}
	// Off the path to the start pages: asking costs a round trip.
	go func() {
		if v, err := cdp.Version(ctx, conn); err == nil {
			logger.Info("browser ready", "product", v.Product, "backend", opts.CDP.Backend)
		}
	}()
	return &Session{Browser: b, Hub: h, Server: srv, Conn: conn, firstList: firstList,
		waitTools: opts.WaitTools, settle: opts.Settle, regs: regs, tel: opts.Telemetry}, nil
}

// server builds the MCP server over h, with tabs as its tab tools' browser
// when they are served, and the channel whose close lets clients' first
// tools/list be answered.
func (o *Options) server(ctx context.Context, h *hub.Hub, tabs mcpserver.Tabs) (*mcpserver.Server, chan struct{}) {
	sopts := o.Server
	if o.TabTools {
		sopts.Tabs = tabs
	}
	firstList := make(chan struct{})
	sopts.FirstList = firstList
	return mcpserver.New(ctx, h, sopts), firstList
}

// closeHub lets a state-file write in progress finish before the process
// goes.
func closeHub(h *hub.Hub) {
	if err := h.Close(); err != nil {
		slog.Warn("saving the cached tools failed", "err", err)
	}
}

// ReleaseFirstList lets clients' first tools/list be answered.
func (s *Session) ReleaseFirstList() {
	s.listOnce.Do(func() {
		close(s.firstList)
		s.regs.Stop()
	})
}

// serveStdio serves MCP on stdin/stdout until the client goes away (nil),
// the browser goes away, or ctx ends, ending as RunStdio says.
func (s *Session) serveStdio(ctx context.Context, exited <-chan struct{}, why func() string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return s.until(ctx, RunStdio(ctx, s.Server.MCP(), s.Server), 0, exited, why)
}

// until serves until done gives the session's end (an error from done
// exits with status code, when not 0, else as it is), the browser goes
// away, or ctx ends.
func (s *Session) until(ctx context.Context, done <-chan error, code int, exited <-chan struct{}, why func() string) error {
	select {
	case err := <-done:
		if err != nil && code != 0 {
			return &cli.ExitError{Code: code, Err: err}
		}
		return err
	case <-s.Conn.Done():
		return s.Lost(exited, why)
	case err := <-s.Browser.Fatal():
		return &cli.ExitError{Code: 2, Err: err}
	case <-ctx.Done():
		slog.Info("interrupted; stopping")
		return nil
	}
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

// exitGrace bounds the wait for a launched browser's exit status once its
// connection is gone: a grace period for the process to end, not a poll.
const exitGrace = 2 * time.Second

// Lost words the end of the browser connection, waiting (up to exitGrace)
// for the process's own exit status when we launched it (exited and why;
// nil when we did not).
func (s *Session) Lost(exited <-chan struct{}, why func() string) error {
	reason := fmt.Sprint(s.Conn.Err())
	if exited != nil {
		grace := time.NewTimer(exitGrace)
		defer grace.Stop()
		select {
		case <-exited:
			reason = why()
		case <-grace.C:
		}
	}
	return &cli.ExitError{Code: 2, Err: errors.New("lost the browser: " + reason)}
}
