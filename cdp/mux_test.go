package cdp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"
)

// These tests cover the flat-session multiplexer with a fake transport:
// sessions coming and going, messages nobody expects, a transport that fails,
// and many goroutines at once.

func TestSessionReusedAfterDetach(t *testing.T) {
	c, f := newTestConn(t)
	ctx := context.Background()
	old := c.Attach("A")
	var oldSaw, newSaw recorder
	old.SetHandler(oldSaw.handle)
	oldEvents, _ := old.Subscribe("X.ev")
	pold, err := old.Send("Old.call", nil)
	if err != nil {
		t.Fatal(err)
	}
	oldID := f.next(t).ID

	c.detach("A")
	if err := pold.Wait(ctx, nil); !errors.Is(err, ErrTargetGone) {
		t.Errorf("call of the detached session: %v, want ErrTargetGone", err)
	}
	// Events of a detached session are dropped.
	f.feed(t, event("A", "X.ev", `{"when":"detached"}`))
	f.barrier(t)

	// The browser reuses the id for a new session.
	fresh := c.Attach("A")
	fresh.SetHandler(newSaw.handle)
	f.feed(t, event("A", "X.ev", `{"when":"reattached"}`))
	f.barrier(t)

	if got := oldSaw.got(); len(got) != 0 {
		t.Errorf("the detached session saw %q", got)
	}
	if want := []string{`A X.ev {"when":"reattached"}`}; fmt.Sprint(newSaw.got()) != fmt.Sprint(want) {
		t.Errorf("the new session saw %q, want %q", newSaw.got(), want)
	}
	if _, ok := <-oldEvents; ok {
		t.Error("the detached session's subscription delivered an event")
	}
	// The old Session value must not write on the new session.
	if _, err := old.Send("Old.again", nil); !errors.Is(err, ErrTargetGone) {
		t.Errorf("Send on the detached Session after its id was reused: %v, want ErrTargetGone", err)
	}
	f.noWrites(t)
	if isClosed(fresh.Closed()) {
		t.Error("the new session is closed")
	}
	// A late answer to the old session's call does not reach the new one.
	done := goCall(ctx, fresh, "New.call", nil)
	m := f.next(t)
	if m.SessionID != "A" {
		t.Errorf("the new session wrote with sessionId %q", m.SessionID)
	}
	f.reply(t, oldID, `{"who":"old"}`)
	f.reply(t, m.ID, `{"who":"new"}`)
	if r := recv(t, done, "result"); r.err != nil || r.out["who"] != "new" {
		t.Errorf("the new session's call: %v, %v", r.out, r.err)
	}
}

// TestAttachTwiceClosesTheFirst: a second attachedToTarget for a session id
// that is still attached replaces the first Session; the first one is closed,
// so its subscriptions end instead of leaking.
func TestAttachTwiceClosesTheFirst(t *testing.T) {
	c, f := newTestConn(t)
	first := c.Attach("A")
	events, _ := first.Subscribe("X.ev")
	second := c.Attach("A")
	closedWithin(t, first.Closed(), "the replaced session's Closed")
	if _, ok := <-events; ok {
		t.Error("the replaced session's subscription delivered an event")
	}
	if isClosed(second.Closed()) {
		t.Error("the new session is closed")
	}
	done := goCall(context.Background(), second, "X.call", nil)
	f.reply(t, f.next(t).ID, `{}`)
	if r := recv(t, done, "result"); r.err != nil {
		t.Error(r.err)
	}
}

