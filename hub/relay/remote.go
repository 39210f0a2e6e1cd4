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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
)

// RemoteOptions configures a Remote. Zero values take the defaults.
type RemoteOptions struct {
	// URL is the relay's client endpoint, ws(s)://HOST/mcp. Required.
	URL string
	// Token is the JWT for mcp_handshake. Required.
	Token string
	// Extension picks the browser by id or name; empty takes the only one.
	Extension string
	// Dial configures the connection.
	Dial DialOptions
	// Version is reported to the MCP client.
	Version string
	// Logger receives the log (default slog.Default()).
	Logger *slog.Logger
	// PollInterval is how often the browsers are listed while none can be
	// connected (default 1 s).
	PollInterval time.Duration
	// MinBackoff and MaxBackoff bound the wait before redialing a lost
	// relay (defaults 500 ms and 30 s).
	MinBackoff, MaxBackoff time.Duration
	// MaxTools bounds the remote tools listed (default 1000).
	MaxTools int
}

// Remote is the client side: an MCP server (go-sdk) whose tools are a remote
// browser's routed tools, reached through a relay, plus tools of its own
// for the browser methods. It keeps one relay connection, connects to the
// chosen browser, follows its catalog (list_changed reaches the local MCP
// client), and reconnects when the browser or the relay goes away.
type Remote struct {
	opts   RemoteOptions
	log    *slog.Logger
	server *mcp.Server
	lost   chan DisconnectedParams

	mu        sync.Mutex
	client    *Client // the relay connection, nil while there is none
	linked    bool    // connected to a browser
	status    RemoteStatus
	preferred string // the name of the browser connected last

	tools   *mcpserver.ToolSet
	toolsMu sync.Mutex
	listed  map[string]remoteListed // remote tool name -> its definition
}

// remoteListed is a remote tool as listed: the definition as the browser
// side sent it, and as this server renders it.
type remoteListed struct {
	raw   string
	entry mcpserver.ToolEntry
}

// RemoteStatus is what webmcp_relay_status reports.
type RemoteStatus struct {
	Relay          string          `json:"relay"`                     // the relay URL
	RelayConnected bool            `json:"relay_connected"`           // the relay connection is up
	UserID         string          `json:"user_id,omitempty"`         // the token's user
	Connected      bool            `json:"connected"`                 // connected to a browser
	ExtensionID    string          `json:"extension_id,omitempty"`    // the browser connected to
	ExtensionName  string          `json:"extension_name,omitempty"`  // its name
	ConnectionID   string          `json:"connection_id,omitempty"`   // the relay's id for the connection
	Browsers       []ExtensionInfo `json:"browsers"`                  // the user's browsers, as last listed
	RemoteTools    int             `json:"remote_tools"`              // page tools listed
	Problem        string          `json:"problem,omitempty"`         // why no browser is connected
	LastDisconnect string          `json:"last_disconnect,omitempty"` // when and why the last browser went away
}

// NewRemote checks the options and builds the MCP server; Start connects.
func NewRemote(opts RemoteOptions) (*Remote, error) {
	if opts.Token == "" {
		return nil, errors.New("the relay token is empty: pass --token (a JWT from the relay's operator)")
	}
	if _, err := CheckURL(opts.URL, opts.Dial.Insecure); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 500 * time.Millisecond
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(30*time.Second, opts.MinBackoff)
	}
	if opts.MaxTools <= 0 {
		opts.MaxTools = 1000
	}
	r := &Remote{
		opts:   opts,
		log:    opts.Logger,
		lost:   make(chan DisconnectedParams, 16),
		listed: make(map[string]remoteListed),
		status: RemoteStatus{Relay: opts.URL, Browsers: []ExtensionInfo{}},
	}
	r.server = mcp.NewServer(&mcp.Implementation{Name: "webmcp-cdp-connect", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: "Tools named <site>_<tool> come from web pages open in a remote browser, reached through a " +
			"webmcp-cdp relay; they appear and disappear as pages load. webmcp_list_tabs shows the browser's tabs, " +
			"webmcp_relay_status shows which browser this is and why none is connected.",
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		Logger:       opts.Logger,
	})
	r.tools = mcpserver.NewToolSet(r.server, mcpserver.ToolSetOptions{Logger: opts.Logger})
	r.addOwnTools()
	return r, nil
}

// MCP returns the go-sdk server, to run on a transport.
func (r *Remote) MCP() *mcp.Server { return r.server }

