package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/hub/relay/proxy"
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
	Hub Hub
	// Actions carries out the browser methods. Required.
	Actions Actions
	// AllowRawCDP turns on forwardCDPCommand, which can do anything to a
	// tab.
	AllowRawCDP bool
	// Dial configures the connection to the relay.
	Dial proxy.DialOptions
	// Logger receives the log (default slog.Default()).
	Logger *slog.Logger
	// ActionTimeout bounds one browser method (default 30 s); tool calls
	// have the hub's own timeout.
	ActionTimeout time.Duration
	// CallTimeout is the hub's --call-timeout (default 30 s): how long a
	// call whose page asked a question is kept for the answer.
	CallTimeout time.Duration
	// MaxConcurrent bounds the requests handled at once (default 64).
	MaxConcurrent int
	// MaxScreenshotBytes bounds a screenshot (default 16 MiB).
	MaxScreenshotBytes int
	// MinBackoff and MaxBackoff bound the wait before reconnecting
	// (defaults 500 ms and 30 s).
	MinBackoff, MaxBackoff time.Duration
	// PingInterval is how often the relay is pinged (default 30 s).
	PingInterval time.Duration
	// OnAuthenticated, when set, is called each time the relay accepts the
	// browser, with the extension id clients connect to: an event for a
	// status line or a test to wait on, instead of asking the relay.
	OnAuthenticated func(extensionID string)
}

// BrowserSide is the seed's "extension": it connects to the relay, answers
// authenticate with its name and token, and then only answers requests. It
// serves the seed's browser methods on a browser and the hub's routed tools
// as tools/list and tools/call, and reconnects with backoff when the relay
// goes away.
type BrowserSide struct {
	opts  BrowserSideOptions
	log   *slog.Logger
	asker *mcpserver.Asker // runs the calls whose dialogs a client answers

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
	if err := proxy.CheckName(opts.Name); err != nil {
		return nil, fmt.Errorf("--name: %w", err)
	}
	if _, err := proxy.CheckURL(opts.URL, opts.Dial.Insecure); err != nil {
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
		asker:    mcpserver.NewAsker(opts.Hub.Call, opts.CallTimeout),
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
		if code, reason, ok := proxy.CloseReason(err); ok && code == websocket.StatusPolicyViolation {
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
	ws, err := proxy.DialWebSocket(ctx, b.opts.URL, b.opts.Dial)
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
		wctx, cancel := context.WithTimeout(rctx, proxy.WriteTimeout)
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
		msg, perr := proxy.ParseMessage(data)
		if perr != nil {
			if msg.ID != nil {
				write(proxy.EncodeError(msg.ID, perr))
			}
			continue
		}
		switch msg.Kind() {
		case proxy.KindNotification:
			b.onNotification(msg, &authed)
		case proxy.KindResponse:
			b.log.Debug("ignoring a response from the relay (this browser asks nothing)", "id", msg.IDKey())
		case proxy.KindRequest:
			if msg.Method == proxy.MethodAuthenticate {
				if !msg.IDIsString() || !strings.HasPrefix(msg.IDKey(), proxy.ProxyIDPrefix) {
					// Only the proxy may ask for the token.
					write(proxy.EncodeError(msg.ID, proxy.Errorf(proxy.CodeMethodNotFound, "Method not found: authenticate is answered to the proxy only")))
					continue
				}
				write(proxy.EncodeResult(msg.ID, proxy.AuthenticateResult{Name: b.opts.Name, AccessToken: b.opts.Token}))
				continue
			}
			select {
			case sem <- struct{}{}:
			default:
				write(proxy.EncodeError(msg.ID, proxy.Errorf(proxy.CodeServerError, "Busy: this browser already runs %d requests; try again shortly", b.opts.MaxConcurrent)))
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

func (b *BrowserSide) onNotification(msg *proxy.Message, authed *bool) {
	switch msg.Method {
	case proxy.MethodAuthenticated:
		var p proxy.AuthenticatedParams
		_ = json.Unmarshal(msg.Params, &p)
		*authed = true
		b.log.Info("the relay accepted this browser", "name", b.opts.Name, "extension", p.ExtensionID, "user", p.UserID)
		if b.opts.OnAuthenticated != nil {
			b.opts.OnAuthenticated(p.ExtensionID)
		}
	case proxy.MethodStatus:
		var p proxy.StatusParams
		_ = json.Unmarshal(msg.Params, &p)
		b.log.Debug("relay status", "clients", p.PeerCount)
	default:
		b.log.Debug("ignoring a notification from the relay", "method", msg.Method)
	}
}

// respond runs one request and writes its answer, with the request's id
// exactly as it came.
func (b *BrowserSide) respond(ctx context.Context, msg *proxy.Message) (out []byte) {
	defer func() {
		if r := recover(); r != nil {
			b.log.Error("a browser method panicked", "method", msg.Method, "panic", r)
			out = proxy.EncodeError(msg.ID, proxy.Errorf(proxy.CodeInternalError, "Internal error while handling %s", msg.Method))
		}
	}()
	conn := ""
	if msg.IDIsString() {
		if c, _, ok := proxy.SplitID(msg.IDKey()); ok {
			conn = c
		}
	}
	res, err := b.handle(ctx, conn, msg.Method, msg.Params)
	if err != nil {
		var rpcErr *proxy.Error
		if !errors.As(err, &rpcErr) {
			rpcErr = proxy.Errorf(proxy.CodeServerError, "%s failed: %v", msg.Method, err)
		}
		return proxy.EncodeError(msg.ID, rpcErr)
	}
	return proxy.EncodeResult(msg.ID, res)
}

// method is one method the browser side serves.
type method func(ctx context.Context, conn string, params json.RawMessage) (any, error)

// method returns the handler of a method, or nil.
func (b *BrowserSide) method(name string) method {
	switch name {
	case proxy.MethodToolsList:
		return b.toolsList
	case proxy.MethodToolsCall:
		return b.toolsCall
	case proxy.MethodWaitForChanges:
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
		proxy.MethodToolsCall, proxy.MethodToolsList, "type", proxy.MethodWaitForChanges,
	}
}

// handle runs a method for the client behind connection conn ("" in direct
// mode). Errors that are *proxy.Error keep their code; others become -32000.
func (b *BrowserSide) handle(ctx context.Context, conn, name string, params json.RawMessage) (any, error) {
	m := b.method(name)
	if m == nil {
		return nil, proxy.Errorf(proxy.CodeMethodNotFound, "Method not found: %s; this browser serves %s", name, strings.Join(Methods(), ", "))
	}
	if name != proxy.MethodToolsCall && name != proxy.MethodWaitForChanges {
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
	if proxy.FirstByte(params) != '{' {
		return proxy.Errorf(proxy.CodeInvalidParams, "Invalid params: %s takes an object", name)
	}
	if err := json.Unmarshal(params, v); err != nil {
		return proxy.Errorf(proxy.CodeInvalidParams, "Invalid params for %s: %v", name, err)
	}
	return nil
}
