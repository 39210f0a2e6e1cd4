package cdp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	cdpt "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
)

// patience bounds every wait of these tests, so that a bug hangs a test for
// a while instead of forever. No assertion depends on it.
const patience = 10 * time.Second

// fakeTransport stands in for the browser. Messages the test feeds come out of
// Read one by one; messages the Conn writes are recorded on a channel.
type fakeTransport struct {
	in      chan *cdproto.Message // browser → Conn (unbuffered)
	readErr chan error            // makes Read fail
	out     chan *cdproto.Message // Conn → browser
	closed  chan struct{}
	once    sync.Once

	mu       sync.Mutex
	writeErr error // when set, Write fails with it
}

func newFakeTransport() *fakeTransport {
	return &fakeTransport{
		in:      make(chan *cdproto.Message),
		readErr: make(chan error),
		out:     make(chan *cdproto.Message, 4096),
		closed:  make(chan struct{}),
	}
}

func (f *fakeTransport) Read(ctx context.Context, msg *cdproto.Message) error {
	select {
	case m := <-f.in:
		*msg = *m
		return nil
	case err := <-f.readErr:
		return err
	case <-f.closed:
		return io.EOF
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeTransport) Write(ctx context.Context, msg *cdproto.Message) error {
	f.mu.Lock()
	werr := f.writeErr
	f.mu.Unlock()
	if werr != nil {
		return werr
	}
	m := *msg
	select {
	case f.out <- &m:
		return nil
	case <-f.closed:
		return errors.New("fake transport closed")
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeTransport) failWrites(err error) {
	f.mu.Lock()
	f.writeErr = err
	f.mu.Unlock()
}

func (f *fakeTransport) Close() error {
	f.once.Do(func() { close(f.closed) })
	return nil
}

// feed hands msg to the Conn's reader. The in channel is unbuffered, so when
// feed returns the reader has taken msg, and so has fully dispatched every
// message fed before it.
func (f *fakeTransport) feed(t *testing.T, msg *cdproto.Message) {
	t.Helper()
	select {
	case f.in <- msg:
	case <-time.After(patience):
		t.Fatalf("the reader did not take %+v", msg)
	}
}

// barrier returns once every message fed so far has been dispatched.
func (f *fakeTransport) barrier(t *testing.T) {
	t.Helper()
	f.feed(t, &cdproto.Message{SessionID: "no-such-session", Method: "Test.barrier"})
}

// next returns the next message the Conn wrote.
func (f *fakeTransport) next(t *testing.T) *cdproto.Message {
	t.Helper()
	select {
	case m := <-f.out:
		return m
	case <-time.After(patience):
		t.Fatal("the Conn wrote nothing")
		return nil
	}
}

// noWrites asserts that nothing was written so far.
func (f *fakeTransport) noWrites(t *testing.T) {
	t.Helper()
	select {
	case m := <-f.out:
		t.Fatalf("unexpected write %+v", m)
	default:
	}
}

func (f *fakeTransport) reply(t *testing.T, id int64, result string) {
	t.Helper()
	f.feed(t, &cdproto.Message{ID: id, Result: jsonv2.Value(result)})
}

func newTestConn(t *testing.T) (*Conn, *fakeTransport) {
	t.Helper()
	f := newFakeTransport()
	c := NewConn(f, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { c.Close() })
	return c, f
}

func event(session target.SessionID, method, params string) *cdproto.Message {
	m := &cdproto.Message{SessionID: session, Method: cdproto.MethodType(method)}
	if params != "" {
		m.Params = jsonv2.Value(params)
	}
	return m
}

// callResult is what a Call or Wait run in another goroutine returned.
type callResult struct {
	out map[string]any
	err error
}

func goCall(ctx context.Context, s *Session, method string, params any) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		var out map[string]any
		err := s.Call(ctx, method, params, &out)
		ch <- callResult{out, err}
	}()
	return ch
}