// Status returns the state of the relay connection.
func (r *Remote) Status() RemoteStatus {
	r.mu.Lock()
	st := r.status
	st.Browsers = append([]ExtensionInfo{}, st.Browsers...)
	r.mu.Unlock()
	r.toolsMu.Lock()
	st.RemoteTools = len(r.listed)
	r.toolsMu.Unlock()
	return st
}

// Start connects to the relay and authenticates, so that a wrong URL or
// token fails at once, then keeps the connection (and the browser's tools)
// until ctx ends.
func (r *Remote) Start(ctx context.Context) error {
	c, err := r.dial(ctx)
	if err != nil {
		return err
	}
	go r.tools.Run(ctx)
	go r.run(ctx, c)
	return nil
}

// dial connects and authenticates.
func (r *Remote) dial(ctx context.Context) (*Client, error) {
	c, err := Dial(ctx, r.opts.URL, ClientOptions{Dial: r.opts.Dial, Logger: r.log, OnNotification: r.onNotification})
	if err != nil {
		return nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := c.Handshake(hctx, r.opts.Token)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("the relay at %s refused the handshake: %w", r.opts.URL, err)
	}
	r.mu.Lock()
	r.client = c
	r.status.RelayConnected = true
	r.status.UserID = res.UserID
	r.status.Problem = ""
	r.mu.Unlock()
	r.log.Info("connected to the relay", "url", r.opts.URL, "user", res.UserID, "client", res.MCPClientID)
	return c, nil
}

func (r *Remote) onNotification(method string, params json.RawMessage) {
	switch method {
	case MethodDisconnected:
		var p DisconnectedParams
		_ = json.Unmarshal(params, &p)
		select {
		case r.lost <- p:
		default:
		}
	case MethodStatus:
		var p StatusParams
		_ = json.Unmarshal(params, &p)
		r.log.Debug("relay status", "connected", p.Connected, "clients of the browser", p.PeerCount)
	}
}

// run keeps a relay connection until ctx ends.
func (r *Remote) run(ctx context.Context, c *Client) {
	backoff := r.opts.MinBackoff
	for {
		start := time.Now()
		r.serve(ctx, c)
		r.mu.Lock()
		r.client = nil
		r.status.RelayConnected = false
		r.mu.Unlock()
		if ctx.Err() != nil {
			c.Close()
			return
		}
		r.log.Warn("lost the relay", "err", c.Err())
		r.setProblem(fmt.Sprintf("lost the relay (%v); reconnecting", c.Err()))
		if time.Since(start) > 30*time.Second {
			backoff = r.opts.MinBackoff
		}
		for {
			wait := backoff/2 + rand.N(backoff/2+1)
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			backoff = min(backoff*2, r.opts.MaxBackoff)
			var err error
			if c, err = r.dial(ctx); err == nil {
				break
			}
			r.log.Warn("reconnecting to the relay", "err", err)
			r.setProblem(err.Error())
		}
	}
}

func (r *Remote) setProblem(p string) {
	r.mu.Lock()
	r.status.Problem = p
	r.mu.Unlock()
}

// serve connects to a browser and follows it, again and again, until the
// relay connection ends or ctx does.
func (r *Remote) serve(ctx context.Context, c *Client) {
	for ctx.Err() == nil {
		ext, problem, err := r.pick(ctx, c)
		if err == nil && ext != nil {
			var res ConnectResult
			if res, err = c.Connect(ctx, ext.ID); err == nil {
				r.follow(ctx, c, res)
				continue
			}
			var rpcErr *Error
			if errors.As(err, &rpcErr) && rpcErr.Code == CodeAlreadyConnected {
				_ = c.Disconnect(ctx)
				continue
			}
		}
		if err != nil {
			problem = err.Error()
		}
		r.setProblem(problem)
		select {
		case <-c.Done():
			return
		case <-ctx.Done():
			return
		case <-time.After(r.opts.PollInterval):
		}
	}
}

// pick lists the browsers and chooses one, or says why none.
func (r *Remote) pick(ctx context.Context, c *Client) (*ExtensionInfo, string, error) {
	list, err := c.ListExtensions(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("listing the browsers: %w", err)
	}
	r.mu.Lock()
	r.status.Browsers = list
	preferred := r.preferred
	r.mu.Unlock()
	names := make([]string, len(list))
	for i, e := range list {
		names[i] = e.Name
	}
	if want := r.opts.Extension; want != "" {
		for _, e := range list {
			if e.ID == want {
				return &e, "", nil
			}
		}
		for _, e := range list {
			if e.Name == want {
				return &e, "", nil
			}
		}
		return nil, fmt.Sprintf("no browser with id or name %q is connected to the relay for this user (connected: %s)", want, joinOrNone(names)), nil
	}
	if preferred != "" {
		for _, e := range list {
			if e.Name == preferred {
				return &e, "", nil
			}
		}
	}
	switch len(list) {
	case 0:
		return nil, "no browser is connected to the relay for this user; start one with webmcp-cdp launch --relay wss://HOST/extension --relay-token JWT", nil
	case 1:
		return &list[0], "", nil
	}
	return nil, fmt.Sprintf("%d browsers are connected for this user (%s): start connect with --extension ID|NAME to choose one", len(list), strings.Join(names, ", ")), nil
}

func joinOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// follow serves one browser connection: its tools are listed, kept in step,
// and removed when it ends.
func (r *Remote) follow(ctx context.Context, c *Client, res ConnectResult) {
	r.mu.Lock()
	r.linked = true
	r.preferred = res.ExtensionName
	r.status.Connected = true
	r.status.ExtensionID, r.status.ExtensionName, r.status.ConnectionID = res.ExtensionID, res.ExtensionName, res.ConnectionID
	r.status.Problem = ""
	r.mu.Unlock()
	r.log.Info("connected to a browser", "name", res.ExtensionName, "extension", res.ExtensionID, "connection", res.ConnectionID)

	lctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.followTools(lctx, c)
	}()
	reason := ""
	for reason == "" {
		select {
		case p := <-r.lost:
			if p.ConnectionID == res.ConnectionID {
				reason = p.Reason
			}
		case <-c.Done():
			reason = "the relay connection ended"
		case <-ctx.Done():
			reason = "stopping"
		}
	}
	cancel()
	<-done
	r.mu.Lock()
	r.linked = false
	r.status.Connected = false
	r.status.ConnectionID = ""
	r.status.LastDisconnect = fmt.Sprintf("%s: %s (%s)", time.Now().Format(time.RFC3339), reason, res.ExtensionName)
	r.mu.Unlock()
	r.removeRemoteTools()
	r.log.Warn("the browser went away", "name", res.ExtensionName, "reason", reason)
}

