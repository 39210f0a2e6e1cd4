// Package cdp speaks the Chrome DevTools Protocol for webmcp-cdp: it launches
// or attaches to a browser, follows every target (tabs, popups, out-of-process
// frames, new documents after navigation), injects the page script, reads the
// tools of each document, and runs them. Nothing here knows about MCP.
//
// It uses chromedp's transports (a pipe for launch, a WebSocket for
// --auto-connect), its own WebSocket transport for attach (remote.go: headers
// and TLS), and cdproto's types, with a small flat-session multiplexer of its own:
// chromedp's high-level Target layer ignores sessions it did not create, and
// auto-attached popups and frames must be set up before they run.
package cdp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// ErrClosed is the error of calls on a connection or session that ended.
var ErrClosed = errors.New("the browser connection is closed")

// ErrTargetGone is the error of calls in flight when their target detached
// (the tab or frame was closed).
var ErrTargetGone = errors.New("the tab was closed")

// Conn multiplexes flat CDP sessions over one transport. One goroutine reads;
// event handlers run on it, in order, and must not block. A Conn may be a
// view of another's transport (NewView): a browser-level session of its
// own, so that several Browsers, each following its own browser context,
// share one connection, a launched browser's pipe included.
type Conn struct {
	*wire
	// browser is this Conn's browser-level session: the root session, or a
	// view's session attached to the browser target.
	browser *Session
	// done is closed when the connection ends, or the view is closed.
	done chan struct{}
	// closing is closed by a view's Close (nil for the root Conn).
	closing chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// wire is the transport and its sessions, shared by a Conn and its views.
type wire struct {
	t      chromedp.Transport
	logger *slog.Logger
	nextID atomic.Int64

	mu       sync.Mutex
	pending  map[int64]*Pending
	sessions map[target.SessionID]*Session
	err      error

	// ended is closed when the reader stops.
	ended chan struct{}
	// root is the transport's own browser-level session.
	root *Session
}

// NewConn starts reading t. Close it with Close.
func NewConn(t chromedp.Transport, logger *slog.Logger) *Conn {
	w := &wire{
		t:        t,
		logger:   logger,
		pending:  make(map[int64]*Pending),
		sessions: make(map[target.SessionID]*Session),
		ended:    make(chan struct{}),
	}
	c := &Conn{wire: w, done: w.ended}
	c.browser = c.newSession("")
	w.root = c.browser
	go c.read()
	return c
}

// NewView attaches a browser-level session of its own to the browser
// behind c (Target.attachToBrowserTarget) and returns it as a Conn over
// c's transport: what it auto-attaches, the browser contexts it makes and
// the sessions it follows are its own, as on a second connection, but no
// second socket or debugging port is needed. Closing the view detaches its
// session and leaves c open; when c ends, so does the view.
func (c *Conn) NewView(ctx context.Context) (*Conn, error) {
	var res target.AttachToBrowserTargetResult
	if err := c.browser.Call(ctx, target.CommandAttachToBrowserTarget, nil, &res); err != nil {
		return nil, fmt.Errorf("attaching a session of its own to the browser (Target.attachToBrowserTarget): %w", err)
	}
	// Nothing is sent on the new session before it exists here: it gets
	// no message until this view asks for something.
	v := &Conn{wire: c.wire, done: make(chan struct{}), closing: make(chan struct{})}
	v.browser = v.newSession(res.SessionID)
	go func() {
		defer close(v.done)
		select {
		case <-c.wire.ended:
		case <-v.closing:
		case <-v.browser.Closed():
		}
	}()
	return v, nil
}

// Browser returns the browser-level session.
func (c *Conn) Browser() *Session { return c.browser }

// Done is closed when the connection ends (or the view is closed, or the
// browser detached its session); Err then says why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended, or nil while it is up.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil && c.closing != nil {
		select {
		case <-c.done:
			return ErrClosed
		default:
		}
	}
	return c.err
}

