package mcpserver_test

import (
	"context"
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

// memPage is a core.PageConn to a go-sdk server in memory (standing in for
// the browser's pipe to a page server), or to a silent one.
type memPage struct {
	info core.PageServer
	conn mcp.Connection // nil: a server that never answers
	// rewrite, if set, changes each message of the server (to send what
	// the go-sdk server cannot, as a page server might).
	rewrite func(string) string
	done    chan struct{}
	once    sync.Once
	closed  chan struct{}
}

func newMemPage(t *testing.T, ctx context.Context, id string, srv *mcp.Server) *memPage {
	p := &memPage{info: core.PageServer{ID: id, Channel: "mcp-default", Kind: "tab"}, done: make(chan struct{})}
	if srv == nil {
		return p
	}
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p.conn = conn
	return p
}

func (p *memPage) Server() core.PageServer { return p.info }
func (p *memPage) Recv(ctx context.Context) ([]byte, error) {
	if p.conn == nil {
		select {
		case <-p.done:
			return nil, core.ErrPageServerGone
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	msg, err := p.conn.Read(ctx)
	if err != nil {
		return nil, core.ErrPageServerGone
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err == nil && p.rewrite != nil {
		b = []byte(p.rewrite(string(b)))
	}
	return b, err
}
func (p *memPage) Send(ctx context.Context, b []byte, _ bool) error {
	if p.conn == nil {
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(b)
	if err != nil {
		return err
	}
	return p.conn.Write(ctx, msg)
}
func (p *memPage) Done() <-chan struct{}       { return p.done }
func (p *memPage) Dropped() map[string]int     { return nil }
func (p *memPage) DropSignal() <-chan struct{} { return nil }
func (p *memPage) Close() {
	p.once.Do(func() {
		close(p.done)
		if p.conn != nil {
			p.conn.Close()
		}
	})
}

func shopServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "shop", Version: "1"}, nil)
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
	})
	srv.AddResource(&mcp.Resource{URI: "cart://current", Name: "cart"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: "[]"}}}, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "help"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "help me"}}}}, nil
	})
	return srv
}

// TestPageServerSessions: a page server's tools, resources and prompts are
// served through its session; a server that never answers initialize is
// refused after the timeout without holding up the other; when the pipe
// ends, everything of that server leaves the lists.
func TestPageServerSessions(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := hub.New(&fakeBrowser{}, hub.Options{})
	// The bound is also the good server's, for its initialize and its
	// lists, which must succeed: 2 s, not 500 ms, which a loaded machine
	// could take.
	h.SetPageServerInitTimeout(2 * time.Second)
	h.TabOpened("T1", origin+"/", "shop")
	s := mcpserver.New(ctx, h, mcpserver.Options{})
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.MCP().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	src := func(id string) core.Source {
		return core.Source{Key: "doc#mcpb:" + id, Tab: "T1", Origin: origin, URL: origin + "/", Backend: core.BackendMCPB}
	}
	silent := newMemPage(t, ctx, "t:silent", nil)
	good := newMemPage(t, ctx, "t:mcp-default", shopServer())
	h.PageServer(src("t:silent"), silent)
	h.PageServer(src("t:mcp-default"), good)

	echo := site + "_echo"
	waitForTool(t, ctx, h, s, echo)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "echo: hi" {
		t.Fatalf("call = %+v, %v", res, err)
	}
	uri := "webmcp://" + site + "/tab1/cart://current"
	waitUntil(t, "the page server's resource", func() bool {
		r, err := cs.ListResources(ctx, nil)
		return err == nil && len(r.Resources) == 1 && r.Resources[0].URI == uri
	})
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || rr.Contents[0].URI != uri || rr.Contents[0].Text != "[]" {
		t.Errorf("read = %+v, %v", rr, err)
	}
	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: site + "_tab1_help"})
	if err != nil || gp.Messages[0].Content.(*mcp.TextContent).Text != "help me" {
		t.Errorf("prompt = %+v, %v", gp, err)
	}
	waitUntil(t, "the silent server's refusal", func() bool {
		refs, _ := h.Refusals(0)
		for _, r := range refs {
			if strings.Contains(r.Detail, "did not answer initialize within 2s") {
				return true
			}
		}
		return false
	})

	good.Close() // the page navigated
	waitUntil(t, "the server's tool, resource and prompt to go", func() bool {
		_, ok := h.Tool(echo)
		r, err1 := cs.ListResources(ctx, nil)
		p, err2 := cs.ListPrompts(ctx, nil)
		return !ok && err1 == nil && len(r.Resources) == 0 && err2 == nil && len(p.Prompts) == 0
	})
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitFor(t, what, func() (bool, string) { return cond(), "not yet" })
}