// TestOddMessages feeds messages nobody expects, or that are malformed; none
// may crash the reader or disturb the calls in flight.
func TestOddMessages(t *testing.T) {
	big := `{"data":"` + strings.Repeat("x", 8<<20) + `"}`
	for _, tc := range []struct {
		name string
		msg  *cdproto.Message
	}{
		{"event of an unknown session", event("nobody", "X.ev", `{}`)},
		{"event without a method", event("", "", `{}`)},
		{"event with garbage params", event("", "X.ev", `not json`)},
		{"oversized event", event("", "X.ev", big)},
		{"answer nobody waits for", &cdproto.Message{ID: 1 << 40, Result: jsonv2.Value(`{}`)}},
		{"negative id", &cdproto.Message{ID: -1, Result: jsonv2.Value(`{}`)}},
		{"error for an unknown id", &cdproto.Message{ID: 1 << 41, Error: &cdproto.Error{Code: 1, Message: "x"}}},
		{"empty message", &cdproto.Message{}},
		{"answer with a session id", &cdproto.Message{ID: 1 << 42, SessionID: "nobody", Result: jsonv2.Value(`{}`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := newTestConn(t)
			events, cancel := c.Browser().Subscribe("X.ev")
			defer cancel()
			p, err := c.Browser().Send("Still.works", nil)
			if err != nil {
				t.Fatal(err)
			}
			m := f.next(t)
			f.feed(t, tc.msg)
			f.reply(t, m.ID, `{"ok":true}`)
			var out map[string]any
			if err := p.Wait(context.Background(), &out); err != nil || out["ok"] != true {
				t.Errorf("the call in flight: %v, %v", out, err)
			}
			if tc.msg.Method == "X.ev" && tc.msg.SessionID == "" {
				if v := recv(t, events, "the event"); len(v) != len(tc.msg.Params) {
					t.Errorf("the event arrived with %d bytes of params, want %d", len(v), len(tc.msg.Params))
				}
			}
			if isClosed(c.Done()) {
				t.Errorf("the connection ended: %v", c.Err())
			}
		})
	}
}

func TestGarbageResult(t *testing.T) {
	c, f := newTestConn(t)
	for _, tc := range []struct {
		name   string
		result string
	}{
		{"not JSON", `{"broken`},
		{"wrong type", `{"n":"not a number"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := c.Browser().Send("Odd.result", nil)
			if err != nil {
				t.Fatal(err)
			}
			f.reply(t, f.next(t).ID, tc.result)
			var out struct {
				N int `json:"n"`
			}
			err = p.Wait(context.Background(), &out)
			if err == nil || !strings.Contains(err.Error(), "Odd.result") {
				t.Errorf("Wait = %v, want a decoding error naming the method", err)
			}
		})
	}
}

// TestLoneSurrogateResult: a page can hand back a string with a lone
// surrogate, which CDP escapes as \ud800; it decodes with U+FFFD in its
// place rather than failing the call.
func TestLoneSurrogateResult(t *testing.T) {
	c, f := newTestConn(t)
	p, err := c.Browser().Send("Runtime.callFunctionOn", nil)
	if err != nil {
		t.Fatal(err)
	}
	f.reply(t, f.next(t).ID, `{"result":{"type":"string","value":"string:a\ud800b"}}`)
	var out bridgeAnswer
	if err := p.Wait(context.Background(), &out); err != nil {
		t.Fatalf("Wait = %v, want the answer", err)
	}
	if v := out.Result.Value; v == nil || *v != "string:a\uFFFDb" {
		t.Errorf("decoded %v, want string:a\uFFFDb", v)
	}
}

// TestTransportErrors: when the transport fails, every call in flight fails
// with ErrClosed and the cause, Done closes and Err says why.
func TestTransportErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cause error
	}{
		{"end of stream", io.EOF},
		{"broken pipe", errors.New("write |1: broken pipe")},
		{"unexpected EOF", io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := newTestConn(t)
			sessions := []*Session{c.Browser(), c.Attach("A"), c.Attach("B")}
			var pendings []*Pending
			for _, s := range sessions {
				for range 3 {
					p, err := s.Send("In.flight", nil)
					if err != nil {
						t.Fatal(err)
					}
					pendings = append(pendings, p)
					f.next(t)
				}
			}
			select {
			case f.readErr <- tc.cause:
			case <-t.Context().Done():
			}
			closedWithin(t, c.Done(), "Done")
			if err := c.Err(); !errors.Is(err, tc.cause) {
				t.Errorf("Err = %v, want one wrapping %v", err, tc.cause)
			}
			for i, p := range pendings {
				err := p.Wait(context.Background(), nil)
				if !errors.Is(err, ErrClosed) || !errors.Is(err, tc.cause) {
					t.Errorf("call %d: %v, want ErrClosed with the cause %v", i, err, tc.cause)
				}
				if err != nil && !strings.Contains(err.Error(), "In.flight") {
					t.Errorf("call %d: %q does not name the method", i, err)
				}
			}
			for _, s := range sessions {
				closedWithin(t, s.Closed(), "session "+string(s.ID())+" Closed")
			}
			if n := pendingCount(c); n != 0 {
				t.Errorf("%d calls left pending", n)
			}
		})
	}
}

// TestGarbageOnThePipe: a message the pipe cannot decode is skipped; the
// connection goes on.
func TestGarbageOnThePipe(t *testing.T) {
	browserR, connW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	connR, browserW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer browserR.Close()
	defer browserW.Close()
	c := NewConn(chromedp.NewPipeConn(connR, connW), discardLogger())
	defer c.Close()

	done := goCall(context.Background(), c.Browser(), "After.garbage", nil)
	// Read the command (up to its zero byte) to learn its id.
	var buf []byte
	b := make([]byte, 1)
	for {
		if _, err := browserR.Read(b); err != nil {
			t.Fatal(err)
		}
		if b[0] == 0 {
			break
		}
		buf = append(buf, b[0])
	}
	var cmd cdproto.Message
	if err := jsonv2.Unmarshal(buf, &cmd); err != nil {
		t.Fatal(err)
	}
	garbage := []string{"this is not JSON", `{"id":`, "\xff\xfe", `{"method":"X.ev","params":{]}`}
	for _, g := range garbage {
		if _, err := browserW.Write(append([]byte(g), 0)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fmt.Fprintf(browserW, `{"id":%d,"result":{"ok":true}}`+"\x00", cmd.ID); err != nil {
		t.Fatal(err)
	}
	r := recv(t, done, "result")
	if r.err != nil || r.out["ok"] != true {
		t.Errorf("the call after garbage: %v, %v (connection: %v)", r.out, r.err, c.Err())
	}
}

// TestConcurrentSend runs many goroutines that send, wait, give up and
// subscribe at once, against a browser that answers every call with its own
// id. Run it with -race.
func TestConcurrentSend(t *testing.T) {
	c, f := newTestConn(t)
	sessions := []*Session{c.Browser(), c.Attach("A"), c.Attach("B")}
	stop := make(chan struct{})
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		for {
			select {
			case m := <-f.out:
				if m.Method == "Never.answered" {
					continue
				}
				select {
				case f.in <- &cdproto.Message{ID: m.ID, Result: jsonv2.Value(fmt.Sprintf(`{"id":%d,"session":%q}`, m.ID, m.SessionID))}:
				case <-stop:
					return
				}
			case <-stop:
				return
			}
		}
	}()

	const goroutines, calls = 32, 100
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			s := sessions[g%len(sessions)]
			events, cancel := s.Subscribe("X.ev")
			defer cancel()
			_ = events
			for i := range calls {
				if i%10 == 0 {
					ctx, cancelCall := context.WithCancel(context.Background())
					cancelCall()
					if err := s.Call(ctx, "Never.answered", nil, nil); !errors.Is(err, context.Canceled) {
						errs <- fmt.Errorf("abandoned call: %v", err)
						return
					}
					continue
				}
				p, err := s.Send("Echo.id", map[string]int{"g": g, "i": i})
				if err != nil {
					errs <- err
					return
				}
				var out struct {
					ID      int64  `json:"id"`
					Session string `json:"session"`
				}
				if err := p.Wait(t.Context(), &out); err != nil {
					errs <- err
					return
				}
				if out.ID != p.id || out.Session != string(s.ID()) {
					errs <- fmt.Errorf("call %d of session %q got the answer of call %d of session %q", p.id, s.ID(), out.ID, out.Session)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-answered
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := pendingCount(c); n != 0 {
		t.Errorf("%d calls left pending", n)
	}
}

// failingCloser is a transport whose Close fails.
type failingCloser struct {
	*fakeTransport
	err error
}

func (f failingCloser) Close() error {
	f.fakeTransport.Close()
	return f.err
}

func TestCloseReportsTransportError(t *testing.T) {
	ft := newFakeTransport()
	broken := errors.New("close |1: bad file descriptor")
	c := NewConn(failingCloser{ft, broken}, discardLogger())
	err := c.Close()
	if !errors.Is(err, broken) || !strings.Contains(err.Error(), "closing the browser connection") {
		t.Errorf("Close = %v, want a worded error wrapping %v", err, broken)
	}
	closedWithin(t, c.Done(), "Done")
	// Closing again is harmless and says the same.
	if err2 := c.Close(); fmt.Sprint(err2) != fmt.Sprint(err) {
		t.Errorf("second Close = %v, want %v", err2, err)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestAttachAfterEnd: a session attached once the connection ended is
// closed at once, so its subscriptions end instead of leaking.
func TestAttachAfterEnd(t *testing.T) {
	c, f := newTestConn(t)
	select {
	case f.readErr <- io.EOF:
	case <-t.Context().Done():
	}
	closedWithin(t, c.Done(), "Done")
	s := c.Attach("LATE")
	closedWithin(t, s.Closed(), "the late session's Closed")
	events, cancel := s.Subscribe("X.ev")
	defer cancel()
	if _, ok := <-events; ok {
		t.Error("a subscription of the late session delivered an event")
	}
	if _, err := s.Send("X.call", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Send = %v, want ErrClosed", err)
	}
}
