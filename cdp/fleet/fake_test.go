package fleet

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// patience bounds every wait of these tests, so that a bug fails a test
// instead of hanging it. No assertion depends on it.
const patience = 10 * time.Second

// fakeTransport is a browser with no tabs: it answers every command with an
// empty result, or an error for the methods in fail, until it is closed.
type fakeTransport struct {
	fail    map[string]bool
	replies chan *cdproto.Message
	asked   chan string // the methods written, in order
	closed  chan struct{}
	once    sync.Once
}

func newFakeTransport(fail map[string]bool) *fakeTransport {
	return &fakeTransport{fail: fail, replies: make(chan *cdproto.Message, 256), asked: make(chan string, 256), closed: make(chan struct{})}
}

func (f *fakeTransport) Read(ctx context.Context, msg *cdproto.Message) error {
	select {
	case m := <-f.replies:
		*msg = *m
		return nil
	case <-f.closed:
		return io.EOF
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeTransport) Write(ctx context.Context, msg *cdproto.Message) error {
	method := string(msg.Method)
	reply := &cdproto.Message{ID: msg.ID, SessionID: msg.SessionID, Result: jsonv2.Value("{}")}
	if f.fail[method] {
		reply = &cdproto.Message{ID: msg.ID, SessionID: msg.SessionID, Error: &cdproto.Error{Code: -32000, Message: method + " refused by the fake browser"}}
	}
	select {
	case f.asked <- method:
	default:
	}
	select {
	case f.replies <- reply:
		return nil
	case <-f.closed:
		return errors.New("fake transport closed")
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeTransport) Close() error {
	f.once.Do(func() { close(f.closed) })
	return nil
}

// waitAsked waits until the browser was asked method.
func (f *fakeTransport) waitAsked(t *testing.T, method string) {
	t.Helper()
	timeout := time.After(patience)
	for {
		select {
		case m := <-f.asked:
			if m == method {
				return
			}
		case <-timeout:
			t.Fatalf("the browser was not asked %s", method)
		}
	}
}

// drain returns what the browser was asked so far, and forgets it.
func (f *fakeTransport) drain() []string {
	var out []string
	for {
		select {
		case m := <-f.asked:
			out = append(out, m)
		default:
			return out
		}
	}
}

// fakeBrowser is one browser a fakeSource started.
type fakeBrowser struct {
	t     *fakeTransport
	conn  *cdp.Conn
	gone  chan struct{} // closed by the test: the source says it is gone
	ended chan error    // gets End's context's error when the browser is ended
}

// fakeSource starts fakeBrowsers; the n-th Start fails with starts[n] when
// that is not nil.
type fakeSource struct {
	fresh bool
	// withGone: its browsers have a Gone channel, waited for grace once
	// the connection ended.
	withGone bool
	grace    time.Duration
	// endBlocks: ending a browser waits for End's context to end.
	endBlocks bool
	// fail are the methods its browsers refuse.
	fail   map[string]bool
	starts []error

	mu      sync.Mutex
	n       int
	started chan *fakeBrowser // each browser started
}

func (s *fakeSource) Start(ctx context.Context) (*browsers.Browser, error) {
	s.mu.Lock()
	n := s.n
	s.n++
	s.mu.Unlock()
	if n < len(s.starts) && s.starts[n] != nil {
		return nil, s.starts[n]
	}
	tr := newFakeTransport(s.fail)
	fb := &fakeBrowser{t: tr, conn: cdp.NewConn(tr, quiet()), gone: make(chan struct{}), ended: make(chan error, 1)}
	p := browsers.Parts{Conn: fb.conn, Grace: s.grace, End: func(ctx context.Context) error {
		err := fb.conn.Close()
		if s.endBlocks {
			<-ctx.Done()
			err = ctx.Err()
		}
		fb.ended <- ctx.Err()
		return err
	}}
	if s.withGone {
		p.Gone, p.Reason = fb.gone, func() string { return "the browser exited: signal: killed" }
	}
	s.started <- fb
	return browsers.New(p), nil
}

// starts returns how many times Start was called.
func (s *fakeSource) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *fakeSource) Fresh() bool    { return s.fresh }
func (s *fakeSource) String() string { return "a fake browser" }

// nextBrowser waits for the source's next browser.
func (s *fakeSource) nextBrowser(t *testing.T) *fakeBrowser {
	t.Helper()
	select {
	case fb := <-s.started:
		return fb
	case <-time.After(patience):
		t.Fatal("the source started no browser")
		return nil
	}
}

// waitEnded waits until fb was ended and returns End's context's error.
func (fb *fakeBrowser) waitEnded(t *testing.T) error {
	t.Helper()
	select {
	case err := <-fb.ended:
		return err
	case <-time.After(patience):
		t.Fatal("the browser was not ended")
		return nil
	}
}

// nopSink is the hub of these tests: the fake browsers have no tabs.
type nopSink struct{}

func (nopSink) Update(core.Source, []core.Tool, []core.Refusal) {}
func (nopSink) DropDoc(string)                                  {}
func (nopSink) TabOpened(string, string, string)                {}
func (nopSink) TabClosed(string)                                {}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// logRecord is one line of the fleet's log: its message and its err.
type logRecord struct{ msg, err string }

// logTap is a slog.Handler that hands each record to the test.
type logTap struct {
	attrs []slog.Attr
	c     chan logRecord
}

func (h *logTap) Enabled(context.Context, slog.Level) bool { return true }
func (h *logTap) WithGroup(string) slog.Handler            { return h }
func (h *logTap) WithAttrs(as []slog.Attr) slog.Handler {
	return &logTap{attrs: append(h.attrs[:len(h.attrs):len(h.attrs)], as...), c: h.c}
}

func (h *logTap) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{msg: r.Message}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			rec.err = a.Value.String()
		}
		return true
	})
	select {
	case h.c <- rec:
	default:
	}
	return nil
}

// waitLog waits for a log line whose message is msg and returns its err.
func waitLog(t *testing.T, c <-chan logRecord, msg string) string {
	t.Helper()
	timeout := time.After(patience)
	for {
		select {
		case r := <-c:
			if r.msg == msg {
				return r.err
			}
		case <-timeout:
			t.Fatalf("no log line %q", msg)
			return ""
		}
	}
}
