package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// scriptedBrowser answers each tool as its table says; "block" tells
// blocked that the call reached the page, then waits for the call's end.
type scriptedBrowser struct {
	results map[string]core.Result
	blocked chan struct{}
}

func (b scriptedBrowser) Invoke(ctx context.Context, _, tool string, _ json.RawMessage) (core.Result, error) {
	if tool == "block" {
		select {
		case b.blocked <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return core.Result{}, ctx.Err()
	}
	return b.results[tool], nil
}

// pipeSession is a stdio session of a Server over pipes, read line by
// line (notifications left out).
type pipeSession struct {
	t       *testing.T
	in      io.Writer
	lines   chan string
	counter *atomic.Int64
}

func newPipeSession(t *testing.T, s *Server, fast bool) *pipeSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	tr := &StdioTransport{In: inR, Out: outW, Logger: slog.New(slog.DiscardHandler)}
	if fast {
		tr.Server = s
	}
	ctx, cancel := context.WithCancel(t.Context())
	ss, err := s.MCP().Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &pipeSession{t: t, in: inW, lines: make(chan string, 100), counter: sdkCallsOf[s]}
	go func() {
		r := bufio.NewReaderSize(outR, 1<<20)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if !strings.Contains(line, `"method":"notifications/`) {
				p.lines <- line
			}
		}
	}()
	t.Cleanup(func() { inW.Close(); ss.Close(); cancel(); outR.Close() })
	return p
}

func (p *pipeSession) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

func (p *pipeSession) next() string {
	p.t.Helper()
	select {
	case l := <-p.lines:
		return l
	case <-time.After(10 * time.Second):
		p.t.Fatal("no answer within 10s")
		return ""
	}
}

// sdkCalls is the number of tools/call requests of fast sessions that
// reached the SDK (fastServer counts them).
func (p *pipeSession) sdkCalls() int64 { return p.counter.Load() }

const (
	legacyInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	newMeta    = `{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	otherMeta  = `{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
)

// TestFastPathAnswersAsTheSDK sends the same lines to a session with the
// fast path and to one without, and wants the same bytes back, for both
// protocol generations, every kind of result, ids of both types, and the
// lines the fast path must leave to the SDK.
func TestFastPathAnswersAsTheSDK(t *testing.T) {
	site := "s_test"
	call := func(id, tool, extra string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + extra + `"name":"` + site + "_" + tool + `","arguments":{"text":"x"}}}`
	}
	type step struct {
		line string
		fast bool // the SDK's tools/call handling never sees it
	}
	legacy := []step{
		{legacyInit, false},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false},
		{call("1", "text", ""), true},
		{call(`"abc-1"`, "json", ""), true},
		{call("2", "html", ""), true},
		{call("3", "throws", ""), true},
		{call("4", "image", ""), true},
		{call("5", "undefined", ""), true},
		{call("6", "result_meta", ""), true},
		{call("7", "nope", ""), false},
		{call("8", "text", `"_meta":{"progressToken":"p"},`), false},
		{call("9", "text", `"_meta":{"trace":"t"},`), true},
		{call("1.5", "text", ""), false},
		{call(`"a\u0041"`, "text", ""), false},
		{`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"` + site + `_text"}}`, true},
		{`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"` + site + `_strict","arguments":{"n":"not a number"}}}`, true},
		{`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"` + site + `_text","arguments":{},"requestState":"x"}}`, false},
		{`{"jsonrpc":"2.0","id":13,"Method":"tools/call","method":"tools/call","params":{"name":"` + site + `_text"}}`, false},
		{call("14", "text", `"_meta":`+newMeta+`,`), false},
		{call("15", "text", `"_meta":`+newMeta+`,`), true},
	}
	stateless := []step{
		{call("1", "text", `"_meta":`+newMeta+`,`), false}, // not initialized yet
		{`{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":` + newMeta + `}}`, false},
		{call("3", "text", `"_meta":`+newMeta+`,`), true},
		{call("4", "json", `"_meta":`+newMeta+`,`), true},
		{call("5", "result_meta", `"_meta":`+newMeta+`,`), true},
		{call("6", "throws", `"_meta":`+newMeta+`,`), true},
		{call("7", "text", `"_meta":`+otherMeta+`,`), false}, // a _meta not seen before
		{call("8", "text", `"_meta":`+otherMeta+`,`), true},
		{call("9", "text", ""), true}, // legacy request in a 2026-07-28 session
		// No clientCapabilities: the SDK refuses it before its tools/call
		// handling, each time.
		{call("10", "text", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},`), true},
		{call("11", "text", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},`), true},
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{{"2025-11-25", legacy}, {"2026-07-28", stateless}} {
		t.Run(tc.name, func(t *testing.T) {
			s := fastServer(t, Options{})
			slow, fast := newPipeSession(t, s, false), newPipeSession(t, s, true)
			for _, st := range tc.steps {
				before := fast.sdkCalls()
				slow.send(st.line)
				fast.send(st.line)
				if !strings.Contains(st.line, `"id"`) {
					continue // a notification: no answer
				}
				want := slow.next()
				if st.line == legacyInit || strings.Contains(st.line, "server/discover") {
					fast.next() // differs only in the session: not compared
					continue
				}
				if got := fast.next(); got != want {
					t.Errorf("%s\n fast: %s\n  sdk: %s", st.line, got, want)
				}
				if took := fast.sdkCalls() == before; took != st.fast {
					t.Errorf("%s: fast path took it: %v, want %v", st.line, took, st.fast)
				}
			}
		})
	}
}

