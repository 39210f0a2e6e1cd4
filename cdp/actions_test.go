package cdp

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/target"
)

// newTestBrowser returns a Browser over a fake transport, not started: the
// tests play the browser's part by hand.
func newTestBrowser(t *testing.T) (*Browser, *Conn, *fakeTransport) {
	t.Helper()
	c, f := newTestConn(t)
	b, err := NewBrowser(c, Options{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return b, c, f
}

// addTab makes b know a page target, as onAttached does; its setup is done
// when ready is closed.
func addTab(b *Browser, c *Conn, session target.SessionID, tab string, ready chan struct{}) *Session {
	s := c.Attach(session)
	b.mu.Lock()
	b.targets[session] = &targetState{sess: s, targetID: tab, tab: tab, kind: "page", ready: ready}
	b.mu.Unlock()
	return s
}

// expect returns the next command written, and fails unless it is method.
func expect(t *testing.T, f *fakeTransport, method string) *cdproto.Message {
	t.Helper()
	m := f.next(t)
	if string(m.Method) != method {
		t.Fatalf("wrote %s %s, want %s", m.Method, m.Params, method)
	}
	return m
}

// expectClose waits for Target.closeTarget of tab and answers it.
func expectClose(t *testing.T, f *fakeTransport, tab string) {
	t.Helper()
	m := expect(t, f, "Target.closeTarget")
	if p := decodeParams(t, m); p["targetId"] != tab {
		t.Errorf("closed %v, want %s", p["targetId"], tab)
	}
	f.reply(t, m.ID, `{"success":true}`)
}

type openResult struct {
	tab string
	err error
}

func goOpen(ctx context.Context, b *Browser, url string) <-chan openResult {
	ch := make(chan openResult, 1)
	go func() {
		tab, err := b.Open(ctx, url)
		ch <- openResult{tab, err}
	}()
	return ch
}

// TestOpenClosesItsTabOnFailure: when Open fails after it created a tab,
// and before it hands the tab back, it closes the tab.
func TestOpenClosesItsTabOnFailure(t *testing.T) {
	t.Run("the caller gives up while the tab is set up", func(t *testing.T) {
		b, _, f := newTestBrowser(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := goOpen(ctx, b, "https://example.test/")
		m := expect(t, f, "Target.createTarget")
		f.reply(t, m.ID, `{"targetId":"T1"}`)
		cancel()
		expectClose(t, f, "T1")
		r := recv(t, done, "Open's result")
		if !errors.Is(r.err, context.Canceled) || r.tab != "" {
			t.Errorf("Open = %q, %v; want no tab and context.Canceled", r.tab, r.err)
		}
	})

	t.Run("the caller gives up before the tab exists", func(t *testing.T) {
		b, _, f := newTestBrowser(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := goOpen(ctx, b, "https://example.test/")
		m := expect(t, f, "Target.createTarget")
		cancel()
		r := recv(t, done, "Open's result")
		if !errors.Is(r.err, context.Canceled) || r.tab != "" {
			t.Errorf("Open = %q, %v; want no tab and context.Canceled", r.tab, r.err)
		}
		// The browser creates the tab anyway: it is closed when it does.
		f.reply(t, m.ID, `{"targetId":"T2"}`)
		expectClose(t, f, "T2")
	})

	t.Run("the navigation is interrupted", func(t *testing.T) {
		b, c, f := newTestBrowser(t)
		ready := make(chan struct{})
		close(ready)
		addTab(b, c, "S3", "T3", ready)
		ctx, cancel := context.WithCancel(context.Background())
		done := goOpen(ctx, b, "https://example.test/")
		f.reply(t, expect(t, f, "Target.createTarget").ID, `{"targetId":"T3"}`)
		expect(t, f, "Page.navigate")
		cancel()
		expectClose(t, f, "T3")
		if r := recv(t, done, "Open's result"); !errors.Is(r.err, context.Canceled) || r.tab != "" {
			t.Errorf("Open = %q, %v; want no tab and context.Canceled", r.tab, r.err)
		}
	})

	t.Run("the connection ends", func(t *testing.T) {
		b, c, f := newTestBrowser(t)
		done := goOpen(context.Background(), b, "https://example.test/")
		f.reply(t, expect(t, f, "Target.createTarget").ID, `{"targetId":"T4"}`)
		c.Close()
		if r := recv(t, done, "Open's result"); !errors.Is(r.err, ErrClosed) || r.tab != "" {
			t.Errorf("Open = %q, %v; want no tab and ErrClosed", r.tab, r.err)
		}
	})
}

// TestOpenKeepsTabOnLoadError: a page that cannot load leaves its tab open,
// and Open returns the tab with the error.
func TestOpenKeepsTabOnLoadError(t *testing.T) {
	b, c, f := newTestBrowser(t)
	ready := make(chan struct{})
	close(ready)
	addTab(b, c, "S1", "T1", ready)
	done := goOpen(context.Background(), b, "https://nowhere.invalid/")
	f.reply(t, expect(t, f, "Target.createTarget").ID, `{"targetId":"T1"}`)
	m := expect(t, f, "Page.navigate")
	if m.SessionID != "S1" {
		t.Errorf("navigated on session %q", m.SessionID)
	}
	f.reply(t, m.ID, `{"frameId":"F1","errorText":"net::ERR_NAME_NOT_RESOLVED"}`)
	r := recv(t, done, "Open's result")
	var le *LoadError
	if r.tab != "T1" || !errors.As(r.err, &le) || !strings.Contains(r.err.Error(), "ERR_NAME_NOT_RESOLVED") {
		t.Errorf("Open = %q, %v; want T1 and a LoadError", r.tab, r.err)
	}
	f.barrier(t)
	f.noWrites(t)
}

// TestTabActionsHonourContext: Navigate and Reload on a tab whose setup
// never finishes (the browser stalled) return when ctx ends.
func TestTabActionsHonourContext(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(context.Context, *Browser) error
	}{
		{"Navigate", func(ctx context.Context, b *Browser) error { return b.Navigate(ctx, "T1", "https://example.test/") }},
		{"Reload", func(ctx context.Context, b *Browser) error { return b.Reload(ctx, "T1") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, c, f := newTestBrowser(t)
			addTab(b, c, "S1", "T1", make(chan struct{})) // never ready
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- tc.do(ctx, b) }()
			cancel()
			if err := recv(t, done, tc.name+"'s result"); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "T1") {
				t.Errorf("%s = %v, want context.Canceled naming the tab", tc.name, err)
			}
			f.noWrites(t)
		})
	}
}
