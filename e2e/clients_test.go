package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The clients of both MCP eras on one HTTP endpoint (issue 26, point 6):
// the go-sdk client and the TypeScript SDK v2 client negotiate 2026-07-28
// by themselves, the TypeScript SDK v1 client stays on 2025-11-25 with a
// session, all three at once against one webmcp-cdp launch --http with
// --confirm writes over a real Chromium.
//
// The v2 client (@modelcontextprotocol/client) is pinned in
// e2e/testdata/ts-client-v2/package-lock.json, apart from e2e/js: its
// @modelcontextprotocol/core is not the one the page servers bundle. The v1
// client is e2e/js's @modelcontextprotocol/sdk.

var tsClientV2 struct {
	once sync.Once
	dir  string // e2e/testdata/ts-client-v2, absolute
	err  error
	out  []byte
}

// tsClientV2Dir installs the pinned TypeScript SDK v2 client (npm ci) once
// per test binary unless it is installed, and returns the absolute path of
// e2e/testdata/ts-client-v2. It sits under testdata so that the go command
// never takes files of its node_modules for packages of this module.
func tsClientV2Dir(t *testing.T) string {
	t.Helper()
	tsClientV2.once.Do(func() {
		tsClientV2.dir, tsClientV2.out, tsClientV2.err = installPinned(filepath.Join("testdata", "ts-client-v2"), false)
	})
	if tsClientV2.err != nil {
		t.Fatalf("installing the pinned TypeScript SDK v2 client in e2e/testdata/ts-client-v2 (npm ci) failed: %v\n%s\nThis test needs Node.js 20 or later and npm with the npm registry reachable.", tsClientV2.err, tsClientV2.out)
	}
	return tsClientV2.dir
}

// nodeClient is a Node MCP client script that prints one JSON object a
// line: {"step":"ready"} once it listens for list_changed, then
// {"step":"done",...} or {"step":"error",...}.
type nodeClient struct {
	name   string
	lines  chan map[string]any
	stderr *syncBuffer
}

// startNodeClient runs node script args; the process is killed when the
// test ends.
func startNodeClient(t *testing.T, name, script string, args ...string) *nodeClient {
	t.Helper()
	cmd := exec.Command("node", append([]string{script}, args...)...)
	cmd.Dir = filepath.Dir(script)
	n := &nodeClient{name: name, lines: make(chan map[string]any, 8), stderr: &syncBuffer{}}
	cmd.Stderr = n.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s (node %s): %v", name, script, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(n.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var msg map[string]any
			if json.Unmarshal(sc.Bytes(), &msg) != nil {
				msg = map[string]any{"step": "error", "error": "not JSON: " + sc.Text()}
			}
			n.lines <- msg
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		cmd.Wait()
	})
	return n
}

// next returns the script's next line, which must be of step want.
func (n *nodeClient) next(t *testing.T, want string, d time.Duration) map[string]any {
	t.Helper()
	select {
	case msg, ok := <-n.lines:
		if !ok {
			t.Fatalf("%s ended without its %q line; stderr:\n%s", n.name, want, n.stderr.String())
		}
		if msg["step"] != want {
			b, _ := json.MarshalIndent(msg, "", "  ")
			t.Fatalf("%s printed %s, want its %q line; stderr:\n%s", n.name, b, want, n.stderr.String())
		}
		return msg
	case <-time.After(d):
		t.Fatalf("%s printed no %q line within %v; stderr:\n%s", n.name, want, d, n.stderr.String())
	}
	return nil
}

// wireCall is a tools/call the go-sdk client sent: whether it carried a
// requestState, its Mcp-Param-* headers, and the answer as it came off the
// wire.
type wireCall struct {
	tool         string
	requestState bool
	paramHeaders map[string]string // by lower-case name
	mu           sync.Mutex
	answer       bytes.Buffer
}

// wireLog is an http.RoundTripper that keeps the tools/call traffic.
type wireLog struct {
	mu    sync.Mutex
	calls []*wireCall
}

