package cdp

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/webmcp"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

func newNativeCalls() *nativeCalls {
	n := new(nativeCalls)
	n.init()
	return n
}

func responded(id string) *webmcp.EventToolResponded {
	return &webmcp.EventToolResponded{InvocationID: id, Status: webmcp.InvocationStatusCompleted, Output: jsonv2.Value(`"` + id + `"`)}
}

// take returns what ch already holds, or nil.
func take(ch chan *webmcp.EventToolResponded) *webmcp.EventToolResponded {
	select {
	case ev := <-ch:
		return ev
	default:
		return nil
	}
}

func TestNativeCallsEarly(t *testing.T) {
	n := newNativeCalls()
	ev := responded("1")
	n.responded(ev)
	ch := n.wait("1")
	if got := take(ch); got != ev {
		t.Fatalf("an early event was not delivered to its wait: %v", got)
	}
	if len(n.early) != 0 {
		t.Errorf("a claimed early event is still kept: %v", n.early)
	}
	// It is delivered once: a second wait for the id gets nothing.
	if got := take(n.wait("1")); got != nil {
		t.Errorf("an early event was delivered twice: %v", got)
	}
}

func TestNativeCallsWaitFirst(t *testing.T) {
	n := newNativeCalls()
	ch := n.wait("7")
	if got := take(ch); got != nil {
		t.Fatalf("wait delivered %v before any event", got)
	}
	// Another invocation's event does not reach this waiter.
	n.responded(responded("8"))
	if got := take(ch); got != nil {
		t.Fatalf("the waiter of 7 got %v", got)
	}
	ev := responded("7")
	n.responded(ev) // must not block: the channel has room
	if got := take(ch); got != ev {
		t.Fatalf("the waiter got %v, want the event of 7", got)
	}
	if _, ok := n.waiters["7"]; ok {
		t.Error("a served waiter is still registered")
	}
	if _, ok := n.early["7"]; ok {
		t.Error("an event that had a waiter was also kept as early")
	}
}

func TestNativeCallsForget(t *testing.T) {
	n := newNativeCalls()
	ch := n.wait("3")
	n.forget("3")
	if _, ok := n.waiters["3"]; ok {
		t.Fatal("forget left the waiter")
	}
	n.responded(responded("3"))
	if got := take(ch); got != nil {
		t.Errorf("a forgotten waiter got %v", got)
	}
	n.forget("never-waited") // harmless
}

func TestNativeCallsEarlyBounded(t *testing.T) {
	n := newNativeCalls()
	const pushed = 300
	for i := range pushed {
		n.responded(responded(fmt.Sprint(i)))
		if len(n.early) > 256 {
			t.Fatalf("after %d events, %d are kept", i+1, len(n.early))
		}
	}
	if len(n.early) > 256 || len(n.order) > 256 {
		t.Errorf("kept %d events (order %d), want at most 256", len(n.early), len(n.order))
	}
	// The newest are the ones kept.
	last := fmt.Sprint(pushed - 1)
	if got := take(n.wait(last)); got == nil || got.InvocationID != last {
		t.Errorf("the newest early event was dropped: %v", got)
	}
	if got := take(n.wait("0")); got != nil {
		t.Errorf("the oldest early event was kept: %v", got)
	}
}

