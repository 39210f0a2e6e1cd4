package relay

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// pageBrowser is a fake hub.Browser: every tool answers with its name and
// input.
type pageBrowser struct{}

func (pageBrowser) Invoke(_ context.Context, docKey, tool string, input json.RawMessage) (core.Result, error) {
	return core.Result{Kind: "string", Value: fmt.Sprintf("%s ran %s with %s", docKey, tool, input)}, nil
}

// tabReporter is the part of the hub that cdp tells of opened and closed
// tabs: *hub.Hub, or fakeHub (browser_fake_test.go).
type tabReporter interface {
	TabOpened(id, url, title string)
	TabClosed(id string)
}

// fakeActions records the browser actions and reports opened and closed tabs
// to the hub, as cdp does.
type fakeActions struct {
	hub tabReporter

	mu    sync.Mutex
	calls []string
	next  int
}

func (f *fakeActions) record(format string, args ...any) {
	f.mu.Lock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
	f.mu.Unlock()
}

// last returns the last action recorded.
func (f *fakeActions) last() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return ""
	}
	return f.calls[len(f.calls)-1]
}

func (f *fakeActions) Open(_ context.Context, url string) (string, error) {
	f.mu.Lock()
	f.next++
	id := fmt.Sprintf("new%d", f.next)
	f.calls = append(f.calls, "Open "+url)
	f.mu.Unlock()
	go f.hub.TabOpened(id, url, "page "+id) // a moment later, as the browser reports it
	return id, nil
}
func (f *fakeActions) CloseTab(_ context.Context, tab string) error {
	f.record("CloseTab %s", tab)
	f.hub.TabClosed(tab)
	return nil
}
func (f *fakeActions) ActivateTab(_ context.Context, tab string) error {
	f.record("ActivateTab %s", tab)
	return nil
}
func (f *fakeActions) NavigateAndWait(_ context.Context, tab, url string) error {
	f.record("Navigate %s %s", tab, url)
	return nil
}
func (f *fakeActions) GoBack(_ context.Context, tab string) (string, error) {
	f.record("GoBack %s", tab)
	return "http://back.example/", nil
}
func (f *fakeActions) GoForward(_ context.Context, tab string) (string, error) {
	f.record("GoForward %s", tab)
	return "", fmt.Errorf("tab %s has no page to go forward to", tab)
}
func (f *fakeActions) Click(_ context.Context, tab, selector string) error {
	f.record("Click %s %s", tab, selector)
	return nil
}
func (f *fakeActions) ClickAt(_ context.Context, tab string, x, y float64) error {
	f.record("ClickAt %s %g %g", tab, x, y)
	return nil
}
func (f *fakeActions) Hover(_ context.Context, tab, selector string) error {
	f.record("Hover %s %s", tab, selector)
	return nil
}
func (f *fakeActions) HoverAt(_ context.Context, tab string, x, y float64) error {
	f.record("HoverAt %s %g %g", tab, x, y)
	return nil
}
func (f *fakeActions) Type(_ context.Context, tab, selector, text string, submit bool) error {
	f.record("Type %s %q %q %v", tab, selector, text, submit)
	return nil
}
func (f *fakeActions) Screenshot(_ context.Context, tab, format string, quality int, fullPage bool) ([]byte, error) {
	f.record("Screenshot %s %s %d %v", tab, format, quality, fullPage)
	return []byte("IMAGE of " + tab), nil
}
func (f *fakeActions) RawCommand(_ context.Context, tab, method string, params json.RawMessage) (json.RawMessage, error) {
	f.record("Raw %s %s %s", tab, method, params)
	return json.RawMessage(`{"echo":"` + method + `"}`), nil
}

// browserSetup is a proxy, a hub with a fake browser, and a browser side
// connected to the proxy for user alice.
type browserSetup struct {
	*harness
	hub     *hub.Hub
	actions *fakeActions
	cancel  context.CancelFunc
	done    chan struct{}
}

func newBrowserSetup(t *testing.T, name string, mod func(*BrowserSideOptions)) *browserSetup {
	t.Helper()
	h := newHarness(t, nil)
	return h.startBrowser(t, "alice", name, nil, mod)
}

