package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// conformancePage serves the MCP-B page server of fixtures/mcpconformance
// (the conformance suite's tools, resources and prompts), bundled now from
// the pinned packages; it returns the page's URL.
func conformancePage(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "fixtures", "mcpconformance", "server.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	return serveMCPB(t, string(src), nil) + "/"
}

// pageTool returns the routed name of the page's tool named name (a long
// name is shortened with a hash when routed; its source keeps it).
func pageTool(t *testing.T, tools map[string]*mcp.Tool, name string) string {
	t.Helper()
	for routed, tool := range tools {
		if src, ok := tool.Meta["webmcp-cdp/source"].(map[string]any); ok && src["tool"] == name {
			return routed
		}
	}
	t.Fatalf("no tool of the page is named %s: %v", name, names(tools))
	return ""
}

// TestMCPBQuestionsNewClient: over stdio and over streamable HTTP, a page
// server's elicitation reaches a 2026-07-28 client as an input-required result (with the key the page gave
// it and a signed requestState), and the client's answer, sent back with
// the retry, reaches the page; several questions the page asks at once are
// one result; prompts/get asks the same way; a forged requestState is
// refused.
func TestMCPBQuestionsNewClient(t *testing.T) {
	t.Parallel()
	page := conformancePage(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) { questionsNewClient(t, page, transport) })
	}
}

func questionsNewClient(t *testing.T, page, transport string) {
	// The client answers nothing itself (its multi round-trip driver is off):
	// the test reads the input-required results as they come.
	opts := &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("not asked this way")
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, errors.New("not asked this way")
		},
	}
	var c *client
	if transport == "http" {
		c = httpClientWith(t, startHTTP(t, "launch", "--headless", "--http", "127.0.0.1:0", page), "", opts, "2026-07-28")
	} else {
		c = startProto(t, opts, "2026-07-28", "launch", "--headless", page)
	}
	if v := c.cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28", v)
	}
	tools := c.waitFor("the conformance page's tools", hasSuffix("test_simple_text", 1))
	ask := pageTool(t, tools, "test_input_required_result_elicitation")
	ctx := ctxFor(t, 30*time.Second)

	first, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: ask, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("%s: %v", ask, err)
	}
	q, _ := first.InputRequests["user_name"].(*mcp.ElicitParams)
	if !first.NeedsInput() || q == nil || q.Message != "What is your name?" || first.RequestState == "" {
		t.Fatalf("first result: needs input %v, requests %v, state %q; want the page's question under user_name", first.NeedsInput(), first.InputRequests, first.RequestState)
	}
	done, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: ask, Arguments: map[string]any{}, RequestState: first.RequestState,
		InputResponses: mcp.InputResponseMap{"user_name": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Alice"}}}})
	if err != nil || done.NeedsInput() || text(done) != "Hello, Alice!" {
		t.Fatalf("retry with the answer = %v %v %q, want Hello, Alice!", err, done != nil && done.NeedsInput(), text(done))
	}

	// A forged state is refused (a JSON-RPC error), not run.
	_, err = c.cs.CallTool(ctx, &mcp.CallToolParams{Name: ask, Arguments: map[string]any{}, RequestState: first.RequestState + "x",
		InputResponses: mcp.InputResponseMap{"user_name": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Mallory"}}}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("a forged requestState = %v, want a -32602 error", err)
	}

	// Three questions asked together are one result.
	multi := pageTool(t, tools, "test_input_required_result_multiple_inputs")
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: multi, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("%s: %v", multi, err)
	}
	if !res.NeedsInput() || len(res.InputRequests) != 3 {
		t.Fatalf("%s: %d input requests (%v), want the three in one result", multi, len(res.InputRequests), res.InputRequests)
	}
	if _, ok := res.InputRequests["client_roots"].(*mcp.ListRootsParams); !ok {
		t.Errorf("client_roots = %T, want a roots/list request", res.InputRequests["client_roots"])
	}
	res, err = c.cs.CallTool(ctx, &mcp.CallToolParams{Name: multi, Arguments: map[string]any{}, RequestState: res.RequestState,
		InputResponses: mcp.InputResponseMap{
			"user_name":    &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Bob"}},
			"greeting":     &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "hi"}},
			"client_roots": &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///tmp"}}},
		}})
	if err != nil || res.NeedsInput() || text(res) != "got all three answers" {
		t.Errorf("the three answers = %v %q", err, text(res))
	}

	// The client's capabilities reach the page with the call: it asks for
	// what this client declared (elicitation and sampling).
	res, err = c.cs.CallTool(ctx, &mcp.CallToolParams{Name: pageTool(t, tools, "test_input_required_result_capabilities"), Arguments: map[string]any{}})
	if err != nil || !res.NeedsInput() || res.InputRequests["user_name"] == nil || res.InputRequests["greeting"] == nil {
		t.Errorf("test_input_required_result_capabilities = %v %v, want questions for elicitation and sampling", err, res)
	}

	// prompts/get asks the same way.
	prompt := ""
	for p, err := range c.cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if src, _ := p.Meta["webmcp-cdp/source"].(map[string]any); src["name"] == "test_input_required_result_prompt" {
			prompt = p.Name
		}
	}
	pr, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt})
	if err != nil || !pr.NeedsInput() || pr.InputRequests["user_context"] == nil {
		t.Fatalf("prompts/get %q = %v, %v; want an input request user_context", prompt, err, pr)
	}
	pr, err = c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt, RequestState: pr.RequestState,
		InputResponses: mcp.InputResponseMap{"user_context": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"context": "checkout"}}}})
	if err != nil || pr.NeedsInput() || len(pr.Messages) != 1 || !strings.Contains(pr.Messages[0].Content.(*mcp.TextContent).Text, "checkout") {
		t.Errorf("prompts/get with the answer = %v %+v", err, pr)
	}

}