func TestNativeResult(t *testing.T) {
	for _, tc := range []struct {
		name string
		ev   webmcp.EventToolResponded
		max  int
		want core.Result
	}{
		{
			name: "string",
			ev:   webmcp.EventToolResponded{Status: webmcp.InvocationStatusCompleted, Output: jsonv2.Value(`"hi"`)},
			want: core.Result{Kind: "string", Value: "hi"},
		},
		{
			name: "string holding an object",
			ev:   webmcp.EventToolResponded{Status: webmcp.InvocationStatusCompleted, Output: jsonv2.Value(`"{\"a\":1}"`)},
			want: core.Result{Kind: "json", Value: `{"a":1}`},
		},
		{
			name: "string holding an array",
			ev:   webmcp.EventToolResponded{Status: webmcp.InvocationStatusCompleted, Output: jsonv2.Value(`" [1,2]"`)},
			want: core.Result{Kind: "json", Value: ` [1,2]`},
		},
		{
			name: "string that only looks like an object",
			ev:   webmcp.EventToolResponded{Status: webmcp.InvocationStatusCompleted, Output: jsonv2.Value(`"{not json"`)},
			want: core.Result{Kind: "string", Value: "{not json"},
		},
		{
			name: "non-string output",
			ev:   webmcp.EventToolResponded{Status: webmcp.InvocationStatusCompleted, Output: jsonv2.Value(`{"b":[1]}`)},
			want: core.Result{Kind: "json", Value: `{"b":[1]}`},
		},
		{
			name: "no output",
			ev:   webmcp.EventToolResponded{Status: webmcp.InvocationStatusCompleted},
			want: core.Result{Kind: "undefined"},
		},
		{
			name: "error with a stack",
			ev: webmcp.EventToolResponded{Status: webmcp.InvocationStatusError, ErrorText: "Uncaught",
				Exception: &runtime.RemoteObject{Type: runtime.RemoteObjectTypeObject, Description: "Error: boom\n    at x"}},
			want: core.Result{Err: "Error: boom"},
		},
		{
			name: "error text only",
			ev:   webmcp.EventToolResponded{Status: webmcp.InvocationStatusError, ErrorText: "tool not found"},
			want: core.Result{Err: "tool not found"},
		},
		{
			name: "error with an empty exception description",
			ev: webmcp.EventToolResponded{Status: webmcp.InvocationStatusError, ErrorText: "Uncaught",
				Exception: &runtime.RemoteObject{Type: runtime.RemoteObjectTypeString}},
			want: core.Result{Err: "Uncaught"},
		},
		{
			name: "output over the limit",
			ev:   webmcp.EventToolResponded{Status: webmcp.InvocationStatusCompleted, Output: jsonv2.Value(`"hello world"`)},
			max:  5,
			want: core.Result{Kind: "string", Value: "hello", Truncated: 11},
		},
		{
			name: "json output over the limit",
			ev:   webmcp.EventToolResponded{Status: webmcp.InvocationStatusCompleted, Output: jsonv2.Value(`[1,2,3]`)},
			max:  3,
			want: core.Result{Kind: "json", Value: "[1,", Truncated: 7},
		},
		{
			name: "output at the limit",
			ev:   webmcp.EventToolResponded{Status: webmcp.InvocationStatusCompleted, Output: jsonv2.Value(`"hello"`)},
			max:  5,
			want: core.Result{Kind: "string", Value: "hello"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limit := tc.max
			if limit == 0 {
				limit = 1 << 20
			}
			if got := nativeResult(&tc.ev, limit); got != tc.want {
				t.Errorf("nativeResult = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestNativeResultCanceledWithoutText(t *testing.T) {
	got := nativeResult(&webmcp.EventToolResponded{InvocationID: "1", Status: webmcp.InvocationStatusCanceled}, 1<<20)
	if got.Err == "" || !strings.Contains(got.Err, string(webmcp.InvocationStatusCanceled)) {
		t.Errorf("Err = %q, want one naming the status %q", got.Err, webmcp.InvocationStatusCanceled)
	}
	if got.Kind != "" || got.Value != "" {
		t.Errorf("a canceled call has a value: %+v", got)
	}
}

// A cut never splits a character, and claimed early events do not count
// against the bound of unclaimed ones.
func TestNativeFixes(t *testing.T) {
	r := nativeResult(&webmcp.EventToolResponded{Status: webmcp.InvocationStatusCompleted, Output: []byte(`"héllo"`)}, 2)
	if !utf8.ValidString(r.Value) || r.Value != "h" || r.Truncated != 6 {
		t.Errorf("cut = %q (truncated %d), want \"h\" of 6", r.Value, r.Truncated)
	}
	var n nativeCalls
	n.init()
	n.responded(&webmcp.EventToolResponded{InvocationID: "X"})
	for i := 0; i < 300; i++ {
		id := fmt.Sprint("Y", i)
		n.responded(&webmcp.EventToolResponded{InvocationID: id})
		<-n.wait(id)
	}
	select {
	case ev := <-n.wait("X"):
		if ev.InvocationID != "X" {
			t.Errorf("got %s", ev.InvocationID)
		}
	default:
		t.Error("an unclaimed event was dropped although only claimed ones came after it")
	}
}

// TestNativeCallsTimes: an execution is timed from toolInvoked to
// toolResponded, once; one without toolInvoked, or not yet responded, is
// not timed.
func TestNativeCallsTimes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		invoked   bool
		responded bool
		timed     bool
	}{
		{"invoked and responded", true, true, true},
		{"responded only", false, true, false},
		{"invoked only", true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNativeCalls()
			if tc.invoked {
				n.invoked("5", time.Now().Add(-time.Second))
			}
			if tc.responded {
				n.responded(responded("5"))
			}
			took, timed := n.took("5")
			if timed != tc.timed || (timed && took < time.Second) || (!timed && took != 0) {
				t.Errorf("took %v, timed %v; want timed %v (at least 1s)", took, timed, tc.timed)
			}
			if _, again := n.took("5"); again || len(n.times) != 0 {
				t.Errorf("a timing was kept after it was read: %v", n.times)
			}
		})
	}
	// Timings in flight are bounded.
	n := newNativeCalls()
	for i := range maxNativeTimes + 10 {
		n.invoked(fmt.Sprint(i), time.Now())
	}
	if len(n.times) > maxNativeTimes {
		t.Errorf("%d timings kept, want at most %d", len(n.times), maxNativeTimes)
	}
}
