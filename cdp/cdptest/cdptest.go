// Package cdptest holds test doubles for code that drives cdp: a fake
// browser-level transport that answers every command with an empty result,
// or an error for chosen methods, and a browsers.Source that yields such
// browsers, counting starts and ends.
//
// The fake browser has no tabs: it is enough for what follows a browser
// (cdp/fleet, a served Session, people's spaces) to start, run, lose and
// end one without Chrome.
package cdptest

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
)

// Patience bounds every wait of the helpers here, so that a bug fails a
// test instead of hanging it. No assertion should depend on it.
const Patience = 10 * time.Second

// Transport is a browser with no tabs, for cdp.NewConn: it answers every
// command with an empty result, or an error for the methods it refuses,
// until it is closed (the browser lost). It notes the methods it is asked.
type Transport struct {
	fail    map[string]bool
	replies chan *cdproto.Message
	closed  chan struct{}
	once    sync.Once

	mu    sync.Mutex
	asked []string      // the methods written and not yet taken, in order
	more  chan struct{} // closed (and replaced) when a method is asked
}

// NewTransport returns a transport that refuses the methods fail and
// answers every other one with an empty result.
func NewTransport(fail ...string) *Transport {
	t := &Transport{fail: map[string]bool{}, replies: make(chan *cdproto.Message, 256), closed: make(chan struct{}), more: make(chan struct{})}
	for _, m := range fail {
		t.fail[m] = true
	}
	return t
}