// Close closes the transport and waits for the reader to stop; a view's
// Close detaches its browser session instead, and the transport stays.
// Calling it again returns the first call's result.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		if c.closing != nil {
			id := c.browser.ID()
			close(c.closing)
			ctx, cancel := context.WithTimeout(context.Background(), viewDetachTimeout)
			defer cancel()
			if p, err := c.root.Send(target.CommandDetachFromTarget, &target.DetachFromTargetParams{SessionID: id}); err == nil {
				p.Wait(ctx, nil)
			}
			c.detach(id)
			<-c.done
			return
		}
		if err := c.t.Close(); err != nil {
			c.closeErr = fmt.Errorf("closing the browser connection: %w", err)
		}
		<-c.done
	})
	return c.closeErr
}

// viewDetachTimeout bounds the detaching of a view's session.
const viewDetachTimeout = 5 * time.Second

// Attach registers a flat session. It must be called from an event handler
// of the reader (Target.attachedToTarget), so that no message of the session
// is read before it exists.
func (c *Conn) Attach(id target.SessionID) *Session {
	return c.newSession(id)
}

func (c *Conn) newSession(id target.SessionID) *Session {
	s := &Session{c: c, id: id, subs: make(map[string][]subscriber), closed: make(chan struct{})}
	c.mu.Lock()
	if c.err != nil {
		// The connection ended: the session can never get a message.
		c.mu.Unlock()
		s.close()
		return s
	}
	old := c.sessions[id]
	c.sessions[id] = s
	c.mu.Unlock()
	if old != nil {
		// The browser attached the same session id twice: the new Session
		// takes over, and the old one ends so its subscriptions do not leak.
		c.logger.Warn("a session was attached twice; the first one is closed", "session", id)
		old.close()
	}
	return s
}

// detach forgets a session and fails the calls it has in flight.
func (c *Conn) detach(id target.SessionID) {
	c.mu.Lock()
	s, ok := c.sessions[id]
	delete(c.sessions, id)
	var failed []*Pending
	for pid, p := range c.pending {
		if p.session == id {
			failed = append(failed, p)
			delete(c.pending, pid)
		}
	}
	c.mu.Unlock()
	for _, p := range failed {
		p.finish(nil, ErrTargetGone)
	}
	if ok {
		s.close()
	}
}

func (c *Conn) read() {
	defer close(c.ended)
	for {
		msg := new(cdproto.Message)
		if err := c.t.Read(context.Background(), msg); err != nil {
			// The transports read a whole message before decoding it, so
			// after a message that is not JSON the next one is intact.
			if _, ok := errors.AsType[*jsonv2.SyntacticError](err); ok {
				c.logger.Error("skipped a message from the browser that is not valid JSON", "err", err)
				continue
			}
			c.fail(err)
			return
		}
		if msg.ID != 0 {
			c.mu.Lock()
			p := c.pending[msg.ID]
			delete(c.pending, msg.ID)
			c.mu.Unlock()
			if p != nil {
				if msg.Error != nil {
					p.finish(nil, msg.Error)
				} else {
					p.finish(msg.Result, nil)
				}
			}
			continue
		}
		c.mu.Lock()
		s := c.sessions[msg.SessionID]
		c.mu.Unlock()
		if s != nil {
			s.dispatch(msg)
		}
	}
}

func (c *Conn) fail(err error) {
	c.mu.Lock()
	c.err = fmt.Errorf("the browser connection ended: %w", err)
	pending := c.pending
	c.pending = make(map[int64]*Pending)
	sessions := c.sessions
	c.sessions = make(map[target.SessionID]*Session)
	c.mu.Unlock()
	for _, p := range pending {
		p.finish(nil, fmt.Errorf("%w: %w", ErrClosed, err))
	}
	for _, s := range sessions {
		s.close()
	}
}

