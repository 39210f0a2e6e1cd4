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
	waitForTool(t, ctx, h, s, name)

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

// laggingPage is a core.PageConn to a scripted MCP-B page server (classic,
// 2025-11-25) whose tool "ask" asks two questions at once, as the
// TypeScript SDK's legacy shim does: both are posted together, and the
// browser brings the second one lag after the first (the takes of the
// page's queue can come a CDP round trip apart, more on a loaded
// machine). What the page sends is read in the order it was sent, as the
// browser delivers it: the answer to a ping comes after the questions.
// pings says whether the page answers pings at all.
type laggingPage struct {
	lag   time.Duration
	pings bool
	done  chan struct{}
	once  sync.Once

	mu      sync.Mutex
	out     []lagged
	wake    chan struct{} // capacity 1
	call    json.RawMessage
	answers map[string]json.RawMessage
}

// lagged is a message the page posted: msg, read after delay (post) or
// at ready (queued).
type lagged struct {
	msg   []byte
	delay time.Duration
	ready time.Time
}

func newLaggingPage(lag time.Duration, pings bool) *laggingPage {
	return &laggingPage{lag: lag, pings: pings, done: make(chan struct{}), wake: make(chan struct{}, 1), answers: map[string]json.RawMessage{}}
}

// post queues msgs at once, as a page posts in one task: each is read no
// sooner than its delay from now nor before what was posted earlier. (Two
// posts of one round would let the hub read the first and ping before the
// second is queued, which no page does.)
func (p *laggingPage) post(msgs ...lagged) {
	p.mu.Lock()
	now := time.Now()
	for _, m := range msgs {
		ready := now.Add(m.delay)
		if n := len(p.out); n > 0 && p.out[n-1].ready.After(ready) {
			ready = p.out[n-1].ready
		}
		p.out = append(p.out, lagged{msg: m.msg, ready: ready})
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *laggingPage) Recv(ctx context.Context) ([]byte, error) {
	for {
		p.mu.Lock()
		var head *lagged
		if len(p.out) > 0 {
			head = &p.out[0]
		}
		if head != nil && !time.Now().Before(head.ready) {
			p.out = p.out[1:]
			p.mu.Unlock()
			return head.msg, nil
		}
		var due <-chan time.Time
		if head != nil {
			due = time.After(time.Until(head.ready))
		}
		p.mu.Unlock()
		select {
		case <-p.wake:
		case <-due:
		case <-p.done:
			return nil, core.ErrPageServerGone
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (p *laggingPage) Send(_ context.Context, b []byte, _ bool) error {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	answer := func(result string) {
		p.post(lagged{msg: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)})
	}
	switch m.Method {
	case "initialize":
		answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"lagging","version":"1"}}`)
	case "tools/list":
		answer(`{"tools":[{"name":"ask","description":"Asks two things at once","inputSchema":{"type":"object"}}]}`)
	case "tools/call":
		p.mu.Lock()
		p.call = m.ID
		p.mu.Unlock()
		p.post(
			lagged{msg: []byte(`{"jsonrpc":"2.0","id":"q1","method":"elicitation/create","params":{"_meta":{"webmcp-cdp/inputKey":"who"},"message":"Who are you?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}`)},
			lagged{msg: []byte(`{"jsonrpc":"2.0","id":"q2","method":"sampling/createMessage","params":{"_meta":{"webmcp-cdp/inputKey":"said"},"messages":[{"role":"user","content":{"type":"text","text":"Say hi"}}],"maxTokens":5}}`), delay: p.lag})
	case "ping":
		if p.pings {
			answer(`{}`)
		}
	case "":
		// An answer to q1 or q2: with both, the tool's result.
		var id string
		json.Unmarshal(m.ID, &id)
		p.mu.Lock()
		p.answers[id] = m.Result
		call, both := p.call, len(p.answers) == 2
		p.mu.Unlock()
		if both {
			p.post(lagged{msg: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"both answered"}]}}`, call)})
		}
	}
	return nil
}

func (p *laggingPage) Server() core.PageServer {
	return core.PageServer{ID: "t:mcp-default", Channel: "mcp-default", Kind: "tab"}
}
func (p *laggingPage) Done() <-chan struct{}       { return p.done }
func (p *laggingPage) Dropped() map[string]int     { return nil }
func (p *laggingPage) DropSignal() <-chan struct{} { return nil }
func (p *laggingPage) Close()                      { p.once.Do(func() { close(p.done) }) }

// TestPageQuestionsDeliveredApart: the questions a page server sends
// together are one input-required result also when the browser brings the
// second one far later than the gather time (here 10 times the default
// 30 ms): the round ends only once the page has answered a ping the hub
// sent after the first question, which comes after everything the page
// sent before it. A page that does not answer pings still has its
// questions asked (the wait for its answer is bounded).
func TestPageQuestionsDeliveredApart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lag   time.Duration
		pings bool
	}{
		{"answers pings", 300 * time.Millisecond, true},
		{"answers no pings", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h := hub.New(&fakeBrowser{}, hub.Options{})
			h.TabOpened("T1", origin+"/", "lagging")
			s := mcpserver.New(ctx, h, mcpserver.Options{}) // the default gather
			page := newLaggingPage(tc.lag, tc.pings)
			h.PageServer(core.Source{Key: "doc#mcpb:t:mcp-default", Tab: "T1", Origin: origin, URL: origin + "/", Backend: core.BackendMCPB}, page)
			name := site + "_ask"
			waitForTool(t, ctx, h, s, name)
			full := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}, Sampling: &mcp.SamplingCapabilities{}}
			cs := relayClient(t, ctx, s, full, make(chan string, 10))

			first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			if !first.NeedsInput() || first.InputRequests["who"] == nil || first.InputRequests["said"] == nil {
				t.Fatalf("first result: input requests %v, want who and said in one result", first.InputRequests)
			}
			done, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}, RequestState: first.RequestState,
				InputResponses: mcp.InputResponseMap{
					"who":  &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}},
					"said": &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "hi"}},
				}})
			if err != nil || done.NeedsInput() || len(done.Content) != 1 || done.Content[0].(*mcp.TextContent).Text != "both answered" {
				t.Fatalf("the retry with both answers = %v %+v", err, done)
			}
		})
	}
}
