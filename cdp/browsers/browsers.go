// Package browsers supplies browsers. A Source yields a CDP connection to
// one browser and says how to end it: Launch starts a local process,
// Endpoint follows a debugging address or WebSocket URL, AutoConnect finds
// the person's own Chrome by its DevToolsActivePort, Grid creates a
// Selenium Grid session. Each Browser it yields frees what it made when
// ended (the process and its profile, the Grid session; an endpoint's
// browser stays), and tells when the browser is gone by other means than
// its connection (the process exited, the Grid ended the session).
//
// The shape is chromedp's Allocator (ExecAllocator, RemoteAllocator): one
// small interface, one implementation per way of getting a browser, and one
// supervisor for all of them (cdp/fleet, over cdp/multi.Supervise)
// that asks the source again when a browser is lost. A source made
// elsewhere builds its browsers with New. It knows CDP connections, not the
// page script, the hub or MCP.
package browsers

import (
	"context"
	"sync"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// A Source yields browsers, one at a time; the supervisor asks again when
// the browser it gave is lost.
type Source interface {
	// Start gets a browser and connects to it. ctx bounds the start, not
	// the browser's life: that ends with Browser.End.
	Start(ctx context.Context) (*Browser, error)
	// Fresh reports whether Start makes a new browser (launch, Grid) whose
	// start pages are to be opened, rather than following one with tabs
	// of its own (an endpoint).
	Fresh() bool
	// String describes the source for the log, without secrets.
	String() string
}

// Browser is one browser a Source yielded.
type Browser struct {
	conn   *cdp.Conn
	gone   <-chan struct{}
	reason func() string
	end    func(ctx context.Context) error
	// grace is how long, once the connection ended, the source may take to
	// tell why (a process that is exiting).
	grace time.Duration
	// context is the browser context to follow ("": all of them).
	context string
}

// Parts are what a Browser is made of, for a Source outside this package
// (or a fake one in a test).
type Parts struct {
	// Conn is the browser-level CDP connection.
	Conn *cdp.Conn
	// End frees what the source made; nil: close Conn. New makes calling
	// it more than once do nothing more.
	End func(ctx context.Context) error
	// Gone, when not nil, is closed when the source learns the browser is
	// gone other than by its connection; Reason then says why.
	Gone   <-chan struct{}
	Reason func() string
	// Grace is how long to wait for Gone once the connection ended.
	Grace time.Duration
	// BrowserContext, when set, is the one browser context of the browser
	// to follow (cdp.Options.BrowserContext): a space of its own in a
	// browser shared with others.
	BrowserContext string
}

// New returns the Browser made of p.
func New(p Parts) *Browser {
	end := p.End
	if end == nil {
		end = func(context.Context) error { return p.Conn.Close() }
	}
	var once sync.Once
	var endErr error
	return &Browser{
		conn:    p.Conn,
		gone:    p.Gone,
		reason:  p.Reason,
		grace:   p.Grace,
		context: p.BrowserContext,
		end: func(ctx context.Context) error {
			once.Do(func() { endErr = end(ctx) })
			return endErr
		},
	}
}

// Conn is the browser-level CDP connection.
func (b *Browser) Conn() *cdp.Conn { return b.conn }

// Gone is closed when the source learns the browser is gone other than by
// its connection ending: the process exited, the Grid ended the session.
// It is nil (never closed) when the source has no such news.
func (b *Browser) Gone() <-chan struct{} { return b.gone }

// Reason says why the browser is gone, once Gone is closed.
func (b *Browser) Reason() string {
	if b.reason == nil {
		return "the browser is gone"
	}
	return b.reason()
}

// BrowserContext is the one browser context to follow ("": every one).
func (b *Browser) BrowserContext() string { return b.context }

// Grace is how long to wait for Gone once the connection ended, so that
// the reason given is the source's (an exit status) rather than a closed
// socket.
func (b *Browser) Grace() time.Duration { return b.grace }

// End frees what Start made: it ends the process and removes its temporary
// profile, or deletes the Grid session; an endpoint's browser only loses
// the connection (its tabs stay). ctx bounds the ending. Calling End again
// does nothing more.
func (b *Browser) End(ctx context.Context) error {
	return b.end(ctx)
}