func goWait(ctx context.Context, p *Pending) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		var out map[string]any
		err := p.Wait(ctx, &out)
		ch <- callResult{out, err}
	}()
	return ch
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(patience):
		t.Fatalf("no %s", what)
		var zero T
		return zero
	}
}

func closedWithin(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(patience):
		t.Fatalf("%s was not closed", what)
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func decodeParams(t *testing.T, m *cdproto.Message) map[string]any {
	t.Helper()
	var p map[string]any
	if len(m.Params) == 0 {
		return p
	}
	if err := jsonv2.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("params of %s: %v", m.Method, err)
	}
	return p
}

func TestCallBrowserSession(t *testing.T) {
	c, f := newTestConn(t)
	ctx := context.Background()
	seen := map[int64]bool{}
	for i, tc := range []struct {
		method string
		params any
		result string
		want   float64
	}{
		{"Target.getTargets", map[string]any{"x": 1.0}, `{"n":1}`, 1},
		{"Browser.getVersion", nil, `{"n":2}`, 2},
		{"Target.setDiscoverTargets", map[string]any{"discover": true}, `{"n":3}`, 3},
	} {
		done := goCall(ctx, c.Browser(), tc.method, tc.params)
		m := f.next(t)
		if m.ID == 0 || seen[m.ID] {
			t.Fatalf("call %d: id %d is not fresh (seen %v)", i, m.ID, seen)
		}
		seen[m.ID] = true
		if m.SessionID != "" {
			t.Errorf("call %d: sessionId %q on a browser call", i, m.SessionID)
		}
		if string(m.Method) != tc.method {
			t.Errorf("call %d: method %q, want %q", i, m.Method, tc.method)
		}
		if tc.params == nil && len(m.Params) != 0 {
			t.Errorf("call %d: params %s, want none", i, m.Params)
		}
		if want, ok := tc.params.(map[string]any); ok {
			if got := decodeParams(t, m); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("call %d: params %v, want %v", i, got, want)
			}
		}
		f.reply(t, m.ID, tc.result)
		r := recv(t, done, "result")
		if r.err != nil {
			t.Fatalf("call %d: %v", i, r.err)
		}
		if r.out["n"] != tc.want {
			t.Errorf("call %d: result %v, want n=%v", i, r.out, tc.want)
		}
	}
}

func TestCallErrorReply(t *testing.T) {
	c, f := newTestConn(t)
	done := goCall(context.Background(), c.Browser(), "Foo.bar", nil)
	m := f.next(t)
	f.feed(t, &cdproto.Message{ID: m.ID, Error: &cdproto.Error{Code: -32601, Message: "'Foo.bar' wasn't found"}})
	r := recv(t, done, "result")
	if r.err == nil {
		t.Fatal("an error reply returned no error")
	}
	if !strings.Contains(r.err.Error(), "Foo.bar") {
		t.Errorf("error %q does not name the method", r.err)
	}
	var ce *cdproto.Error
	if !errors.As(r.err, &ce) || ce.Code != -32601 {
		t.Errorf("error %v does not wrap the cdproto.Error", r.err)
	}
}

func TestCallResultNilAndEmpty(t *testing.T) {
	c, f := newTestConn(t)
	ctx := context.Background()
	for _, result := range []string{"", "{}"} {
		p, err := c.Browser().Send("Page.enable", nil)
		if err != nil {
			t.Fatal(err)
		}
		m := f.next(t)
		f.reply(t, m.ID, result)
		if err := p.Wait(ctx, nil); err != nil {
			t.Errorf("result %q: %v", result, err)
		}
	}
}