// waitForTool waits until the hub has the routed tool name and s lists it:
// the catalog's changes reach the server's list on a goroutine of their
// own, so a tool the hub has may not be in a tools/list or callable yet.
func waitForTool(t *testing.T, ctx context.Context, h *hub.Hub, s *mcpserver.Server, name string) {
	t.Helper()
	waitUntil(t, "the page server's tool "+name, func() bool { _, ok := h.Tool(name); return ok })
	if err := s.Synced(ctx); err != nil {
		t.Fatalf("waiting for the server to list %s: %v", name, err)
	}
}

// TestPageServerProgress: a client's progress token reaches the page
// server's tools/call as a token of ours, and the server's progress comes
// back with the client's token: increasing only, its messages bounded, and
// nothing for tokens that are not the call's. A call without a token
// carries none.
func TestPageServerProgress(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := hub.New(&fakeBrowser{}, hub.Options{})
	h.TabOpened("T1", origin+"/", "shop")
	s := mcpserver.New(ctx, h, mcpserver.Options{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "steps", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "steps", Description: "Reports progress"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		token := req.Params.GetProgressToken()
		if token == nil {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no token"}}}, nil, nil
		}
		for _, n := range []mcp.ProgressNotificationParams{
			{ProgressToken: token, Progress: 1, Total: 3, Message: "one"},
			{ProgressToken: token, Progress: 2, Total: 3, Message: "two"},
			{ProgressToken: token, Progress: 1, Total: 3, Message: "back"},        // not increasing
			{ProgressToken: "someone-else", Progress: 5, Total: 3, Message: "no"}, // not the call's
			{ProgressToken: token, Progress: 3, Total: 3, Message: strings.Repeat("é", 2000)},
		} {
			if err := req.Session.NotifyProgress(ctx, &n); err != nil {
				return nil, nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	h.PageServer(core.Source{Key: "doc#mcpb:t:mcp-default", Tab: "T1", Origin: origin, URL: origin + "/", Backend: core.BackendMCPB},
		newMemPage(t, ctx, "t:mcp-default", srv))

	var mu sync.Mutex
	var got []*mcp.ProgressNotificationParams
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.MCP().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, r.Params)
			mu.Unlock()
		},
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	name := site + "_steps"
	waitForTool(t, ctx, h, s, name)

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "no token" {
		t.Fatalf("a call without a progress token = %+v, %v", res, err)
	}
	params := &mcp.CallToolParams{Name: name, Arguments: map[string]any{}}
	params.SetProgressToken("client-tok")
	if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
		t.Fatalf("call = %+v, %v", res, err)
	}
	waitUntil(t, "three progress notifications", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= 3
	})
	mu.Lock()
	defer mu.Unlock()
	var steps []float64
	for _, n := range got {
		if n.ProgressToken != "client-tok" || n.Total != 3 {
			t.Errorf("progress %+v: want the client's token and total 3", n)
		}
		steps = append(steps, n.Progress)
	}
	if len(steps) != 3 || steps[0] != 1 || steps[1] != 2 || steps[2] != 3 {
		t.Errorf("progress = %v, want [1 2 3]", steps)
	}
	if m := got[len(got)-1].Message; len(m) > 1024+len("…") || !strings.HasPrefix(m, "éé") {
		t.Errorf("the long message came as %d bytes, want at most 1024 and its start", len(m))
	}
}
