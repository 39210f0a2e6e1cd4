// Package cibrowser is CI mode's browser (inspect, call, test): headless
// Chromium launched for one run, instrumented by the caller, with an MCP
// client connected in memory to the caller's MCP server so that CI mode's
// calls take the path of a real client's, and the hub/ci session over it.
//
// It knows how to launch and end the browser, adapt *cdp.Browser to
// ci.Tabs, and word the errors of a lost browser or a page that did not
// load. It does not know flags or exit statuses: the command builds the
// Options from its flags and maps every error returned here to its status
// for a bad command line, spec or browser.
package cibrowser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/fleet"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/serve"
	"github.com/webmcp-cdp/webmcp-cdp/hub/ci"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Options say how to start a CI browser.
type Options struct {
	// Launch are the browser's launch options; the caller makes them
	// headless.
	Launch cdp.LaunchOptions
	// Serve are the options of the session served over the launched
	// browser (serve.Start); CI mode settles each page itself, so clients'
	// first tools/list is not held.
	Serve *serve.Options
	// Settle and Timeout are the session's (ci.Session).
	Settle, Timeout time.Duration
	// Version is the in-memory MCP client's version.
	Version string
}

// Browser is a headless browser for CI mode, with an MCP client on its
// server so that calls take the path of a real client's.
type Browser struct {
	sess   *ci.Session
	ctx    context.Context // ends when the browser goes away
	parent context.Context
	close  func()
}

// Start launches headless Chromium, serves it with opts.Serve and
// connects the MCP client. The browser is watched until Close: when it goes
// away, or its instrumentation fails, Context ends with the reason.
func Start(ctx context.Context, opts Options) (*Browser, error) {
	s, err := serve.Start(ctx, serve.Supplied{Browser: fleet.Browser{Source: &browsers.Launch{Options: opts.Launch}, StartFails: true}}, opts.Serve)
	if err != nil {
		return nil, err
	}
	end := s.Close
	s.ReleaseFirstList()
	s.Browser.EnableDiagnosis()
	clientT, serverT := mcp.NewInMemoryTransports()
	if _, err := s.Server.MCP().Connect(ctx, serverT, nil); err != nil {
		end()
		return nil, fmt.Errorf("connecting CI mode's MCP client: %w", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "webmcp-cdp-ci", Version: opts.Version}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		end()
		return nil, fmt.Errorf("connecting CI mode's MCP client: %w", err)
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-s.Gone():
			cancel(s.Err())
		case <-runCtx.Done():
		}
	}()
	sess := &ci.Session{
		Hub:     s.Hub,
		Tabs:    tabs{s.Browser},
		Settle:  opts.Settle,
		Timeout: opts.Timeout,
		Call: func(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
			return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		},
	}
	return &Browser{
		sess:   sess,
		ctx:    runCtx,
		parent: ctx,
		close: func() {
			cancel(nil)
			cs.Close()
			end()
		},
	}, nil
}

// Session is the CI session over the browser.
func (b *Browser) Session() *ci.Session { return b.sess }

// Context ends when the browser goes away, the run is interrupted, or
// Close is called.
func (b *Browser) Context() context.Context { return b.ctx }

// Close disconnects the MCP client and ends the browser.
func (b *Browser) Close() { b.close() }

// Lost returns the error to exit with when the browser went away or the
// run was interrupted, else nil.
func (b *Browser) Lost() error {
	if b.ctx.Err() == nil {
		return nil
	}
	if b.parent.Err() != nil {
		return fmt.Errorf("interrupted: %w", context.Cause(b.parent))
	}
	return context.Cause(b.ctx)
}

// OpenError is the error to exit with when a page could not be opened:
// Lost's when the browser went away, else err with the page's diagnosis
// when it did not load.
func (b *Browser) OpenError(err error) error {
	if lost := b.Lost(); lost != nil {
		return lost
	}
	if le, ok := errors.AsType[*ci.LoadError](err); ok {
		if why := ci.Explain(le.Diagnosis); len(why) > 1 {
			err = fmt.Errorf("%w\n  %s", err, strings.Join(why[1:], "\n  "))
		}
	}
	return err
}

// tabs adapts the browser to ci.Tabs: pages opened for CI mode are
// followed for their load and errors (cdp/diagnose.go).
type tabs struct{ b *cdp.Browser }

// Open opens url in a new tab set up as setup says.
func (t tabs) Open(ctx context.Context, url string, setup core.PageSetup) (string, error) {
	return t.b.OpenPage(ctx, url, setup)
}

// CloseTab closes the tab and forgets its page.
func (t tabs) CloseTab(ctx context.Context, tab string) error {
	defer t.b.ForgetPage(tab)
	return t.b.CloseTab(ctx, tab)
}

// PageLoad returns how the tab's page loaded so far.
func (t tabs) PageLoad(tab string) (core.PageLoad, <-chan struct{}, bool) {
	return t.b.PageLoad(tab)
}

// Diagnose returns what the tab's page did.
func (t tabs) Diagnose(ctx context.Context, tab string) (core.PageDiagnosis, error) {
	return t.b.Diagnose(ctx, tab)
}

// Drain returns once the tab's page's due work has reached the hub.
func (t tabs) Drain(ctx context.Context, tab string) error {
	return t.b.Drain(ctx, tab)
}