func TestSendPipelining(t *testing.T) {
	c, f := newTestConn(t)
	methods := []string{"A.one", "B.two", "C.three"}
	var pendings []*Pending
	for _, method := range methods {
		p, err := c.Browser().Send(method, map[string]string{"m": method})
		if err != nil {
			t.Fatal(err)
		}
		pendings = append(pendings, p)
	}
	// All three are written, in order, before any reply.
	var writes []*cdproto.Message
	for i, method := range methods {
		m := f.next(t)
		if string(m.Method) != method {
			t.Fatalf("write %d is %q, want %q", i, m.Method, method)
		}
		if i > 0 && m.ID <= writes[i-1].ID {
			t.Errorf("write %d: id %d not after %d", i, m.ID, writes[i-1].ID)
		}
		writes = append(writes, m)
	}
	f.noWrites(t)

	// Replies out of order still reach the right Pending.
	for _, i := range []int{2, 0, 1} {
		f.reply(t, writes[i].ID, fmt.Sprintf(`{"method":%q}`, methods[i]))
	}
	for i, p := range pendings {
		var out struct {
			Method string `json:"method"`
		}
		if err := p.Wait(context.Background(), &out); err != nil {
			t.Fatalf("pending %d: %v", i, err)
		}
		if out.Method != methods[i] {
			t.Errorf("pending %d got the reply of %q, want %q", i, out.Method, methods[i])
		}
	}
}

