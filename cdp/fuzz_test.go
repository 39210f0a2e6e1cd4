package cdp

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/webmcp"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Fuzz targets of what Go decodes from a page: the bridge's answers (a
// call's answer text, the first read and later lists, page-server takes,
// relayed calls) and native WebMCP's tool output. The page writes all of
// them, so none may panic, and each keeps the bounds Go promises. Seeds are
// the shapes the page script sends (polyfill/bridge.js, pageserver.js,
// exposure.js), as the in-browser suite sees them; crashers go to
// testdata/fuzz.

// FuzzParseAnswer reads a call's answer text as invoke does: a result of a
// known kind, or an error; never a guess.
func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{
		"string:hello", `json:{"a":1}`, "undefined:", "navigated:", "string/1048577:abc", "json/12:[1,2",
		"error:Tool execution cancelled", "error:", "", ":", "string", "string/0:x", "string/-3:x", "bogus:x",
		"string/9999999999999999999:x", "error/3:x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseAnswer(s)
		if err != nil {
			return
		}
		if strings.HasPrefix(s, "error:") {
			if r.Err != s[len("error:"):] {
				t.Fatalf("error answer %q read as %+v", s, r)
			}
			return
		}
		switch r.Kind {
		case core.KindString, core.KindJSON, core.KindUndefined, kindNavigated:
		default:
			t.Fatalf("answer %q read with kind %q", s, r.Kind)
		}
		if r.Truncated < 0 || !strings.HasSuffix(s, r.Value) {
			t.Fatalf("answer %q read as %+v", s, r)
		}
	})
}

// recordSink is a Sink that keeps the last update.
type recordSink struct {
	mu      sync.Mutex
	tools   []core.Tool
	refused []core.Refusal
}

func (s *recordSink) Update(_ core.Source, tools []core.Tool, refused []core.Refusal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tools, s.refused = tools, refused
}
func (s *recordSink) DropDoc(string)                   {}
func (s *recordSink) TabOpened(string, string, string) {}
func (s *recordSink) TabClosed(string)                 {}

// fuzzBrowser is a Browser with no connection, enough for what a page's
// answers go through before any CDP: the sink, the relay's records (its
// pushes held, as if one ran) and the page servers.
func fuzzBrowser(sink Sink) (*Browser, *docState) {
	b := &Browser{logger: slog.New(slog.DiscardHandler), sink: newSinkQueue(), life: context.Background(), progress: make(chan struct{})}
	b.sink.sink = sink
	b.opts.Limits.defaults()
	b.xo.tab("t1").busy = true
	d := &docState{alive: true, key: "t1/f1/1", t: &targetState{tab: "t1", targetID: "t1"}, busy: true, bridge: "obj"}
	return b, d
}

