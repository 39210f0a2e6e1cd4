package cdp

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// reentrantSink calls back into the Browser from every Sink method, as a
// sink that asks the browser about what it was told would: with the
// browser's lock held around Sink calls, the first one deadlocked the
// reader.
type reentrantSink struct {
	*fakeSink
	b chan *Browser // the browser, once started
}

func (s *reentrantSink) back() {
	b := <-s.b
	b.BlankTab() // takes b.mu
	s.b <- b
}

func (s *reentrantSink) Update(src core.Source, tools []core.Tool, refused []core.Refusal) {
	s.back()
	s.fakeSink.Update(src, tools, refused)
}
func (s *reentrantSink) DropDoc(key string) { s.back(); s.fakeSink.DropDoc(key) }
func (s *reentrantSink) TabOpened(id, url, title string) {
	s.back()
	s.fakeSink.TabOpened(id, url, title)
}
func (s *reentrantSink) TabClosed(id string) { s.back(); s.fakeSink.TabClosed(id) }

// TestSinkMayCallBackIntoTheBrowser: every Sink method runs with no lock
// of the browser held, in the order the browser learned things.
func TestSinkMayCallBackIntoTheBrowser(t *testing.T) {
	sink := &reentrantSink{fakeSink: newFakeSink(), b: make(chan *Browser, 1)}
	b, f := startBrowserWith(t, polyfill.BackendAuto, sink)
	sink.b <- b
	f.feed(t, attachedEvent("", "S1", "T1", "page", "http://a.test/", true))
	f.feed(t, event("S1", cdproto.EventWebMCPToolsAdded,
		`{"tools":[{"name":"t","description":"d","frameId":"T1","toolId":"1"}]}`))
	// A DropDoc removes the Update of its document that still waits in
	// the queue (sinkqueue.go), so the Update is seen before the document
	// goes: that is what this test looks at, not the coalescing.
	var got []string
	for len(got) < 2 {
		c := recv(t, sink.calls, "a sink call")
		got = append(got, c.method+" "+c.id)
	}
	f.feed(t, event("S1", cdproto.EventRuntimeExecutionContextCreated,
		`{"context":{"id":7,"origin":"http://a.test","name":"","uniqueId":"u7","auxData":{"isDefault":true,"frameId":"T1"}}}`))
	f.feed(t, event("S1", cdproto.EventRuntimeExecutionContextDestroyed, `{"executionContextId":7,"executionContextUniqueId":"u7"}`))
	f.feed(t, event("", cdproto.EventTargetDetachedFromTarget, `{"sessionId":"S1","targetId":"T1"}`))
	for got[len(got)-1] != "TabClosed T1" {
		c := recv(t, sink.calls, "a sink call")
		got = append(got, c.method+" "+c.id)
	}
	want := "TabOpened T1,Update ,DropDoc S1/u7,DropDoc S1/native/T1,TabClosed T1"
	if g := strings.Join(got, ","); g != want {
		t.Errorf("the sink saw\n%s, want\n%s", g, want)
	}
}

// recordingSink records the Sink calls it gets as text; its first call
// waits for hold to close, so that what is queued meanwhile waits in line.
// entered, when not nil, gets a value as that first call waits.
type recordingSink struct {
	hold    chan struct{}
	calls   chan string
	entered chan struct{}
}

func (s *recordingSink) record(c string) {
	select {
	case s.entered <- struct{}{}:
	default:
	}
	<-s.hold
	s.calls <- c
}
func (s *recordingSink) Update(src core.Source, tools []core.Tool, refused []core.Refusal) {
	var names, why []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	for _, r := range refused {
		why = append(why, r.Tool)
	}
	s.record(fmt.Sprintf("Update %s %s %s", src.Key, strings.Join(names, "+"), strings.Join(why, "+")))
}
func (s *recordingSink) DropDoc(key string)              { s.record("DropDoc " + key) }
func (s *recordingSink) TabOpened(id, url, title string) { s.record("TabOpened " + id + " " + url) }
func (s *recordingSink) TabClosed(id string)             { s.record("TabClosed " + id) }

