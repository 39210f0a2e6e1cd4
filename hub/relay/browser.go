package relay

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
)

// Actions are the browser actions behind the forwarded methods. Tabs are the
// browser's ids for them (hub.TabInfo.ID). *cdp.Browser has them all.
type Actions interface {
	Open(ctx context.Context, url string) (string, error)
	CloseTab(ctx context.Context, tab string) error
	ActivateTab(ctx context.Context, tab string) error
	NavigateAndWait(ctx context.Context, tab, url string) error
	GoBack(ctx context.Context, tab string) (string, error)
	GoForward(ctx context.Context, tab string) (string, error)
	Click(ctx context.Context, tab, selector string) error
	ClickAt(ctx context.Context, tab string, x, y float64) error
	Hover(ctx context.Context, tab, selector string) error
	HoverAt(ctx context.Context, tab string, x, y float64) error
	Type(ctx context.Context, tab, selector, text string, submit bool) error
	Screenshot(ctx context.Context, tab, format string, quality int, fullPage bool) ([]byte, error)
	RawCommand(ctx context.Context, tab, method string, params json.RawMessage) (json.RawMessage, error)
}

// The methods the browser side serves beyond the seed's browser methods.
const (
	// MethodToolsList lists the routed tools, as MCP's tools/list does, with
	// the catalog's version in _meta["webmcp-cdp/version"].
	MethodToolsList = "tools/list"
	// MethodToolsCall calls a routed tool, as MCP's tools/call does.
	MethodToolsCall = "tools/call"
	// MethodWaitForChanges answers when the catalog's version differs from
	// params.since, or after params.timeoutMs: the browser stays passive
	// (it never sends a request or a notification of its own), and a client
	// still learns of changes at once.
	MethodWaitForChanges = "webmcp/waitForChanges"
	// VersionMetaKey is the _meta key of the catalog's version in tools/list.
	VersionMetaKey = "webmcp-cdp/version"
)

// BrowserSideOptions configures a BrowserSide. Zero values take the
// defaults.
type BrowserSideOptions struct {
	// URL is the relay's browser endpoint, ws(s)://HOST/extension. Required.
	URL string
	// Token is the JWT sent in answer to authenticate. Required.
	Token string
	// Name is the name shown to clients in list_extensions. Required.
	Name string
	// Hub is the catalog and router whose tools are served. Required.
	Hub *hub.Hub
	// Actions carries out the browser methods. Required.
	Actions Actions
	// AllowRawCDP turns on forwardCDPCommand, which can do anything to a
	// tab.
	AllowRawCDP bool
	// Dial configures the connection to the relay.
	Dial DialOptions
	// Logger receives the log (default slog.Default()).
	Logger *slog.Logger
	// ActionTimeout bounds one browser method (default 30 s); tool calls
	// have the hub's own timeout.
	ActionTimeout time.Duration
	// MaxConcurrent bounds the requests handled at once (default 64).
	MaxConcurrent int
	// MaxScreenshotBytes bounds a screenshot (default 16 MiB).
	MaxScreenshotBytes int
	// MinBackoff and MaxBackoff bound the wait before reconnecting
	// (defaults 500 ms and 30 s).
	MinBackoff, MaxBackoff time.Duration
	// PingInterval is how often the relay is pinged (default 30 s).
	PingInterval time.Duration
}

// BrowserSide is the seed's "extension": it connects to the relay, answers
// authenticate with its name and token, and then only answers requests. It
// serves the seed's browser methods on a browser and the hub's routed tools
// as tools/list and tools/call, and reconnects with backoff when the relay
// goes away.
type BrowserSide struct {
	opts BrowserSideOptions
	log  *slog.Logger

	mu       sync.Mutex
	selected map[string]string // connection → the tab it selected
	selOrder []string          // connections, oldest selection first
}

// maxSelections bounds how many connections' selected tabs are remembered
// (the browser side never learns that a connection ended).
const maxSelections = 1024