// TestFastPathCancel: notifications/cancelled ends a fast call as it ends
// an SDK one, with the same answer.
func TestFastPathCancel(t *testing.T) {
	s := fastServer(t, Options{})
	slow, fast := newPipeSession(t, s, false), newPipeSession(t, s, true)
	for _, p := range []*pipeSession{slow, fast} {
		p.send(legacyInit)
		p.next()
		p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		p.send(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"s_test_block"}}`)
		select {
		case <-blockedOf[s]:
		case <-time.After(5 * time.Second):
			t.Fatal("the call never reached the page")
		}
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"enough"}}`)
	}
	want, got := slow.next(), fast.next()
	if got != want {
		t.Errorf("cancelled call:\n fast: %s\n  sdk: %s", got, want)
	}
	if fast.sdkCalls() != 0 {
		t.Errorf("%d calls reached the SDK, want 0", fast.sdkCalls())
	}
}

// TestFastPathLeavesAskingCallsToTheSDK: with --confirm, or a client that
// can elicit, every call goes through the SDK (hitl.go).
func TestFastPathLeavesAskingCallsToTheSDK(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		caps string
	}{
		{"confirm", Options{Confirm: ConfirmWrites}, `{}`},
		{"elicitation", Options{}, `{"elicitation":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPipeSession(t, fastServer(t, tc.opts), true)
			p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + tc.caps + `,"clientInfo":{"name":"c","version":"1"}}}`)
			p.next()
			p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s_test_text"}}`)
			p.next()
			if p.sdkCalls() != 1 {
				t.Errorf("%d calls reached the SDK, want 1", p.sdkCalls())
			}
		})
	}
}

// fastServer is a Server over a hub whose one document has the scripted
// tools.
func fastServer(t *testing.T, opts Options) *Server {
	t.Helper()
	b := scriptedBrowser{blocked: make(chan struct{}, 16), results: map[string]core.Result{
		"text":        {Kind: core.KindString, Value: "plain text"},
		"json":        {Kind: core.KindJSON, Value: `{"a":1,"b":[true,null]}`},
		"html":        {Kind: core.KindString, Value: "<b>&amp;</b> \u2028 é"},
		"throws":      {Err: "Error: boom <here>"},
		"image":       {Kind: core.KindJSON, Value: `{"content":[{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"text","text":"t"}]}`},
		"undefined":   {Kind: core.KindUndefined},
		"result_meta": {Kind: core.KindJSON, Value: `{"content":[{"type":"text","text":"m"}],"_meta":{"k":"v"},"structuredContent":{"x":1}}`},
		"strict":      {Kind: core.KindString, Value: "unreachable"},
	}}
	h := hub.New(b, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	var tools []core.Tool
	for name := range b.results {
		tools = append(tools, core.Tool{Name: name, Description: "d " + name})
	}
	tools = append(tools, core.Tool{Name: "block", Description: "waits"})
	tools[len(tools)-1].InputSchema = nil
	for i := range tools {
		if tools[i].Name == "strict" {
			tools[i].InputSchema = json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"}}}`)
		}
	}
	h.TabOpened("T", "https://s.test/", "S")
	h.Update(core.Source{Key: "d", Tab: "T", Frame: "F", Origin: "https://s.test", URL: "https://s.test/", Backend: "polyfill"}, tools, nil)
	opts.Version = "test"
	opts.Logger = slog.New(slog.DiscardHandler)
	s := New(t.Context(), h, opts)
	n := new(atomic.Int64)
	sdkCallsOf[s] = n
	blockedOf[s] = b.blocked
	s.MCP().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && method == "tools/call" && ss.ID() != "" {
				n.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := s.Synced(ctx); err != nil {
		t.Fatalf("the server did not take the catalog: %v", err)
	}
	if s.tools.Len() != len(tools) {
		t.Fatalf("the server lists %d tools, want %d", s.tools.Len(), len(tools))
	}
	if !s.tools.Has("s_test_text") {
		t.Fatal("no tool s_test_text")
	}
	return s
}

// sdkCallsOf counts, per server, the tools/call requests of fast sessions
// that reached the SDK. Tests that use it do not run in parallel.
var sdkCallsOf = map[*Server]*atomic.Int64{}

// blockedOf says, per server, that a call of the "block" tool reached the
// page. Tests that use it do not run in parallel.
var blockedOf = map[*Server]chan struct{}{}
