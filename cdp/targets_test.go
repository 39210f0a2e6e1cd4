package cdp

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/target"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// sinkCall is one call a Browser made into its Sink.
type sinkCall struct {
	method string
	src    core.Source
	tools  []core.Tool
	ref    []core.Refusal
	id     string // DropDoc's key, TabOpened's and TabClosed's tab
	url    string
}

// fakeSink records what a Browser reports, in order.
type fakeSink struct {
	calls chan sinkCall
}

func newFakeSink() *fakeSink { return &fakeSink{calls: make(chan sinkCall, 256)} }

func (s *fakeSink) Update(src core.Source, tools []core.Tool, refused []core.Refusal) {
	s.calls <- sinkCall{method: "Update", src: src, tools: tools, ref: refused}
}
func (s *fakeSink) DropDoc(key string) { s.calls <- sinkCall{method: "DropDoc", id: key} }
func (s *fakeSink) TabOpened(id, url, title string) {
	s.calls <- sinkCall{method: "TabOpened", id: id, url: url}
}
func (s *fakeSink) TabClosed(id string) { s.calls <- sinkCall{method: "TabClosed", id: id} }

// next returns the sink's next call of method, skipping others.
func (s *fakeSink) next(t *testing.T, method string) sinkCall {
	t.Helper()
	for {
		c := recv(t, s.calls, "sink call "+method)
		if c.method == method {
			return c
		}
	}
}

// startBrowser starts a Browser over a fake transport and answers its two
// browser-level setup commands.
func startBrowser(t *testing.T, backend polyfill.Backend) (*Browser, *fakeTransport, *fakeSink) {
	t.Helper()
	sink := newFakeSink()
	b, f := startBrowserWith(t, backend, sink)
	return b, f, sink
}