// followTools lists the browser's tools, then waits for changes with
// webmcp/waitForChanges and lists them again after each.
func (r *Remote) followTools(ctx context.Context, c *Client) {
	var v uint64
	synced := false
	for ctx.Err() == nil {
		if !synced {
			nv, err := r.syncTools(ctx, c)
			if err != nil {
				if ctx.Err() == nil {
					r.log.Warn("listing the browser's tools", "err", err)
					sleep(ctx, 500*time.Millisecond)
				}
				continue
			}
			v, synced = nv, true
		}
		var res WaitResult
		err := c.Call(ctx, MethodWaitForChanges, WaitParams{Since: v, TimeoutMS: 25000}, &res)
		var rpcErr *Error
		switch {
		case ctx.Err() != nil:
			return
		case errors.As(err, &rpcErr) && rpcErr.Code == CodeMethodNotFound:
			// A browser side without long polls: list again now and then.
			sleep(ctx, 2*time.Second)
			synced = false
		case err != nil:
			r.log.Debug("waiting for tool changes", "err", err)
			sleep(ctx, time.Second)
		case res.Version != v:
			synced = false
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// syncTools makes the server's remote tools equal to the browser's and
// returns the catalog version they come from.
func (r *Remote) syncTools(ctx context.Context, c *Client) (uint64, error) {
	var res struct {
		Tools []json.RawMessage          `json:"tools"`
		Meta  map[string]json.RawMessage `json:"_meta"`
	}
	if err := c.Call(ctx, MethodToolsList, struct{}{}, &res); err != nil {
		return 0, fmt.Errorf("tools/list: %w", err)
	}
	var v uint64
	if raw, ok := res.Meta[VersionMetaKey]; ok {
		_ = json.Unmarshal(raw, &v)
	}
	r.applyTools(ctx, res.Tools)
	return v, nil
}

// applyTools makes the server list exactly the given remote tools, as
// one new snapshot of its ToolSet (which then tells the client the list
// changed). Definitions come from another machine: each is checked, and
// one the SDK would refuse is skipped, not fatal. Only definitions that
// changed are decoded and rendered again.
func (r *Remote) applyTools(ctx context.Context, raws []json.RawMessage) {
	r.toolsMu.Lock()
	defer r.toolsMu.Unlock()
	if ctx.Err() != nil {
		return // the browser went away while the list was on its way
	}
	own := make(map[string]bool)
	for _, t := range r.ownToolNames() {
		own[t] = true
	}
	byRaw := make(map[string]remoteListed, len(r.listed))
	for _, l := range r.listed {
		byRaw[l.raw] = l
	}
	listed := make(map[string]remoteListed, len(raws))
	entries := make([]mcpserver.ToolEntry, 0, len(raws))
	for _, raw := range raws {
		if len(listed) >= r.opts.MaxTools {
			r.log.Warn("the browser lists more tools than the limit; the rest are left out", "limit", r.opts.MaxTools)
			break
		}
		l, ok := byRaw[string(raw)]
		if !ok {
			t, err := remoteTool(raw)
			if err != nil {
				r.log.Warn("skipping a remote tool", "err", err)
				continue
			}
			if own[t.Name] {
				r.log.Warn("skipping a remote tool whose name is one of connect's own", "name", t.Name)
				continue
			}
			rendered, err := mcpserver.RenderTool(t)
			if err != nil {
				r.log.Warn("skipping a remote tool", "name", t.Name, "err", err)
				continue
			}
			l = remoteListed{raw: string(raw), entry: mcpserver.ToolEntry{Name: t.Name, JSON: rendered, Handler: r.remoteHandler(t.Name)}}
		}
		if _, dup := listed[l.entry.Name]; dup {
			continue
		}
		listed[l.entry.Name] = l
		entries = append(entries, l.entry)
	}
	r.listed = listed
	r.tools.Set(entries)
}

// remoteTool decodes and checks one tool definition.
func remoteTool(raw json.RawMessage) (*mcp.Tool, error) {
	var t mcp.Tool
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("a tool definition does not decode: %w", err)
	}
	if t.Name == "" || len(t.Name) > 128 {
		return nil, fmt.Errorf("a tool name must have 1 to 128 bytes (got %d)", len(t.Name))
	}
	schema, ok := t.InputSchema.(map[string]any)
	if !ok || schema["type"] != "object" {
		return nil, fmt.Errorf("the tool %q has no object input schema", t.Name)
	}
	// Page tools declare no output schema; a stray one would make the SDK
	// check page results against it.
	t.OutputSchema = nil
	if err := mcpserver.CheckTool(&t); err != nil {
		return nil, err
	}
	return &t, nil
}

// removeRemoteTools removes every remote tool (the browser went away).
func (r *Remote) removeRemoteTools() {
	r.toolsMu.Lock()
	defer r.toolsMu.Unlock()
	r.listed = make(map[string]remoteListed)
	r.tools.Set(nil)
}

// current returns the relay connection when a browser is connected, or the
// reason there is none.
func (r *Remote) current() (*Client, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client != nil && r.linked {
		return r.client, ""
	}
	if r.status.Problem != "" {
		return nil, r.status.Problem
	}
	return nil, "no browser is connected through the relay right now"
}

func errorResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func (r *Remote) remoteHandler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return r.callTool(ctx, name, req.Params.Arguments), nil
	}
}

// callTool calls a routed tool of the browser.
func (r *Remote) callTool(ctx context.Context, name string, args json.RawMessage) *mcp.CallToolResult {
	c, why := r.current()
	if c == nil {
		return errorResult("%s cannot run: %s", name, why)
	}
	var res mcp.CallToolResult
	if err := c.Call(ctx, MethodToolsCall, toolsCallParams{Name: name, Arguments: args}, &res); err != nil {
		return errorResult("%s failed across the relay: %v", name, err)
	}
	return &res
}

// ---- tools of our own ------------------------------------------------------------

// browserTool maps a tool of connect's own onto a forwarded method.
type browserTool struct {
	name, method, description string
	schema                    string
	readOnly, image           bool
}

const tabIDSchema = `"tabId":{"type":"integer","description":"the tab number, as webmcp_list_tabs shows it (default: the selected tab, else the active one, else the only one)"}`

