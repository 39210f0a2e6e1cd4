package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// taskBrowser is a page whose tools are: quick (answers at once), slow
// (answers when release is closed), block (runs until cancelled, then
// tells cancelled), and gone (ends with its page server's protocol error
// when breakIt is closed), and closing (its tab closes under it when
// breakIt is closed).
type taskBrowser struct {
	release, breakIt chan struct{}
	cancelled        chan struct{}
	hub              *hub.Hub
}

func (b *taskBrowser) Invoke(ctx context.Context, _, tool string, _ json.RawMessage) (core.Result, error) {
	switch tool {
	case "closing":
		<-b.breakIt
		b.hub.DropDoc("d")
		b.hub.TabClosed("T")
		return core.Result{}, errors.New("the page navigated away")
	case "quick":
		return core.Result{Kind: core.KindString, Value: "quick answer"}, nil
	case "slow", "gone":
		wait := b.release
		if tool == "gone" {
			wait = b.breakIt
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return core.Result{}, ctx.Err()
		}
		if tool == "gone" {
			return core.Result{Err: "the page server broke", Protocol: true}, nil
		}
		return core.Result{Kind: core.KindString, Value: "slow answer"}, nil
	}
	<-ctx.Done()
	close(b.cancelled)
	return core.Result{}, ctx.Err()
}

