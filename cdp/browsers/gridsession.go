package browsers

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// Start creates a session on the Grid, connects to its CDP endpoint and
// keeps it alive until End. When anything after the session's creation
// fails, the session is deleted.
func (g *Grid) Start(ctx context.Context) (*Browser, error) {
	var created struct {
		SessionID    string         `json:"sessionId"`
		Capabilities map[string]any `json:"capabilities"`
	}
	body := map[string]any{"capabilities": map[string]any{"alwaysMatch": g.capabilities()}}
	nctx, cancel := context.WithTimeout(ctx, g.opts.NewSessionTimeout)
	_, err := g.do(nctx, "POST", "/session", body, &created)
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s gave no session within %s: no free slot for these capabilities?", g, g.opts.NewSessionTimeout)
		}
		return nil, err
	}
	if created.SessionID == "" {
		return nil, fmt.Errorf("%s created a session without a sessionId: is this a Selenium Grid 4?", g)
	}
	s := &gridSession{g: g, id: created.SessionID, gone: make(chan struct{}), stop: make(chan struct{})}
	fail := func(err error) (*Browser, error) {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deleteTimeout)
		defer cancel()
		if derr := s.delete(dctx); derr != nil {
			err = errors.Join(err, derr)
		}
		return nil, err
	}
	ws, err := g.cdpURL(created.Capabilities)
	if err != nil {
		return fail(err)
	}
	log := g.opts.Logger.With("session", s.id)
	if node := g.nodeOf(ctx, s.id); node != "" {
		log = log.With("node", node)
	}
	conn, err := cdp.Attach(ctx, cdp.Endpoint{WSEndpoint: ws, Header: g.opts.Header}, log)
	if err != nil {
		return fail(fmt.Errorf("session %s: connecting to its CDP endpoint: %w", s.id, err))
	}
	s.conn = conn
	period, err := g.keepAlivePeriod(ctx)
	if err != nil {
		log.Debug("cannot read the Grid's session timeout from /status; keeping sessions alive every minute", "err", err)
	}
	log.Info("Grid session created", "keepalive", period)
	go s.keepAlive(period)
	return &Browser{conn: conn, gone: s.gone, reason: s.reason, end: s.end}, nil
}

// cdpURL is the session's CDP WebSocket URL: the path of its se:cdp
// capability on the Grid URL this process was given. The Grid builds se:cdp
// from the address it believes it has (its host's first address, port 4444
// unless --grid-url is set), which behind a proxy, in a container or with
// another port is not the address that reaches it; the URL given is.
func (g *Grid) cdpURL(caps map[string]any) (string, error) {
	raw, _ := caps["se:cdp"].(string)
	if raw == "" {
		return "", fmt.Errorf("%s gave the session no CDP endpoint (se:cdp): it needs Selenium Grid 4 with a Chrome or Chromium node", g)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%s gave a se:cdp that does not parse", g)
	}
	i := strings.Index(u.Path, "/session/")
	if i < 0 {
		return raw, nil // not the Grid's proxy: take it as given
	}
	out := *g.opts.URL
	out.Scheme = map[string]string{"https": "wss"}[g.opts.URL.Scheme]
	if out.Scheme == "" {
		out.Scheme = "ws"
	}
	out.Path = strings.TrimSuffix(g.opts.URL.Path, "/") + u.Path[i:]
	out.RawPath, out.RawQuery = "", ""
	return out.String(), nil
}

// gridSession is one session Start created.
type gridSession struct {
	g    *Grid
	id   string
	conn *cdp.Conn

	gone     chan struct{} // closed once the Grid says the session is gone
	why      string
	stop     chan struct{} // closed by end: no more keep-alive
	stopOnce sync.Once
	endOnce  sync.Once
	endErr   error
}

func (s *gridSession) reason() string { return s.why }

// keepAlive sends a cheap WebDriver command every period: it resets the
// Grid's idle timeout, and its answer tells a session the Grid ended
// (timeout, node gone, deleted by an operator) without waiting for the CDP
// socket, which the Grid leaves open and silent.
func (s *gridSession) keepAlive(period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	failures := 0
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), max(period, 5*time.Second))
		// GET timeouts: answered by the driver without touching a page.
		_, err := s.g.do(ctx, "GET", "/session/"+s.id+"/timeouts", nil, nil)
		cancel()
		var ge *GridError
		switch {
		case err == nil:
			failures = 0
			continue
		case errors.As(err, &ge) && ge.IsSessionGone():
			s.lost(fmt.Sprintf("the Grid ended session %s (its idle timeout, a node that went away, or deleted by hand): %s", s.id, ge.Message))
			return
		case errors.As(err, &ge):
			// The session answers, with an error of its own (no window,
			// say): it is alive.
			failures = 0
			continue
		}
		failures++
		if failures >= keepAliveFailures {
			s.lost(fmt.Sprintf("the Grid did not answer %d keep-alive commands for session %s: %v", failures, s.id, err))
			return
		}
	}
}

func (s *gridSession) lost(why string) {
	select {
	case <-s.stop:
		return // ended on purpose meanwhile
	default:
	}
	s.why = why
	close(s.gone)
}

// end stops the keep-alive, closes the connection and deletes the session.
func (s *gridSession) end(ctx context.Context) error {
	s.endOnce.Do(func() {
		s.stopOnce.Do(func() { close(s.stop) })
		if s.conn != nil {
			s.conn.Close()
		}
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, deleteTimeout)
			defer cancel()
		}
		s.endErr = s.delete(ctx)
	})
	return s.endErr
}

// delete deletes the session; one the Grid no longer has is not an error.
func (s *gridSession) delete(ctx context.Context) error {
	_, err := s.g.do(ctx, "DELETE", "/session/"+s.id, nil, nil)
	var ge *GridError
	if errors.As(err, &ge) && ge.IsSessionGone() {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting session %s (the Grid's idle timeout will end it): %w", s.id, err)
	}
	s.g.opts.Logger.Info("Grid session deleted", "session", s.id)
	return nil
}