// Session is one flat session: the browser's, or one target's. It satisfies
// cdproto's cdp.Session, so the typed commands of cdproto work on it.
type Session struct {
	c  *Conn
	id target.SessionID

	// handler sees every event first, on the reader goroutine.
	handler atomic.Pointer[func(*cdproto.Message)]

	mu     sync.Mutex
	subs   map[string][]subscriber
	closed chan struct{}
	once   sync.Once
}

// ID returns the session id ("" for the browser session).
func (s *Session) ID() target.SessionID { return s.id }

// Closed is closed when the session detaches or the connection ends.
func (s *Session) Closed() <-chan struct{} { return s.closed }

// SetHandler sets the function that sees every event of the session, on the
// reader goroutine, before subscribers. It must not block.
func (s *Session) SetHandler(f func(*cdproto.Message)) { s.handler.Store(&f) }

func (s *Session) close() {
	s.once.Do(func() {
		close(s.closed)
		s.mu.Lock()
		subs := s.subs
		s.subs = nil
		s.mu.Unlock()
		for _, list := range subs {
			for _, sub := range list {
				sub.stop()
			}
		}
	})
}

func (s *Session) dispatch(msg *cdproto.Message) {
	if h := s.handler.Load(); h != nil {
		(*h)(msg)
	}
	s.mu.Lock()
	subs := s.subs[string(msg.Method)]
	s.mu.Unlock()
	for _, sub := range subs {
		sub.push(msg)
	}
}

// Pending is a command that was written and whose response is awaited.
type Pending struct {
	c       *Conn
	id      int64
	session target.SessionID
	done    chan struct{}
	result  jsonv2.Value
	err     error
	method  string
}

// finish completes p. Only the one who removed p from Conn.pending calls it,
// so it runs once.
func (p *Pending) finish(result jsonv2.Value, err error) {
	p.result, p.err = result, err
	close(p.done)
}

// Wait waits for the response and decodes it into result (which may be nil).
//
// When ctx ends first, the command is given up: the connection forgets it
// (its response, if one comes, is dropped), and this and every later Wait
// return the context's error, unless the answer arrived at the same moment.
func (p *Pending) Wait(ctx context.Context, result any) error {
	select {
	case <-p.done:
	case <-ctx.Done():
		p.abandon(ctx.Err())
		// The reader, a detach or the end of the connection may have taken
		// p a moment before: then p.done is closed, or about to be, and
		// p.err is theirs.
		<-p.done
	}
	if p.err != nil {
		return fmt.Errorf("%s: %w", p.method, p.err)
	}
	if result == nil || len(p.result) == 0 {
		return nil
	}
	if err := decode(p.result, result); err != nil {
		return fmt.Errorf("decoding the result of %s: %w", p.method, err)
	}
	return nil
}

// abandon forgets p, unless the connection took it to finish it already.
func (p *Pending) abandon(cause error) {
	c := p.c
	c.mu.Lock()
	mine := c.pending[p.id] == p
	if mine {
		delete(c.pending, p.id)
	}
	c.mu.Unlock()
	if mine {
		p.finish(nil, fmt.Errorf("gave up waiting for the answer: %w", cause))
	}
}

// decode decodes JSON from the browser as the transport reads it: a page's
// strings (a title, a dialog's message, a tool's result) may hold lone
// surrogates, which CDP escapes as \ud800, and they decode as U+FFFD
// rather than failing the whole message.
func decode(data []byte, v any) error {
	return jsonv2.Unmarshal(data, v, jsonv2.AllowInvalidUTF8(true))
}

