package cdp

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/network"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// TestDiagnoseEvents plays a page's events into a followed tab: the main
// document's status and load event, its errors, the bounds, and the
// requests that are not the page's.
func TestDiagnoseEvents(t *testing.T) {
	b, _, _ := newTestBrowser(t)
	b.EnableDiagnosis()
	td := &tabDiag{requests: map[network.RequestID]request{}, changed: make(chan struct{})}
	b.diag.tabs = map[string]*tabDiag{"T1": td}
	page := &targetState{kind: "page", targetID: "T1", tab: "T1"}
	frame := &targetState{kind: "iframe", targetID: "F9", tab: "T1"}
	other := &targetState{kind: "page", targetID: "T2", tab: "T2"}
	ev := func(tgt *targetState, method, params string) {
		b.diagnoseEvent(tgt, &cdproto.Message{Method: cdproto.MethodType(method), Params: jsonv2.Value(params)})
	}

	load, changed, ok := b.PageLoad("T1")
	if !ok || load != (core.PageLoad{}) {
		t.Fatalf("before any event: %+v, %v", load, ok)
	}
	// A load event of the first about:blank does not count.
	ev(page, "Page.loadEventFired", `{"timestamp":1}`)
	ev(page, "Network.requestWillBeSent", `{"requestId":"R1","loaderId":"R1","type":"Document","frameId":"T1","request":{"url":"http://s.test/app"}}`)
	ev(page, "Network.responseReceived", `{"requestId":"R1","loaderId":"R1","type":"Document","frameId":"T1","response":{"url":"http://s.test/app","status":200,"statusText":"OK"}}`)
	select {
	case <-changed:
	default:
		t.Fatal("the main document's response did not signal a change")
	}
	ev(page, "Page.frameNavigated", `{"frame":{"id":"T1","loaderId":"R1","url":"http://s.test/app","securityOrigin":"http://s.test","mimeType":"text/html"},"type":"Navigation"}`)
	ev(page, "Network.requestWillBeSent", `{"requestId":"R2","loaderId":"R1","type":"Script","frameId":"T1","request":{"url":"http://s.test/tools.js"}}`)
	ev(page, "Network.responseReceived", `{"requestId":"R2","loaderId":"R1","type":"Script","frameId":"T1","response":{"url":"http://s.test/tools.js","status":404,"statusText":"Not Found"}}`)
	ev(page, "Network.requestWillBeSent", `{"requestId":"R3","loaderId":"R1","type":"Fetch","frameId":"T1","request":{"url":"http://api.test/data"}}`)
	ev(page, "Network.loadingFailed", `{"requestId":"R3","type":"Fetch","errorText":"net::ERR_NAME_NOT_RESOLVED","canceled":false}`)
	ev(page, "Network.responseReceived", `{"requestId":"R4","type":"Other","frameId":"T1","response":{"url":"http://s.test/favicon.ico","status":404,"statusText":"Not Found"}}`)
	ev(frame, "Runtime.exceptionThrown", `{"timestamp":1,"exceptionDetails":{"exceptionId":1,"text":"Uncaught","lineNumber":14,"columnNumber":23,"url":"http://ads.test/f.js","exception":{"type":"object","description":"TypeError: x is undefined\n    at f.js:15:24"}}}`)
	ev(page, "Runtime.consoleAPICalled", `{"type":"error","args":[{"type":"string","value":"could not start:"},{"type":"object","description":"Error: boom\n    at a"}],"executionContextId":1,"timestamp":1,"stackTrace":{"callFrames":[{"functionName":"","scriptId":"1","url":"http://s.test/app","lineNumber":9,"columnNumber":2}]}}`)
	ev(page, "Runtime.consoleAPICalled", `{"type":"log","args":[{"type":"string","value":"just a log"}],"executionContextId":1,"timestamp":1}`)
	ev(page, "Log.entryAdded", `{"entry":{"source":"network","level":"error","text":"Failed to load resource","timestamp":1}}`)
	ev(page, "Log.entryAdded", `{"entry":{"source":"security","level":"error","text":"Refused to execute script","url":"http://s.test/app","lineNumber":3,"timestamp":1}}`)
	ev(other, "Runtime.exceptionThrown", `{"timestamp":1,"exceptionDetails":{"exceptionId":2,"text":"Uncaught","lineNumber":0,"columnNumber":0}}`)
	ev(page, "Page.loadEventFired", `{"timestamp":2}`)

	d, _ := b.Diagnose(context.Background(), "T1") // no such session: the page is not asked
	wantLoad := core.PageLoad{URL: "http://s.test/app", Status: 200, StatusText: "OK", Loaded: true}
	if d.Load != wantLoad {
		t.Errorf("load %+v, want %+v", d.Load, wantLoad)
	}
	var got []string
	for _, p := range d.Problems {
		got = append(got, fmt.Sprintf("%s %s %s:%d:%d %d", p.Kind, p.Text, p.URL, p.Line, p.Column, p.Status))
	}
	want := []string{
		"request HTTP 404 Not Found http://s.test/tools.js:0:0 404",
		"request net::ERR_NAME_NOT_RESOLVED http://api.test/data:0:0 0",
		"exception Uncaught TypeError: x is undefined http://ads.test/f.js:15:24 0",
		"console console.error: could not start: Error: boom http://s.test/app:10:3 0",
		"log Refused to execute script http://s.test/app:3:0 0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Bounded: a page that logs errors in a loop keeps maxProblems.
	for i := 0; i < 3*maxProblems; i++ {
		ev(page, "Runtime.consoleAPICalled", `{"type":"error","args":[{"type":"string","value":"`+strings.Repeat("x", 2*maxProblemText)+`"}],"executionContextId":1,"timestamp":1}`)
	}
	d, _ = b.Diagnose(context.Background(), "T1")
	if len(d.Problems) != maxProblems || d.Dropped != 3*maxProblems-(maxProblems-len(want)) {
		t.Errorf("%d problems kept, %d dropped", len(d.Problems), d.Dropped)
	}
	if last := d.Problems[maxProblems-1].Text; len(last) > maxProblemText+len("…") {
		t.Errorf("a problem's text is %d bytes", len(last))
	}

	// A main document that fails is the load's error; a forgotten tab is
	// not followed.
	ev(page, "Network.requestWillBeSent", `{"requestId":"R9","loaderId":"R9","type":"Document","frameId":"T1","request":{"url":"http://s.test/next"}}`)
	ev(page, "Network.loadingFailed", `{"requestId":"R9","type":"Document","errorText":"net::ERR_CONNECTION_REFUSED","canceled":false}`)
	if l, _, _ := b.PageLoad("T1"); l.Err != "net::ERR_CONNECTION_REFUSED" || !l.Failed() {
		t.Errorf("after the main document failed: %+v", l)
	}
	b.ForgetPage("T1")
	if _, _, ok := b.PageLoad("T1"); ok {
		t.Error("a forgotten tab is still followed")
	}
}

// TestDiagnosisOff: without EnableDiagnosis no target gets the Network and
// Log domains, and OpenPage refuses.
func TestDiagnosisOff(t *testing.T) {
	b, _, _ := newTestBrowser(t)
	if steps := b.diagnosisSteps(); len(steps) != 0 {
		t.Errorf("setup steps without diagnosis: %v", steps)
	}
	if _, err := b.OpenPage(context.Background(), "http://s.test/", core.PageSetup{}); err == nil || !strings.Contains(err.Error(), "EnableDiagnosis") {
		t.Errorf("OpenPage without diagnosis: %v", err)
	}
	b.EnableDiagnosis()
	if steps := b.diagnosisSteps(); strings.Join(steps, ",") != "Network.enable,Log.enable" {
		t.Errorf("setup steps with diagnosis: %v", steps)
	}
}
