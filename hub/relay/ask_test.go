package relay

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub/relay/proxy"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// dialogHub is a fakeHub whose tool "confirm" opens a confirm() dialog, as
// a page would, says that it was answered, waits for release, and returns
// what the page saw.
type dialogHub struct {
	*fakeHub
	answered chan bool
	release  chan struct{}
}

func (d *dialogHub) Call(ctx context.Context, name string, args json.RawMessage) core.Outcome {
	if name != "confirm" {
		return d.fakeHub.Call(ctx, name, args)
	}
	ans := core.DialogFuncFrom(ctx)(ctx, core.Dialog{Type: "confirm", Message: "Sure?", URL: "https://app.example/"})
	d.answered <- ans.Accept
	select {
	case <-d.release:
	case <-ctx.Done():
	}
	if ans.Accept {
		return core.Text("the page saw true")
	}
	return core.Text("the page saw false")
}

// askSide is a browser side over a dialogHub, called directly (no relay).
func askSide(t *testing.T) (*BrowserSide, *dialogHub) {
	t.Helper()
	d := &dialogHub{fakeHub: newFakeHub(), answered: make(chan bool, 1), release: make(chan struct{})}
	b, err := NewBrowserSide(BrowserSideOptions{
		URL: "ws://127.0.0.1:1/extension", Token: "t", Name: "n", Hub: d, Actions: &fakeActions{},
		CallTimeout: time.Minute, Logger: quietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return b, d
}

// toolsCallJSON calls the browser side's tools/call for connection conn.
func toolsCallJSON(t *testing.T, b *BrowserSide, conn string, p proxy.ToolsCallParams) (*mcp.CallToolResult, error) {
	t.Helper()
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.toolsCall(context.Background(), conn, raw)
	if err != nil {
		return nil, err
	}
	return res.(*mcp.CallToolResult), nil
}

var askMeta = &proxy.ToolsCallMeta{Dialogs: proxy.DialogsAsk}

// TestAskedCallBounds: the browser side refuses a tools/call whose
// requestState, answer or _meta is out of bounds, before anything runs.
func TestAskedCallBounds(t *testing.T) {
	answer := `{"dialog":{"action":"accept","content":{"confirm":true}}}`
	tests := []struct {
		name  string
		p     proxy.ToolsCallParams
		asked bool
		says  string // "" when accepted
	}{
		{name: "no _meta: the old behaviour", p: proxy.ToolsCallParams{Name: "x"}},
		{name: "ask", p: proxy.ToolsCallParams{Name: "x", Meta: askMeta}, asked: true},
		{name: "a policy", p: proxy.ToolsCallParams{Name: "x", Meta: &proxy.ToolsCallMeta{Dialogs: "dismiss"}}, asked: true},
		{name: "a retry", p: proxy.ToolsCallParams{Name: "x", Meta: askMeta, RequestState: "s", InputResponses: json.RawMessage(answer)}, asked: true},
		{name: "an unknown policy", p: proxy.ToolsCallParams{Name: "x", Meta: &proxy.ToolsCallMeta{Dialogs: "maybe"}}, says: "use \"ask\""},
		{name: "oversize requestState", p: proxy.ToolsCallParams{Name: "x", Meta: askMeta, RequestState: strings.Repeat("s", proxy.MaxRequestState+1)}, says: "requestState has 257 bytes"},
		{name: "oversize answer", p: proxy.ToolsCallParams{Name: "x", Meta: askMeta, RequestState: "s",
			InputResponses: json.RawMessage(`{"dialog":{"action":"accept","content":{"text":"` + strings.Repeat("a", proxy.MaxAnswerBytes) + `"}}}`)}, says: "over the limit of 65536"},
		{name: "an answer without requestState", p: proxy.ToolsCallParams{Name: "x", Meta: askMeta, InputResponses: json.RawMessage(answer)}, says: "needs the requestState"},
		{name: "a foreign key in inputResponses", p: proxy.ToolsCallParams{Name: "x", Meta: askMeta, RequestState: "s",
			InputResponses: json.RawMessage(`{"confirm":{"action":"accept"}}`)}, says: `holds "confirm"`},
		{name: "a foreign key beside the answer", p: proxy.ToolsCallParams{Name: "x", Meta: askMeta, RequestState: "s",
			InputResponses: json.RawMessage(`{"dialog":{"action":"accept"},"other":{"action":"accept"}}`)}, says: `holds "other"`},
		{name: "inputResponses not an object", p: proxy.ToolsCallParams{Name: "x", Meta: askMeta, RequestState: "s", InputResponses: json.RawMessage(`[1]`)}, says: "inputResponses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, asked, err := askedCall("c1", tt.p)
			if tt.says == "" {
				if err != nil || asked != tt.asked {
					t.Fatalf("asked %v, err %v; want asked %v and no error", asked, err, tt.asked)
				}
				return
			}
			var perr *proxy.Error
			if !errors.As(err, &perr) || perr.Code != proxy.CodeInvalidParams || !strings.Contains(perr.Message, tt.says) {
				t.Fatalf("error %v, want invalid params saying %q", err, tt.says)
			}
		})
	}
}

// TestQuestionBounds: the connect side passes on only one form question of
// bounded size, rebuilt from its checked fields.
func TestQuestionBounds(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}}}`)
	ok := func(mod func(*mcp.CallToolResult)) *mcp.CallToolResult {
		r := &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{proxy.QuestionKey: &mcp.ElicitParams{Message: "Sure?", RequestedSchema: schema}},
			RequestState:  "state",
		}
		if mod != nil {
			mod(r)
		}
		return r
	}
	q := func(r *mcp.CallToolResult) *mcp.ElicitParams {
		return r.InputRequests[proxy.QuestionKey].(*mcp.ElicitParams)
	}
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		says string // "" when passed on
	}{
		{"a form question", ok(nil), ""},
		{"two questions", ok(func(r *mcp.CallToolResult) { r.InputRequests["other"] = &mcp.ElicitParams{Message: "?"} }), "asks 2 questions"},
		{"no requestState", ok(func(r *mcp.CallToolResult) { r.RequestState = "" }), "requestState has 0 bytes"},
		{"oversize requestState", ok(func(r *mcp.CallToolResult) { r.RequestState = strings.Repeat("s", proxy.MaxRequestState+1) }), "requestState has 257 bytes"},
		{"oversize question", ok(func(r *mcp.CallToolResult) { q(r).Message = strings.Repeat("q", proxy.MaxQuestionBytes+1) }), "over the limit of 16384"},
		{"oversize schema", ok(func(r *mcp.CallToolResult) {
			q(r).RequestedSchema = json.RawMessage(`{"type":"object","description":"` + strings.Repeat("d", proxy.MaxQuestionSchemaBytes) + `"}`)
		}), "schema has"},
		{"a schema that is not an object's", ok(func(r *mcp.CallToolResult) { q(r).RequestedSchema = json.RawMessage(`{"type":"string"}`) }), "not an object schema"},
		{"a URL elicitation", ok(func(r *mcp.CallToolResult) { q(r).Mode = "url"; q(r).URL = "https://evil.example/" }), "only forms"},
		{"under another key", ok(func(r *mcp.CallToolResult) {
			r.InputRequests = mcp.InputRequestMap{"confirm": q(r)}
		}), "not an elicitation under"},
		{"a question with content", ok(func(r *mcp.CallToolResult) { r.Content = []mcp.Content{&mcp.TextContent{Text: "x"}} }), "has content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := question(tt.res)
			if tt.says == "" {
				if err != nil || got.Message != "Sure?" || string(got.RequestedSchema.(json.RawMessage)) != string(schema) {
					t.Fatalf("question = %+v, %v", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("error %v, want one saying %q", err, tt.says)
			}
		})
	}
}

// TestAskerRetries: a question's requestState answers only for the
// connection whose call asked it, and only one retry may wait for a call at
// a time; the right retry's answer reaches the page.
func TestAskerRetries(t *testing.T) {
	b, d := askSide(t)
	first, err := toolsCallJSON(t, b, "c1", proxy.ToolsCallParams{Name: "confirm", Meta: askMeta})
	if err != nil || first.IsError || first.RequestState == "" || first.InputRequests[proxy.QuestionKey] == nil {
		t.Fatalf("first call = %+v, %v; want a question", first, err)
	}
	answer := json.RawMessage(`{"dialog":{"action":"accept","content":{"confirm":true}}}`)
	retry := proxy.ToolsCallParams{Name: "confirm", Meta: askMeta, RequestState: first.RequestState, InputResponses: answer}

	tests := []struct {
		name string
		conn string
		p    proxy.ToolsCallParams
		says string
	}{
		{"another connection's requestState", "c2", retry, "over or unknown"},
		{"a forged requestState", "c1", proxy.ToolsCallParams{Name: "confirm", Meta: askMeta, RequestState: first.RequestState + "0", InputResponses: answer}, "over or unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := toolsCallJSON(t, b, tt.conn, tt.p)
			if err != nil || !res.IsError || !strings.Contains(textOf(res), tt.says) {
				t.Fatalf("retry = %+v, %v; want an error result saying %q", res, err, tt.says)
			}
		})
	}

	// The owner's retry answers; while it waits for the page, a second
	// retry with the same state is refused.
	done := make(chan *mcp.CallToolResult, 1)
	raw, err := json.Marshal(retry)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		res, err := b.toolsCall(context.Background(), "c1", raw)
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
		}
		done <- res.(*mcp.CallToolResult)
	}()
	if saw := <-d.answered; !saw {
		t.Fatal("the page saw false; the client accepted")
	}
	second, err := toolsCallJSON(t, b, "c1", retry)
	if err != nil || !second.IsError || !strings.Contains(textOf(second), "already waits") {
		t.Fatalf("second waiting retry = %+v, %v; want it refused", second, err)
	}
	close(d.release)
	if res := <-done; res.IsError || textOf(res) != "the page saw true" {
		t.Fatalf("the owner's retry = %+v", res)
	}
}