// FuzzBridgeRead reads the bridge's first answer (info and list, adopt)
// and applies its list as refreshLoop does: each listed tool becomes a
// tool or a refusal, the exposure record keeps only tools with valid JSON
// schemas, at most MaxTools of them, and bounded origins.
func FuzzBridgeRead(f *testing.F) {
	for _, s := range []string{
		`{"info":{"native":false,"url":"http://127.0.0.1/bench/","origin":"http://127.0.0.1","title":"Bench","startedBefore":false},"list":{"url":"http://127.0.0.1/bench/","title":"Bench","tools":[{"name":"echo_0","title":"","description":"Return the text unchanged (bench tool 0).","inputSchema":"{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}","annotations":{"readOnlyHint":true}}],"overflow":0,"path":[],"bound":true}}`,
		`{"info":{"native":false,"url":"https://a.test/","startedBefore":true},"list":{"url":"https://a.test/","tools":[{"name":"big","refused":"its description is 20000 characters, over the limit of 16384"}],"overflow":3,"denied":{"names":["x","y"],"more":2},"exposed":[{"name":"pay","title":null,"description":"Pay","schema":"{\"type\":\"object\"}","annotations":{"readOnlyHint":false},"to":["https://b.test"]}],"path":[0,1],"bound":false}}`,
		`{"info":{},"list":{"tools":[{"name":"x","inputSchema":"not json"}],"exposed":[{"name":"y","schema":"{","to":["*"]}],"path":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34]}}`,
		`{"list":{"tools":null,"overflow":-1}}`, `{}`, `[]`, `"x"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var first firstRead
		if json.Unmarshal([]byte(s), &first) != nil {
			return
		}
		sink := &recordSink{}
		b, d := fuzzBrowser(sink)
		b.refreshLoop(d, &first.List)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := b.sink.flush(ctx); err != nil {
			t.Fatal(err)
		}
		sink.mu.Lock()
		defer sink.mu.Unlock()
		sizeRefused := 0
		for _, r := range sink.refused {
			if r.Reason == core.ReasonSize {
				sizeRefused++
			}
		}
		if len(sink.tools)+sizeRefused != len(first.List.Tools) {
			t.Fatalf("%d listed tools became %d tools and %d refusals", len(first.List.Tools), len(sink.tools), sizeRefused)
		}
		xd := b.xo.tabs["t1"].docs[d.key]
		if xd == nil {
			return
		}
		if len(xd.tools) > b.opts.Limits.MaxTools || len(xd.path) > maxPathLen {
			t.Fatalf("kept %d exposed tools at a path of %d", len(xd.tools), len(xd.path))
		}
		for _, x := range xd.tools {
			if x.Schema != nil && !json.Valid([]byte(*x.Schema)) {
				t.Fatalf("kept an exposed tool with a schema that is not JSON: %q", *x.Schema)
			}
			if len(x.To) == 0 || len(x.To) > maxExposedTo {
				t.Fatalf("kept an exposed tool for %d origins", len(x.To))
			}
			for _, o := range x.To {
				if len(o) > maxOriginLen {
					t.Fatalf("kept an origin of %d bytes", len(o))
				}
			}
		}
	})
}

// FuzzPageServerTake reads one take of the page's page-server queue
// (mcpbTake in polyfill/pageserver.js) and delivers it: at most
// maxPageServersPerDoc pipes, and a pipe's backlog stays within its bound.
func FuzzPageServerTake(f *testing.F) {
	for _, s := range []string{
		`{"msgs":[{"t":"ready","s":"t:mcp-default","channel":"mcp-default","kind":"tab","origin":"http://127.0.0.1"},{"t":"msg","s":"t:mcp-default","d":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}"}],"dropped":{},"more":false,"seq":1}`,
		`{"msgs":[{"t":"msg","s":"t:mcp-default","d":"x"},{"t":"stopped","s":"t:mcp-default"}],"dropped":{"rate":3},"more":true,"seq":7}`,
		`{"msgs":[{"t":"ready","s":"a"},{"t":"ready","s":"b"},{"t":"ready","s":"c"},{"t":"ready","s":"d"},{"t":"ready","s":"e"},{"t":"ready","s":"f"},{"t":"ready","s":"g"},{"t":"ready","s":"h"},{"t":"ready","s":"i"}],"seq":0}`,
		`{"seq":18446744073709551615}`, `{"msgs":null}`, `{}`,
	} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, s1, s2 string) {
		b, d := fuzzBrowser(&recordSink{})
		for _, s := range []string{s1, s2} {
			var q psTake
			if json.Unmarshal([]byte(s), &q) != nil {
				continue
			}
			b.mu.Lock()
			b.deliverTakeLocked(d, b.pageServersLocked(d), q)
			b.mu.Unlock()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := b.sink.flush(ctx); err != nil { // the sink closes the pipes it is handed
			t.Fatal(err)
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		p := b.mcpb[d.key]
		if p == nil {
			return // neither take was JSON
		}
		if len(p.pipes) > maxPageServersPerDoc {
			t.Fatalf("%d page servers in one document", len(p.pipes))
		}
		for id, pp := range p.pipes {
			pp.mu.Lock()
			queued := pp.queued
			pp.mu.Unlock()
			if queued > pageServerBacklogBytes || len(pp.in) > cap(pp.in) {
				t.Fatalf("pipe %q holds %d bytes", id, queued)
			}
		}
	})
}

// FuzzRelayTake reads the calls and cancels a document asked Go to relay
// (xoTake in polyfill/exposure.js) and checks each against the exposure
// records as relayCall does: no panic, and a tool is exposed only to an
// origin listed for it.
func FuzzRelayTake(f *testing.F) {
	for _, s := range []string{
		`{"msgs":[{"t":"call","id":"3","key":"t1/f2/4","origin":"https://b.test","name":"pay","input":"{\"amount\":3}"},{"t":"cancel","id":"3"}],"more":false}`,
		`{"msgs":[{"t":"call","id":"","key":"","origin":"","name":"","input":""}],"more":true}`,
		`{"msgs":null}`, `{}`,
	} {
		f.Add(s)
	}
	xd := &xoDoc{tools: []exposedTool{{Name: "pay", To: []string{"https://a.test"}}, {Name: "all", To: []string{"*"}}}}
	f.Fuzz(func(t *testing.T, s string) {
		var got struct {
			Msgs []relayMsg `json:"msgs"`
			More bool       `json:"more"`
		}
		if json.Unmarshal([]byte(s), &got) != nil {
			return
		}
		for _, m := range got.Msgs {
			relayOrigin(m.Origin)
			if exposes(xd, m.Name, m.Origin) && m.Name == "pay" && m.Origin != "https://a.test" {
				t.Fatalf("pay exposed to %q", m.Origin)
			}
		}
	})
}

// FuzzNativeResult reads a native tool's answer (WebMCP.toolResponded) as
// the agent gets it: never over maxBytes, cut on a rune boundary, and an
// error without the page's stack.
func FuzzNativeResult(f *testing.F) {
	for _, s := range []struct {
		status, output, errText string
	}{
		{"Completed", `"hello"`, ""}, {"Completed", `"{\"a\":1}"`, ""}, {"Completed", `{"a":1}`, ""}, {"Completed", ``, ""},
		{"Error", ``, "Error: boom\n    at execute (page.js:1:1)"}, {"Canceled", ``, ""}, {"Completed", `"héllo wörld"`, ""},
	} {
		f.Add(s.status, []byte(s.output), s.errText, 4)
	}
	f.Fuzz(func(t *testing.T, status string, output []byte, errText string, maxBytes int) {
		if maxBytes < 0 || maxBytes > 1<<20 {
			return
		}
		ev := &webmcp.EventToolResponded{Status: webmcp.InvocationStatus(status), Output: output, ErrorText: errText}
		r := nativeResult(ev, maxBytes)
		if len(r.Value) > maxBytes {
			t.Fatalf("a result of %d bytes over the limit of %d", len(r.Value), maxBytes)
		}
		if r.Truncated > 0 && utf8.ValidString(string(output)) && !utf8.ValidString(r.Value) && json.Valid(output) {
			var s string
			if json.Unmarshal(output, &s) == nil && utf8.ValidString(s) {
				t.Fatalf("cut %q inside a character", r.Value)
			}
		}
		if r.Err != "" && strings.Contains(r.Err, "\n    at ") && !strings.HasPrefix(r.Err, "\n    at ") {
			t.Fatalf("error kept the page's stack: %q", r.Err)
		}
	})
}
