package cdp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/runtime"

	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// preexistingSink is a fakeSink that also records TabLoadedBefore.
type preexistingSink struct{ *fakeSink }

func (s preexistingSink) TabLoadedBefore(id string, before bool) {
	s.calls <- sinkCall{method: "TabLoadedBefore", id: id, url: fmt.Sprint(before)}
}

// TestScriptThatCameLateMarksTheTab: a tab whose document already held
// scripts of the page when the page script came in (Chromium did not hold
// a tab that another client opened and navigated at once, a flake of
// TestLateTools) is reported as one that loaded before we attached, so the
// agent learns that a reload brings the tools those scripts registered. A
// document the page script was first in is not.
func TestScriptThatCameLateMarksTheTab(t *testing.T) {
	for _, tc := range []struct {
		name          string
		startedBefore bool
		want          bool
	}{
		{"held", false, false},
		{"not held", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := preexistingSink{newFakeSink()}
			b, f := startBrowserWith(t, polyfill.BackendPolyfill, sink)
			_, read := handOver(t, b, f, "")
			first := fmt.Sprintf(`{"info":{"native":false,"url":"http://a.test/","startedBefore":%v},"list":{"url":"http://a.test/","tools":[]}}`, tc.startedBefore)
			f.reply(t, read.ID, stringResult(t, first))

			// The tab's report comes before the first Update, in order.
			marked := false
			for c := recv(t, sink.calls, "sink call"); c.method != "Update"; c = recv(t, sink.calls, "sink call") {
				if c.method == "TabLoadedBefore" && c.id == "T1" && c.url == "true" {
					marked = true
				}
			}
			if marked != tc.want {
				t.Errorf("the tab was reported as loaded before: %v, want %v", marked, tc.want)
			}
		})
	}
}

// stringResult is a Runtime.callFunctionOn result of the string s.
func stringResult(t *testing.T, s string) string {
	t.Helper()
	v, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return `{"result":{"type":"string","value":` + string(v) + `}}`
}

// handOver attaches a paused tab T1 (session S1) with the Permissions-Policy
// header policy on its document, answers its setup, and has its document
// hand over its bridge. It answers the move of the bridge and returns the
// move and the first read, unanswered.
func handOver(t *testing.T, b *Browser, f *fakeTransport, policy string) (move, read *cdproto.Message) {
	t.Helper()
	f.feed(t, attachedEvent("", "S1", "T1", "page", "http://a.test/", true))
	for {
		m := f.next(t)
		f.reply(t, m.ID, `{}`)
		if string(m.Method) == runtime.CommandRunIfWaitingForDebugger {
			break
		}
	}
	f.feed(t, event("S1", cdproto.EventNetworkResponseReceived, fmt.Sprintf(
		`{"requestId":"r1","loaderId":"l1","timestamp":1,"type":"Document","frameId":"T1","response":{"url":"http://a.test/","status":200,"statusText":"OK","headers":{"Permissions-Policy":%q},"mimeType":"text/html","connectionReused":false,"connectionId":1,"encodedDataLength":1,"securityState":"neutral"}}`, policy)))
	f.feed(t, event("S1", cdproto.EventRuntimeExecutionContextCreated,
		`{"context":{"id":3,"origin":"http://a.test","name":"","uniqueId":"u3","auxData":{"isDefault":true,"frameId":"T1"}}}`))
	f.feed(t, event("S1", cdproto.EventRuntimeConsoleAPICalled, fmt.Sprintf(
		`{"type":"debug","args":[{"type":"string","value":%q},{"type":"object","objectId":"bridge-1"}],"executionContextId":3,"timestamp":1}`,
		polyfill.BridgeMarker+b.nonce)))
	move, read = f.next(t), f.next(t)
	f.reply(t, move.ID, `{"result":{"type":"object","objectId":"bridge-2"}}`)
	return move, read
}