// Read returns the next reply, or io.EOF once the transport is closed.
func (t *Transport) Read(ctx context.Context, msg *cdproto.Message) error {
	select {
	case m := <-t.replies:
		*msg = *m
		return nil
	case <-t.closed:
		return io.EOF
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Write notes the command's method and queues its reply: an empty result,
// or an error when the method is refused.
func (t *Transport) Write(ctx context.Context, msg *cdproto.Message) error {
	method := string(msg.Method)
	reply := &cdproto.Message{ID: msg.ID, SessionID: msg.SessionID, Result: jsonv2.Value("{}")}
	if t.fail[method] {
		reply = &cdproto.Message{ID: msg.ID, SessionID: msg.SessionID, Error: &cdproto.Error{Code: -32000, Message: method + " refused by the fake browser"}}
	}
	t.mu.Lock()
	t.asked = append(t.asked, method)
	close(t.more)
	t.more = make(chan struct{})
	t.mu.Unlock()
	select {
	case t.replies <- reply:
		return nil
	case <-t.closed:
		return errors.New("fake transport closed")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close ends the transport: the browser is lost. Calling it again does
// nothing more.
func (t *Transport) Close() error {
	t.once.Do(func() { close(t.closed) })
	return nil
}

// Closed is closed once Close was called.
func (t *Transport) Closed() <-chan struct{} { return t.closed }

// WaitAsked waits until the browser was asked method (at most Patience),
// taking the methods asked up to it.
func (t *Transport) WaitAsked(tb testing.TB, method string) {
	tb.Helper()
	timeout := time.After(Patience)
	for {
		t.mu.Lock()
		for len(t.asked) > 0 {
			m := t.asked[0]
			t.asked = t.asked[1:]
			if m == method {
				t.mu.Unlock()
				return
			}
		}
		more := t.more
		t.mu.Unlock()
		select {
		case <-more:
		case <-timeout:
			tb.Fatalf("the browser was not asked %s", method)
		}
	}
}

// Drain returns the methods asked and not yet taken, and takes them.
func (t *Transport) Drain() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.asked
	t.asked = nil
	return out
}

// SourceOptions say what a Source's browsers are like.
type SourceOptions struct {
	// Fresh is the source's Fresh: its browsers are new ones, whose start
	// pages are opened.
	Fresh bool
	// Gone gives its browsers a Gone channel (Browser.Exit closes it),
	// with Reason as their reason, waited for Grace once the connection
	// ended.
	Gone   bool
	Reason string
	Grace  time.Duration
	// EndBlocks: ending a browser waits for End's context to end.
	EndBlocks bool
	// Fail are the methods its browsers refuse.
	Fail []string
	// Starts: the n-th Start (from 0) fails with Starts[n] when that is
	// not nil.
	Starts []error
	// Logger is its connections' logger (nil: discarded).
	Logger *slog.Logger
}

// DefaultReason is a Browser's reason for being gone when
// SourceOptions.Reason is empty.
const DefaultReason = "the browser exited: signal: killed"

// Source is a browsers.Source of fake browsers. It counts its starts and
// ends, and hands the test each browser it started. Its methods are safe
// for concurrent use.
type Source struct {
	o SourceOptions

	mu      sync.Mutex
	starts  int
	ends    int
	started []*Browser    // every browser started, in order
	next    int           // the first of started that Next has not given
	more    chan struct{} // closed (and replaced) when a browser starts
}

// NewSource returns a source of browsers as o says.
func NewSource(o SourceOptions) *Source {
	if o.Reason == "" {
		o.Reason = DefaultReason
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Source{o: o, more: make(chan struct{})}
}

// Browser is one browser a Source started.
type Browser struct {
	// Transport is its fake transport: closing it loses the browser.
	Transport *Transport
	// Conn is its connection, over Transport.
	Conn *cdp.Conn

	gone     chan struct{}
	goneOnce sync.Once
	ended    chan struct{}
	endErr   error // End's context's error, once ended is closed
}

// Start starts a fake browser, or fails as SourceOptions.Starts says.
func (s *Source) Start(ctx context.Context) (*browsers.Browser, error) {
	s.mu.Lock()
	n := s.starts
	s.starts++
	s.mu.Unlock()
	if n < len(s.o.Starts) && s.o.Starts[n] != nil {
		return nil, s.o.Starts[n]
	}
	tr := NewTransport(s.o.Fail...)
	fb := &Browser{Transport: tr, Conn: cdp.NewConn(tr, s.o.Logger), gone: make(chan struct{}), ended: make(chan struct{})}
	p := browsers.Parts{Conn: fb.Conn, Grace: s.o.Grace, End: func(ctx context.Context) error {
		err := fb.Conn.Close()
		if s.o.EndBlocks {
			<-ctx.Done()
			err = ctx.Err()
		}
		fb.endErr = ctx.Err()
		s.mu.Lock()
		s.ends++
		s.mu.Unlock()
		close(fb.ended)
		return err
	}}
	if s.o.Gone {
		reason := s.o.Reason
		p.Gone, p.Reason = fb.gone, func() string { return reason }
	}
	s.mu.Lock()
	s.started = append(s.started, fb)
	close(s.more)
	s.more = make(chan struct{})
	s.mu.Unlock()
	return browsers.New(p), nil
}

// Fresh implements browsers.Source.
func (s *Source) Fresh() bool { return s.o.Fresh }

// String implements browsers.Source.
func (s *Source) String() string { return "a fake browser" }

// Starts returns how many times Start was called, failed starts included.
func (s *Source) Starts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.starts
}

// Ends returns how many of its browsers were ended.
func (s *Source) Ends() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ends
}

// Next waits for the next browser the source started (at most Patience),
// in the order they started: the first call returns the first browser.
func (s *Source) Next(tb testing.TB) *Browser {
	tb.Helper()
	timeout := time.After(Patience)
	for {
		s.mu.Lock()
		if s.next < len(s.started) {
			fb := s.started[s.next]
			s.next++
			s.mu.Unlock()
			return fb
		}
		more := s.more
		s.mu.Unlock()
		select {
		case <-more:
		case <-timeout:
			tb.Fatal("the source started no browser")
			return nil
		}
	}
}

// Lose loses the browser: its transport is closed, as when the browser's
// connection drops.
func (fb *Browser) Lose() { fb.Transport.Close() }

// Exit closes the browser's Gone channel (with SourceOptions.Gone), as
// when its process exits. Calling it again does nothing more.
func (fb *Browser) Exit() { fb.goneOnce.Do(func() { close(fb.gone) }) }

// Ended is closed once the browser was ended (its End called).
func (fb *Browser) Ended() <-chan struct{} { return fb.ended }

// WaitEnded waits until the browser was ended (at most Patience) and
// returns End's context's error.
func (fb *Browser) WaitEnded(tb testing.TB) error {
	tb.Helper()
	select {
	case <-fb.ended:
		return fb.endErr
	case <-time.After(Patience):
		tb.Fatal("the browser was not ended")
		return nil
	}
}
