package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// serveFlags are the flags that launch, attach and demo share.
type serveFlags struct {
	backend        string
	callTimeout    time.Duration
	maxResultBytes int
	maxTools       int
	noTabTools     bool
	dialogs        string
	confirm        string
}

func (f *serveFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.backend, "backend", "auto", "WebMCP implementation: auto (native where the browser has it, else the polyfill), polyfill, or native")
	fs.DurationVar(&f.callTimeout, "call-timeout", 30*time.Second, "longest time a tool call may take")
	fs.IntVar(&f.maxResultBytes, "max-result-bytes", 1<<20, "longest result text passed to the client; longer is cut with a notice")
	fs.IntVar(&f.maxTools, "max-tools-per-document", 200, "most tools read from one document; the rest are refused")
	fs.BoolVar(&f.noTabTools, "no-tab-tools", false, "do not offer the webmcp_*_tab tools (open, activate, reload, close)")
	fs.StringVar(&f.dialogs, "dialogs", "fail", "a page dialog during a call, when the client cannot be asked (no elicitation): accept, dismiss, or fail (dismiss it and return an error)")
	fs.StringVar(&f.confirm, "confirm", "none", "ask the client before calling: consequential (tools marked consequentialHint), writes (every tool not marked readOnlyHint), or none")
}

func (f *serveFlags) check() (polyfill.Backend, error) {
	b, err := polyfill.ParseBackend(f.backend)
	if err != nil {
		return "", fmt.Errorf("--backend: %w", err)
	}
	if f.callTimeout <= 0 {
		return "", fmt.Errorf("--call-timeout %s: must be positive", f.callTimeout)
	}
	if f.maxResultBytes < 1024 {
		return "", fmt.Errorf("--max-result-bytes %d: must be at least 1024", f.maxResultBytes)
	}
	if _, err := mcpserver.ParseDialogPolicy(f.dialogs); err != nil {
		return "", err
	}
	if _, err := mcpserver.ParseConfirmPolicy(f.confirm); err != nil {
		return "", err
	}
	if f.maxTools < 1 {
		return "", fmt.Errorf("--max-tools-per-document %d: must be at least 1", f.maxTools)
	}
	return b, nil
}

// session is a browser being served: the instrumented browser, the hub and
// the MCP server over it.
type session struct {
	browser *cdp.Browser
	hub     *hub.Hub
	server  *mcpserver.Server
	conn    *cdp.Conn
}

// startSession instruments the browser behind conn and builds the MCP
// server over it.
func startSession(ctx context.Context, conn *cdp.Conn, f *serveFlags, backend polyfill.Backend, reloadExisting bool) (*session, error) {
	logger := slog.Default()
	b, err := cdp.NewBrowser(conn, cdp.Options{
		Backend:        backend,
		Limits:         cdp.Limits{MaxTools: f.maxTools, MaxResult: f.maxResultBytes},
		ReloadExisting: reloadExisting,
		Logger:         logger,
	})
	if err != nil {
		return nil, err
	}
	h := hub.New(b, hub.Options{CallTimeout: f.callTimeout, MaxResultBytes: f.maxResultBytes, Logger: logger})
	opts := mcpserver.Options{
		Version:     version,
		Logger:      logger,
		Dialogs:     mcpserver.DialogPolicy(f.dialogs),
		Confirm:     mcpserver.ConfirmPolicy(f.confirm),
		CallTimeout: f.callTimeout,
	}
	if !f.noTabTools {
		opts.Tabs = b
	}
	srv := mcpserver.New(ctx, h, opts)
	if err := b.Start(ctx, h); err != nil {
		return nil, err
	}
	if v, err := cdp.Version(ctx, conn); err == nil {
		logger.Info("browser ready", "product", v.Product, "backend", backend)
	}
	return &session{browser: b, hub: h, server: srv, conn: conn}, nil
}

// openURLs opens the start URLs in new tabs, then closes the empty tab the
// browser started with. (Navigating that tab instead leaves a session on
// which Page.reload fails with "Not attached to an active page".)
func (s *session) openURLs(ctx context.Context, urls []string) error {
	blank := s.browser.BlankTab()
	for _, u := range urls {
		if _, err := s.browser.Open(ctx, u); err != nil {
			return err
		}
	}
	if blank != "" && len(urls) > 0 {
		if err := s.browser.CloseTab(ctx, blank); err != nil {
			slog.Debug("closing the start tab", "err", err)
		}
	}
	return nil
}

// serveStdio serves MCP on stdin/stdout until the client goes away (nil), the
// browser goes away, or ctx ends.
func (s *session) serveStdio(ctx context.Context, exited <-chan struct{}, why func() string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.server.MCP().Run(ctx, &mcp.StdioTransport{}) }()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			slog.Debug("the MCP session ended", "err", err)
		}
		slog.Info("the MCP client went away; stopping")
		return nil
	case <-s.conn.Done():
		return s.lost(exited, why)
	case err := <-s.browser.Fatal():
		return &exitError{code: 2, err: err}
	case <-ctx.Done():
		slog.Info("interrupted; stopping")
		return nil
	}
}
