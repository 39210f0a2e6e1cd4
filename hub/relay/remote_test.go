package relay

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// agent is a go-sdk MCP client on a Remote, in memory.
type agent struct {
	t       *testing.T
	cs      *mcp.ClientSession
	remote  *Remote
	changes chan struct{}
}

func (h *harness) agent(t *testing.T, user string, mod func(*RemoteOptions)) *agent {
	t.Helper()
	opts := RemoteOptions{URL: h.url("/mcp"), Token: h.token(user), Logger: quietLogger(),
		PollInterval: 20 * time.Millisecond, MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
	if mod != nil {
		mod(&opts)
	}
	r, err := NewRemote(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	a := &agent{t: t, remote: r, changes: make(chan struct{}, 100)}
	ct, st := mcp.NewInMemoryTransports()
	if _, err := r.MCP().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case a.changes <- struct{}{}:
			default:
			}
		},
	})
	cs, err := cl.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	a.cs = cs
	return a
}

func (a *agent) tools() map[string]*mcp.Tool {
	a.t.Helper()
	res, err := a.cs.ListTools(context.Background(), nil)
	if err != nil {
		a.t.Fatal(err)
	}
	out := map[string]*mcp.Tool{}
	for _, t := range res.Tools {
		out[t.Name] = t
	}
	return out
}

func (a *agent) waitTool(name string, present bool) {
	a.t.Helper()
	waitFor(a.t, name+" to be listed="+map[bool]string{true: "yes", false: "no"}[present], func() bool {
		_, ok := a.tools()[name]
		return ok == present
	})
}

func (a *agent) call(name string, args any) *mcp.CallToolResult {
	a.t.Helper()
	res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		a.t.Fatalf("%s: %v", name, err)
	}
	return res
}

