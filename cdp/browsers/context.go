package browsers

import (
	"context"
	"errors"
	"fmt"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// Context is a source of spaces in one shared browser: each Start dials a
// connection of its own to the browser and makes a browser context on it
// (cdp.NewBrowserContext: cookies, storage, cache and permissions of its
// own), which the Browser it yields follows alone. Ending it disposes of
// the context (its tabs close) and closes the connection; a connection that
// drops takes its context with it.
type Context struct {
	// Dial connects to the shared browser.
	Dial func(ctx context.Context) (*cdp.Conn, error)
}

// Start implements Source.
func (c *Context) Start(ctx context.Context) (*Browser, error) {
	conn, err := c.Dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("connecting to the shared browser: %w", err)
	}
	id, err := cdp.NewBrowserContext(ctx, conn, nil)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return New(Parts{Conn: conn, BrowserContext: id, End: func(ctx context.Context) error {
		derr := cdp.DisposeBrowserContext(ctx, conn, id)
		if errors.Is(derr, cdp.ErrClosed) {
			derr = nil // the context went with its connection
		}
		return errors.Join(derr, conn.Close())
	}}), nil
}

// Fresh implements Source: a new context is empty, its start pages are to
// be opened.
func (c *Context) Fresh() bool { return true }

// String implements Source.
func (c *Context) String() string { return "a browser context of the shared browser" }