// Send writes a command and returns at once; Wait on the result. Sending
// several commands before waiting pipelines them.
func (s *Session) Send(method string, params any) (*Pending, error) {
	c := s.c
	var raw jsonv2.Value
	if v, ok := params.(jsonv2.Value); ok {
		raw = v // rendered by the caller (invokeParams)
	} else if params != nil {
		b, err := jsonv2.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", method, err)
		}
		raw = b
	}
	id := c.nextID.Add(1)
	p := &Pending{c: c, id: id, session: s.id, done: make(chan struct{}), method: method}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	// A session that detached stays gone even if the browser reuses its id.
	if c.sessions[s.id] != s {
		c.mu.Unlock()
		return nil, ErrTargetGone
	}
	c.pending[id] = p
	c.mu.Unlock()
	msg := &cdproto.Message{ID: id, SessionID: s.id, Method: cdproto.MethodType(method), Params: raw}
	if err := c.t.Write(context.Background(), msg); err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, fmt.Errorf("sending %s: %w", method, err)
	}
	return p, nil
}

// Call sends a command and waits for its result. It satisfies cdp.Session.
func (s *Session) Call(ctx context.Context, method string, params, result any) error {
	p, err := s.Send(method, params)
	if err != nil {
		return err
	}
	return p.Wait(ctx, result)
}

// Subscribe satisfies cdp.Session: the events of method are buffered, without
// loss, from now until cancel is called or the session closes.
func (s *Session) Subscribe(method string) (<-chan jsonv2.Value, func()) {
	sub := newSubscription(func(m *cdproto.Message) jsonv2.Value { return m.Params })
	return sub.out, s.subscribe(sub, method)
}

// Events is Subscribe for several methods on one channel: their events
// come in the order the browser sent them, which separate subscriptions
// do not keep (a select over two channels picks either).
func (s *Session) Events(methods ...string) (<-chan *cdproto.Message, func()) {
	sub := newSubscription(func(m *cdproto.Message) *cdproto.Message { return m })
	return sub.out, s.subscribe(sub, methods...)
}

// subscribe adds sub under methods and returns the func that removes it.
func (s *Session) subscribe(sub subscriber, methods ...string) func() {
	s.mu.Lock()
	if s.subs == nil {
		s.mu.Unlock()
		sub.stop()
		return func() {}
	}
	for _, m := range methods {
		s.subs[m] = append(s.subs[m], sub)
	}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		for _, m := range methods {
			list := s.subs[m]
			for i, x := range list {
				if x == sub {
					s.subs[m] = append(list[:i:i], list[i+1:]...)
					break
				}
			}
		}
		s.mu.Unlock()
		sub.stop()
	}
}

// subscriber is a subscription as the session's dispatch sees it.
type subscriber interface {
	push(msg *cdproto.Message)
	stop()
}

// subscription buffers events without bound between the reader and a
// consumer, so a slow consumer never stalls the connection.
type subscription[T any] struct {
	conv  func(*cdproto.Message) T
	mu    sync.Mutex
	queue []T
	wake  chan struct{}
	out   chan T
	quit  chan struct{}
	once  sync.Once
}

func newSubscription[T any](conv func(*cdproto.Message) T) *subscription[T] {
	sub := &subscription[T]{conv: conv, wake: make(chan struct{}, 1), out: make(chan T), quit: make(chan struct{})}
	go sub.pump()
	return sub
}

func (sub *subscription[T]) push(msg *cdproto.Message) {
	sub.mu.Lock()
	sub.queue = append(sub.queue, sub.conv(msg))
	sub.mu.Unlock()
	select {
	case sub.wake <- struct{}{}:
	default:
	}
}

func (sub *subscription[T]) stop() { sub.once.Do(func() { close(sub.quit) }) }

func (sub *subscription[T]) pump() {
	defer close(sub.out)
	for {
		sub.mu.Lock()
		var next T
		have := len(sub.queue) > 0
		if have {
			next = sub.queue[0]
			sub.queue = sub.queue[1:]
		}
		sub.mu.Unlock()
		if !have {
			select {
			case <-sub.wake:
				continue
			case <-sub.quit:
				return
			}
		}
		select {
		case sub.out <- next:
		case <-sub.quit:
			return
		}
	}
}
