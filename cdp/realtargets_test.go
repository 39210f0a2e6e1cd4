package cdp

import (
	"context"
	"fmt"
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
			var got []string
			for range tc.want {
				m := f.next(t)
				got = append(got, fmt.Sprintf("%s %s", m.SessionID, m.Method))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("sent %q, want %q", got, tc.want)
			}
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

// TestSettleExisting: the wait for the tabs open at attach ends when the
// tabs the browser lists are attached and set up; ctx bounds it when a
// setup never answers, and a listed tab that never attaches (or that we
// leave alone, such as DevTools) holds it at most attachGrace.
func TestSettleExisting(t *testing.T) {
	b, f, _ := startBrowser(t, polyfill.BackendAuto)
	f.feed(t, attachedEvent("", "S1", "T1", "page", "http://a.test/", false))
	var setup []int64
	for range 8 {
		setup = append(setup, f.next(t).ID)
	}
	info := func(id, kind, url string) string {
		return fmt.Sprintf(`{"targetId":%q,"type":%q,"title":"","url":%q,"attached":false,"canAccessOpener":false}`, id, kind, url)
	}
	settle := func(ctx context.Context, targets string) (int, error) {
		type result struct {
			n   int
			err error
		}
		done := make(chan result, 1)
		go func() { n, err := b.SettleExisting(ctx); done <- result{n, err} }()
		m := f.next(t)
		if string(m.Method) != target.CommandGetTargets {
			t.Fatalf("SettleExisting sent %s, want %s", m.Method, target.CommandGetTargets)
		}
		f.reply(t, m.ID, `{"targetInfos":[`+targets+`]}`)
		r := recv(t, done, "SettleExisting")
		return r.n, r.err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if n, err := settle(ctx, info("T1", "page", "http://a.test/")); err == nil || n != 1 {
		t.Errorf("before the setup answered: %d tabs, %v; want 1 and the ctx's error", n, err)
	}
	for _, id := range setup {
		f.feed(t, &cdproto.Message{ID: id, SessionID: "S1", Result: []byte(`{}`)})
	}
	lists := info("T1", "page", "http://a.test/") + "," + info("T3", "page", "devtools://devtools/x") + "," + info("T4", "service_worker", "https://a.test/sw.js")
	if n, err := settle(context.Background(), lists); err != nil || n != 1 {
		t.Errorf("set up: %d tabs, %v; want 1, nil", n, err)
	}
	start := time.Now()
	if n, err := settle(context.Background(), lists+","+info("T2", "page", "http://b.test/")); err != nil || n != 1 {
		t.Errorf("with a tab that never attaches: %d tabs, %v; want 1, nil", n, err)
	}
	if waited := time.Since(start); waited < attachGrace {
		t.Errorf("returned after %s, before the attach grace", waited)
	}
}
