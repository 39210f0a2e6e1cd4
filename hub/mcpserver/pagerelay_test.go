package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// askingServer is a page server (classic, 2025-11-25) whose tool "ask"
// asks the client two things at once, as server requests: a named
// elicitation (key "who") and an unnamed sampling request, then answers
// with what it got and the client capabilities it was told; it also logs.
func askingServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ask", Description: "Asks"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		caps, _ := json.Marshal(req.Params.Meta["io.modelcontextprotocol/clientCapabilities"])
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "asking"})
		var wg sync.WaitGroup
		var who *mcp.ElicitResult
		var said *mcp.CreateMessageResult
		var errWho, errSaid error
		wg.Add(2)
		go func() {
			defer wg.Done()
			who, errWho = req.Session.Elicit(ctx, &mcp.ElicitParams{
				Meta:            mcp.Meta{"webmcp-cdp/inputKey": "who"},
				Message:         "Who are you?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
			})
		}()
		go func() {
			defer wg.Done()
			said, errSaid = req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "Say hi"}}}})
		}()
		wg.Wait()
		if err := errors.Join(errWho, errSaid); err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil, nil
		}
		text := fmt.Sprintf("%v %v %s", who.Content["name"], said.Content.(*mcp.TextContent).Text, caps)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	return srv
}

// relayClient connects a 2026-07-28 client to s, with the given
// capabilities, its multi round-trip driver off (the test answers), and
// its log messages sent to logs.
func relayClient(t *testing.T, ctx context.Context, s *mcpserver.Server, caps *mcp.ClientCapabilities, logs chan<- string) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.MCP().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		Capabilities:   caps,
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			s, _ := r.Params.Data.(string)
			logs <- s
		},
	}).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestPageQuestions: the questions a page server asks together during a
// call become one input-required result (keyed by the page's own key, or
// numbered); a retry that misses an answer is asked again with a new state
// and the old state is refused; the answers reach the page, which learned
// the client's capabilities from the call's _meta; its log message reaches
// the client; a client without sampling gets -32021.
func TestPageQuestions(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := hub.New(&fakeBrowser{}, hub.Options{})
	h.TabOpened("T1", origin+"/", "asker")
	// The page server sends its two questions together; on a loaded machine
	// they may reach the hub more than the default 30 ms apart.
	s := mcpserver.New(ctx, h, mcpserver.Options{QuestionGather: 500 * time.Millisecond})
	h.PageServer(core.Source{Key: "doc#mcpb:t:mcp-default", Tab: "T1", Origin: origin, URL: origin + "/", Backend: core.BackendMCPB},
		newMemPage(t, ctx, "t:mcp-default", askingServer()))
	name := site + "_ask"
	waitUntil(t, "the page server's tool", func() bool { _, ok := h.Tool(name); return ok })

	logs := make(chan string, 10)
	full := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}, Sampling: &mcp.SamplingCapabilities{}}
	cs := relayClient(t, ctx, s, full, logs)
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if !first.NeedsInput() || len(first.InputRequests) != 2 || first.RequestState == "" {
		t.Fatalf("first result: %d input requests %v (state %q), want both questions in one", len(first.InputRequests), first.InputRequests, first.RequestState)
	}
	if q, _ := first.InputRequests["who"].(*mcp.ElicitParams); q == nil || q.Message != "Who are you?" || q.Meta["webmcp-cdp/inputKey"] != nil {
		t.Errorf("who = %+v, want the page's elicitation without its key hint", first.InputRequests["who"])
	}
	sampling := ""
	for k, r := range first.InputRequests {
		switch r.(type) {
		case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
			sampling = k
		}
	}
	if !strings.HasPrefix(sampling, "sampling-") {
		t.Errorf("the unnamed sampling question's key is %q, want sampling-N", sampling)
	}

	who := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}
	second, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}, RequestState: first.RequestState,
		InputResponses: mcp.InputResponseMap{"who": who}})
	if err != nil {
		t.Fatal(err)
	}
	if !second.NeedsInput() || len(second.InputRequests) != 1 || second.InputRequests[sampling] == nil || second.RequestState == first.RequestState {
		t.Fatalf("a retry without the sampling answer = %v (state changed: %v), want that question again with a new state",
			second.InputRequests, second.RequestState != first.RequestState)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}, RequestState: first.RequestState,
		InputResponses: mcp.InputResponseMap{sampling: &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "hi"}}}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("the first question's state, used again = %v, want -32602", err)
	}
	done, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}, RequestState: second.RequestState,
		InputResponses: mcp.InputResponseMap{sampling: &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "hi"}}}})
	if err != nil || done.NeedsInput() || done.IsError {
		t.Fatalf("the last answer = %v %+v %q", err, done, done.Content[0].(*mcp.TextContent).Text)
	}
	if got := done.Content[0].(*mcp.TextContent).Text; !strings.HasPrefix(got, "Ada hi {") || !strings.Contains(got, `"sampling":{}`) || !strings.Contains(got, `"elicitation":{`) {
		t.Errorf("the page's result %q: want the answers and the client's capabilities", got)
	}

	// A client without sampling: the call ends with -32021.
	lean := relayClient(t, ctx, s, &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}, make(chan string, 10))
	leanRes, err := lean.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if !errors.As(err, &werr) || werr.Code != mcp.CodeMissingRequiredClientCapabilities || !strings.Contains(string(werr.Data), `"sampling"`) {
		t.Errorf("a client without sampling = %v %+v, want -32021 naming sampling", err, leanRes)
	}
}
