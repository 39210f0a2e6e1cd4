package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPageRelaysOnly: a page's question goes to the only relayed request in
// flight, or to the only one of several whose client is not being asked
// already; otherwise to none.
func TestPageRelaysOnly(t *testing.T) {
	running := func() *pendingCall { return &pendingCall{} }
	asking := func() *pendingCall { return &pendingCall{asked: []*pageQuestion{{key: "k"}}} }
	confirming := func() *pendingCall { return &pendingCall{confirming: true} }
	for _, tc := range []struct {
		name  string
		calls []*pendingCall
		want  int // index of the chosen call, -1 for none
	}{
		{"none", nil, -1},
		{"one running", []*pendingCall{running()}, 0},
		{"one asking (it may ask more)", []*pendingCall{asking()}, 0},
		{"two running", []*pendingCall{running(), running()}, -1},
		{"one running beside one asking", []*pendingCall{asking(), running()}, 1},
		{"one running beside one confirming", []*pendingCall{confirming(), running()}, 1},
		{"two asking", []*pendingCall{asking(), asking()}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r pageRelays
			for _, pc := range tc.calls {
				defer r.enter(pc)()
			}
			got, n := r.only()
			if n != len(tc.calls) {
				t.Errorf("in flight = %d, want %d", n, len(tc.calls))
			}
			switch {
			case tc.want < 0 && got != nil:
				t.Errorf("chose a call, want none")
			case tc.want >= 0 && got != tc.calls[tc.want]:
				t.Errorf("chose %p, want call %d", got, tc.want)
			}
		})
	}
}

// TestPageQuestionDecode: a page's request becomes a question of the right
// kind, keyed by the page's own key when it is a valid one (the hint is not
// passed on), else numbered; bad params are an error.
func TestPageQuestionDecode(t *testing.T) {
	for _, tc := range []struct {
		name, method, params string
		key                  string // "" for a number
		kind                 string
		bad                  bool
	}{
		{"named elicitation", "elicitation/create", `{"message":"m","requestedSchema":{"type":"object"},"_meta":{"webmcp-cdp/inputKey":"user_name"}}`, "user_name", "*mcp.ElicitParams", false},
		{"unnamed elicitation", "elicitation/create", `{"message":"m","requestedSchema":{"type":"object"}}`, "", "*mcp.ElicitParams", false},
		{"a key with a space", "elicitation/create", `{"message":"m","_meta":{"webmcp-cdp/inputKey":"a b"}}`, "", "*mcp.ElicitParams", false},
		{"a key too long", "elicitation/create", `{"message":"m","_meta":{"webmcp-cdp/inputKey":"` + strings.Repeat("k", 65) + `"}}`, "", "*mcp.ElicitParams", false},
		{"a key not a string", "elicitation/create", `{"message":"m","_meta":{"webmcp-cdp/inputKey":7}}`, "", "*mcp.ElicitParams", false},
		{"sampling", "sampling/createMessage", `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}`, "", "*mcp.CreateMessageParams", false},
		{"roots without params", "roots/list", ``, "", "*mcp.ListRootsParams", false},
		{"params not an object", "elicitation/create", `[1,2]`, "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r pageRelays
			id, _ := jsonrpc.MakeID(int64(1))
			req := &jsonrpc.Request{ID: id, Method: tc.method, Params: json.RawMessage(tc.params)}
			q, err := r.question(req)
			if tc.bad {
				if err == nil {
					t.Fatalf("no error for %s", tc.params)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := typeName(q.req); got != tc.kind {
				t.Errorf("kind %s, want %s", got, tc.kind)
			}
			if tc.key != "" && q.key != tc.key {
				t.Errorf("key %q, want %q", q.key, tc.key)
			}
			if tc.key == "" && !strings.HasPrefix(q.key, kindOf(tc.method)+"-") {
				t.Errorf("key %q, want a numbered %s key", q.key, kindOf(tc.method))
			}
			if raw, _ := json.Marshal(q.req); strings.Contains(string(raw), inputKeyMeta) {
				t.Errorf("the key hint is passed on: %s", raw)
			}
		})
	}
}

func typeName(v any) string {
	switch v.(type) {
	case *mcp.ElicitParams:
		return "*mcp.ElicitParams"
	case *mcp.CreateMessageParams:
		return "*mcp.CreateMessageParams"
	case *mcp.CreateMessageWithToolsParams:
		return "*mcp.CreateMessageWithToolsParams"
	case *mcp.ListRootsParams:
		return "*mcp.ListRootsParams"
	}
	return "?"
}

// TestMissingCapability: which capability a client lacks for a question.
func TestMissingCapability(t *testing.T) {
	form := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}
	all := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}},
		Sampling: &mcp.SamplingCapabilities{}, RootsV2: &mcp.RootCapabilities{}}
	for _, tc := range []struct {
		name string
		caps *mcp.ClientCapabilities
		req  mcp.InputRequest
		want string
	}{
		{"no capabilities", nil, &mcp.ElicitParams{}, "elicitation"},
		{"form elicitation", form, &mcp.ElicitParams{}, ""},
		{"url elicitation without url", form, &mcp.ElicitParams{Mode: "url"}, "elicitation.url"},
		{"url elicitation", all, &mcp.ElicitParams{Mode: "url"}, ""},
		{"sampling without it", form, &mcp.CreateMessageParams{}, "sampling"},
		{"sampling", all, &mcp.CreateMessageParams{}, ""},
		{"roots without them", form, &mcp.ListRootsParams{}, "roots"},
		{"roots", all, &mcp.ListRootsParams{}, ""},
	} {
		if got := missingCapability(tc.caps, tc.req); got != tc.want {
			t.Errorf("%s: missing %q, want %q", tc.name, got, tc.want)
		}
	}
}
