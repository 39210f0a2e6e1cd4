package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/runtime"

	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// TestDrainWaitsForThePagesDueWork: Drain runs its task in the tab's main
// document, and when the page pinged before answering it (a timer that ran
// late registered a tool), Drain returns only once the read that ping
// asked for is in the sink: the browser's order, not a clock.
func TestDrainWaitsForThePagesDueWork(t *testing.T) {
	sink := newFakeSink()
	b, f := startBrowserWith(t, polyfill.BackendPolyfill, sink)
	_, read := handOver(t, b, f, "")
	f.reply(t, read.ID, stringResult(t, `{"info":{"native":false,"url":"http://a.test/"},"list":{"url":"http://a.test/","tools":[{"name":"early","description":"E."}],"bound":true}}`))
	sink.next(t, "Update")
	waitRead(t, b)

	done := make(chan error, 1)
	go func() { done <- b.Drain(context.Background(), "T1") }()
	eval := nextOf(t, f, runtime.CommandEvaluate)
	var p runtime.EvaluateParams
	if err := json.Unmarshal(eval.Params, &p); err != nil || p.Expression != drainTask || p.AwaitPromise == nil || !*p.AwaitPromise {
		t.Fatalf("Drain evaluated %s (%v)", eval.Params, err)
	}
	// The late timer runs before the drain's task: its ping comes first.
	f.feed(t, event("S1", cdproto.EventRuntimeBindingCalled, fmt.Sprintf(`{"name":%q,"payload":"changed","executionContextId":3}`, b.binding)))
	list := nextOf(t, f, "this.list(")
	f.reply(t, eval.ID, `{"result":{"type":"undefined"}}`)
	select {
	case err := <-done:
		t.Fatalf("Drain returned (%v) before the read the page's ping asked for", err)
	case <-time.After(50 * time.Millisecond): // a negative check: slowness can only hide a failure
	}
	f.reply(t, list.ID, stringResult(t, `{"url":"http://a.test/","tools":[{"name":"early","description":"E."},{"name":"late","description":"L."}],"bound":true}`))
	if err := recv(t, done, "end of Drain"); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	// The Update is in the sink by the time Drain returned.
	select {
	case c := <-sink.calls:
		if c.method != "Update" || len(c.tools) != 2 {
			t.Errorf("the sink's next call: %s with %d tools, want the Update with early and late", c.method, len(c.tools))
		}
	default:
		t.Error("Drain returned before the read's tools reached the sink")
	}
}

// TestDrainOfAnUnknownTab: a tab that is not there is an error at once.
func TestDrainOfAnUnknownTab(t *testing.T) {
	b, _ := startBrowserWith(t, polyfill.BackendPolyfill, newFakeSink())
	if err := b.Drain(context.Background(), "nope"); err == nil || !strings.Contains(err.Error(), "draining tab nope") {
		t.Errorf("Drain: %v", err)
	}
}

// nextOf returns the next command written whose method or parameters
// contain want, answering the relay's pushes of exposed tools (which come
// when they come) on the way.
func nextOf(t *testing.T, f *fakeTransport, want string) *cdproto.Message {
	t.Helper()
	for {
		m := f.next(t)
		switch {
		case string(m.Method) == want || strings.Contains(string(m.Params), want):
			return m
		case strings.Contains(string(m.Params), "this.remote("):
			f.reply(t, m.ID, `{"result":{"type":"undefined"}}`)
		default:
			t.Fatalf("wrote %s %s, want %s", m.Method, m.Params, want)
		}
	}
}
