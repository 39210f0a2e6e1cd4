package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tasksPage registers the WebMCP tools of TestTasks: slow_report takes
// 3 s; long_export runs until it is cancelled, and the page keeps the
// names of the tools whose calls were cancelled (toolcancel), which
// cancels returns; place_order works 1 s, then asks for the person's
// go-ahead through agent.requestUserInteraction (a confirm dialog).
const tasksPage = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>tasks</title></head><body><script>
const mc = document.modelContext;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cancelled = [];
mc.addEventListener("toolcancel", (e) => cancelled.push(e.toolName));
mc.registerTool({name: "slow_report", description: "Build the report (3 s).", inputSchema: {type: "object"},
  annotations: {readOnlyHint: true}, execute: async () => { await sleep(3000); return "report ready"; }});
mc.registerTool({name: "long_export", description: "Export everything, until cancelled.", inputSchema: {type: "object"},
  annotations: {readOnlyHint: true}, execute: () => new Promise(() => {})});
mc.registerTool({name: "cancels", description: "The tools whose calls were cancelled.", inputSchema: {type: "object"},
  annotations: {readOnlyHint: true}, execute: async () => "cancelled: " + cancelled.join(",")});
mc.registerTool({name: "place_order", description: "Place the order, with the person's go-ahead.", inputSchema: {type: "object"},
  execute: async (input, agent) => {
    await sleep(1000);
    const ok = await agent.requestUserInteraction(async () => confirm("Place the order?"));
    return ok ? "order placed" : "order not placed";
  }});
</script></body></html>`

// TestTasks (issue 40): the TypeScript SDK v2 client declares the Tasks
// extension on webmcp-cdp launch --http --task-after 300ms over a real
// Chromium page (tasks.mjs drives it):
//   - a WebMCP tool that takes 3 s becomes a task, polled to completed
//     with its result;
//   - a tool cancelled mid-run (tasks/cancel) ends cancelled, and the page
//     saw toolcancel for it;
//   - a requestUserInteraction inside a task is the task's input_required
//     (an elicitation), and tasks/update's answer resumes it to completed;
//   - a client without the extension gets the 3 s tool's plain result;
//   - a task whose tab is closed (webmcp_close_tab) ends failed, with the
//     reason in its error.
func TestTasks(t *testing.T) {
	t.Parallel()
	v2Dir := tsClientV2Dir(t)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, tasksPage)
	}))
	t.Cleanup(page.Close)
	endpoint := startHTTP(t, "launch", "--headless", "--http", "127.0.0.1:0", "--task-after", "300ms", page.URL+"/")
	// The page's tools are listed before the client starts.
	httpClient(t, endpoint, "").waitFor("the page's tools", hasSuffix("place_order", 1))

	n := startNodeClient(t, "the TypeScript SDK v2 client with tasks", filepath.Join(v2Dir, "tasks.mjs"), endpoint)
	step := func(want string, d time.Duration) map[string]any {
		t.Helper()
		return n.next(t, want, d)
	}
	if c := step("connected", 60*time.Second); c["version"] != "2026-07-28" || c["extension"] != true {
		t.Errorf("the client connected with %v; want 2026-07-28 and the extension advertised", c)
	}
	if p := step("polled", 60*time.Second); p["created"] != "working" || p["status"] != "completed" || p["text"] != "report ready" {
		t.Errorf("slow_report's task: %v; want created working, completed with \"report ready\"", p)
	}
	// (The client takes the acks only with resultType "complete", which it
	// lifts off; an ack carries nothing of the task.)
	c := step("cancelled", 60*time.Second)
	if ack, _ := c["ack"].(map[string]any); ack == nil || ack["taskId"] != nil || ack["status"] != nil || c["status"] != "cancelled" ||
		!strings.Contains(c["pageSaw"].(string), "long_export") {
		t.Errorf("long_export's cancelled task: %v; want an empty ack, status cancelled, and toolcancel in the page", c)
	}
	a := step("answered", 60*time.Second)
	if a["method"] != "elicitation/create" || a["status"] != "completed" || a["text"] != "order placed" {
		t.Errorf("place_order's task: %v; want an elicitation asked in the task, then completed with \"order placed\"", a)
	}
	if p := step("plain", 60*time.Second); p["taskId"] != nil || p["resultType"] != "complete" || p["text"] != "report ready" {
		t.Errorf("a client without the extension: %v; want the plain result \"report ready\"", p)
	}
	if c := step("tab closed", 60*time.Second); c["status"] != "failed" || !strings.Contains(fmt.Sprint(c["error"]), "its tab was closed") {
		t.Errorf("a task whose tab was closed: %v; want failed, with the reason", c)
	}
	step("done", 10*time.Second)
}

// TestTasksStdio: the Tasks extension over stdio (MCP 2026-07-28 requests,
// each declaring the extension in its _meta, written by hand): the 3 s
// tool is answered with a CreateTaskResult, tasks/get follows it to
// completed with the page's result inlined, and the same call without
// the extension is the plain result.
func TestTasksStdio(t *testing.T) {
	t.Parallel()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, tasksPage)
	}))
	t.Cleanup(page.Close)
	r := startRawStdio(t, "launch", "--headless", "--task-after", "300ms", "--wait-tools", "30s", page.URL+"/")
	caps := func(tasks bool) string {
		ext := ""
		if tasks {
			ext = `"extensions":{"io.modelcontextprotocol/tasks":{}}`
		}
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"},"io.modelcontextprotocol/clientCapabilities":{` + ext + `}}`
	}
	id := 0
	ask := func(method, params string, tasks bool) map[string]any {
		t.Helper()
		id++
		r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s%s}}`, id, method, params, caps(tasks)))
		m := r.reply(t)
		res, _ := m["result"].(map[string]any)
		if res == nil {
			t.Fatalf("%s %s: %v", method, params, m)
		}
		return res
	}
	var tool string
	for _, tl := range ask("tools/list", "", true)["tools"].([]any) {
		if name := tl.(map[string]any)["name"].(string); strings.HasSuffix(name, "_slow_report") {
			tool = name
		}
	}
	if tool == "" {
		t.Fatalf("no slow_report listed:\n%s", r.stderr.String())
	}
	made := ask("tools/call", fmt.Sprintf(`"name":%q,"arguments":{},`, tool), true)
	taskID, _ := made["taskId"].(string)
	if made["resultType"] != "task" || taskID == "" || made["status"] != "working" {
		t.Fatalf("the 3 s call was answered %v, want a CreateTaskResult", made)
	}
	// Polled at the interval the task suggests, as a client does. This
	// sleep cannot be an event: a task's status reaches a client only by
	// tasks/get (webmcp-cdp sends no task status notifications, which
	// SEP-2663 leaves optional), and polling at pollIntervalMs is the
	// behaviour under test.
	poll := time.Duration(made["pollIntervalMs"].(float64)) * time.Millisecond
	var got map[string]any
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(poll) {
		got = ask("tasks/get", fmt.Sprintf(`"taskId":%q,`, taskID), true)
		if got["status"] != "working" || time.Now().After(deadline) {
			break
		}
	}
	if res, _ := got["result"].(map[string]any); got["status"] != "completed" || !strings.Contains(fmt.Sprint(res["content"]), "report ready") {
		t.Errorf("tasks/get of the finished task: %v", got)
	}
	plain := ask("tools/call", fmt.Sprintf(`"name":%q,"arguments":{},`, tool), false)
	if plain["taskId"] != nil || plain["resultType"] != "complete" || !strings.Contains(fmt.Sprint(plain["content"]), "report ready") {
		t.Errorf("the call without the extension: %v", plain)
	}
}
