package cdp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/target"

	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// TestRealBrowserTargets: in a person's browser, targets that are no tab of
// web pages are resumed when paused and left at once (DevTools, workers,
// the PDF viewer's extension frame); chrome:// tabs and prerendered pages
// are followed but not shown until they show a site.
func TestRealBrowserTargets(t *testing.T) {
	for _, tc := range []struct {
		name, parent, kind, url string
		waiting                 bool
		want                    []string // the commands sent on the target's session, or to detach it
	}{
		{"service worker, paused", "", "service_worker", "chrome-extension://abc/sw.js", true,
			[]string{"S9 Runtime.runIfWaitingForDebugger", " Target.detachFromTarget"}},
		{"DevTools window", "", "page", "devtools://devtools/bundled/devtools_app.html", false,
			[]string{" Target.detachFromTarget"}},
		{"PDF viewer frame, paused", "S1", "iframe", "chrome-extension://mhjfbmdgcfjbbpaeojofohoefgiehjai/index.html", true,
			[]string{"S9 Runtime.runIfWaitingForDebugger", "S1 Target.detachFromTarget"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, f, _ := startBrowser(t, polyfill.BackendAuto)
			if tc.parent != "" {
				f.feed(t, attachedEvent("", "S1", "T1", "page", "http://a.test/", false))
				for range 8 { // the page's setup (8 steps with the auto backend)
					m := f.next(t)
					f.reply(t, m.ID, `{}`)
				}
			}
			f.feed(t, attachedEvent(target.SessionID(tc.parent), "S9", "T9", tc.kind, tc.url, tc.waiting))
			expectSent(t, f, tc.want)
		})
	}

	t.Run("chrome:// tab", func(t *testing.T) {
		_, f, sink := startBrowser(t, polyfill.BackendAuto)
		f.feed(t, attachedEvent("", "S1", "T1", "page", "chrome://newtab/", false))
		for range 8 { // followed: the page script is set up
			m := f.next(t)
			if m.SessionID != "S1" {
				t.Fatalf("%s went to %q, want the tab's session", m.Method, m.SessionID)
			}
			f.reply(t, m.ID, `{}`)
		}
		// Not a tab until it shows a site.
		f.feed(t, event("", cdproto.EventTargetTargetInfoChanged,
			`{"targetInfo":{"targetId":"T1","type":"page","title":"A","url":"https://a.test/","attached":true,"canAccessOpener":false}}`))
		if c := sink.next(t, "TabOpened"); c.id != "T1" || c.url != "https://a.test/" {
			t.Errorf("TabOpened(%q, %q), want T1 once it shows https://a.test/", c.id, c.url)
		}
		// Back to a browser page: no tab any more.
		f.feed(t, event("", cdproto.EventTargetTargetInfoChanged,
			`{"targetInfo":{"targetId":"T1","type":"page","title":"Settings","url":"chrome://settings/","attached":true,"canAccessOpener":false}}`))
		if c := sink.next(t, "TabClosed"); c.id != "T1" {
			t.Errorf("TabClosed(%q), want T1", c.id)
		}
	})

	t.Run("prerender", func(t *testing.T) {
		_, f, sink := startBrowser(t, polyfill.BackendAuto)
		f.feed(t, event("", cdproto.EventTargetAttachedToTarget,
			`{"sessionId":"S1","targetInfo":{"targetId":"T1","type":"page","subtype":"prerender","title":"","url":"https://a.test/next","attached":true,"canAccessOpener":false},"waitingForDebugger":true}`))
		for range 8 {
			m := f.next(t)
			f.reply(t, m.ID, `{}`)
		}
		f.feed(t, event("", cdproto.EventTargetTargetInfoChanged,
			`{"targetInfo":{"targetId":"T1","type":"page","title":"Next","url":"https://a.test/next","attached":true,"canAccessOpener":false}}`))
		if c := sink.next(t, "TabOpened"); c.id != "T1" {
			t.Errorf("TabOpened(%q), want T1 once activated", c.id)
		}
	})
}

