package cdp

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/runtime"
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
