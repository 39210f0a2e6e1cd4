package browsers

import (
	"context"
	"log/slog"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// Endpoint follows a running browser at a debugging address or WebSocket
// URL: chromedp's RemoteAllocator. Ending it closes the connection only.
type Endpoint struct {
	Endpoint cdp.Endpoint
	Logger   *slog.Logger
}

// AttachTimeout bounds one attempt to attach to an endpoint.
const AttachTimeout = 20 * time.Second

// Start connects to the browser.
func (e *Endpoint) Start(ctx context.Context) (*Browser, error) {
	ctx, cancel := context.WithTimeout(ctx, AttachTimeout)
	defer cancel()
	conn, err := cdp.Attach(ctx, e.Endpoint, e.Logger)
	if err != nil {
		return nil, err
	}
	return &Browser{conn: conn, end: func(context.Context) error {
		// Closing the connection detaches: the browser and its tabs stay.
		return conn.Close()
	}}, nil
}

// Fresh is false: the browser has tabs of its own.
func (e *Endpoint) Fresh() bool { return false }

func (e *Endpoint) String() string {
	if e.Endpoint.WSEndpoint != "" {
		return cdp.RedactURL(e.Endpoint.WSEndpoint)
	}
	return cdp.RedactURL(e.Endpoint.BrowserURL)
}

// Connect is a source whose connection another function makes (attach's
// endpoint, dialled without AttachTimeout). Ending it closes the
// connection only.
type Connect struct {
	// Name describes the browser for the log.
	Name string
	Dial func(ctx context.Context) (*cdp.Conn, error)
}

// Start dials.
func (c *Connect) Start(ctx context.Context) (*Browser, error) {
	conn, err := c.Dial(ctx)
	if err != nil {
		return nil, err
	}
	return &Browser{conn: conn, end: func(context.Context) error { return conn.Close() }}, nil
}

// Fresh is false: the browser has tabs of its own.
func (c *Connect) Fresh() bool { return false }

func (c *Connect) String() string { return c.Name }