func TestWaitHonoursContext(t *testing.T) {
	c, f := newTestConn(t)

	t.Run("already canceled", func(t *testing.T) {
		p, err := c.Browser().Send("Slow.call", nil)
		if err != nil {
			t.Fatal(err)
		}
		f.next(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := p.Wait(ctx, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("Wait = %v, want context.Canceled", err)
		}
	})

	t.Run("canceled while waiting", func(t *testing.T) {
		p, err := c.Browser().Send("Slow.call", nil)
		if err != nil {
			t.Fatal(err)
		}
		m := f.next(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := goWait(ctx, p)
		cancel()
		if r := recv(t, done, "Wait result"); !errors.Is(r.err, context.Canceled) {
			t.Errorf("Wait = %v, want context.Canceled", r.err)
		}
		// The call is forgotten at once, not when (or if) the browser answers.
		if n := pendingCount(c); n != 0 {
			t.Errorf("%d calls still pending after their waiter gave up", n)
		}
		// A late reply is harmless, and a later Wait says the call was
		// given up instead of blocking.
		f.reply(t, m.ID, `{"late":true}`)
		f.barrier(t)
		ctx2, cancel2 := context.WithTimeout(context.Background(), patience)
		defer cancel2()
		if err := p.Wait(ctx2, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("later Wait = %v, want the first Wait's context.Canceled", err)
		}
	})

	t.Run("Call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := goCall(ctx, c.Browser(), "Slow.call", nil)
		f.next(t)
		cancel()
		if r := recv(t, done, "Call result"); !errors.Is(r.err, context.Canceled) {
			t.Errorf("Call = %v, want context.Canceled", r.err)
		}
	})
}

// recorder collects what a session handler sees.
type recorder struct {
	mu   sync.Mutex
	msgs []*cdproto.Message
}

func (r *recorder) handle(m *cdproto.Message) {
	r.mu.Lock()
	r.msgs = append(r.msgs, m)
	r.mu.Unlock()
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, m := range r.msgs {
		out = append(out, string(m.SessionID)+" "+string(m.Method)+" "+string(m.Params))
	}
	return out
}

func TestSetHandlerSeesOwnSessionInOrder(t *testing.T) {
	c, f := newTestConn(t)
	a, b := c.Attach("A"), c.Attach("B")
	var rb, ra, rbb recorder
	c.Browser().SetHandler(rb.handle)
	a.SetHandler(ra.handle)
	b.SetHandler(rbb.handle)

	feedOrder := []*cdproto.Message{
		event("A", "X.one", `{"i":1}`),
		event("B", "X.one", `{"i":1}`),
		event("", "Target.targetCreated", `{"i":1}`),
		event("A", "X.two", `{"i":2}`),
		event("unknown", "X.one", `{"i":9}`),
		event("A", "X.three", `{"i":3}`),
		event("B", "X.two", `{"i":2}`),
		{ID: 12345, Result: jsonv2.Value(`{}`)}, // a reply nobody waits for
	}
	for _, m := range feedOrder {
		f.feed(t, m)
	}
	f.barrier(t)

	for _, tc := range []struct {
		name string
		r    *recorder
		want []string
	}{
		{"browser", &rb, []string{` Target.targetCreated {"i":1}`}},
		{"A", &ra, []string{`A X.one {"i":1}`, `A X.two {"i":2}`, `A X.three {"i":3}`}},
		{"B", &rbb, []string{`B X.one {"i":1}`, `B X.two {"i":2}`}},
	} {
		if got := tc.r.got(); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s saw %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestSubscribe(t *testing.T) {
	c, f := newTestConn(t)
	s := c.Attach("S")
	events, cancel := s.Subscribe("Page.thing")

	// A burst of 1000 while nobody reads: the reader must not stall, and
	// nothing is lost. Other methods and sessions are interleaved.
	const n = 1000
	for i := range n {
		f.feed(t, event("S", "Page.thing", fmt.Sprintf(`{"i":%d}`, i)))
		if i%100 == 0 {
			f.feed(t, event("S", "Page.other", `{"i":-1}`))
			f.feed(t, event("", "Page.thing", `{"i":-2}`))
		}
	}
	f.barrier(t)
	for i := range n {
		v := recv(t, events, fmt.Sprintf("event %d", i))
		var ev struct {
			I int `json:"i"`
		}
		if err := jsonv2.Unmarshal(v, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.I != i {
			t.Fatalf("event %d is %s", i, v)
		}
	}

	// After cancel, the channel closes without delivering anything more.
	cancel()
	f.feed(t, event("S", "Page.thing", `{"i":"after"}`))
	f.barrier(t)
	for {
		select {
		case v, ok := <-events:
			if ok {
				t.Fatalf("an event after cancel: %s", v)
			}
			return
		case <-time.After(patience):
			t.Fatal("the subscription's channel did not close after cancel")
		}
	}
}

func TestSubscribeClosedSession(t *testing.T) {
	c, f := newTestConn(t)
	s := c.Attach("S")
	events, _ := s.Subscribe("Page.thing")
	c.detach("S")
	if _, ok := <-events; ok {
		t.Error("a subscription outlived its session")
	}
	late, cancel := s.Subscribe("Page.thing")
	defer cancel()
	f.barrier(t)
	if _, ok := <-late; ok {
		t.Error("Subscribe on a closed session delivered an event")
	}
}

func TestAttachFromHandler(t *testing.T) {
	c, f := newTestConn(t)
	var child recorder
	attached := make(chan *Session, 1)
	c.Browser().SetHandler(func(m *cdproto.Message) {
		if m.Method != cdproto.EventTargetAttachedToTarget {
			return
		}
		var ev target.EventAttachedToTarget
		if err := jsonv2.Unmarshal(m.Params, &ev); err != nil {
			t.Errorf("attachedToTarget: %v", err)
			return
		}
		s := c.Attach(ev.SessionID)
		s.SetHandler(child.handle)
		attached <- s
	})

	f.feed(t, event("", "Target.attachedToTarget",
		`{"sessionId":"NEW","targetInfo":{"targetId":"T1","type":"page","title":"","url":"about:blank","attached":true,"canAccessOpener":false},"waitingForDebugger":true}`))
	f.feed(t, event("NEW", "Runtime.executionContextCreated", `{"first":true}`))
	f.barrier(t)

	s := recv(t, attached, "attached session")
	if s.ID() != "NEW" {
		t.Errorf("attached session id %q", s.ID())
	}
	want := []string{`NEW Runtime.executionContextCreated {"first":true}`}
	if got := child.got(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the new session saw %q, want %q", got, want)
	}
}

func TestDetach(t *testing.T) {
	c, f := newTestConn(t)
	a, b := c.Attach("A"), c.Attach("B")
	ctx := context.Background()

	pa1, err := a.Send("Runtime.evaluate", nil)
	if err != nil {
		t.Fatal(err)
	}
	pa2, err := a.Send("Page.navigate", nil)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := b.Send("Runtime.evaluate", nil)
	if err != nil {
		t.Fatal(err)
	}
	pbrowser, err := c.Browser().Send("Target.getTargets", nil)
	if err != nil {
		t.Fatal(err)
	}
	writes := map[target.SessionID][]int64{}
	for range 4 {
		m := f.next(t)
		writes[m.SessionID] = append(writes[m.SessionID], m.ID)
	}

	c.detach("A")

	for i, p := range []*Pending{pa1, pa2} {
		if err := p.Wait(ctx, nil); !errors.Is(err, ErrTargetGone) {
			t.Errorf("call %d on the detached session: %v, want ErrTargetGone", i, err)
		}
	}
	closedWithin(t, a.Closed(), "the detached session's Closed")
	if isClosed(b.Closed()) || isClosed(c.Browser().Closed()) {
		t.Error("detaching A closed another session")
	}
	if _, err := a.Send("Runtime.evaluate", nil); !errors.Is(err, ErrTargetGone) {
		t.Errorf("Send on a detached session: %v, want ErrTargetGone", err)
	}
	if err := a.Call(ctx, "Runtime.evaluate", nil, nil); !errors.Is(err, ErrTargetGone) {
		t.Errorf("Call on a detached session: %v, want ErrTargetGone", err)
	}
	f.noWrites(t)

	// A reply for a failed call of A, arriving late, is ignored.
	f.reply(t, writes["A"][0], `{}`)

	// The other sessions' calls are still in flight and complete normally.
	f.reply(t, writes["B"][0], `{"who":"B"}`)
	f.reply(t, writes[""][0], `{"who":"browser"}`)
	for _, tc := range []struct {
		p    *Pending
		want string
	}{{pb, "B"}, {pbrowser, "browser"}} {
		var out struct {
			Who string `json:"who"`
		}
		if err := tc.p.Wait(ctx, &out); err != nil || out.Who != tc.want {
			t.Errorf("call of %s: %+v, %v", tc.want, out, err)
		}
	}

	// Detaching an unknown session is harmless.
	c.detach("nobody")
	c.detach("A")
}

func TestReadErrorEndsConn(t *testing.T) {
	c, f := newTestConn(t)
	a := c.Attach("A")
	ctx := context.Background()
	pb, err := c.Browser().Send("Target.getTargets", nil)
	if err != nil {
		t.Fatal(err)
	}
	pa, err := a.Send("Runtime.evaluate", nil)
	if err != nil {
		t.Fatal(err)
	}
	f.next(t)
	f.next(t)
	if c.Err() != nil {
		t.Fatalf("Err = %v while the connection is up", c.Err())
	}
	if isClosed(c.Done()) {
		t.Fatal("Done closed while the connection is up")
	}

	select {
	case f.readErr <- io.EOF:
	case <-time.After(patience):
		t.Fatal("the reader did not take the error")
	}
	closedWithin(t, c.Done(), "Done")

	err = c.Err()
	if err == nil || !errors.Is(err, io.EOF) {
		t.Errorf("Err = %v, want one wrapping io.EOF", err)
	}
	for name, p := range map[string]*Pending{"browser": pb, "A": pa} {
		if err := p.Wait(ctx, nil); !errors.Is(err, ErrClosed) {
			t.Errorf("in-flight call on %s: %v, want ErrClosed", name, err)
		}
	}
	for name, s := range map[string]*Session{"browser": c.Browser(), "A": a} {
		closedWithin(t, s.Closed(), name+" Closed")
		if _, err := s.Send("Runtime.evaluate", nil); !errors.Is(err, ErrClosed) {
			t.Errorf("Send on %s after the end: %v, want ErrClosed", name, err)
		}
	}
	f.noWrites(t)
}

func TestCloseEndsConn(t *testing.T) {
	c, _ := newTestConn(t)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if !isClosed(c.Done()) {
		t.Error("Done is open after Close")
	}
	if c.Err() == nil {
		t.Error("Err is nil after Close")
	}
	if _, err := c.Browser().Send("Browser.getVersion", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close: %v, want ErrClosed", err)
	}
}

// pendingCount returns how many calls c still waits for.
func pendingCount(c *Conn) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// TestWaitGivingUpForgetsCall is the regression test of a leak: a Wait that
// gave up on its context left the call in Conn.pending until the browser
// answered, or forever.
func TestWaitGivingUpForgetsCall(t *testing.T) {
	c, f := newTestConn(t)
	s := c.Attach("S")
	const n = 50
	var ids []int64
	for i := range n {
		ctx, cancel := context.WithCancel(context.Background())
		if i%2 == 0 {
			cancel() // already over
		}
		done := goCall(ctx, s, "Never.answered", nil)
		ids = append(ids, f.next(t).ID)
		cancel()
		r := recv(t, done, "Call result")
		if !errors.Is(r.err, context.Canceled) {
			t.Fatalf("Call %d = %v, want context.Canceled", i, r.err)
		}
		if !strings.Contains(fmt.Sprint(r.err), "Never.answered") {
			t.Errorf("Call %d: error %q does not name the method", i, r.err)
		}
	}
	if left := pendingCount(c); left != 0 {
		t.Errorf("%d of %d abandoned calls still pending", left, n)
	}
	// Late answers, and a late detach, are harmless.
	for _, id := range ids {
		f.reply(t, id, `{}`)
	}
	c.detach("S")
	f.barrier(t)
	if left := pendingCount(c); left != 0 {
		t.Errorf("%d calls pending after the late answers", left)
	}
}

func TestWriteErrorFailsSend(t *testing.T) {
	c, f := newTestConn(t)
	broken := errors.New("broken pipe")
	f.failWrites(broken)
	_, err := c.Browser().Send("Browser.getVersion", nil)
	if !errors.Is(err, broken) || !strings.Contains(err.Error(), "Browser.getVersion") {
		t.Errorf("Send with a failing write: %v, want one wrapping %v and naming the method", err, broken)
	}
	if left := pendingCount(c); left != 0 {
		t.Errorf("%d calls left pending after a failed write", left)
	}

	// The connection is still usable once writes work again.
	f.failWrites(nil)
	done := goCall(context.Background(), c.Browser(), "Browser.getVersion", nil)
	m := f.next(t)
	f.reply(t, m.ID, `{"product":"fake"}`)
	if r := recv(t, done, "result"); r.err != nil || r.out["product"] != "fake" {
		t.Errorf("Call after writes recovered: %v, %v", r.out, r.err)
	}
}

func TestSendEncodingError(t *testing.T) {
	c, f := newTestConn(t)
	_, err := c.Browser().Send("Bad.params", map[string]any{"ch": make(chan int)})
	if err == nil || !strings.Contains(err.Error(), "Bad.params") {
		t.Errorf("Send with unencodable params: %v", err)
	}
	f.noWrites(t)
}

func TestTypedCommandOnSession(t *testing.T) {
	c, f := newTestConn(t)
	s := c.Attach("PAGE")
	type typed struct {
		res *runtime.EvaluateResult
		err error
	}
	done := make(chan typed, 1)
	go func() {
		res, err := cdpt.Call(context.Background(), s, runtime.Evaluate, runtime.EvaluateParams{Expression: "1"})
		done <- typed{&res, err}
	}()
	m := f.next(t)
	if m.Method != "Runtime.evaluate" {
		t.Errorf("method %q, want Runtime.evaluate", m.Method)
	}
	if m.SessionID != "PAGE" {
		t.Errorf("sessionId %q, want PAGE", m.SessionID)
	}
	if p := decodeParams(t, m); p["expression"] != "1" {
		t.Errorf("params %s", m.Params)
	}
	f.reply(t, m.ID, `{"result":{"type":"number","value":1,"description":"1"}}`)
	r := recv(t, done, "typed result")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.Result == nil || r.res.Result.Type != runtime.RemoteObjectTypeNumber || string(r.res.Result.Value) != "1" {
		t.Errorf("result %+v", r.res.Result)
	}
}
