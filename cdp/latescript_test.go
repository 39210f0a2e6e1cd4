package cdp

import (
	"encoding/json"
	"fmt"
	"testing"

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
		frame         string
		want          bool
	}{
		{"held", false, "T1", false},
		{"not held", true, "T1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := preexistingSink{newFakeSink()}
			b, f := startBrowserWith(t, polyfill.BackendPolyfill, sink)
			f.feed(t, attachedEvent("", "S1", "T1", "page", "http://a.test/", true))
			for {
				m := f.next(t)
				f.reply(t, m.ID, `{}`)
				if string(m.Method) == runtime.CommandRunIfWaitingForDebugger {
					break
				}
			}
			f.feed(t, event("S1", cdproto.EventRuntimeExecutionContextCreated, fmt.Sprintf(
				`{"context":{"id":3,"origin":"http://a.test","name":"","uniqueId":"u3","auxData":{"isDefault":true,"frameId":%q}}}`, tc.frame)))
			f.feed(t, event("S1", cdproto.EventRuntimeConsoleAPICalled, fmt.Sprintf(
				`{"type":"debug","args":[{"type":"string","value":%q},{"type":"object","objectId":"bridge-1"}],"executionContextId":3,"timestamp":1}`,
				polyfill.BridgeMarker+b.nonce)))
			move, read := f.next(t), f.next(t)
			f.reply(t, move.ID, `{"result":{"type":"object","objectId":"bridge-2"}}`)
			first := fmt.Sprintf(`{"info":{"native":false,"url":"http://a.test/","startedBefore":%v},"list":{"url":"http://a.test/","tools":[]}}`, tc.startedBefore)
			f.reply(t, read.ID, stringResult(t, first))
			policy := f.next(t) // the Permissions Policy verdict
			f.reply(t, policy.ID, stringResult(t, "true"))

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