// taskServer is a Server whose tasks start after 20 ms (unless opts.After
// says otherwise), over a taskBrowser.
func taskServer(t *testing.T, opts TaskOptions) (*Server, *taskBrowser) {
	t.Helper()
	b := &taskBrowser{release: make(chan struct{}), breakIt: make(chan struct{}), cancelled: make(chan struct{})}
	h := hub.New(b, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	b.hub = h
	var tools []core.Tool
	for _, n := range []string{"quick", "slow", "block", "gone", "closing"} {
		tools = append(tools, core.Tool{Name: n, Description: "d " + n})
	}
	h.TabOpened("T", "https://s.test/", "S")
	h.Update(core.Source{Key: "d", Tab: "T", Frame: "F", Origin: "https://s.test", URL: "https://s.test/", Backend: "polyfill"}, tools, nil)
	if opts.After == 0 {
		opts.After = 20 * time.Millisecond
	}
	s := New(t.Context(), h, Options{Version: "test", Logger: slog.New(slog.DiscardHandler), Tasks: opts})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := s.Synced(ctx); err != nil {
		t.Fatal(err)
	}
	return s, b
}

const (
	tasksMeta   = `{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	noTasksMeta = `{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
)

// rpc sends one request with _meta meta and returns its decoded answer.
func rpc(t *testing.T, p *pipeSession, id int, method, params, meta string) map[string]any {
	t.Helper()
	if params == "" {
		params = "{}"
	}
	params = strings.TrimSuffix(params, "}")
	if len(params) > 1 {
		params += ","
	}
	p.send(`{"jsonrpc":"2.0","id":` + jsonInt(id) + `,"method":"` + method + `","params":` + params + `"_meta":` + meta + `}}`)
	var out map[string]any
	line := p.next()
	if err := json.Unmarshal([]byte(line), &out); err != nil {
		t.Fatalf("%s: %v: %s", method, err, line)
	}
	return out
}

func jsonInt(i int) string { b, _ := json.Marshal(i); return string(b) }

func call(name string) string { return `{"name":"s_test_` + name + `","arguments":{}}` }

func taskOf(id string) string { return `{"taskId":"` + id + `"}` }

// TestTasks drives the Tasks extension over stdio, a request at a time.
// Calls become tasks after the default second, not 20 ms: the quick call
// must answer in its request, and on a loaded machine its way through the
// hub could take longer than 20 ms. (The other calls are held by events,
// so they become tasks whatever After is; each costs the test one After.)
func TestTasks(t *testing.T) {
	t.Parallel()
	s, b := taskServer(t, TaskOptions{After: DefaultTaskAfter})
	p := newPipeSession(t, s, true)

	// Advertised in server/discover.
	disc := rpc(t, p, 1, "server/discover", "", tasksMeta)
	if ext, _ := disc["result"].(map[string]any)["capabilities"].(map[string]any)["extensions"].(map[string]any); ext[TasksExtension] == nil {
		t.Errorf("server/discover does not advertise the extension: %v", disc)
	}
	// A call that ends at once answers at once.
	quick := rpc(t, p, 2, "tools/call", call("quick"), tasksMeta)["result"].(map[string]any)
	if quick["resultType"] != "complete" || quick["taskId"] != nil {
		t.Errorf("a quick call: %v", quick)
	}
	// A slow call becomes a task, polled to completed.
	made := rpc(t, p, 3, "tools/call", call("slow"), tasksMeta)["result"].(map[string]any)
	id, _ := made["taskId"].(string)
	if made["resultType"] != "task" || id == "" || made["status"] != taskWorking || made["ttlMs"] != float64(DefaultTaskTTL.Milliseconds()) {
		t.Fatalf("a slow call did not make a task: %v", made)
	}
	for _, k := range []string{"result", "error", "inputRequests", "requestState", "content"} {
		if _, ok := made[k]; ok {
			t.Errorf("the CreateTaskResult has %s: %v", k, made)
		}
	}
	if got := rpc(t, p, 4, "tasks/get", taskOf(id), tasksMeta)["result"].(map[string]any); got["status"] != taskWorking || got["resultType"] != "complete" {
		t.Errorf("tasks/get while working: %v", got)
	}
	close(b.release)
	<-s.tasks.get(id, "").done
	got := rpc(t, p, 5, "tasks/get", taskOf(id), tasksMeta)["result"].(map[string]any)
	res, _ := got["result"].(map[string]any)
	if got["status"] != taskCompleted || res == nil || !strings.Contains(mustString(res), "slow answer") {
		t.Errorf("tasks/get once completed: %v", got)
	}
	// A blocked call cancelled: the page's call ends, the task is cancelled.
	id = rpc(t, p, 6, "tools/call", call("block"), tasksMeta)["result"].(map[string]any)["taskId"].(string)
	for i := range 2 { // idempotent
		ack := rpc(t, p, 7+i, "tasks/cancel", taskOf(id), tasksMeta)["result"].(map[string]any)
		if ack["resultType"] != "complete" || ack["taskId"] != nil || ack["status"] != nil {
			t.Errorf("tasks/cancel's ack: %v", ack)
		}
	}
	<-b.cancelled
	if got := rpc(t, p, 9, "tasks/get", taskOf(id), tasksMeta)["result"].(map[string]any); got["status"] != taskCancelled {
		t.Errorf("tasks/get once cancelled: %v", got)
	}
	// A call whose page server broke makes a failed task with an error.
	// A call whose page server broke, and one whose tab closed under it,
	// make failed tasks with the reason in their error.
	broken := rpc(t, p, 10, "tools/call", call("gone"), tasksMeta)["result"].(map[string]any)["taskId"].(string)
	closed := rpc(t, p, 11, "tools/call", call("closing"), tasksMeta)["result"].(map[string]any)["taskId"].(string)
	close(b.breakIt)
	for i, c := range []struct{ id, why string }{{broken, "the page server broke"}, {closed, "its tab was closed"}} {
		<-s.tasks.get(c.id, "").done
		got = rpc(t, p, 12+i, "tasks/get", taskOf(c.id), tasksMeta)["result"].(map[string]any)
		if e, _ := got["error"].(map[string]any); got["status"] != taskFailed || e["code"] == nil || got["result"] != nil ||
			!strings.Contains(mustString(e["message"]), c.why) {
			t.Errorf("tasks/get of a call that broke (%s): %v", c.why, got)
		}
	}
}

func mustString(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestTaskErrors: what a request that is not a task's gets.
func TestTaskErrors(t *testing.T) {
	t.Parallel()
	s, b := taskServer(t, TaskOptions{})
	close(b.release)
	p := newPipeSession(t, s, true)
	cases := []struct {
		name, method, params, meta string
		code                       float64
		data                       bool // data.requiredCapabilities names the extension
	}{
		{"get without the extension", "tasks/get", taskOf("x"), noTasksMeta, -32021, true},
		{"update without the extension", "tasks/update", `{"taskId":"x","inputResponses":{}}`, noTasksMeta, -32021, true},
		{"cancel without the extension", "tasks/cancel", taskOf("x"), noTasksMeta, -32021, true},
		{"unknown task", "tasks/get", taskOf("nope"), tasksMeta, -32602, false},
		{"unknown task to cancel", "tasks/cancel", taskOf("nope"), tasksMeta, -32602, false},
		{"tasks/result is gone", "tasks/result", taskOf("x"), tasksMeta, -32601, false},
		{"tasks/list is gone", "tasks/list", "", tasksMeta, -32601, false},
	}
	for i, c := range cases {
		out := rpc(t, p, 100+i, c.method, c.params, c.meta)
		e, _ := out["error"].(map[string]any)
		if e == nil || e["code"] != c.code {
			t.Errorf("%s: got %v, want code %v", c.name, out, c.code)
			continue
		}
		if c.data && !strings.Contains(mustString(e["data"]), `"extensions":{"io.modelcontextprotocol/tasks":{}}`) {
			t.Errorf("%s: data %v", c.name, e["data"])
		}
	}
	// Without the extension a slow call is a plain result.
	res := rpc(t, p, 200, "tools/call", call("slow"), noTasksMeta)["result"].(map[string]any)
	if res["taskId"] != nil || !strings.Contains(mustString(res), "slow answer") {
		t.Errorf("a call without the extension: %v", res)
	}
}

// TestTasksOff: --tasks off advertises nothing, knows no tasks methods,
// and answers every call in its request.
func TestTasksOff(t *testing.T) {
	t.Parallel()
	s, b := taskServer(t, TaskOptions{Off: true})
	close(b.release)
	p := newPipeSession(t, s, true)
	disc := rpc(t, p, 1, "server/discover", "", tasksMeta)
	if strings.Contains(mustString(disc), TasksExtension) {
		t.Errorf("server/discover advertises the extension: %v", disc)
	}
	if e, _ := rpc(t, p, 2, "tasks/get", taskOf("x"), tasksMeta)["error"].(map[string]any); e == nil || e["code"] != float64(-32601) {
		t.Errorf("tasks/get with --tasks off: %v", e)
	}
	if res := rpc(t, p, 3, "tools/call", call("slow"), tasksMeta)["result"].(map[string]any); res["taskId"] != nil {
		t.Errorf("a call with --tasks off: %v", res)
	}
}

// TestTaskStore: ownership, the bound per person, the budget shared by
// servers (finished tasks make room), and the TTL.
func TestTaskStore(t *testing.T) {
	t.Parallel()
	budget := NewTaskBudget(3)
	ts := newTaskStore(TaskOptions{MaxPerPerson: 2, Budget: budget, TTL: time.Hour})
	other := newTaskStore(TaskOptions{MaxPerPerson: 2, Budget: budget, TTL: time.Hour})
	stop := func() {}
	a := ts.create("ann", "t", stop)
	a2 := ts.create("ann", "t", stop)
	if a == nil || a2 == nil || ts.create("ann", "t", stop) != nil {
		t.Fatal("the bound per person is not 2")
	}
	if ts.get(a.id, "bob") != nil || ts.get(a.id, "ann") != a {
		t.Error("a task is not its owner's alone")
	}
	if other.create("bob", "t", stop) == nil {
		t.Fatal("the shared budget of 3 is spent at 2")
	}
	if other.create("cid", "t", stop) != nil {
		t.Fatal("the shared budget allowed a 4th task with none finished")
	}
	a.end(taskCompleted, "", &mcp.CallToolResult{}, nil)
	if ts.create("cid", "t", stop) == nil {
		t.Fatal("a finished task did not make room")
	}
	if ts.get(a.id, "ann") != nil {
		t.Error("the oldest finished task was not the one forgotten")
	}
	short := newTaskStore(TaskOptions{TTL: 10 * time.Millisecond})
	stopped := make(chan struct{})
	x := short.create("", "t", func() { close(stopped) })
	<-stopped
	<-x.done
	if short.get(x.id, "") != nil || x.detailed().Status != taskCancelled {
		t.Errorf("an expired task: kept %v, status %s", short.get(x.id, "") != nil, x.detailed().Status)
	}
}

// TestTaskUpdate: answers to pending questions only, partial answers
// keep the task waiting on the rest, unknown keys are ignored.
func TestTaskUpdate(t *testing.T) {
	t.Parallel()
	ts := newTaskStore(TaskOptions{})
	x := ts.create("", "t", func() {})
	x.ask(mcp.InputRequestMap{"a": &mcp.ElicitParams{Message: "a?"}, "b": &mcp.ElicitParams{Message: "b?"}})
	ans := func(keys ...string) map[string]json.RawMessage {
		m := map[string]json.RawMessage{}
		for _, k := range keys {
			m[k] = json.RawMessage(`{"action":"accept","content":{"ok":true}}`)
		}
		return m
	}
	steps := []struct {
		answers map[string]json.RawMessage
		status  string
		pending string
		err     bool
	}{
		{map[string]json.RawMessage{"zzz": json.RawMessage(`{"ignored":true}`)}, taskInputRequired, "a,b", false},
		{map[string]json.RawMessage{"a": json.RawMessage(`{"ignored":true}`)}, taskInputRequired, "a,b", true},
		{ans("a"), taskInputRequired, "b", false},
		{ans("b"), taskWorking, "", false},
	}
	for i, st := range steps {
		err := x.update(st.answers)
		if (err != nil) != st.err {
			t.Errorf("step %d: error %v", i, err)
		}
		d := x.detailed()
		var keys []string
		for _, k := range []string{"a", "b"} {
			if d.InputRequests[k] != nil {
				keys = append(keys, k)
			}
		}
		if d.Status != st.status || strings.Join(keys, ",") != st.pending {
			t.Errorf("step %d: status %s, pending %v; want %s, %s", i, d.Status, keys, st.status, st.pending)
		}
	}
	if got := x.takeAnswers(); len(got) != 2 {
		t.Errorf("the run takes %d answers, want 2", len(got))
	}
}

// TestFlatInputRequired: an input_required result goes on the wire
// without "content" (part 4 of issue 40), and a result never with
// "content": null.
func TestFlatInputRequired(t *testing.T) {
	t.Parallel()
	var ir mcp.CallToolResult
	if err := json.Unmarshal([]byte(`{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"?","requestedSchema":{"type":"object"}}}},"requestState":"s"}`), &ir); err != nil {
		t.Fatal(err)
	}
	ir.Content = nil
	for _, c := range []struct {
		res  mcp.Result
		want string
	}{
		{&ir, `"resultType":"input_required"`},
		{&mcp.CallToolResult{}, `"content":[]`},
	} {
		raw, err := json.Marshal(flatInputRequired(c.res))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), "null") || !strings.Contains(string(raw), c.want) {
			t.Errorf("written as %s, want %s and no null", raw, c.want)
		}
	}
}

// TestTaskHeaderCheck: a tasks method whose Mcp-Name is not its taskId
// is refused with -32020; a matching or absent one goes on.
func TestTaskHeaderCheck(t *testing.T) {
	t.Parallel()
	h := taskHeaderCheck(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(299) }), 1<<20)
	for _, c := range []struct {
		method, name string
		want         int
	}{
		{"tasks/get", "abc", 299},
		{"tasks/get", "", 299},
		{"tasks/cancel", "other", http.StatusBadRequest},
		{"tools/call", "other", 299},
	} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+c.method+`","params":{"taskId":"abc"}}`))
		r.Header.Set(headerMethod, c.method)
		if c.name != "" {
			r.Header.Set(headerName, c.name)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want || (c.want == http.StatusBadRequest && !strings.Contains(w.Body.String(), "-32020")) {
			t.Errorf("%s with Mcp-Name %q: %d %s", c.method, c.name, w.Code, w.Body)
		}
	}
}