// TestFirstReadCarriesTheVerdict: a top-level document's Permissions Policy
// verdict (from its response headers) goes with the bridge's first read,
// before the list, so the tools that waited for it are in that list: one
// round trip from the hand-off to the sink, with no policy call of its own
// and no second read. A denial stands the same way, with the refusals of
// what the document tried to register.
func TestFirstReadCarriesTheVerdict(t *testing.T) {
	for _, tc := range []struct {
		name    string
		header  string
		verdict string // the read's first argument
		list    string
		tools   int
		refused int
	}{
		{"allowed", "", "true", `{"url":"http://a.test/","tools":[{"name":"a","description":"A."}]}`, 1, 0},
		{"denied", "tools=()", "false", `{"url":"http://a.test/","tools":[],"denied":{"names":["a"],"more":0}}`, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := newFakeSink()
			b, f := startBrowserWith(t, polyfill.BackendPolyfill, sink)
			_, read := handOver(t, b, f, tc.header)
			var p runtime.CallFunctionOnParams
			if err := json.Unmarshal(read.Params, &p); err != nil {
				t.Fatal(err)
			}
			if len(p.Arguments) == 0 || string(p.Arguments[0].Value) != tc.verdict {
				t.Fatalf("the first read's verdict argument: %s, want %s", read.Params, tc.verdict)
			}
			f.reply(t, read.ID, stringResult(t, `{"info":{"native":false,"url":"http://a.test/"},"list":`+tc.list+`}`))
			u := sink.next(t, "Update")
			if len(u.tools) != tc.tools || len(u.ref) != tc.refused {
				t.Errorf("the first Update has %d tools and %d refusals, want %d and %d", len(u.tools), len(u.ref), tc.tools, tc.refused)
			}
			// Once the document's reads are done, none of the writes was a
			// policy call or a second read (the relay's push may be there).
			waitRead(t, b)
			for len(f.out) > 0 {
				m := <-f.out
				if p := string(m.Params); strings.Contains(p, "this.policy(") || strings.Contains(p, "this.list(") {
					t.Errorf("a second round trip: %s", p)
				}
			}
		})
	}
}

// waitRead waits until tab T1's documents have been read (no read running
// or asked for), waking on the browser's progress, not on a clock.
func waitRead(t *testing.T, b *Browser) {
	t.Helper()
	deadline := time.After(patience)
	for {
		b.mu.Lock()
		n := b.unreadLocked(map[string]bool{"T1": true})
		progress := b.progress
		b.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-progress:
		case <-deadline:
			t.Fatalf("%d reads of tab T1 still running", n)
		}
	}
}

// TestLoadReadsOnlyWithoutTheBinding: the reads at DOMContentLoaded and load
// are a safety net for pings lost while the page script had no binding. A
// document whose last list says the script holds it is not read again
// (every change since pinged); one whose script has none still is.
func TestLoadReadsOnlyWithoutTheBinding(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bound bool
	}{
		{"bound", true},
		{"no binding yet", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, f := startBrowserWith(t, polyfill.BackendPolyfill, newFakeSink())
			_, read := handOver(t, b, f, "")
			f.reply(t, read.ID, stringResult(t, fmt.Sprintf(`{"info":{"native":false,"url":"http://a.test/"},"list":{"url":"http://a.test/","tools":[],"bound":%v}}`, tc.bound)))
			waitRead(t, b)
			for len(f.out) > 0 {
				<-f.out // the relay's push
			}
			f.feed(t, event("S1", cdproto.EventPageLoadEventFired, `{"timestamp":1}`))
			f.barrier(t) // the load event is handled: a read it asks for is counted
			b.mu.Lock()
			d := b.docs["S1/u3"]
			asked := d.queued > 0 || d.busy
			b.mu.Unlock()
			if asked != !tc.bound {
				t.Fatalf("a read after the load event: %v, want %v", asked, !tc.bound)
			}
			if asked {
				for {
					m := f.next(t)
					if strings.Contains(string(m.Params), "this.list(") {
						f.reply(t, m.ID, stringResult(t, `{"url":"http://a.test/","tools":[],"bound":true}`))
						break
					}
				}
			}
			waitRead(t, b)
		})
	}
}