// expectSent checks the next commands the Browser sent, each as its
// session and method (" Method" for the browser's session).
func expectSent(t *testing.T, f *fakeTransport, want []string) {
	t.Helper()
	var got []string
	for range want {
		m := f.next(t)
		got = append(got, fmt.Sprintf("%s %s", m.SessionID, m.Method))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sent %q, want %q", got, want)
	}
}

// TestSettleExisting: the wait for the tabs open at attach covers the tabs
// the browser announced before it answered Target.setAutoAttach (Chrome
// announces every target it has first), until each is set up and each of
// its documents has been read; ctx bounds it when a setup never answers. A
// tab attached after that answer is not waited for, and no target list is
// asked for.
func TestSettleExisting(t *testing.T) {
	c, f := newTestConn(t)
	b, err := NewBrowser(c, Options{Backend: polyfill.BackendAuto, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	started := make(chan error, 1)
	go func() { started <- b.Start(ctx, newFakeSink()) }()
	f.reply(t, f.next(t).ID, `{}`) // setDiscoverTargets
	autoAttach := f.next(t)
	// The open tab is announced before the answer; its setup goes out.
	f.feed(t, attachedEvent("", "S1", "T1", "page", "http://a.test/", false))
	var setup []int64
	for range 8 {
		setup = append(setup, f.next(t).ID)
	}
	f.reply(t, autoAttach.ID, `{}`)
	if err := recv(t, started, "Start"); err != nil {
		t.Fatal(err)
	}
	settle := func(d time.Duration) (int, error) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		return b.SettleExisting(ctx)
	}
	const short = 100 * time.Millisecond

	if n, err := settle(short); !errors.Is(err, context.DeadlineExceeded) || n != 1 {
		t.Errorf("before the setup answered: %d tabs, %v; want 1 and the ctx's error", n, err)
	}
	// A tab opened after attach, whose setup never answers, is not waited for.
	f.feed(t, attachedEvent("", "S2", "T2", "page", "http://b.test/", true))
	for range 8 {
		f.next(t)
	}
	for _, id := range setup {
		f.feed(t, &cdproto.Message{ID: id, SessionID: "S1", Result: []byte(`{}`)})
	}
	if n, err := settle(patience); err != nil || n != 1 {
		t.Errorf("set up: %d tabs, %v; want 1, nil", n, err)
	}

	// A document whose bridge is being adopted holds the wait until its
	// first read is in; SettleExisting wakes on it, not on a clock.
	f.feed(t, event("S1", cdproto.EventRuntimeExecutionContextCreated,
		`{"context":{"id":3,"origin":"http://a.test","name":"","uniqueId":"u3","auxData":{"isDefault":true,"frameId":"T1"}}}`))
	f.feed(t, event("S1", cdproto.EventRuntimeConsoleAPICalled, fmt.Sprintf(
		`{"type":"debug","args":[{"type":"string","value":%q},{"type":"object","objectId":"bridge-1"}],"executionContextId":3,"timestamp":1}`,
		polyfill.BridgeMarker+b.nonce)))
	move, read := f.next(t), f.next(t)
	if n, err := settle(short); !errors.Is(err, context.DeadlineExceeded) || n != 1 {
		t.Errorf("while the bridge is adopted: %d tabs, %v; want 1 and the ctx's error", n, err)
	}
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() { n, err := settle(patience); done <- result{n, err} }()
	f.reply(t, move.ID, `{"result":{"type":"object","objectId":"bridge-2"}}`)
	f.reply(t, read.ID, fmt.Sprintf(`{"result":{"type":"string","value":%q}}`,
		`{"info":{"native":true,"url":"http://a.test/"},"list":{"url":"http://a.test/","tools":[],"overflow":0}}`))
	if r := recv(t, done, "SettleExisting"); r.err != nil || r.n != 1 {
		t.Errorf("after the adoption: %d tabs, %v; want 1, nil", r.n, r.err)
	}
}