// TestPeekTaskSupport: a page server's execution.taskSupport is read from
// its tools/list, and a value that is none of the three is dropped.
func TestPeekTaskSupport(t *testing.T) {
	t.Parallel()
	var pp pagePeek
	id, _ := jsonrpc.MakeID(float64(7))
	pp.sent(&jsonrpc.Request{ID: id, Method: "tools/list"})
	pp.received(&jsonrpc.Response{ID: id, Result: json.RawMessage(`{"tools":[
		{"name":"a","execution":{"taskSupport":"required"}},
		{"name":"b","execution":{"taskSupport":"optional"}},
		{"name":"c","execution":{"taskSupport":"sometimes"}},
		{"name":"d"}]}`)})
	for tool, want := range map[string]string{"a": taskRequired, "b": taskOptional, "c": "", "d": ""} {
		if got := pp.taskSupport(tool); got != want {
			t.Errorf("%s: task support %q, want %q", tool, got, want)
		}
	}
}

// TestTaskOwner: with OAuth, a task is its principal's alone: another
// person's tasks/get, tasks/update and tasks/cancel get the error of an id
// that never existed.
func TestTaskOwner(t *testing.T) {
	t.Parallel()
	s, _ := taskServer(t, TaskOptions{})
	ann := s.tasks.create("ann", "s_test_block", func() {})
	req := func(sub, id string) *mcp.ServerRequest[*taskParams] {
		p := &taskParams{TaskID: id}
		p.Meta = mcp.Meta{mcp.MetaKeyClientCapabilities: map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}}
		return &mcp.ServerRequest[*taskParams]{Params: p, Extra: &mcp.RequestExtra{TokenInfo: &auth.TokenInfo{Extra: map[string]any{"sub": sub}}}}
	}
	_, never := s.taskMethod(methodTasksGet, req("bob", "never-made"))
	for _, m := range []string{methodTasksGet, methodTasksUpdate, methodTasksCancel} {
		if _, err := s.taskMethod(m, req("bob", ann.id)); err == nil || strings.ReplaceAll(err.Error(), ann.id, "never-made") != never.Error() {
			t.Errorf("bob's %s of ann's task: %v; want the error of an unknown id (%v)", m, err, never)
		}
	}
	if res, err := s.taskMethod(methodTasksGet, req("ann", ann.id)); err != nil || res.(*detailedTask).Status != taskWorking {
		t.Errorf("ann's tasks/get of her task: %v %v", res, err)
	}
	if ann.terminal() {
		t.Error("bob's tasks/cancel cancelled ann's task")
	}
}
