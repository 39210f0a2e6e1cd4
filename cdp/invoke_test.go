package cdp

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/runtime"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// TestInvokeParams: the hand-rendered Runtime.callFunctionOn of a bridge
// call says what cdproto's encoding of the same parameters says.
func TestInvokeParams(t *testing.T) {
	for _, tc := range []struct {
		name, tool, input string
	}{
		{"plain", "search", `{"q":"x"}`},
		{"quotes and escapes", `a"b\c`, `{"q":"line\nbreak \"quoted\" </script> \u2028"}`},
		{"unicode", "ツール", `{"q":"héllo 😀"}`},
		{"empty input", "t", `{}`},
		{"invalid UTF-8", "t", "{\"q\":\"\xff\"}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := invokeParams("obj-1.2", tc.tool, []byte(tc.input), "42", 1<<20)
			if !json.Valid(got) {
				t.Fatalf("not JSON: %s", got)
			}
			want, err := jsonv2.Marshal(runtime.CallFunctionOnParams{
				FunctionDeclaration: "function(n,i,c,m){return this.call(n,i,c,m)}",
				ObjectID:            "obj-1.2",
				Arguments: []*runtime.CallArgument{
					{Value: jsonString(tc.tool)}, {Value: jsonString(tc.input)},
					{Value: jsonString("42")}, {Value: jsonv2.Value(strconv.Itoa(1 << 20))},
				},
				AwaitPromise:  ptr(true),
				ReturnByValue: ptr(true),
				Silent:        ptr(true),
			})
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("invokeParams =\n%s\nwant (as cdproto encodes it)\n%s", got, want)
			}
		})
	}
}

func BenchmarkInvokeParams(b *testing.B) {
	input := []byte(`{"text":"x","n":1,"nested":{"a":[1,2,3]}}`)
	b.ReportAllocs()
	for b.Loop() {
		invokeParams("-123456789.1.2", "echo_0", input, "1234", 1<<20)
	}
}

// TestParseAnswer: the bridge's one-string answer reads back as the
// completion it rendered; any other shape is an error that says to reload.
func TestParseAnswer(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want core.Result
		err  string
	}{
		{in: "string:hi", want: core.Result{Kind: core.KindString, Value: "hi"}},
		{in: "string:", want: core.Result{Kind: core.KindString}},
		{in: "string:a:b:c", want: core.Result{Kind: core.KindString, Value: "a:b:c"}},
		{in: `json:{"a":1}`, want: core.Result{Kind: core.KindJSON, Value: `{"a":1}`}},
		{in: "undefined:", want: core.Result{Kind: core.KindUndefined}},
		{in: "navigated:", want: core.Result{Kind: kindNavigated}},
		{in: "string/70000:abc", want: core.Result{Kind: core.KindString, Value: "abc", Truncated: 70000}},
		{in: "error:no tool named \"x\"", want: core.Result{Err: `no tool named "x"`}},
		{in: "error:", want: core.Result{}},
		{in: "", err: "unknown shape"},
		{in: "hello", err: "unknown shape"},
		{in: "number:1", err: "unknown kind"},
		{in: "string/x:abc", err: "bad length"},
		{in: "string/0:abc", err: "bad length"},
		{in: "string/-3:abc", err: "bad length"},
		// A timed call (Options.PageTimes): the time execute took, first.
		{in: "@1500:string:hi", want: core.Result{Kind: core.KindString, Value: "hi", PageTook: 1500 * time.Microsecond, PageTimed: true}},
		{in: "@0:error:boom", want: core.Result{Err: "boom", PageTimed: true}},
		{in: "@x:string:hi", err: "bad time"},
		{in: "@-1:string:hi", err: "bad time"},
		{in: "@12", err: "bad time"},
		{in: "@12:hello", err: "unknown shape"},
	} {
		got, err := parseAnswer(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "reload") {
				t.Errorf("parseAnswer(%q) = %+v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseAnswer(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

// TestCallError: CDP's words for a document that went under a call are
// ErrNavigated (core.ErrNavigated, which the hub reads) whether or not the
// browser has reported the document gone yet; other failures stay as they
// are.
func TestCallError(t *testing.T) {
	b := &Browser{}
	for _, tc := range []struct {
		name  string
		alive bool
		err   string
		want  error // nil: the error itself
	}{
		{"context destroyed", true, "Runtime.callFunctionOn: Execution context was destroyed. (-32000)", core.ErrNavigated},
		{"context not found", true, "Runtime.callFunctionOn: Cannot find context with specified id (-32000)", core.ErrNavigated},
		{"bridge object gone", true, "Runtime.callFunctionOn: Could not find object with given id (-32000)", core.ErrNavigated},
		{"target navigated or closed", true, "Runtime.callFunctionOn: Inspected target navigated or closed (-32000)", core.ErrNavigated},
		{"document reported gone", false, "some other failure", core.ErrNavigated},
		{"another failure", true, "the page script failed: boom", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := errors.New(tc.err)
			got := b.callError(&docState{alive: tc.alive}, err)
			want := tc.want
			if want == nil {
				want = err
			}
			if !errors.Is(got, want) {
				t.Errorf("callError(%q) = %v, want %v", tc.err, got, want)
			}
		})
	}
}