// browserTools are connect's tools for the seed's browser methods.
func browserTools() []browserTool {
	point := `{"type":"object","properties":{"selector":{"type":"string","description":"a CSS selector; the first match is used"},` +
		`"x":{"type":"number","description":"x in CSS pixels of the viewport, with y, instead of a selector"},"y":{"type":"number"},` + tabIDSchema + `}}`
	tabOnly := `{"type":"object","properties":{` + tabIDSchema + `}}`
	return []browserTool{
		{name: "webmcp_list_tabs", method: "getTabs", readOnly: true, schema: `{"type":"object","properties":{}}`,
			description: "List the remote browser's tabs (number, URL, title, active, selected) and the page tools that reach each."},
		{name: "webmcp_open_tab", method: "createTab", schema: `{"type":"object","properties":{"url":{"type":"string","description":"the URL to open"}},"required":["url"]}`,
			description: "Open a URL in a new tab of the remote browser and select it; its page tools then appear in the tool list."},
		{name: "webmcp_select_tab", method: "selectTab", schema: `{"type":"object","properties":{` + tabIDSchema + `},"required":["tabId"]}`,
			description: "Choose the tab that the browser tools act on when no tabId is given."},
		{name: "webmcp_activate_tab", method: "activateTab", schema: tabOnly,
			description: "Bring a tab to the front; site-level tool names then go to it first."},
		{name: "webmcp_close_tab", method: "closeTab", schema: tabOnly,
			description: "Close a tab; its tools go away."},
		{name: "webmcp_navigate", method: "browser_navigate", schema: `{"type":"object","properties":{"url":{"type":"string"},` + tabIDSchema + `},"required":["url"]}`,
			description: "Load a URL in a tab and wait for it to load."},
		{name: "webmcp_go_back", method: "goBack", schema: tabOnly, description: "Go back one page in a tab's history."},
		{name: "webmcp_go_forward", method: "goForward", schema: tabOnly, description: "Go forward one page in a tab's history."},
		{name: "webmcp_click", method: "click", schema: point, description: "Click an element (by CSS selector) or a point of a tab."},
		{name: "webmcp_hover", method: "hover", schema: point, description: "Move the mouse over an element (by CSS selector) or a point of a tab."},
		{name: "webmcp_type", method: "type", schema: `{"type":"object","properties":{"text":{"type":"string"},` +
			`"selector":{"type":"string","description":"the element to type into (default: the focused one)"},` +
			`"submit":{"type":"boolean","description":"press Enter afterwards"},` + tabIDSchema + `}}`,
			description: "Type text into an element of a tab, optionally pressing Enter."},
		{name: "webmcp_screenshot", method: "screenshot", readOnly: true, image: true, schema: `{"type":"object","properties":{` +
			`"format":{"type":"string","enum":["png","jpeg","webp"]},"quality":{"type":"integer","minimum":1,"maximum":100},` +
			`"fullPage":{"type":"boolean","description":"the whole scrollable page instead of the viewport"},` + tabIDSchema + `}}`,
			description: "Take a screenshot of a tab."},
	}
}

func (r *Remote) ownToolNames() []string {
	names := []string{"webmcp_relay_status", "webmcp_call"}
	for _, bt := range browserTools() {
		names = append(names, bt.name)
	}
	return names
}

func (r *Remote) addOwnTools() {
	r.server.AddTool(&mcp.Tool{
		Name:        "webmcp_relay_status",
		Description: "[webmcp-cdp relay] Which remote browser this is, which browsers the relay has for this user, and why none is connected when that is so.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		st := r.Status()
		b, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("encoding the status: %w", err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: st}, nil
	})
	r.server.AddTool(&mcp.Tool{
		Name:        "webmcp_call",
		Description: "[webmcp-cdp relay] Call any page tool of the remote browser by its routed name, for clients whose tool list is out of date.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"the routed tool name"},` +
			`"arguments":{"type":"object","description":"the tool's arguments"}},"required":["name"]}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in toolsCallParams
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || in.Name == "" {
			return errorResult("webmcp_call needs {name, arguments}"), nil
		}
		return r.callTool(ctx, in.Name, in.Arguments), nil
	})
	for _, bt := range browserTools() {
		t := &mcp.Tool{
			Name:        bt.name,
			Description: "[webmcp-cdp relay] " + bt.description,
			InputSchema: json.RawMessage(bt.schema),
		}
		if bt.readOnly {
			t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
		}
		r.server.AddTool(t, r.browserHandler(bt))
	}
}

// browserHandler forwards a tool's arguments as the method's params.
func (r *Remote) browserHandler(bt browserTool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c, why := r.current()
		if c == nil {
			return errorResult("%s cannot run: %s", bt.name, why), nil
		}
		var params any = struct{}{}
		if args := req.Params.Arguments; len(args) > 0 && !isNull(args) {
			params = args
		}
		var raw json.RawMessage
		if err := c.Call(ctx, bt.method, params, &raw); err != nil {
			return errorResult("%s: %v", bt.name, err), nil
		}
		if bt.image {
			var shot ScreenshotResult
			if err := json.Unmarshal(raw, &shot); err != nil {
				return errorResult("%s: the browser's answer is not a screenshot: %v", bt.name, err), nil
			}
			img, err := base64.StdEncoding.DecodeString(shot.Data)
			if err != nil {
				return errorResult("%s: the screenshot is not base64: %v", bt.name, err), nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: img, MIMEType: shot.MIMEType}}}, nil
		}
		var structured map[string]any
		if json.Unmarshal(raw, &structured) == nil && structured != nil {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}, StructuredContent: structured}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}}, nil
	}
}
