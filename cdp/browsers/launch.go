package browsers

import (
	"context"
	"sync"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// Launch starts a local browser each time: chromedp's ExecAllocator.
type Launch struct {
	// Options are cdp.Launch's options.
	Options cdp.LaunchOptions
}

// exitGrace is how long a browser whose connection ended may take to exit,
// so that its exit status is the reason given.
const exitGrace = 2 * time.Second

// Start launches the browser.
func (l *Launch) Start(ctx context.Context) (*Browser, error) {
	proc, err := cdp.Launch(ctx, l.Options)
	if err != nil {
		return nil, err
	}
	var once sync.Once
	var endErr error
	return &Browser{
		conn:   proc.Conn(),
		gone:   proc.Exited(),
		reason: func() string { return "the browser exited: " + proc.ExitReason() },
		grace:  exitGrace,
		end: func(context.Context) error {
			once.Do(func() { endErr = proc.Close() })
			return endErr
		},
	}, nil
}

// Fresh is true: the start pages open in each browser started.
func (l *Launch) Fresh() bool { return true }

func (l *Launch) String() string { return "a local browser" }