func textOf(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// TestRemoteServesPageTools: a page tool of the remote browser is listed,
// called, and kept in step (list_changed), next to connect's own tools.
func TestRemoteServesPageTools(t *testing.T) {
	s := newBrowserSetup(t, "Chrome 141", nil)
	openTabs(s)
	a := s.agent(t, "alice", nil)
	a.waitTool("one_example_add_note", true)
	tools := a.tools()
	for _, own := range []string{"webmcp_relay_status", "webmcp_call", "webmcp_list_tabs", "webmcp_screenshot", "webmcp_click"} {
		if _, ok := tools[own]; !ok {
			t.Errorf("%s is not listed", own)
		}
	}
	note := tools["one_example_add_note"]
	if src, _ := note.Meta["webmcp-cdp/source"].(map[string]any); src["tool"] != "add_note" {
		t.Errorf("provenance %v", note.Meta)
	}
	res := a.call("one_example_add_note", map[string]any{"title": "hi"})
	if res.IsError || textOf(res) != `d1 ran add_note with {"title":"hi"}` {
		t.Fatalf("call: %v %q", res.IsError, textOf(res))
	}
	res = a.call("webmcp_call", map[string]any{"name": "one_example_add_note", "arguments": map[string]any{"title": "via call"}})
	if !strings.Contains(textOf(res), "via call") {
		t.Fatalf("webmcp_call: %q", textOf(res))
	}

	// A new tool on the page: the agent hears list_changed and sees it.
	for len(a.changes) > 0 {
		<-a.changes
	}
	s.hub.Update(core.Source{Key: "d2", Tab: "T2", Frame: "F2", Origin: "http://two.example", URL: "http://two.example/", Backend: "polyfill"},
		[]core.Tool{{Name: "search", Description: "Search"}}, nil)
	select {
	case <-a.changes:
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed after a page registered a tool")
	}
	a.waitTool("two_example_search", true)
	s.hub.TabClosed("T2")
	a.waitTool("two_example_search", false)
}

// TestRemoteBrowserTools: connect's own tools map onto the forwarded
// methods.
func TestRemoteBrowserTools(t *testing.T) {
	s := newBrowserSetup(t, "Chrome", nil)
	openTabs(s)
	a := s.agent(t, "alice", nil)
	a.waitTool("one_example_add_note", true)
	tests := []struct {
		tool   string
		args   map[string]any
		text   string
		action string
		isErr  bool
	}{
		{tool: "webmcp_list_tabs", args: map[string]any{}, text: `"tabId":2`},
		{tool: "webmcp_select_tab", args: map[string]any{"tabId": 1}, text: `"selected":true`},
		{tool: "webmcp_click", args: map[string]any{"selector": "#save"}, action: "Click T1 #save"},
		{tool: "webmcp_type", args: map[string]any{"text": "hi", "submit": true}, action: `Type T1 "" "hi" true`},
		{tool: "webmcp_navigate", args: map[string]any{"url": "http://x.example/"}, action: "Navigate T1 http://x.example/"},
		{tool: "webmcp_go_forward", args: map[string]any{}, isErr: true, text: "no page to go forward"},
		{tool: "webmcp_close_tab", args: map[string]any{"tabId": 7}, isErr: true, text: "No tab 7"},
	}
	for _, tt := range tests {
		res := a.call(tt.tool, tt.args)
		if res.IsError != tt.isErr || !strings.Contains(textOf(res), tt.text) {
			t.Errorf("%s: isError=%v %q", tt.tool, res.IsError, textOf(res))
		}
		if tt.action != "" && s.actions.last() != tt.action {
			t.Errorf("%s: action %q, want %q", tt.tool, s.actions.last(), tt.action)
		}
	}
	res := a.call("webmcp_screenshot", map[string]any{"tabId": 2})
	img, ok := res.Content[0].(*mcp.ImageContent)
	if !ok || string(img.Data) != "IMAGE of T2" || img.MIMEType != "image/png" {
		t.Fatalf("screenshot %+v", res.Content[0])
	}
}

// TestRemoteFollowsTheBrowser: when the browser goes away its tools go and
// the status says why; when it comes back (same name) they return.
func TestRemoteFollowsTheBrowser(t *testing.T) {
	h := newHarness(t, nil)
	hb := hub.New(pageBrowser{}, hub.Options{Logger: quietLogger()})
	s := h.startBrowser(t, "alice", "Chrome 141", hb, nil)
	openTabs(s)
	a := h.agent(t, "alice", nil)
	a.waitTool("one_example_add_note", true)

	s.stop()
	a.waitTool("one_example_add_note", false)
	st := a.remote.Status()
	if st.Connected || !strings.Contains(st.LastDisconnect, "Extension closed") {
		t.Fatalf("status after the browser left: %+v", st)
	}
	if res := a.call("webmcp_list_tabs", map[string]any{}); !res.IsError {
		t.Fatalf("webmcp_list_tabs without a browser: %q", textOf(res))
	}

	h.startBrowser(t, "alice", "Chrome 141", hb, nil)
	a.waitTool("one_example_add_note", true)
	if res := a.call("one_example_add_note", map[string]any{}); res.IsError {
		t.Fatalf("call after reconnecting: %q", textOf(res))
	}
}

// TestRemoteIsolation: another user's agent sees no browser.
func TestRemoteIsolation(t *testing.T) {
	s := newBrowserSetup(t, "Chrome", nil)
	openTabs(s)
	bob := s.agent(t, "bob", nil)
	waitFor(t, "bob's status", func() bool { return bob.remote.Status().Problem != "" })
	st := bob.remote.Status()
	if st.Connected || len(st.Browsers) != 0 || !strings.Contains(st.Problem, "no browser") {
		t.Fatalf("bob's status %+v", st)
	}
	for name := range bob.tools() {
		if !strings.HasPrefix(name, "webmcp_") {
			t.Fatalf("bob sees %s", name)
		}
	}
	res := bob.call("webmcp_list_tabs", map[string]any{})
	if !res.IsError || !strings.Contains(textOf(res), "no browser") {
		t.Fatalf("bob's webmcp_list_tabs: %v %q", res.IsError, textOf(res))
	}
}

// TestRemoteChoosesABrowser: with two browsers, --extension picks one by name
// or id; without it, the status says to choose.
func TestRemoteChoosesABrowser(t *testing.T) {
	h := newHarness(t, nil)
	h.startBrowser(t, "alice", "Work", nil, nil)
	h.startBrowser(t, "alice", "Home", nil, nil)
	waitFor(t, "two browsers", func() bool { return h.srv.Stats().Browsers == 2 })

	undecided := h.agent(t, "alice", nil)
	waitFor(t, "the status", func() bool { return undecided.remote.Status().Problem != "" })
	if p := undecided.remote.Status().Problem; !strings.Contains(p, "--extension") {
		t.Fatalf("problem %q", p)
	}
	byName := h.agent(t, "alice", func(o *RemoteOptions) { o.Extension = "Home" })
	waitFor(t, "a connection", func() bool { return byName.remote.Status().Connected })
	st := byName.remote.Status()
	if st.ExtensionName != "Home" {
		t.Fatalf("connected to %+v", st)
	}
	var home string
	for _, b := range st.Browsers {
		if b.Name == "Home" {
			home = b.ID
		}
	}
	byID := h.agent(t, "alice", func(o *RemoteOptions) { o.Extension = home })
	waitFor(t, "a connection", func() bool { return byID.remote.Status().Connected })
	if got := byID.remote.Status().ExtensionID; got != home {
		t.Fatalf("connected to %s, want %s", got, home)
	}
}

func TestRemoteRefusedToken(t *testing.T) {
	h := newHarness(t, nil)
	r, err := NewRemote(RemoteOptions{URL: h.url("/mcp"), Token: "not-a-jwt", Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	err = r.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "refused") || !strings.Contains(err.Error(), "not a JWT") {
		t.Fatalf("Start: %v", err)
	}
}

// TestRemoteToolChecks: definitions from the browser are checked before the
// SDK sees them.
func TestRemoteToolChecks(t *testing.T) {
	tests := []struct {
		raw        string
		ok, output bool // output: the output schema is kept
	}{
		{`{"name":"a_b","inputSchema":{"type":"object"}}`, true, false},
		{`{"name":"a_b","inputSchema":{"type":"object"},"outputSchema":{"type":"string"}}`, true, false},
		{`{"name":"a_b","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"n":{"type":"integer"}}},"_meta":{"ui":{"resourceUri":"ui://a"}}}`, true, true},
		{`{"name":"","inputSchema":{"type":"object"}}`, false, false},
		{`{"name":"a","inputSchema":{"type":"array"}}`, false, false},
		{`{"name":"a"}`, false, false},
		{`[1]`, false, false},
	}
	for _, tt := range tests {
		tool, err := remoteTool(json.RawMessage(tt.raw))
		if (err == nil) != tt.ok {
			t.Errorf("remoteTool(%s) = %v, want ok=%v", tt.raw, err, tt.ok)
		}
		if err == nil && (tool.OutputSchema != nil) != tt.output {
			t.Errorf("remoteTool(%s) has output schema %v, want it kept: %v", tt.raw, tool.OutputSchema, tt.output)
		}
	}
}
