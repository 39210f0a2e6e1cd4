package cdp

import (
	"testing"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/page"

	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// TestLoneSurrogatesInEvents: events are decoded as results are (decode):
// a lone surrogate escaped as \ud800 reads as U+FFFD instead of failing
// the event. Chromium 156 replaces lone surrogates in event strings itself
// (a confirm("sure \ud800?") arrives as "sure \uFFFD?") and escapes them
// only in values returned by value; an endpoint in between (a proxy, a
// browser service) may not, and a dropped event would leave a new tab
// paused or a dialog open, blocking its page.
func TestLoneSurrogatesInEvents(t *testing.T) {
	t.Run("title of a new target", func(t *testing.T) {
		_, f, _ := startBrowser(t, polyfill.BackendPolyfill)
		f.feed(t, event("", cdproto.EventTargetAttachedToTarget,
			`{"sessionId":"S1","targetInfo":{"targetId":"T1","type":"page","title":"a\ud800b","url":"http://a.test/","attached":true,"canAccessOpener":false},"waitingForDebugger":true}`))
		if m := f.next(t); m.SessionID != "S1" || m.Method != "Runtime.enable" {
			t.Errorf("after the attach the browser sent %s to %q, want the target's setup (Runtime.enable to S1)", m.Method, m.SessionID)
		}
	})
	t.Run("dialog message", func(t *testing.T) {
		_, f, sink := startBrowser(t, polyfill.BackendPolyfill)
		f.feed(t, attachedEvent("", "S1", "T1", "page", "http://a.test/", true))
		for range 7 { // the setup (TestAttachSetupIsPipelined)
			m := f.next(t)
			f.feed(t, &cdproto.Message{ID: m.ID, SessionID: "S1", Result: []byte(`{}`)})
		}
		sink.next(t, "TabOpened")
		f.feed(t, event("S1", cdproto.EventPageJavascriptDialogOpening,
			`{"url":"http://a.test/","frameId":"T1","message":"sure \ud800?","type":"confirm","hasBrowserHandler":false,"defaultPrompt":""}`))
		if m := f.next(t); m.SessionID != "S1" || m.Method != page.CommandHandleJavaScriptDialog {
			t.Errorf("after the dialog the browser sent %s to %q, want %s to S1", m.Method, m.SessionID, page.CommandHandleJavaScriptDialog)
		}
	})
}
