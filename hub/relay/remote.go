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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/sdklog"
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
	// Dialogs is what happens to a page dialog during a call whose client
	// cannot be asked (no elicitation), as --dialogs for a local client
	// (default mcpserver.DialogsFail). A client with elicitation is asked.
	Dialogs mcpserver.DialogPolicy
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
	if opts.Dialogs == "" {
		opts.Dialogs = mcpserver.DialogsFail
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
		Logger:       sdklog.Quiet(opts.Logger),
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