func (l *wireLog) RoundTrip(r *http.Request) (*http.Response, error) {
	var call *wireCall
	if r.Body != nil && r.Method == http.MethodPost {
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name         string `json:"name"`
				RequestState string `json:"requestState"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
			call = &wireCall{tool: msg.Params.Name, requestState: msg.Params.RequestState != "", paramHeaders: map[string]string{}}
			for k, v := range r.Header {
				if k := strings.ToLower(k); strings.HasPrefix(k, "mcp-param-") {
					call.paramHeaders[k] = strings.Join(v, ", ")
				}
			}
			l.mu.Lock()
			l.calls = append(l.calls, call)
			l.mu.Unlock()
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && call != nil {
		resp.Body = teeBody{resp.Body, call}
	}
	return resp, err
}

// teeBody keeps what is read of a tools/call answer.
type teeBody struct {
	io.ReadCloser
	call *wireCall
}

func (b teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.call.mu.Lock()
	b.call.answer.Write(p[:n])
	b.call.mu.Unlock()
	return n, err
}

// resultType is the resultType of the JSON-RPC result in an answer (a JSON
// body or an event stream): "complete" when it has none.
func (c *wireCall) resultType() string {
	c.mu.Lock()
	raw := c.answer.String()
	c.mu.Unlock()
	msgs := []string{raw}
	if !strings.HasPrefix(strings.TrimSpace(raw), "{") {
		msgs = nil
		for line := range strings.SplitSeq(raw, "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok {
				msgs = append(msgs, d)
			}
		}
	}
	for _, m := range msgs {
		var msg struct {
			Result *struct {
				ResultType string `json:"resultType"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(m), &msg) == nil && msg.Result != nil {
			if msg.Result.ResultType == "" {
				return "complete"
			}
			return msg.Result.ResultType
		}
	}
	return "none"
}

// wireSummary is the tools/call traffic as the Node scripts print it.
type wireSummary struct {
	Tool         string            `json:"tool"`
	RequestState bool              `json:"requestState"`
	ParamHeaders map[string]string `json:"paramHeaders"`
	ResultType   string            `json:"resultType"`
}

// String shows a call without its headers.
func (w wireSummary) String() string {
	return fmt.Sprintf("{%s requestState:%v resultType:%s}", w.Tool, w.RequestState, w.ResultType)
}

// callsOf returns the calls of tool, without their headers.
func callsOf(wire []wireSummary, tool string) []wireSummary {
	var out []wireSummary
	for _, w := range wire {
		if w.Tool == tool {
			w.ParamHeaders = nil
			out = append(out, w)
		}
	}
	return out
}

func (l *wireLog) summary() []wireSummary {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]wireSummary, len(l.calls))
	for i, c := range l.calls {
		out[i] = wireSummary{Tool: c.tool, RequestState: c.requestState, ParamHeaders: c.paramHeaders, ResultType: c.resultType()}
	}
	return out
}