// TestMCPBQuestionsOldClient: for a 2025-11-25 client over streamable
// HTTP, a page server's elicitation and sampling are server requests on the
// call's stream, whose answers reach the page, also when the page asks
// again after the first answers; a question the client cannot
// answer (roots) ends the call with -32021; the page's log messages reach
// the client during the call.
func TestMCPBQuestionsOldClient(t *testing.T) {
	t.Parallel()
	page := conformancePage(t)
	endpoint := startHTTP(t, "launch", "--headless", "--http", "127.0.0.1:0", page)
	var asked atomic.Int32
	logs := make(chan string, 10)
	opts := &mcp.ClientOptions{
		// Elicitation and sampling (from the handlers), no roots.
		Capabilities: &mcp.ClientCapabilities{},
		// A 2025-11-25 client knows no input-required results: the go-sdk
		// client's own driver for them is off, as other SDKs have none.
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			switch req.Params.Message {
			case "Please answer":
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"response": "yes"}}, nil
			case "Step 1: What is your name?":
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
			case "Step 2: What is your favorite color?":
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"color": "blue"}}, nil
			}
			return nil, errors.New("unexpected question " + req.Params.Message)
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "e2e", Content: &mcp.TextContent{Text: "Paris"}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			s, _ := req.Params.Data.(string)
			logs <- s
		},
	}
	c := httpClientWith(t, endpoint, "", opts, "2025-11-25")
	if v := c.cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("negotiated %s, want 2025-11-25", v)
	}
	tools := c.waitFor("the conformance page's tools", hasSuffix("test_elicitation", 1))
	if got := c.callOK(toolWithSuffix(tools, "test_elicitation")[0], map[string]any{"message": "Please answer"}); got != `User response: action=accept, content={"response":"yes"}` {
		t.Errorf("test_elicitation = %q", got)
	}
	if asked.Load() != 1 {
		t.Errorf("the client was asked %d times, want 1", asked.Load())
	}
	// A page that asks again after the first answer: both questions reach
	// the old client as server requests, one after the other.
	asked.Store(0)
	if got := c.callOK(pageTool(t, tools, "test_input_required_result_multi_round"), map[string]any{}); got != "done: blue" {
		t.Errorf("two rounds of questions = %q, want done: blue", got)
	}
	if asked.Load() != 2 {
		t.Errorf("the client was asked %d times in two rounds, want 2", asked.Load())
	}
	if got := c.callOK(toolWithSuffix(tools, "test_sampling")[0], map[string]any{"prompt": "Capital of France?"}); got != "LLM response: Paris" {
		t.Errorf("test_sampling = %q", got)
	}
	ctx := ctxFor(t, 20*time.Second)
	// This client has no roots: a page asking for them ends the call with
	// -32021.
	_, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: pageTool(t, tools, "test_input_required_result_list_roots"), Arguments: map[string]any{}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != mcp.CodeMissingRequiredClientCapabilities || !strings.Contains(werr.Message, "roots") {
		t.Errorf("a roots/list question to a client without roots = %v, want -32021", err)
	}
	if err := c.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	c.callOK(toolWithSuffix(tools, "test_tool_with_logging")[0], map[string]any{})
	for _, want := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		select {
		case got := <-logs:
			if got != want {
				t.Errorf("log message %q, want %q", got, want)
			}
		case <-ctx.Done():
			t.Fatalf("the page's log message %q did not reach the client", want)
		}
	}
}