// NewBrowserSide checks the options and returns a browser side; Run
// connects it.
func NewBrowserSide(opts BrowserSideOptions) (*BrowserSide, error) {
	switch {
	case opts.Hub == nil || opts.Actions == nil:
		return nil, errors.New("relay: the browser side needs a hub and browser actions")
	case opts.Token == "":
		return nil, errors.New("the relay token is empty: pass --relay-token (a JWT from the relay's operator)")
	}
	if err := checkName(opts.Name); err != nil {
		return nil, fmt.Errorf("--name: %w", err)
	}
	if _, err := CheckURL(opts.URL, opts.Dial.Insecure); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ActionTimeout <= 0 {
		opts.ActionTimeout = 30 * time.Second
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = 64
	}
	if opts.MaxScreenshotBytes <= 0 {
		opts.MaxScreenshotBytes = 16 << 20
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 500 * time.Millisecond
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(30*time.Second, opts.MinBackoff)
	}
	if opts.PingInterval <= 0 {
		opts.PingInterval = 30 * time.Second
	}
	b := &BrowserSide{
		opts:     opts,
		log:      opts.Logger,
		selected: make(map[string]string),
	}
	return b, nil
}

// Run keeps the browser connected to the relay until ctx ends, reconnecting
// with exponential backoff (and jitter) when the connection drops or is
// refused. It returns nil when ctx ends.
func (b *BrowserSide) Run(ctx context.Context) error {
	backoff := b.opts.MinBackoff
	for {
		start := time.Now()
		authed, err := b.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if code, reason, ok := CloseReason(err); ok && code == websocket.StatusPolicyViolation {
			b.log.Error("the relay refused this browser", "reason", reason)
		} else {
			b.log.Warn("lost the relay", "err", err)
		}
		if authed && time.Since(start) > 30*time.Second {
			backoff = b.opts.MinBackoff
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		b.log.Info("reconnecting to the relay", "in", wait.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		backoff = min(backoff*2, b.opts.MaxBackoff)
	}
}

// session serves one connection to the relay until it ends. authed says the
// relay accepted the browser.
func (b *BrowserSide) session(ctx context.Context) (authed bool, err error) {
	ws, err := dial(ctx, b.opts.URL, b.opts.Dial)
	if err != nil {
		return false, err
	}
	defer ws.CloseNow()
	b.log.Info("connected to the relay; waiting for authenticate", "url", b.opts.URL)

	// Reads use a context of their own: cancelling a read's context drops the
	// connection without a close frame, and a stop deserves one.
	rctx, stopReads := context.WithCancel(context.Background())
	defer stopReads()
	hctx, stopHandlers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stopHandlers()
	go func() {
		select {
		case <-ctx.Done():
			ws.Close(websocket.StatusGoingAway, "the browser side is stopping")
		case <-hctx.Done():
		}
	}()
	go func() {
		t := time.NewTicker(b.opts.PingInterval)
		defer t.Stop()
		for {
			select {
			case <-hctx.Done():
				return
			case <-t.C:
				pctx, cancel := context.WithTimeout(hctx, b.opts.PingInterval)
				err := ws.Ping(pctx)
				cancel()
				if err != nil && hctx.Err() == nil {
					ws.CloseNow()
					return
				}
			}
		}
	}()

	write := func(data []byte) {
		wctx, cancel := context.WithTimeout(rctx, writeTimeout)
		defer cancel()
		if err := ws.Write(wctx, websocket.MessageText, data); err != nil {
			b.log.Debug("writing to the relay", "err", err)
		}
	}
	sem := make(chan struct{}, b.opts.MaxConcurrent)
	for {
		_, data, err := ws.Read(rctx)
		if err != nil {
			if ctx.Err() != nil {
				return authed, ctx.Err()
			}
			return authed, err
		}
		msg, perr := ParseMessage(data)
		if perr != nil {
			if msg.ID != nil {
				write(encodeError(msg.ID, perr))
			}
			continue
		}
		switch msg.Kind() {
		case KindNotification:
			b.onNotification(msg, &authed)
		case KindResponse:
			b.log.Debug("ignoring a response from the relay (this browser asks nothing)", "id", msg.IDKey())
		case KindRequest:
			if msg.Method == MethodAuthenticate {
				if !msg.idString || !strings.HasPrefix(msg.idKey, ProxyIDPrefix) {
					// Only the proxy may ask for the token.
					write(encodeError(msg.ID, errorf(CodeMethodNotFound, "Method not found: authenticate is answered to the proxy only")))
					continue
				}
				write(encodeResult(msg.ID, AuthenticateResult{Name: b.opts.Name, AccessToken: b.opts.Token}))
				continue
			}
			select {
			case sem <- struct{}{}:
			default:
				write(encodeError(msg.ID, errorf(CodeServerError, "Busy: this browser already runs %d requests; try again shortly", b.opts.MaxConcurrent)))
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				write(b.respond(hctx, msg))
			}()
		}
	}
}

func (b *BrowserSide) onNotification(msg *Message, authed *bool) {
	switch msg.Method {
	case MethodAuthenticated:
		var p AuthenticatedParams
		_ = json.Unmarshal(msg.Params, &p)
		*authed = true
		b.log.Info("the relay accepted this browser", "name", b.opts.Name, "extension", p.ExtensionID, "user", p.UserID)
	case MethodStatus:
		var p StatusParams
		_ = json.Unmarshal(msg.Params, &p)
		b.log.Debug("relay status", "clients", p.PeerCount)
	default:
		b.log.Debug("ignoring a notification from the relay", "method", msg.Method)
	}
}

// respond runs one request and writes its answer, with the request's id
// exactly as it came.
func (b *BrowserSide) respond(ctx context.Context, msg *Message) (out []byte) {
	defer func() {
		if r := recover(); r != nil {
			b.log.Error("a browser method panicked", "method", msg.Method, "panic", r)
			out = encodeError(msg.ID, errorf(CodeInternalError, "Internal error while handling %s", msg.Method))
		}
	}()
	conn := ""
	if msg.idString {
		if c, _, ok := SplitID(msg.idKey); ok {
			conn = c
		}
	}
	res, err := b.handle(ctx, conn, msg.Method, msg.Params)
	if err != nil {
		var rpcErr *Error
		if !errors.As(err, &rpcErr) {
			rpcErr = errorf(CodeServerError, "%s failed: %v", msg.Method, err)
		}
		return encodeError(msg.ID, rpcErr)
	}
	return encodeResult(msg.ID, res)
}

// method is one method the browser side serves.
type method func(ctx context.Context, conn string, params json.RawMessage) (any, error)

// method returns the handler of a method, or nil.
func (b *BrowserSide) method(name string) method {
	switch name {
	case MethodToolsList:
		return b.toolsList
	case MethodToolsCall:
		return b.toolsCall
	case MethodWaitForChanges:
		return b.waitForChanges
	case "ping":
		return func(context.Context, string, json.RawMessage) (any, error) { return struct{}{}, nil }
	case "createTab":
		return b.createTab
	case "getTabs":
		return b.getTabs
	case "selectTab":
		return b.selectTab
	case "activateTab":
		return b.activateTab
	case "closeTab":
		return b.closeTab
	case "browser_navigate":
		return b.navigate
	case "goBack":
		return b.goBack
	case "goForward":
		return b.goForward
	case "click":
		return b.click
	case "type":
		return b.typeText
	case "hover":
		return b.hover
	case "screenshot":
		return b.screenshot
	case "forwardCDPCommand":
		return b.forwardCDP
	}
	return nil
}

// Methods lists the methods the browser side serves, sorted.
func Methods() []string {
	return []string{
		"activateTab", "browser_navigate", "click", "closeTab", "createTab", "forwardCDPCommand",
		"getTabs", "goBack", "goForward", "hover", "ping", "screenshot", "selectTab",
		MethodToolsCall, MethodToolsList, "type", MethodWaitForChanges,
	}
}

// handle runs a method for the client behind connection conn ("" in direct
// mode). Errors that are *Error keep their code; others become -32000.
func (b *BrowserSide) handle(ctx context.Context, conn, name string, params json.RawMessage) (any, error) {
	m := b.method(name)
	if m == nil {
		return nil, errorf(CodeMethodNotFound, "Method not found: %s; this browser serves %s", name, strings.Join(Methods(), ", "))
	}
	if name != MethodToolsCall && name != MethodWaitForChanges {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.opts.ActionTimeout)
		defer cancel()
	}
	return m(ctx, conn, params)
}

// decode reads params into v; absent params are {}.
func decode(name string, params json.RawMessage, v any) error {
	if len(params) == 0 {
		return nil
	}
	if firstByte(params) != '{' {
		return errorf(CodeInvalidParams, "Invalid params: %s takes an object", name)
	}
	if err := json.Unmarshal(params, v); err != nil {
		return errorf(CodeInvalidParams, "Invalid params for %s: %v", name, err)
	}
	return nil
}

// ---- tools ---------------------------------------------------------------------

// ToolsListResult is the result of tools/list.
type ToolsListResult struct {
	Tools []*mcp.Tool    `json:"tools"`           // the routed tools, as MCP definitions
	Meta  map[string]any `json:"_meta,omitempty"` // holds VersionMetaKey
}

func (b *BrowserSide) toolsList(_ context.Context, _ string, _ json.RawMessage) (any, error) {
	// The version first: a change between the two reads makes the next wait
	// return at once, so no change is lost.
	v := b.opts.Hub.Version()
	routed := b.opts.Hub.Tools()
	tools := make([]*mcp.Tool, 0, len(routed))
	for _, rt := range routed {
		tools = append(tools, MCPTool(rt))
	}
	return ToolsListResult{Tools: tools, Meta: map[string]any{VersionMetaKey: v}}, nil
}

type toolsCallParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

func (b *BrowserSide) toolsCall(ctx context.Context, _ string, params json.RawMessage) (any, error) {
	var p toolsCallParams
	if err := decode(MethodToolsCall, params, &p); err != nil {
		return nil, err
	}
	if p.Name == "" {
		return nil, errorf(CodeInvalidParams, "Invalid params: tools/call needs params.name")
	}
	return mcpserver.CallToolResult(b.opts.Hub.Call(ctx, p.Name, p.Arguments)), nil
}

// WaitParams are the params of webmcp/waitForChanges.
type WaitParams struct {
	// Since is the version the caller has.
	Since uint64 `json:"since"`
	// TimeoutMS is how long to wait at most (default 25 000, at most
	// 55 000).
	TimeoutMS int `json:"timeoutMs,omitempty"`
}

// WaitResult is the result of webmcp/waitForChanges.
type WaitResult struct {
	Version uint64 `json:"version"` // the catalog version now
}

func (b *BrowserSide) waitForChanges(ctx context.Context, _ string, params json.RawMessage) (any, error) {
	var p WaitParams
	if err := decode(MethodWaitForChanges, params, &p); err != nil {
		return nil, err
	}
	wait := 25 * time.Second
	if p.TimeoutMS > 0 {
		wait = time.Duration(min(p.TimeoutMS, 55000)) * time.Millisecond
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		ch := b.opts.Hub.Changed()
		if v := b.opts.Hub.Version(); v != p.Since {
			return WaitResult{Version: v}, nil
		}
		select {
		case <-ch:
		case <-timer.C:
			return WaitResult{Version: b.opts.Hub.Version()}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// ---- tabs ------------------------------------------------------------------------

// TabResult describes a tab in the answers of the tab methods.
type TabResult struct {
	TabID    int      `json:"tabId"`              // the hub's tab number
	URL      string   `json:"url"`                // the page shown
	Title    string   `json:"title,omitempty"`    // the page's title
	Active   bool     `json:"active,omitempty"`   // site-level tool names go to this tab first
	Selected bool     `json:"selected,omitempty"` // the asking connection's default tab
	Tools    []string `json:"tools"`              // the routed names that reach this tab
}

func (b *BrowserSide) tabResult(conn string, ti hub.TabInfo) TabResult {
	b.mu.Lock()
	sel := b.selected[conn] == ti.ID
	b.mu.Unlock()
	tools := ti.Tools
	if tools == nil {
		tools = []string{}
	}
	return TabResult{TabID: ti.N, URL: ti.URL, Title: ti.Title, Active: ti.Active, Selected: sel, Tools: tools}
}

// tabRef is the optional tab of a method's params.
type tabRef struct {
	TabID *int `json:"tabId,omitempty"`
}

// tab resolves the tab a method acts on: the one named, else the one this
// connection selected, else the active one, else the only one.
func (b *BrowserSide) tab(conn string, ref tabRef) (hub.TabInfo, error) {
	h := b.opts.Hub
	if ref.TabID != nil {
		if ti, ok := h.Tab(*ref.TabID); ok {
			return ti, nil
		}
		return hub.TabInfo{}, errorf(CodeServerError, "No tab %d is open; getTabs lists the open tabs", *ref.TabID)
	}
	b.mu.Lock()
	sel := b.selected[conn]
	b.mu.Unlock()
	if sel != "" {
		if ti, ok := h.TabOf(sel); ok {
			return ti, nil
		}
	}
	tabs := h.Tabs()
	for _, ti := range tabs {
		if ti.Active {
			return ti, nil
		}
	}
	switch len(tabs) {
	case 0:
		return hub.TabInfo{}, errorf(CodeServerError, "No tab is open: createTab opens one")
	case 1:
		return tabs[0], nil
	}
	return hub.TabInfo{}, errorf(CodeServerError, "%d tabs are open: pass tabId, or selectTab first (getTabs lists them)", len(tabs))
}

// selectFor records the tab a connection acts on by default.
func (b *BrowserSide) selectFor(conn, tab string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.selected[conn]; !ok {
		b.selOrder = append(b.selOrder, conn)
		if len(b.selOrder) > maxSelections {
			delete(b.selected, b.selOrder[0])
			b.selOrder = b.selOrder[1:]
		}
	}
	b.selected[conn] = tab
}

type createTabParams struct {
	URL string `json:"url"`
}

func (b *BrowserSide) createTab(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	var p createTabParams
	if err := decode("createTab", params, &p); err != nil {
		return nil, err
	}
	if p.URL == "" || p.URL == "about:blank" {
		return nil, errorf(CodeInvalidParams, "Invalid params: createTab needs params.url (a page to open)")
	}
	return b.open(ctx, conn, p.URL)
}

// open opens url in a new tab, waits until the hub numbers it, and selects
// it for the connection.
func (b *BrowserSide) open(ctx context.Context, conn, url string) (any, error) {
	id, err := b.opts.Actions.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	b.selectFor(conn, id)
	for {
		changed := b.opts.Hub.Changed()
		if ti, ok := b.opts.Hub.TabOf(id); ok {
			return b.tabResult(conn, ti), nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the tab for %s opened but showed no page in time: %w", url, ctx.Err())
		case <-changed:
		}
	}
}

func (b *BrowserSide) getTabs(_ context.Context, conn string, _ json.RawMessage) (any, error) {
	tabs := b.opts.Hub.Tabs()
	out := make([]TabResult, 0, len(tabs))
	for _, ti := range tabs {
		out = append(out, b.tabResult(conn, ti))
	}
	return map[string]any{"tabs": out}, nil
}

func (b *BrowserSide) requiredTab(name string, conn string, params json.RawMessage) (hub.TabInfo, error) {
	var ref tabRef
	if err := decode(name, params, &ref); err != nil {
		return hub.TabInfo{}, err
	}
	if ref.TabID == nil {
		return hub.TabInfo{}, errorf(CodeInvalidParams, "Invalid params: %s needs params.tabId (getTabs lists the tabs)", name)
	}
	return b.tab(conn, ref)
}

func (b *BrowserSide) selectTab(_ context.Context, conn string, params json.RawMessage) (any, error) {
	ti, err := b.requiredTab("selectTab", conn, params)
	if err != nil {
		return nil, err
	}
	b.selectFor(conn, ti.ID)
	return b.tabResult(conn, ti), nil
}

func (b *BrowserSide) activateTab(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	ti, err := b.optionalTab("activateTab", conn, params)
	if err != nil {
		return nil, err
	}
	if err := b.opts.Actions.ActivateTab(ctx, ti.ID); err != nil {
		return nil, err
	}
	b.opts.Hub.SetActive(ti.ID)
	b.selectFor(conn, ti.ID)
	ti, _ = b.opts.Hub.TabOf(ti.ID)
	return b.tabResult(conn, ti), nil
}

func (b *BrowserSide) optionalTab(name, conn string, params json.RawMessage) (hub.TabInfo, error) {
	var ref tabRef
	if err := decode(name, params, &ref); err != nil {
		return hub.TabInfo{}, err
	}
	return b.tab(conn, ref)
}

func (b *BrowserSide) closeTab(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	ti, err := b.optionalTab("closeTab", conn, params)
	if err != nil {
		return nil, err
	}
	if err := b.opts.Actions.CloseTab(ctx, ti.ID); err != nil {
		return nil, err
	}
	b.mu.Lock()
	if b.selected[conn] == ti.ID {
		b.selected[conn] = ""
	}
	b.mu.Unlock()
	return map[string]any{"closed": true, "tabId": ti.N}, nil
}

type navigateParams struct {
	tabRef
	URL string `json:"url"`
}

func (b *BrowserSide) navigate(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	var p navigateParams
	if err := decode("browser_navigate", params, &p); err != nil {
		return nil, err
	}
	if p.URL == "" {
		return nil, errorf(CodeInvalidParams, "Invalid params: browser_navigate needs params.url")
	}
	if p.TabID == nil && len(b.opts.Hub.Tabs()) == 0 {
		// Nothing to navigate: open the page instead.
		return b.open(ctx, conn, p.URL)
	}
	ti, err := b.tab(conn, p.tabRef)
	if err != nil {
		return nil, err
	}
	if err := b.opts.Actions.NavigateAndWait(ctx, ti.ID, p.URL); err != nil {
		return nil, err
	}
	return map[string]any{"tabId": ti.N, "url": p.URL}, nil
}

func (b *BrowserSide) goBack(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	return b.history(ctx, conn, "goBack", params, b.opts.Actions.GoBack)
}

func (b *BrowserSide) goForward(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	return b.history(ctx, conn, "goForward", params, b.opts.Actions.GoForward)
}

func (b *BrowserSide) history(ctx context.Context, conn, name string, params json.RawMessage, do func(context.Context, string) (string, error)) (any, error) {
	ti, err := b.optionalTab(name, conn, params)
	if err != nil {
		return nil, err
	}
	url, err := do(ctx, ti.ID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"tabId": ti.N, "url": url}, nil
}

// pointParams name an element by selector, or a point by x and y.
type pointParams struct {
	tabRef
	Selector string   `json:"selector,omitempty"`
	X        *float64 `json:"x,omitempty"`
	Y        *float64 `json:"y,omitempty"`
}

func (p pointParams) check(name string) error {
	if p.Selector == "" && (p.X == nil || p.Y == nil) {
		return errorf(CodeInvalidParams, "Invalid params: %s needs params.selector (CSS), or params.x and params.y (CSS pixels in the viewport)", name)
	}
	return nil
}

func (b *BrowserSide) click(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	var p pointParams
	if err := decode("click", params, &p); err != nil {
		return nil, err
	}
	if err := p.check("click"); err != nil {
		return nil, err
	}
	ti, err := b.tab(conn, p.tabRef)
	if err != nil {
		return nil, err
	}
	if p.Selector != "" {
		err = b.opts.Actions.Click(ctx, ti.ID, p.Selector)
	} else {
		err = b.opts.Actions.ClickAt(ctx, ti.ID, *p.X, *p.Y)
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"tabId": ti.N, "clicked": true}, nil
}

func (b *BrowserSide) hover(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	var p pointParams
	if err := decode("hover", params, &p); err != nil {
		return nil, err
	}
	if err := p.check("hover"); err != nil {
		return nil, err
	}
	ti, err := b.tab(conn, p.tabRef)
	if err != nil {
		return nil, err
	}
	if p.Selector != "" {
		err = b.opts.Actions.Hover(ctx, ti.ID, p.Selector)
	} else {
		err = b.opts.Actions.HoverAt(ctx, ti.ID, *p.X, *p.Y)
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"tabId": ti.N, "hovered": true}, nil
}

type typeParams struct {
	tabRef
	Text     string `json:"text"`
	Selector string `json:"selector,omitempty"`
	Submit   bool   `json:"submit,omitempty"`
}

func (b *BrowserSide) typeText(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	var p typeParams
	if err := decode("type", params, &p); err != nil {
		return nil, err
	}
	if p.Text == "" && !p.Submit {
		return nil, errorf(CodeInvalidParams, "Invalid params: type needs params.text (and optionally selector and submit)")
	}
	ti, err := b.tab(conn, p.tabRef)
	if err != nil {
		return nil, err
	}
	if err := b.opts.Actions.Type(ctx, ti.ID, p.Selector, p.Text, p.Submit); err != nil {
		return nil, err
	}
	return map[string]any{"tabId": ti.N, "typed": len([]rune(p.Text))}, nil
}

type screenshotParams struct {
	tabRef
	Format   string `json:"format,omitempty"`
	Quality  int    `json:"quality,omitempty"`
	FullPage bool   `json:"fullPage,omitempty"`
}

// ScreenshotResult is the result of screenshot.
type ScreenshotResult struct {
	TabID    int    `json:"tabId"`    // the tab captured
	Data     string `json:"data"`     // the image, base64
	MIMEType string `json:"mimeType"` // image/png, image/jpeg or image/webp
}

func (b *BrowserSide) screenshot(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	var p screenshotParams
	if err := decode("screenshot", params, &p); err != nil {
		return nil, err
	}
	switch p.Format {
	case "":
		p.Format = "png"
	case "png", "jpeg", "webp":
	default:
		return nil, errorf(CodeInvalidParams, "Invalid params: screenshot format %q: use png, jpeg or webp", p.Format)
	}
	ti, err := b.tab(conn, p.tabRef)
	if err != nil {
		return nil, err
	}
	img, err := b.opts.Actions.Screenshot(ctx, ti.ID, p.Format, p.Quality, p.FullPage)
	if err != nil {
		return nil, err
	}
	if len(img) > b.opts.MaxScreenshotBytes {
		return nil, errorf(CodeServerError, "The screenshot is %d bytes, over the limit of %d: use format jpeg, or leave fullPage off", len(img), b.opts.MaxScreenshotBytes)
	}
	return ScreenshotResult{TabID: ti.N, Data: base64.StdEncoding.EncodeToString(img), MIMEType: "image/" + p.Format}, nil
}

type cdpParams struct {
	tabRef
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

func (b *BrowserSide) forwardCDP(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	if !b.opts.AllowRawCDP {
		return nil, errorf(CodeMethodNotFound, "Method not found: forwardCDPCommand is off on this browser (start it with --allow-raw-cdp to allow raw CDP commands)")
	}
	var p cdpParams
	if err := decode("forwardCDPCommand", params, &p); err != nil {
		return nil, err
	}
	if p.Method == "" {
		return nil, errorf(CodeInvalidParams, "Invalid params: forwardCDPCommand needs params.method (e.g. Page.reload)")
	}
	ti, err := b.tab(conn, p.tabRef)
	if err != nil {
		return nil, err
	}
	return b.opts.Actions.RawCommand(ctx, ti.ID, p.Method, p.Params)
}
