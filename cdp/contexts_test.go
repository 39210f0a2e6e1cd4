package cdp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/target"

	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// The browser contexts the fake browser of these tests has: the followed
// one, another space's, and the default one.
const (
	ctxMine    = "CTX-MINE"
	ctxOther   = "CTX-OTHER"
	ctxDefault = "CTX-DEFAULT"
	contexts   = `{"browserContextIds":["CTX-MINE","CTX-OTHER"],"defaultBrowserContextId":"CTX-DEFAULT"}`
)

// startInContext starts a Browser that follows ctxMine over a fake
// transport, answering its browser-level setup commands.
func startInContext(t *testing.T) (*Browser, *fakeTransport, *fakeSink) {
	t.Helper()
	c, f := newTestConn(t)
	b, err := NewBrowser(c, Options{Backend: polyfill.BackendAuto, BrowserContext: ctxMine, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	sink := newFakeSink()
	done := make(chan error, 1)
	go func() { done <- b.Start(ctx, sink) }()
	for _, want := range []string{target.CommandGetBrowserContexts, target.CommandSetDiscoverTargets, target.CommandSetAutoAttach} {
		m := f.next(t)
		if string(m.Method) != want {
			t.Fatalf("Start sent %s, want %s", m.Method, want)
		}
		answer := `{}`
		if want == target.CommandGetBrowserContexts {
			answer = contexts
		}
		f.reply(t, m.ID, answer)
	}
	if err := recv(t, done, "Start"); err != nil {
		t.Fatal(err)
	}
	return b, f, sink
}

// attachedIn is attachedEvent for a top-level page of a browser context.
func attachedIn(session, targetID, url, browserContext string, waiting bool) *cdproto.Message {
	return event("", cdproto.EventTargetAttachedToTarget, fmt.Sprintf(
		`{"sessionId":%q,"targetInfo":{"targetId":%q,"type":"page","title":"","url":%q,"attached":true,"canAccessOpener":false,"browserContextId":%q},"waitingForDebugger":%v}`,
		session, targetID, url, browserContext, waiting))
}

// TestOtherContextsLeft: a Browser that follows one browser context leaves
// every page of another at once and never reports it. A paused page of
// another space's context is detached from without being resumed (its own
// Browser resumes it once its page script is in; Chromium lets a target run
// on the first resume of any connection); a paused page of the default
// context, or of no context, is resumed and detached, as unwantedTarget's
// are. Its own pages are set up and reported.
func TestOtherContextsLeft(t *testing.T) {
	for _, tc := range []struct {
		name, context string
		waiting       bool
		want          []string // the commands sent, by session
	}{
		{"another space's page, paused", ctxOther, true, []string{" Target.detachFromTarget"}},
		{"another space's page, running", ctxOther, false, []string{" Target.detachFromTarget"}},
		{"the default context's page, paused", ctxDefault, true, []string{"S9 Runtime.runIfWaitingForDebugger", " Target.detachFromTarget"}},
		{"the default context's page, running", ctxDefault, false, []string{" Target.detachFromTarget"}},
		{"a page of no context, paused", "", true, []string{"S9 Runtime.runIfWaitingForDebugger", " Target.detachFromTarget"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, f, sink := startInContext(t)
			f.feed(t, attachedIn("S9", "T9", "https://other.test/", tc.context, tc.waiting))
			expectSent(t, f, tc.want)
			f.barrier(t)
			f.noWrites(t)

			// A page of its own context is followed: set up, resumed last,
			// and the first tab the sink hears of (the sink's calls come in
			// order, so the other page was never reported).
			f.feed(t, attachedIn("S1", "T1", "https://mine.test/", ctxMine, true))
			var last string
			for range 8 {
				m := f.next(t)
				if m.SessionID != "S1" {
					t.Fatalf("%s went to %q, want the own page's session S1", m.Method, m.SessionID)
				}
				last = string(m.Method)
				f.reply(t, m.ID, `{}`)
			}
			if last != "Runtime.runIfWaitingForDebugger" {
				t.Errorf("the own page's setup ended with %s, want Runtime.runIfWaitingForDebugger", last)
			}
			if c := sink.next(t, "TabOpened"); c.id != "T1" {
				t.Errorf("the sink heard of tab %q first, want T1 (its own)", c.id)
			}
		})
	}
}

// TestStartInContextNeedsTheContext: Start fails, saying why, when the
// browser has no context of that id (disposed of, or its connection
// ended), and before it turns on auto-attach.
func TestStartInContextNeedsTheContext(t *testing.T) {
	t.Parallel()
	c, f := newTestConn(t)
	b, err := NewBrowser(c, Options{BrowserContext: "GONE", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- b.Start(context.Background(), newFakeSink()) }()
	m := f.next(t)
	if string(m.Method) != target.CommandGetBrowserContexts {
		t.Fatalf("Start sent %s first, want %s", m.Method, target.CommandGetBrowserContexts)
	}
	f.reply(t, m.ID, contexts)
	err = recv(t, done, "Start")
	if err == nil || !strings.Contains(err.Error(), "the browser has no such context") {
		t.Fatalf("Start = %v, want an error that says the browser has no such context", err)
	}
	f.barrier(t)
	f.noWrites(t)
}

// TestOpenInContext: a tab the Browser opens is made in its context.
func TestOpenInContext(t *testing.T) {
	t.Parallel()
	b, f, _ := startInContext(t)
	done := make(chan error, 1)
	go func() {
		_, err := b.Open(context.Background(), "about:blank")
		done <- err
	}()
	m := f.next(t)
	if string(m.Method) != target.CommandCreateTarget || !strings.Contains(string(m.Params), `"browserContextId":"`+ctxMine+`"`) {
		t.Errorf("Open sent %s %s, want Target.createTarget in %s", m.Method, m.Params, ctxMine)
	}
	f.reply(t, m.ID, `{"targetId":"T1"}`)
	if err := recv(t, done, "Open"); err != nil {
		t.Fatal(err)
	}
}

// TestOtherContextsTabs: CloseTab and ActivateTab refuse a tab of another
// context as they refuse one that does not exist (ErrTargetGone), without
// sending the command; a tab of its own not yet followed is looked up and
// closed; Titles lists the tabs of its own context only.
func TestOtherContextsTabs(t *testing.T) {
	t.Parallel()
	b, f, _ := startInContext(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, tab, info string // info answers Target.getTargetInfo
		act             func(context.Context, string) error
		want            string // the command sent after the look-up; "" for none
	}{
		{"close another space's tab", "T9", `{"targetInfo":{"targetId":"T9","type":"page","title":"","url":"https://other.test/","attached":false,"canAccessOpener":false,"browserContextId":"CTX-OTHER"}}`, b.CloseTab, ""},
		{"activate another space's tab", "T9", `{"targetInfo":{"targetId":"T9","type":"page","title":"","url":"https://other.test/","attached":false,"canAccessOpener":false,"browserContextId":"CTX-OTHER"}}`, b.ActivateTab, ""},
		{"close the default context's tab", "T8", `{"targetInfo":{"targetId":"T8","type":"page","title":"","url":"about:blank","attached":false,"canAccessOpener":false,"browserContextId":"CTX-DEFAULT"}}`, b.CloseTab, ""},
		{"close a tab of its own not yet followed", "T2", `{"targetInfo":{"targetId":"T2","type":"page","title":"","url":"about:blank","attached":false,"canAccessOpener":false,"browserContextId":"CTX-MINE"}}`, b.CloseTab, target.CommandCloseTarget},
	} {
		done := make(chan error, 1)
		go func() { done <- tc.act(ctx, tc.tab) }()
		m := f.next(t)
		if string(m.Method) != target.CommandGetTargetInfo {
			t.Fatalf("%s: sent %s first, want %s", tc.name, m.Method, target.CommandGetTargetInfo)
		}
		f.reply(t, m.ID, tc.info)
		if tc.want != "" {
			m := f.next(t)
			if string(m.Method) != tc.want {
				t.Errorf("%s: sent %s, want %s", tc.name, m.Method, tc.want)
			}
			f.reply(t, m.ID, `{}`)
		}
		err := recv(t, done, tc.name)
		if tc.want == "" && !errors.Is(err, ErrTargetGone) {
			t.Errorf("%s: %v, want ErrTargetGone", tc.name, err)
		}
		if tc.want != "" && err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		f.barrier(t)
		f.noWrites(t)
	}

	// A tab that does not exist gets the same answer.
	done := make(chan error, 1)
	go func() { done <- b.CloseTab(ctx, "T404") }()
	m := f.next(t)
	f.feed(t, &cdproto.Message{ID: m.ID, Error: &cdproto.Error{Code: -32602, Message: "No target with given id found"}})
	if err := recv(t, done, "CloseTab"); !errors.Is(err, ErrTargetGone) {
		t.Errorf("closing a tab that does not exist: %v, want ErrTargetGone", err)
	}

	titles := make(chan map[string]string, 1)
	go func() {
		got, err := b.Titles(ctx)
		if err != nil {
			t.Error(err)
		}
		titles <- got
	}()
	m = f.next(t)
	f.reply(t, m.ID, `{"targetInfos":[`+
		`{"targetId":"T1","type":"page","title":"Mine","url":"https://mine.test/","attached":true,"canAccessOpener":false,"browserContextId":"CTX-MINE"},`+
		`{"targetId":"T9","type":"page","title":"Other","url":"https://other.test/","attached":false,"canAccessOpener":false,"browserContextId":"CTX-OTHER"},`+
		`{"targetId":"T8","type":"page","title":"Blank","url":"about:blank","attached":false,"canAccessOpener":false,"browserContextId":"CTX-DEFAULT"}]}`)
	if got := recv(t, titles, "Titles"); fmt.Sprint(got) != "map[T1:Mine]" {
		t.Errorf("Titles = %v, want only its own context's tab T1", got)
	}
}