// checkConfirmedCall checks the tools/call traffic of a confirmed call of
// tool on the new revision: the first call comes back input_required, and
// the retry that carries the requestState completes.
func checkConfirmedCall(t *testing.T, who string, wire []wireSummary, tool string) {
	t.Helper()
	got := callsOf(wire, tool)
	want := []wireSummary{{Tool: tool, ResultType: "input_required"}, {Tool: tool, RequestState: true, ResultType: "complete"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: the tools/call traffic of %s is %+v, want an input request and a retry with its requestState: %+v", who, tool, got, want)
	}
}

// headerPage registers header_args, a read-only tool whose schema marks two
// arguments with x-mcp-header: a 2026-07-28 client mirrors them into
// Mcp-Param-Region and Mcp-Param-N headers, which webmcp-cdp checks against
// the body.
const headerPage = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>headers</title></head><body><script>
document.modelContext.registerTool({
  name: "header_args",
  description: "Return the arguments as JSON.",
  inputSchema: {type: "object", properties: {
    region: {type: "string", "x-mcp-header": "Region"},
    n: {type: "integer", "x-mcp-header": "N"},
    text: {type: "string"}}},
  annotations: {readOnlyHint: true},
  execute: async (args) => JSON.stringify(args),
});
</script></body></html>`

// headerArgs are header_args's arguments: a region that is not ASCII goes
// into its header in base64, and text is not mirrored.
const headerArgs = `{"region":"Zoë","n":3,"text":"not mirrored"}`

// mirroredHeaders are the headers a 2026-07-28 client sends with headerArgs.
var mirroredHeaders = map[string]string{"mcp-param-region": "=?base64?Wm/Dqw==?=", "mcp-param-n": "3"}

// checkHeaderArgs checks header_args's result: the page got headerArgs.
func checkHeaderArgs(t *testing.T, who string, res *mcp.CallToolResult) {
	t.Helper()
	var got, want any
	json.Unmarshal([]byte(headerArgs), &want)
	if res == nil || res.IsError || json.Unmarshal([]byte(text(res)), &got) != nil || !reflect.DeepEqual(got, want) {
		b, _ := json.Marshal(res)
		t.Errorf("%s: header_args answered %s, want the page to get %s", who, b, headerArgs)
	}
}

// checkParamHeaders checks the Mcp-Param-* headers of the one call of tool.
func checkParamHeaders(t *testing.T, who string, wire []wireSummary, tool string, want map[string]string) {
	t.Helper()
	var got []map[string]string
	for _, w := range wire {
		if w.Tool == tool {
			got = append(got, w.ParamHeaders)
		}
	}
	if len(got) != 1 || !maps.Equal(got[0], want) {
		t.Errorf("%s: the calls of %s carried the headers %v, want one call with %v", who, tool, got, want)
	}
}

// TestClientsOfBothEras (issue 26, point 6): three real MCP clients at once
// on one /mcp of webmcp-cdp launch --http --confirm writes, over the notes
// page and a page whose tool's arguments go into headers, in real
// Chromium. The go-sdk client and the TypeScript SDK v2 client negotiate
// 2026-07-28 (no session), the TypeScript SDK v1 client 2025-11-25 (a
// session). Each:
//   - lists and calls the read-only header_args: the 2026 clients mirror
//     its arguments into Mcp-Param-* headers, the 2025 one sends none, and
//     all three calls reach the page;
//   - gets tools/list_changed when a new tab's page registers its tools:
//     the 2026 clients through subscriptions/listen, tagged with their
//     subscription id, the 2025 client on its GET stream;
//   - calls the new page's echo, which needs a confirmation: an input
//     request answered in a retry for the 2026 clients, an elicitation
//     request for the 2025 one. The echo then runs on the page.
func TestClientsOfBothEras(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	v2Dir := tsClientV2Dir(t)
	jsDir := npmDir(t)
	headers := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, headerPage)
	}))
	t.Cleanup(headers.Close)
	endpoint := startHTTP(t, "launch", "--headless", "--http", "127.0.0.1:0", "--confirm", "writes", base+"/notes/", headers.URL+"/")

	// The go-sdk client: its answers to questions, its subscription's
	// acknowledgement and the tools/call traffic are watched.
	var asked atomic.Int32
	questions := make(chan string, 4)
	opts := elicitor(map[string]any{}, &asked, questions)
	changes := make(chan any, 100)
	opts.ToolListChangedHandler = func(_ context.Context, req *mcp.ToolListChangedRequest) {
		var id any
		if req.Params != nil {
			id = req.Params.Meta[mcp.MetaKeySubscriptionID]
		}
		select {
		case changes <- id:
		default:
		}
	}
	acked := make(chan struct{}, 1)
	goClient := mcp.NewClient(&mcp.Implementation{Name: "e2e-go", Version: "1"}, opts)
	goClient.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				select {
				case acked <- struct{}{}:
				default:
				}
			}
			return next(ctx, method, req)
		}
	})
	wire := &wireLog{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := goClient.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: wire}}, nil)
	if err != nil {
		t.Fatalf("the go-sdk client could not connect to %s: %v", endpoint, err)
	}
	defer cs.Close()
	c := &client{t: t, cs: cs}
	if got := cs.InitializeResult().ProtocolVersion; got != "2026-07-28" {
		t.Errorf("the go-sdk client negotiated %s, want 2026-07-28", got)
	}
	if id := cs.ID(); id != "" {
		t.Errorf("the go-sdk client on 2026-07-28 got session %q; the revision has none", id)
	}
	tools := c.waitFor("the pages' tools (go-sdk client)", func(tools map[string]*mcp.Tool) bool {
		return hasSuffix("list_notes", 1)(tools) && hasSuffix("header_args", 1)(tools)
	})

	// The Node clients start once the pages' tools are there.
	v2 := startNodeClient(t, "the TypeScript SDK v2 client", filepath.Join(v2Dir, "client.mjs"), endpoint, "header_args", headerArgs, "echo", "from the TS v2 client")
	v1 := startNodeClient(t, "the TypeScript SDK v1 client", filepath.Join(jsDir, "legacy-http-client.mjs"), endpoint, "header_args", headerArgs, "echo", "from the TS v1 client")

	headerTool := toolWithSuffix(tools, "header_args")[0]
	var args map[string]any
	json.Unmarshal([]byte(headerArgs), &args)
	checkHeaderArgs(t, "go-sdk client", c.call(headerTool, args))
	checkParamHeaders(t, "go-sdk client", wire.summary(), headerTool, mirroredHeaders)
	select {
	case <-acked:
	case <-time.After(15 * time.Second):
		t.Fatal("the go-sdk client's subscriptions/listen was not acknowledged within 15 s")
	}

	// Every client listens: a new tab's page registers its tools.
	for _, n := range []*nodeClient{v2, v1} {
		ready := n.next(t, "ready", 60*time.Second)
		want := "2026-07-28"
		if n == v1 {
			want = "2025-11-25"
		}
		if ready["version"] != want {
			t.Errorf("%s negotiated %v, want %s", n.name, ready["version"], want)
		}
	}
	for len(changes) > 0 { // the notes page's own registrations
		<-changes
	}
	c.callOK("webmcp_open_tab", map[string]any{"url": base + "/current/"})

	// The go-sdk client: list_changed through its subscription, the new
	// tool, and a confirmed call.
	var echo string
	deadline := time.After(20 * time.Second)
	for echo == "" {
		select {
		case id := <-changes:
			if id == nil {
				t.Errorf("the go-sdk client's tools/list_changed lacks _meta %s", mcp.MetaKeySubscriptionID)
			}
		case <-deadline:
			t.Fatal("the go-sdk client got no tools/list_changed with the new tab's echo within 20 s")
		}
		if e := toolWithSuffix(c.tools(), "echo"); len(e) == 1 {
			echo = e[0]
		}
	}
	if got := c.callOK(echo, map[string]any{"text": "from the go-sdk client"}); got != "from the go-sdk client" {
		t.Errorf("go-sdk client: the confirmed echo = %q", got)
	}
	if asked.Load() != 1 {
		t.Errorf("the go-sdk client was asked %d times, want 1 (the confirmation of echo; header_args is read-only)", asked.Load())
	} else if q := <-questions; !strings.Contains(q, echo) {
		t.Errorf("the go-sdk client's question %q does not name %s", q, echo)
	}
	checkConfirmedCall(t, "go-sdk client", wire.summary(), echo)

	// The Node clients, which did the same meanwhile.
	for _, n := range []*nodeClient{v2, v1} {
		t.Run(strings.TrimPrefix(n.name, "the "), func(t *testing.T) {
			checkNodeClient(t, n, n == v2, echo)
		})
	}
}

// nodeReport is what a Node client script prints at the end.
type nodeReport struct {
	Version           string              `json:"version"`
	SupportedVersions []string            `json:"supportedVersions"`
	SessionID         *string             `json:"sessionId"`
	ReadTool          string              `json:"readTool"`
	ReadResult        *mcp.CallToolResult `json:"readResult"`
	HonoredFilter     map[string]any      `json:"honoredFilter"`
	Changes           []struct {
		SubscriptionID any `json:"subscriptionId"`
	} `json:"changes"`
	NewTool   string              `json:"newTool"`
	Confirmed *mcp.CallToolResult `json:"confirmed"`
	Questions []string            `json:"questions"`
	Wire      []wireSummary       `json:"wire"`
}

// checkNodeClient checks a Node client's report: modern says whether it is
// the 2026-07-28 one.
func checkNodeClient(t *testing.T, n *nodeClient, modern bool, echo string) {
	msg := n.next(t, "done", 60*time.Second)
	raw, _ := json.Marshal(msg)
	var r nodeReport
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s's report %s: %v", n.name, raw, err)
	}
	wantText := "from the TS v1 client"
	if modern {
		wantText = "from the TS v2 client"
	}
	checkHeaderArgs(t, n.name, r.ReadResult)
	wantHeaders := mirroredHeaders
	if !modern {
		wantHeaders = nil
	}
	checkParamHeaders(t, n.name, r.Wire, r.ReadTool, wantHeaders)
	if r.NewTool != echo {
		t.Errorf("%s found the new tab's tool %q after list_changed, want %s", n.name, r.NewTool, echo)
	}
	if r.Confirmed == nil || r.Confirmed.IsError || text(r.Confirmed) != wantText {
		b, _ := json.Marshal(r.Confirmed)
		t.Errorf("%s: the confirmed echo = %s, want %q", n.name, b, wantText)
	}
	if len(r.Questions) != 1 || !strings.Contains(r.Questions[0], echo) {
		t.Errorf("%s was asked %q, want one confirmation that names %s", n.name, r.Questions, echo)
	}
	if modern {
		if r.Version != "2026-07-28" || r.SessionID != nil {
			t.Errorf("%s: version %s, session %v; want 2026-07-28 without a session", n.name, r.Version, r.SessionID)
		}
		if len(r.SupportedVersions) == 0 || r.SupportedVersions[0] != "2026-07-28" || !strings.Contains(strings.Join(r.SupportedVersions, " "), "2025-11-25") {
			t.Errorf("%s: server/discover listed %v, want 2026-07-28 and the older revisions", n.name, r.SupportedVersions)
		}
		if r.HonoredFilter["toolsListChanged"] != true {
			t.Errorf("%s: the server acknowledged the filter %v, want toolsListChanged", n.name, r.HonoredFilter)
		}
		if len(r.Changes) == 0 {
			t.Errorf("%s got no tools/list_changed", n.name)
		}
		for _, c := range r.Changes {
			if c.SubscriptionID == nil {
				t.Errorf("%s: a tools/list_changed without its subscription id: %+v", n.name, r.Changes)
			}
		}
		checkConfirmedCall(t, n.name, r.Wire, echo)
		return
	}
	if r.Version != "2025-11-25" || r.SessionID == nil || *r.SessionID == "" {
		t.Errorf("%s: version %s, session %v; want 2025-11-25 with a session", n.name, r.Version, r.SessionID)
	}
	if len(r.Changes) == 0 {
		t.Errorf("%s got no tools/list_changed on its stream", n.name)
	}
	// One tools/call of echo, answered once the client accepted the
	// elicitation request that came on its stream meanwhile.
	calls := callsOf(r.Wire, echo)
	if want := (wireSummary{Tool: echo, ResultType: "complete"}); len(calls) != 1 || !reflect.DeepEqual(calls[0], want) {
		t.Errorf("%s: the tools/call traffic of %s is %+v, want one call, asked through an elicitation request: %+v", n.name, echo, calls, want)
	}
}