// startBrowser runs a browser side for user on the harness's proxy, with its
// own hub (or hb when given), and waits until the proxy lists it.
func (h *harness) startBrowser(t *testing.T, user, name string, hb *hub.Hub, mod func(*BrowserSideOptions)) *browserSetup {
	t.Helper()
	if hb == nil {
		hb = hub.New(pageBrowser{}, hub.Options{Logger: quietLogger()})
	}
	acts := &fakeActions{hub: hb}
	opts := BrowserSideOptions{
		URL: h.url("/extension"), Token: h.token(user), Name: name,
		Hub: hb, Actions: acts, Logger: quietLogger(),
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
	}
	if mod != nil {
		mod(&opts)
	}
	// The browser side says when the relay accepted it: wait for that event
	// rather than asking the relay until it lists the browser.
	registered := make(chan struct{})
	var once sync.Once
	then := opts.OnAuthenticated
	opts.OnAuthenticated = func(id string) {
		once.Do(func() { close(registered) })
		if then != nil {
			then(id)
		}
	}
	bs, err := NewBrowserSide(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		bs.Run(ctx)
	}()
	s := &browserSetup{harness: h, hub: hb, actions: acts, cancel: cancel, done: done}
	t.Cleanup(s.stop)
	select {
	case <-registered:
	case <-time.After(10 * time.Second):
		t.Fatal("the relay did not accept the browser within 10 s")
	}
	return s
}

func (s *browserSetup) stop() {
	s.cancel()
	<-s.done
}

// waitFor checks cond every 5 ms for up to 10 s. It polls: the connect
// side's tests use it for Remote.Status, which has no change event; new
// tests should wait on an event instead.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		// Poll interval: Remote.Status and the relay's Stats have no change
		// event (a tools/list_changed is the tests' own, on agent.changes).
		time.Sleep(5 * time.Millisecond)
	}
}