// TestSinkQueueOrder: what waits in line keeps its order; a document's
// later Update takes its waiting Update's place (its refusals kept), a
// tab's later TabOpened its waiting TabOpened's, and a DropDoc removes the
// document's waiting Update. A TabClosed keeps what follows it after it.
func TestSinkQueueOrder(t *testing.T) {
	upd := func(key, tab, tool, refused string) func(q *sinkQueue) {
		return func(q *sinkQueue) {
			var ref []core.Refusal
			if refused != "" {
				ref = []core.Refusal{{Tool: refused}}
			}
			q.Update(core.Source{Key: key, Tab: tab}, []core.Tool{{Name: tool}}, ref)
		}
	}
	drop := func(key string) func(q *sinkQueue) { return func(q *sinkQueue) { q.DropDoc(key) } }
	opened := func(tab, url string) func(q *sinkQueue) { return func(q *sinkQueue) { q.TabOpened(tab, url, "") } }
	closed := func(tab string) func(q *sinkQueue) { return func(q *sinkQueue) { q.TabClosed(tab) } }
	tests := []struct {
		name string
		do   []func(q *sinkQueue)
		want []string
	}{
		{"in order", []func(*sinkQueue){upd("K", "T", "a", ""), drop("J"), opened("T", "u")},
			[]string{"Update K a ", "DropDoc J", "TabOpened T u"}},
		{"a later update takes the place of the waiting one",
			[]func(*sinkQueue){upd("K", "T", "a", "x"), drop("J"), upd("K", "T", "b", "y")},
			[]string{"Update K b x+y", "DropDoc J"}},
		{"a drop removes the waiting update", []func(*sinkQueue){upd("K", "T", "a", ""), drop("K")},
			[]string{"DropDoc K"}},
		{"a later TabOpened takes the place of the waiting one", []func(*sinkQueue){opened("T", "u1"), drop("J"), opened("T", "u2")},
			[]string{"TabOpened T u2", "DropDoc J"}},
		{"a TabClosed keeps what follows after it",
			[]func(*sinkQueue){opened("T", "u1"), upd("K", "T", "a", ""), closed("T"), opened("T", "u2"), upd("K", "T", "b", "")},
			[]string{"TabOpened T u1", "Update K a ", "TabClosed T", "TabOpened T u2", "Update K b "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &recordingSink{hold: make(chan struct{}), calls: make(chan string, 16), entered: make(chan struct{}, 1)}
			q := newSinkQueue()
			q.sink = sink
			q.TabOpened("first", "u", "")
			// The deliverer has taken it alone and waits in the sink, so
			// what follows waits in line (else it could take them with it).
			recv(t, sink.entered, "the first sink call")
			for _, do := range tt.do {
				do(q)
			}
			close(sink.hold)
			flushed := make(chan error, 1)
			go func() { flushed <- q.flush(context.Background()) }()
			if err := recv(t, flushed, "the flush"); err != nil {
				t.Fatal(err)
			}
			if c := <-sink.calls; c != "TabOpened first u" {
				t.Fatalf("first call %q", c)
			}
			var got []string
			for len(sink.calls) > 0 {
				got = append(got, <-sink.calls)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("the sink got\n%q, want\n%q", got, tt.want)
			}
		})
	}
}

// TestSinkQueueFlushWaitsForTheSink: flush returns only once what was
// queued before it reached the Sink, and gives up when its ctx ends.
func TestSinkQueueFlushWaitsForTheSink(t *testing.T) {
	sink := &recordingSink{hold: make(chan struct{}), calls: make(chan string, 16)}
	q := newSinkQueue()
	q.sink = sink
	q.DropDoc("K")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := q.flush(ctx); err != context.Canceled {
		t.Fatalf("flush while the sink holds: %v, want context.Canceled", err)
	}
	flushed := make(chan error, 1)
	go func() { flushed <- q.flush(context.Background()) }()
	close(sink.hold)
	if err := recv(t, flushed, "the flush"); err != nil {
		t.Fatal(err)
	}
	if len(sink.calls) != 1 {
		t.Fatalf("flush returned with %d calls made, want 1", len(sink.calls))
	}
}

// TestSinkQueueLeavesNoGoroutine: the deliverer ends once the line is
// empty, so a browser that is dropped leaves no goroutine behind.
func TestSinkQueueLeavesNoGoroutine(t *testing.T) {
	sink := newFakeSink()
	q := newSinkQueue()
	q.sink = sink
	for i := range 100 {
		q.DropDoc(fmt.Sprint(i))
	}
	if err := q.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The deliverer may still be between its last call and its end:
	// wait for it, as goleak does, bounded by patience.
	deadline := time.Now().Add(patience)
	for delivering() {
		if time.Now().After(deadline) {
			t.Fatal("the sink queue's goroutine is still running with nothing queued")
		}
		runtime.Gosched()
	}
}

// delivering reports whether a sink queue's deliverer runs.
func delivering() bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "(*sinkQueue).deliver")
}