// startBrowserWith is startBrowser with a sink of the test's own.
func startBrowserWith(t *testing.T, backend polyfill.Backend, sink Sink) (*Browser, *fakeTransport) {
	t.Helper()
	c, f := newTestConn(t)
	b, err := NewBrowser(c, Options{Backend: backend, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() { done <- b.Start(ctx, sink) }()
	for _, want := range []string{target.CommandSetDiscoverTargets, target.CommandSetAutoAttach} {
		m := f.next(t)
		if string(m.Method) != want {
			t.Fatalf("Start sent %s, want %s", m.Method, want)
		}
		f.reply(t, m.ID, `{}`)
	}
	if err := recv(t, done, "Start"); err != nil {
		t.Fatal(err)
	}
	return b, f
}

func attachedEvent(parent target.SessionID, session, targetID, kind, url string, waiting bool) *cdproto.Message {
	return event(parent, cdproto.EventTargetAttachedToTarget, fmt.Sprintf(
		`{"sessionId":%q,"targetInfo":{"targetId":%q,"type":%q,"title":"","url":%q,"attached":true,"canAccessOpener":false},"waitingForDebugger":%v}`,
		session, targetID, kind, url, waiting))
}

// TestAttachSetupIsPipelined: a new target gets every setup command written
// before any answer comes back, in the order that keeps early registrations
// (NOTES-cdp.md), and resumes last.
func TestAttachSetupIsPipelined(t *testing.T) {
	for _, tc := range []struct {
		backend polyfill.Backend
		want    []string
	}{
		{polyfill.BackendAuto, []string{"Runtime.enable", "Runtime.addBinding", "Page.enable", "Page.addScriptToEvaluateOnNewDocument",
			"Target.setAutoAttach", "WebMCP.enable", "Network.enable", "Runtime.runIfWaitingForDebugger"}},
		{polyfill.BackendPolyfill, []string{"Runtime.enable", "Runtime.addBinding", "Page.enable", "Page.addScriptToEvaluateOnNewDocument",
			"Target.setAutoAttach", "Network.enable", "Runtime.runIfWaitingForDebugger"}},
	} {
		t.Run(string(tc.backend), func(t *testing.T) {
			_, f, sink := startBrowser(t, tc.backend)
			f.feed(t, attachedEvent("", "S1", "T1", "page", "http://a.test/", true))
			var got []string
			var ids []int64
			for range tc.want {
				m := f.next(t)
				if m.SessionID != "S1" {
					t.Errorf("%s went to session %q, want S1", m.Method, m.SessionID)
				}
				got = append(got, string(m.Method))
				ids = append(ids, m.ID)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("setup sent\n%v, want\n%v", got, tc.want)
			}
			f.noWrites(t)
			for _, id := range ids {
				f.feed(t, &cdproto.Message{ID: id, SessionID: "S1", Result: []byte(`{}`)})
			}
			if c := sink.next(t, "TabOpened"); c.id != "T1" || c.url != "http://a.test/" {
				t.Errorf("TabOpened(%q, %q), want T1 and its URL", c.id, c.url)
			}
		})
	}
}

// TestAttachDetachReportsToTheSink: an empty tab gets no number; a frame
// belongs to its page's tab; a destroyed context and a detached page are
// dropped; native tools go to the sink unjudged (admission is the hub's).
func TestAttachDetachReportsToTheSink(t *testing.T) {
	b, f, sink := startBrowser(t, polyfill.BackendAuto)
	f.feed(t, attachedEvent("", "S0", "T0", "page", "about:blank", true))
	f.feed(t, attachedEvent("", "S1", "T1", "page", "http://a.test/", true))
	if c := sink.next(t, "TabOpened"); c.id != "T1" {
		t.Fatalf("TabOpened(%q): about:blank must not be numbered", c.id)
	}
	// A cross-site frame auto-attached on the page's session.
	f.feed(t, attachedEvent("S1", "S2", "F2", "iframe", "http://b.test/frame", true))
	f.barrier(t)

	// The frame's native tools: the source is the frame's, in the page's tab.
	f.feed(t, event("S2", cdproto.EventWebMCPToolsAdded,
		`{"tools":[{"name":"bad name!","description":"","frameId":"F2","toolId":"1"}]}`))
	c := sink.next(t, "Update")
	if c.src.Tab != "T1" || c.src.Frame != "F2" || c.src.Backend != core.BackendNative {
		t.Errorf("native source %+v, want tab T1, frame F2, native", c.src)
	}
	if len(c.tools) != 1 || c.tools[0].Name != "bad name!" {
		t.Errorf("native tools %+v: the browser must hand them over as declared", c.tools)
	}

	// A document of the page, then its context is destroyed.
	f.feed(t, event("S1", cdproto.EventRuntimeExecutionContextCreated,
		`{"context":{"id":7,"origin":"http://a.test","name":"","uniqueId":"u7","auxData":{"isDefault":true,"frameId":"T1"}}}`))
	f.feed(t, event("S1", cdproto.EventRuntimeExecutionContextDestroyed, `{"executionContextId":7,"executionContextUniqueId":"u7"}`))
	if c := sink.next(t, "DropDoc"); c.id != "S1/u7" {
		t.Errorf("DropDoc(%q), want S1/u7", c.id)
	}

	// A call into a document that is gone fails at once.
	if _, err := b.Invoke(context.Background(), "S1/u7", "x", []byte(`{}`)); err != ErrNavigated {
		t.Errorf("Invoke on a dropped document: %v, want ErrNavigated", err)
	}

	// The page detaches: its frame's native document and the tab go.
	f.feed(t, event("", cdproto.EventTargetDetachedFromTarget, `{"sessionId":"S1","targetId":"T1"}`))
	if c := sink.next(t, "TabClosed"); c.id != "T1" {
		t.Errorf("TabClosed(%q), want T1", c.id)
	}
}

// TestNativeToolsOverTheLimit: a document's native tools are bounded in
// number, and the excess is handed over as a refusal, not dropped silently.
func TestNativeToolsOverTheLimit(t *testing.T) {
	c, f := newTestConn(t)
	b, err := NewBrowser(c, Options{Limits: Limits{MaxTools: 2}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	sink := newFakeSink()
	go b.Start(context.Background(), sink)
	for range 2 {
		m := f.next(t)
		f.reply(t, m.ID, `{}`)
	}
	f.feed(t, attachedEvent("", "S1", "T1", "page", "http://a.test/", true))
	var tools []string
	for i := range 3 {
		tools = append(tools, fmt.Sprintf(`{"name":"t%d","description":"d","frameId":"T1","toolId":"%d"}`, i, i+1))
	}
	f.feed(t, event("S1", cdproto.EventWebMCPToolsAdded, `{"tools":[`+strings.Join(tools, ",")+`]}`))
	u := sink.next(t, "Update")
	if len(u.tools) != 2 || len(u.ref) != 1 || u.ref[0].Reason != core.ReasonTooMany {
		t.Errorf("got %d tools and refusals %+v; want 2 tools and one too-many refusal", len(u.tools), u.ref)
	}
}

// TestWaitTabWakesOnAttach: Open's wait for its new tab is woken by the
// attach itself, not by a poll.
func TestWaitTabWakesOnAttach(t *testing.T) {
	b, f, _ := startBrowser(t, polyfill.BackendPolyfill)
	var wg sync.WaitGroup
	wg.Add(1)
	errc := make(chan error, 1)
	go func() {
		defer wg.Done()
		errc <- b.waitTab(context.Background(), "T9")
	}()
	f.feed(t, attachedEvent("", "S9", "T9", "page", "about:blank", true))
	// Answer the setup, which closes the target's ready channel.
	for range 7 { // the setup steps
		m := f.next(t)
		f.feed(t, &cdproto.Message{ID: m.ID, SessionID: m.SessionID, Result: []byte(`{}`)})
	}
	if err := recv(t, errc, "waitTab"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}

// TestPageReadsEndWithStart: the reads of a page (adopting its bridge,
// reading its tools) run on Start's context, so ending it stops a read the
// browser never answers (they ran on context.Background before, and a
// shutdown could not stop them).
func TestPageReadsEndWithStart(t *testing.T) {
	c, f := newTestConn(t)
	b, err := NewBrowser(c, Options{Backend: polyfill.BackendPolyfill, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go b.Start(ctx, newFakeSink())
	for range 2 {
		m := f.next(t)
		f.reply(t, m.ID, `{}`)
	}
	f.feed(t, attachedEvent("", "S1", "T1", "page", "http://a.test/", true))
	for range 7 { // the setup steps
		m := f.next(t)
		f.feed(t, &cdproto.Message{ID: m.ID, SessionID: m.SessionID, Result: []byte(`{}`)})
	}
	f.feed(t, event("S1", cdproto.EventRuntimeExecutionContextCreated,
		`{"context":{"id":3,"origin":"http://a.test","name":"","uniqueId":"u3","auxData":{"isDefault":true,"frameId":"T1"}}}`))
	f.feed(t, event("S1", cdproto.EventRuntimeConsoleAPICalled, fmt.Sprintf(
		`{"type":"debug","args":[{"type":"string","value":%q},{"type":"object","objectId":"bridge-1"}],"executionContextId":3,"timestamp":1}`,
		polyfill.BridgeMarker+b.nonce)))
	if m := f.next(t); string(m.Method) != "Runtime.callFunctionOn" {
		t.Fatalf("adopting the bridge sent %s", m.Method)
	}
	// The browser never answers; ending Start's context gives the read up.
	cancel()
	deadline := time.After(patience)
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-deadline:
			t.Fatalf("%d calls still pending after Start's context ended", n)
		case <-time.After(time.Millisecond):
		}
	}
}

// TestInvokeWhileTheDocumentGoes runs calls while their document is
// destroyed; under -race it proves Invoke reads the document's state under
// the lock.
func TestInvokeWhileTheDocumentGoes(t *testing.T) {
	b, f, _ := startBrowser(t, polyfill.BackendPolyfill)
	f.feed(t, attachedEvent("", "S1", "T1", "page", "http://a.test/", true))
	for range 7 { // the setup steps
		m := f.next(t)
		f.feed(t, &cdproto.Message{ID: m.ID, SessionID: m.SessionID, Result: []byte(`{}`)})
	}
	for i := range 20 {
		f.feed(t, event("S1", cdproto.EventRuntimeExecutionContextCreated, fmt.Sprintf(
			`{"context":{"id":%d,"origin":"http://a.test","name":"","uniqueId":"u%d","auxData":{"isDefault":true,"frameId":"T1"}}}`, i+1, i+1)))
		done := make(chan struct{})
		go func() {
			defer close(done)
			ctx, cancel := context.WithTimeout(context.Background(), patience)
			defer cancel()
			b.Invoke(ctx, fmt.Sprintf("S1/u%d", i+1), "x", []byte(`{}`))
		}()
		f.feed(t, event("S1", cdproto.EventRuntimeExecutionContextDestroyed, fmt.Sprintf(`{"executionContextId":%d,"executionContextUniqueId":"u%d"}`, i+1, i+1)))
		recv(t, done, "Invoke")
	}
}