// connectedClient is a Client of user connected to the only browser.
func (h *harness) connectedClient(t testing.TB, user string) *Client {
	t.Helper()
	ctx := context.Background()
	c, err := Dial(ctx, h.url("/mcp"), ClientOptions{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Handshake(ctx, h.token(user)); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListExtensions(ctx)
	if err != nil || len(list) == 0 {
		t.Fatalf("list_extensions: %v %v", list, err)
	}
	if _, err := c.Connect(ctx, list[0].ID); err != nil {
		t.Fatal(err)
	}
	return c
}

// call runs a method and returns the raw result or the *Error.
func call(c *Client, method, params string) (json.RawMessage, *Error) {
	var res json.RawMessage
	var p any = json.RawMessage(params)
	if params == "" {
		p = nil
	}
	err := c.Call(context.Background(), method, p, &res)
	if err == nil {
		return res, nil
	}
	if e, ok := err.(*Error); ok {
		return nil, e
	}
	return nil, &Error{Code: 1, Message: err.Error()}
}

func openTabs(s *browserSetup) {
	s.hub.TabOpened("T1", "http://one.example/", "One")
	s.hub.TabOpened("T2", "http://two.example/", "Two")
	s.hub.Update(core.Source{Key: "d1", Tab: "T1", Frame: "F1", Origin: "http://one.example", URL: "http://one.example/", Backend: "polyfill"},
		[]core.Tool{{Name: "add_note", Description: "Add a note", InputSchema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}}}`),
			Annotations: map[string]any{"readOnlyHint": false, "consequentialHint": true}}}, nil)
}

// TestBrowserSideMethods covers each forwarded method, in order, through the
// proxy and a real client.
func TestBrowserSideMethods(t *testing.T) {
	s := newBrowserSetup(t, "Chrome 141", nil)
	openTabs(s)
	c := s.connectedClient(t, "alice")
	tests := []struct {
		method, params string
		result         string // a substring of the result
		action         string // the last action, when one is expected
		code           int    // the error code, when an error is expected
	}{
		{method: "getTabs", result: `"tabs":[{"tabId":1,"url":"http://one.example/","title":"One","tools":["one_example_add_note"]},{"tabId":2,"url":"http://two.example/","title":"Two","tools":[]}]`},
		{method: "click", params: `{"selector":"#go"}`, code: CodeServerError}, // two tabs, none chosen
		{method: "selectTab", params: `{"tabId":2}`, result: `"tabId":2`},
		{method: "selectTab", params: `{}`, code: CodeInvalidParams},
		{method: "selectTab", params: `{"tabId":9}`, code: CodeServerError},
		{method: "click", params: `{"selector":"#go"}`, result: `"clicked":true`, action: "Click T2 #go"},
		{method: "click", params: `{"x":10,"y":20,"tabId":1}`, action: "ClickAt T1 10 20"},
		{method: "click", params: `{}`, code: CodeInvalidParams},
		{method: "click", params: `[1]`, code: CodeInvalidParams},
		{method: "hover", params: `{"selector":"a"}`, action: "Hover T2 a"},
		{method: "type", params: `{"text":"héllo","selector":"input","submit":true}`, result: `"typed":5`, action: `Type T2 "input" "héllo" true`},
		{method: "type", params: `{}`, code: CodeInvalidParams},
		{method: "screenshot", params: `{}`, result: `"data":"` + base64.StdEncoding.EncodeToString([]byte("IMAGE of T2")) + `","mimeType":"image/png"`},
		{method: "screenshot", params: `{"format":"jpeg","quality":50,"fullPage":true,"tabId":1}`, action: "Screenshot T1 jpeg 50 true"},
		{method: "screenshot", params: `{"format":"gif"}`, code: CodeInvalidParams},
		{method: "browser_navigate", params: `{"url":"http://three.example/"}`, result: `"url":"http://three.example/"`, action: "Navigate T2 http://three.example/"},
		{method: "browser_navigate", params: `{}`, code: CodeInvalidParams},
		{method: "goBack", params: `{}`, result: `"url":"http://back.example/"`, action: "GoBack T2"},
		{method: "goForward", params: `{}`, code: CodeServerError},
		{method: "activateTab", params: `{"tabId":1}`, result: `"active":true`, action: "ActivateTab T1"},
		{method: "createTab", params: `{"url":"http://new.example/","stealth":true}`, result: `"tabId":3,"url":"http://new.example/"`, action: "Open http://new.example/"},
		{method: "click", params: `{"selector":"b"}`, action: "Click new1 b"}, // createTab selected the new tab
		{method: "createTab", params: `{}`, code: CodeInvalidParams},
		{method: "closeTab", params: `{"tabId":3}`, result: `"closed":true`, action: "CloseTab new1"},
		{method: "closeTab", params: `{"tabId":3}`, code: CodeServerError},
		{method: "forwardCDPCommand", params: `{"method":"Page.reload"}`, code: CodeMethodNotFound},
		{method: "tools/list", result: `"name":"one_example_add_note"`},
		{method: "tools/call", params: `{"name":"one_example_add_note","arguments":{"title":"x"}}`, result: `d1 ran add_note with {\"title\":\"x\"}`},
		{method: "tools/call", params: `{"name":"nope"}`, result: `"isError":true`},
		{method: "tools/call", params: `{}`, code: CodeInvalidParams},
		{method: "ping", result: `{}`},
		{method: "nosuch", code: CodeMethodNotFound},
	}
	for _, tt := range tests {
		res, err := call(c, tt.method, tt.params)
		name := tt.method + " " + tt.params
		if tt.code != 0 {
			if err == nil || err.Code != tt.code {
				t.Errorf("%s: got %s %v, want error %d", name, res, err, tt.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !strings.Contains(string(res), tt.result) {
			t.Errorf("%s: result %s does not contain %s", name, res, tt.result)
		}
		if tt.action != "" && s.actions.last() != tt.action {
			t.Errorf("%s: action %q, want %q", name, s.actions.last(), tt.action)
		}
	}
}

// TestBrowserSideToolsList: the routed tool as the local server lists it:
// schema, provenance and hints, and the catalog version.
func TestBrowserSideToolsList(t *testing.T) {
	s := newBrowserSetup(t, "Chrome", nil)
	openTabs(s)
	c := s.connectedClient(t, "alice")
	var res struct {
		Tools []map[string]any `json:"tools"`
		Meta  map[string]any   `json:"_meta"`
	}
	if err := c.Call(context.Background(), MethodToolsList, nil, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 1 {
		t.Fatalf("tools %v", res.Tools)
	}
	tool := res.Tools[0]
	meta, _ := tool["_meta"].(map[string]any)
	src, _ := meta["webmcp-cdp/source"].(map[string]any)
	extra, _ := meta["webmcp-cdp/annotations"].(map[string]any)
	schema, _ := tool["inputSchema"].(map[string]any)
	if tool["name"] != "one_example_add_note" || src["tool"] != "add_note" || src["tab"] != float64(1) || extra["consequentialHint"] != true || schema["type"] != "object" {
		t.Fatalf("tool %v", tool)
	}
	if res.Meta[VersionMetaKey] != float64(s.hub.Version()) {
		t.Fatalf("version %v, hub %d", res.Meta[VersionMetaKey], s.hub.Version())
	}
}

// TestSelectionPerConnection: two clients of one browser each act on the tab
// they selected.
func TestSelectionPerConnection(t *testing.T) {
	s := newBrowserSetup(t, "Chrome", nil)
	openTabs(s)
	a, b := s.connectedClient(t, "alice"), s.connectedClient(t, "alice")
	if _, err := call(a, "selectTab", `{"tabId":1}`); err != nil {
		t.Fatal(err)
	}
	if _, err := call(b, "selectTab", `{"tabId":2}`); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		c    *Client
		want string
	}{{a, "Click T1 x"}, {b, "Click T2 x"}, {a, "Click T1 x"}} {
		if _, err := call(tt.c, "click", `{"selector":"x"}`); err != nil {
			t.Fatal(err)
		}
		if got := s.actions.last(); got != tt.want {
			t.Fatalf("action %q, want %q", got, tt.want)
		}
	}
}

func TestWaitForChanges(t *testing.T) {
	s := newBrowserSetup(t, "Chrome", nil)
	c := s.connectedClient(t, "alice")
	v := s.hub.Version()
	got := make(chan WaitResult, 1)
	go func() {
		var res WaitResult
		c.Call(context.Background(), MethodWaitForChanges, WaitParams{Since: v, TimeoutMS: 50000}, &res)
		got <- res
	}()
	openTabs(s)
	select {
	case res := <-got:
		if res.Version == v {
			t.Fatalf("version %d did not change", res.Version)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not end after a change")
	}
	// Without a change, it answers at the timeout with the same version.
	var res WaitResult
	now := s.hub.Version()
	if err := c.Call(context.Background(), MethodWaitForChanges, WaitParams{Since: now, TimeoutMS: 20}, &res); err != nil || res.Version != now {
		t.Fatalf("wait: %+v %v", res, err)
	}
	// An old version answers at once.
	if err := c.Call(context.Background(), MethodWaitForChanges, WaitParams{Since: 0, TimeoutMS: 50000}, &res); err != nil || res.Version != now {
		t.Fatalf("wait: %+v %v", res, err)
	}
}

func TestRawCDPAllowed(t *testing.T) {
	s := newBrowserSetup(t, "Chrome", func(o *BrowserSideOptions) { o.AllowRawCDP = true })
	openTabs(s)
	c := s.connectedClient(t, "alice")
	res, err := call(c, "forwardCDPCommand", `{"method":"Runtime.evaluate","params":{"expression":"1"},"tabId":2}`)
	if err != nil || string(res) != `{"echo":"Runtime.evaluate"}` {
		t.Fatalf("got %s %v", res, err)
	}
	if got := s.actions.last(); got != `Raw T2 Runtime.evaluate {"expression":"1"}` {
		t.Fatalf("action %q", got)
	}
	if _, err := call(c, "forwardCDPCommand", `{}`); err == nil || err.Code != CodeInvalidParams {
		t.Fatalf("no method: %v", err)
	}
}

// fakeProxy serves /extension with a scripted conversation per connection.
func fakeProxy(t *testing.T, script func(n int, ws *websocket.Conn)) string {
	t.Helper()
	var mu sync.Mutex
	n := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		mu.Lock()
		n++
		i := n
		mu.Unlock()
		script(i, ws)
	}))
	t.Cleanup(hs.Close)
	return "ws" + strings.TrimPrefix(hs.URL, "http") + "/extension"
}

func exchange(ws *websocket.Conn, msg string) (*Message, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		return nil, err
	}
	_, data, err := ws.Read(ctx)
	if err != nil {
		return nil, err
	}
	m, perr := ParseMessage(data)
	if perr != nil {
		return nil, perr
	}
	return m, nil
}

// TestAuthenticateOnlyForTheProxy: the token goes only to an id with the
// proxy: prefix, which no client can send through a proxy; the browser side
// reconnects when the relay drops it.
func TestAuthenticateOnlyForTheProxy(t *testing.T) {
	hb := hub.New(pageBrowser{}, hub.Options{Logger: quietLogger()})
	// The conversation runs on the server's goroutines: it reports, the
	// test checks.
	first := make(chan string, 1)
	second := make(chan string, 1)
	url := fakeProxy(t, func(n int, ws *websocket.Conn) {
		defer ws.CloseNow()
		if n > 2 {
			return
		}
		if n == 2 {
			m, err := exchange(ws, `{"jsonrpc":"2.0","id":"proxy:1","method":"authenticate","params":{}}`)
			second <- fmt.Sprintf("%v %s", err, m.Result)
			return
		}
		m, err := exchange(ws, `{"jsonrpc":"2.0","id":"conn-x:1","method":"authenticate","params":{}}`)
		if err != nil || m.Error == nil || m.Error.Code != CodeMethodNotFound || string(m.ID) != `"conn-x:1"` {
			first <- fmt.Sprintf("a client's authenticate got %v %v", m, err)
			return
		}
		m, err = exchange(ws, `{"jsonrpc":"2.0","id":"proxy:1","method":"authenticate","params":{}}`)
		if err != nil {
			first <- err.Error()
			return
		}
		first <- string(m.Result)
		ws.Close(websocket.StatusGoingAway, "restarting")
	})
	bs, err := NewBrowserSide(BrowserSideOptions{URL: url, Token: "TOKEN", Name: "Chrome", Hub: hb, Actions: &fakeActions{hub: hb},
		Logger: quietLogger(), MinBackoff: 5 * time.Millisecond, MaxBackoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { bs.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	for _, c := range []struct {
		ch   chan string
		want string
	}{{first, `{"name":"Chrome","accessToken":"TOKEN"}`}, {second, `<nil> {"name":"Chrome","accessToken":"TOKEN"}`}} {
		select {
		case got := <-c.ch:
			if got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the browser side did not (re)connect")
		}
	}
}

func TestNewBrowserSideChecks(t *testing.T) {
	hb := hub.New(pageBrowser{}, hub.Options{Logger: quietLogger()})
	good := BrowserSideOptions{URL: "ws://127.0.0.1:1/extension", Token: "t", Name: "n", Hub: hb, Actions: &fakeActions{hub: hb}}
	tests := []struct {
		name string
		mod  func(*BrowserSideOptions)
		says string
	}{
		{"ok", func(*BrowserSideOptions) {}, ""},
		{"no token", func(o *BrowserSideOptions) { o.Token = "" }, "token"},
		{"no name", func(o *BrowserSideOptions) { o.Name = "" }, "name"},
		{"control character in the name", func(o *BrowserSideOptions) { o.Name = "a\nb" }, "control"},
		{"ws off loopback", func(o *BrowserSideOptions) { o.URL = "ws://relay.example.com/extension" }, "wss://"},
		{"ws off loopback, insecure", func(o *BrowserSideOptions) { o.URL = "ws://relay.example.com/extension"; o.Dial.Insecure = true }, ""},
		{"no hub", func(o *BrowserSideOptions) { o.Hub = nil }, "hub"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := good
			tt.mod(&o)
			_, err := NewBrowserSide(o)
			if tt.says == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("error %v, want one saying %q", err, tt.says)
			}
		})
	}
}
