package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/coder/websocket"
	"golang.org/x/time/rate"
)

// ServerOptions configures a Server. Zero values take the defaults.
type ServerOptions struct {
	// Auth checks access tokens. Required.
	Auth Authenticator
	// Logger receives the log (default slog.Default()).
	Logger *slog.Logger
	// MaxClientMessageBytes bounds one message from an MCP client
	// (default 1 MiB). A bigger message closes the connection.
	MaxClientMessageBytes int64
	// MaxBrowserMessageBytes bounds one message from a browser (default
	// 32 MiB: screenshots are big).
	MaxBrowserMessageBytes int64
	// ClientRate is how many messages a second one MCP client connection may
	// send (default 100), in bursts of ClientBurst (default 200). Requests
	// over the limit are answered with an error and not forwarded.
	ClientRate  float64
	ClientBurst int // see ClientRate
	// BrowserRate bounds the messages a browser sends that answer nothing
	// (default 10 a second, bursts of 50); a browser over it is closed.
	BrowserRate float64
	// MaxInflight bounds the forwarded requests of one client that wait for
	// an answer (default 64).
	MaxInflight int
	// RequestTimeout is how long a forwarded request may wait for the
	// browser's answer (default 2 minutes).
	RequestTimeout time.Duration
	// AuthTimeout is how long a new connection has to authenticate
	// (default 10 s).
	AuthTimeout time.Duration
	// PingInterval is how often idle connections are pinged (default 30 s).
	PingInterval time.Duration
	// QueueLength is how many outbound messages may wait for one slow
	// connection before it is closed (default 1024).
	QueueLength int
}

func (o *ServerOptions) defaults() {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxClientMessageBytes <= 0 {
		o.MaxClientMessageBytes = 1 << 20
	}
	if o.MaxBrowserMessageBytes <= 0 {
		o.MaxBrowserMessageBytes = 32 << 20
	}
	if o.ClientRate <= 0 {
		o.ClientRate = 100
	}
	if o.ClientBurst <= 0 {
		o.ClientBurst = 200
	}
	if o.BrowserRate <= 0 {
		o.BrowserRate = 10
	}
	if o.MaxInflight <= 0 {
		o.MaxInflight = 64
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 2 * time.Minute
	}
	if o.AuthTimeout <= 0 {
		o.AuthTimeout = 10 * time.Second
	}
	if o.PingInterval <= 0 {
		o.PingInterval = 30 * time.Second
	}
	if o.QueueLength <= 0 {
		o.QueueLength = 1024
	}
}

// Server is the proxy of the MCP Proxy Protocol. It serves browsers on
// /extension and MCP clients on /mcp, answers the control methods itself,
// and forwards every other request of a connected client to its browser,
// with the id mapped to "<connection id>:<client id>" and mapped back on
// the answer. Its methods are safe for concurrent use.
type Server struct {
	opts   ServerOptions
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	now    func() time.Time

	mu      sync.Mutex
	exts    map[string]*extConn
	clients map[*clientConn]struct{}
	links   map[string]*link
}

// extConn is an authenticated browser.
type extConn struct {
	*peer
	id, name, user string
	limiter        *rate.Limiter
	links          map[string]*link    // by connection id
	pending        map[string]*pending // by mapped id
}

// clientConn is an MCP client.
type clientConn struct {
	*peer
	id      string
	user    string // "" until mcp_handshake succeeds
	limiter *rate.Limiter
	link    *link
	expiry  *time.Timer
}

// link is a client's connection to a browser.
type link struct {
	id      string
	client  *clientConn
	ext     *extConn
	pending map[string]*pending // by mapped id
}

// pending is a forwarded request that waits for the browser's answer.
type pending struct {
	link   *link
	orig   json.RawMessage
	mapped string
	timer  *time.Timer
}

// NewServer returns a proxy. Close it to drop every connection.
func NewServer(opts ServerOptions) (*Server, error) {
	if opts.Auth == nil {
		return nil, errors.New("relay: ServerOptions.Auth is required")
	}
	opts.defaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		opts:    opts,
		log:     opts.Logger,
		ctx:     ctx,
		cancel:  cancel,
		now:     time.Now,
		exts:    make(map[string]*extConn),
		clients: make(map[*clientConn]struct{}),
		links:   make(map[string]*link),
	}, nil
}

// Close closes every connection. The Server serves no more connections.
func (s *Server) Close() {
	s.cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.exts {
		e.kill(websocket.StatusGoingAway, "the relay is shutting down")
	}
	for c := range s.clients {
		c.kill(websocket.StatusGoingAway, "the relay is shutting down")
	}
}

// ServeHTTP serves the WebSocket endpoints /extension and /mcp.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/extension":
		s.serveExtension(w, r)
	case "/mcp":
		s.serveClient(w, r)
	default:
		http.Error(w, "webmcp-cdp relay: the WebSocket endpoints are /extension (browsers) and /mcp (MCP clients)", http.StatusNotFound)
	}
}

// accept upgrades the request and starts the writer and the pinger.
func (s *Server) accept(w http.ResponseWriter, r *http.Request, limit int64) (*peer, error) {
	if s.ctx.Err() != nil {
		http.Error(w, "the relay is shutting down", http.StatusServiceUnavailable)
		return nil, s.ctx.Err()
	}
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		s.log.Debug("relay: refused a WebSocket upgrade", "remote", r.RemoteAddr, "err", err)
		return nil, fmt.Errorf("upgrading to WebSocket: %w", err)
	}
	ws.SetReadLimit(limit)
	p := newPeer(ws, s.opts.QueueLength)
	go p.writeLoop(s.ctx)
	go p.pingLoop(s.ctx, s.opts.PingInterval)
	return p, nil
}

// readLoop reads messages until the connection ends and hands each to fn.
func readLoop(ctx context.Context, p *peer, fn func([]byte)) error {
	for {
		_, data, err := p.ws.Read(ctx)
		if err != nil {
			return err
		}
		fn(data)
	}
}

// endReason words why a connection ended, for logs and notifications: ""
// for a plain close, the peer's reason when it gave one.
func endReason(err error) string {
	if code, reason, ok := CloseReason(err); ok {
		if reason == "" && code != websocket.StatusNormalClosure && code != websocket.StatusGoingAway {
			return code.String()
		}
		return reason
	}
	if errors.Is(err, context.Canceled) {
		return "the relay is shutting down"
	}
	return "connection lost"
}

// ---- browsers --------------------------------------------------------------

func (s *Server) serveExtension(w http.ResponseWriter, r *http.Request) {
	p, err := s.accept(w, r, s.opts.MaxBrowserMessageBytes)
	if err != nil {
		return
	}
	defer p.kill(websocket.StatusNormalClosure, "")
	e, err := s.authenticateExtension(p)
	if err != nil {
		s.log.Warn("relay: refused a browser", "remote", r.RemoteAddr, "err", err)
		p.closeAfter(websocket.StatusPolicyViolation, "authentication failed: "+err.Error())
		// Read until the close completes, so the close frame goes out.
		_ = readLoop(s.ctx, p, func([]byte) {})
		return
	}
	s.log.Info("relay: browser connected", "extension", e.id, "name", e.name, "user", e.user, "remote", r.RemoteAddr)
	err = readLoop(s.ctx, p, func(data []byte) { s.onExtensionMessage(e, data) })
	reason := "Extension closed"
	if why := endReason(err); why != "" {
		reason += ": " + why
	}
	s.dropExtension(e, reason)
	s.log.Info("relay: browser disconnected", "extension", e.id, "name", e.name, "reason", reason)
}

// authenticateExtension sends authenticate and checks the answer.
func (s *Server) authenticateExtension(p *peer) (*extConn, error) {
	const authID = ProxyIDPrefix + "1"
	p.send(EncodeRequest(stringID(authID), MethodAuthenticate, nil))
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.AuthTimeout)
	defer cancel()
	_, data, err := p.ws.Read(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("no answer to authenticate within %s", s.opts.AuthTimeout)
		}
		return nil, fmt.Errorf("the connection ended before authenticate was answered: %w", err)
	}
	msg, perr := ParseMessage(data)
	switch {
	case perr != nil:
		return nil, fmt.Errorf("the answer to authenticate is not valid: %s", perr.Message)
	case msg.Kind() != KindResponse || msg.IDKey() != authID:
		return nil, fmt.Errorf("expected the answer to authenticate (id %q) first", authID)
	case msg.Error != nil:
		return nil, fmt.Errorf("the browser answered authenticate with an error: %s", msg.Error.Message)
	}
	var res AuthenticateResult
	if err := json.Unmarshal(msg.Result, &res); err != nil {
		return nil, fmt.Errorf("the answer to authenticate is not {name, accessToken}: %w", err)
	}
	if err := CheckName(res.Name); err != nil {
		return nil, err
	}
	if res.AccessToken == "" {
		return nil, errors.New("the answer to authenticate has no accessToken")
	}
	id, err := s.opts.Auth.Authenticate(res.AccessToken)
	if err != nil {
		return nil, err
	}
	e := &extConn{
		peer:    p,
		id:      "ext-" + newUUID(),
		name:    res.Name,
		user:    id.User,
		limiter: rate.NewLimiter(rate.Limit(s.opts.BrowserRate), 50),
		links:   make(map[string]*link),
		pending: make(map[string]*pending),
	}
	s.mu.Lock()
	s.exts[e.id] = e
	e.send(encodeNotification(MethodAuthenticated, AuthenticatedParams{UserID: e.user, ExtensionID: e.id}))
	e.send(encodeNotification(MethodStatus, newStatus(true, 0, s.now())))
	s.mu.Unlock()
	s.expireAt(p, id.Expires)
	return e, nil
}

// CheckName checks a browser's display name.
func CheckName(name string) error {
	if name == "" {
		return errors.New("the answer to authenticate has no name")
	}
	if len(name) > 100 || !utf8.ValidString(name) {
		return errors.New("the browser's name must be valid UTF-8 of at most 100 bytes")
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return errors.New("the browser's name must not contain control characters")
		}
	}
	return nil
}

// expireAt closes the connection when its token expires.
func (s *Server) expireAt(p *peer, at time.Time) {
	if at.IsZero() {
		return
	}
	t := time.AfterFunc(time.Until(at), func() {
		p.kill(websocket.StatusPolicyViolation, "the access token expired")
	})
	go func() {
		<-p.gone
		t.Stop()
	}()
}

func (s *Server) onExtensionMessage(e *extConn, data []byte) {
	msg, perr := ParseMessage(data)
	if msg.Kind() == KindResponse || (perr != nil && msg.ID != nil) {
		if s.answer(e, msg, perr) {
			return
		}
	}
	switch {
	case perr != nil:
		s.log.Debug("relay: a browser sent an invalid message", "extension", e.id, "err", perr.Message)
	case msg.Kind() == KindRequest:
		e.send(EncodeError(msg.ID, Errorf(CodeMethodNotFound, "Method not found: the proxy serves no methods to browsers (%s); a browser only answers", msg.Method)))
	case msg.Kind() == KindNotification:
		s.log.Debug("relay: ignoring a notification from a browser", "extension", e.id, "method", msg.Method)
	default:
		s.log.Debug("relay: ignoring an answer to no pending request", "extension", e.id, "id", msg.IDKey())
	}
	if !e.limiter.Allow() {
		s.log.Warn("relay: closing a browser that sends too many messages that answer nothing", "extension", e.id)
		e.kill(websocket.StatusPolicyViolation, "too many messages that answer no request")
	}
}

// answer routes a browser's response to the client that asked, with the
// client's own id. It reports whether a pending request matched.
func (s *Server) answer(e *extConn, msg *Message, perr *Error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := e.pending[msg.IDKey()]
	if !ok || !msg.idString {
		return false
	}
	s.unpendLocked(p)
	var out []byte
	switch {
	case perr != nil:
		out = EncodeError(p.orig, Errorf(CodeInternalError, "Internal error: the browser sent a malformed answer: %s", perr.Message))
	case msg.Error != nil:
		out = EncodeError(p.orig, msg.Error)
	default:
		out = rawResult(p.orig, msg.Result)
	}
	p.link.client.send(out)
	return true
}

// rawResult writes a response around a result that ParseMessage checked,
// without decoding it again (results can be megabytes).
func rawResult(id, result json.RawMessage) []byte {
	out := make([]byte, 0, len(result)+len(id)+32)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"result":`...)
	out = append(out, result...)
	return append(out, '}')
}

// unpendLocked forgets a pending request.
func (s *Server) unpendLocked(p *pending) {
	p.timer.Stop()
	delete(p.link.pending, p.mapped)
	delete(p.link.ext.pending, p.mapped)
}

// dropExtension forgets a browser: each connected client gets disconnected,
// and its requests still in flight fail at once.
func (s *Server) dropExtension(e *extConn, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exts[e.id] == e {
		delete(s.exts, e.id)
	}
	for _, l := range e.links {
		l.client.send(encodeNotification(MethodDisconnected, DisconnectedParams{ConnectionID: l.id, Reason: reason}))
		for _, p := range l.pending {
			s.unpendLocked(p)
			l.client.send(EncodeError(p.orig, Errorf(CodeServerError, "The browser disconnected before answering (%s)", reason)))
		}
		l.client.link = nil
		delete(s.links, l.id)
	}
	e.links = map[string]*link{}
}

// ---- MCP clients -------------------------------------------------------------

func (s *Server) serveClient(w http.ResponseWriter, r *http.Request) {
	p, err := s.accept(w, r, s.opts.MaxClientMessageBytes)
	if err != nil {
		return
	}
	defer p.kill(websocket.StatusNormalClosure, "")
	c := s.newClient(p)
	auth := time.AfterFunc(s.opts.AuthTimeout, func() {
		s.mu.Lock()
		authed := c.user != ""
		s.mu.Unlock()
		if !authed {
			c.kill(websocket.StatusPolicyViolation, "no mcp_handshake within "+s.opts.AuthTimeout.String())
		}
	})
	defer auth.Stop()
	err = readLoop(s.ctx, p, func(data []byte) { s.onClientMessage(c, data) })
	s.dropClient(c)
	s.log.Debug("relay: MCP client disconnected", "client", c.id, "reason", endReason(err))
}

func (s *Server) newClient(p *peer) *clientConn {
	c := &clientConn{
		peer:    p,
		id:      "mcp-" + newUUID(),
		limiter: rate.NewLimiter(rate.Limit(s.opts.ClientRate), s.opts.ClientBurst),
	}
	s.mu.Lock()
	s.clients[c] = struct{}{}
	s.mu.Unlock()
	return c
}

// dropClient forgets a client: its connection to a browser goes away, and
// the browser's late answers to it are dropped. Other clients are untouched.
func (s *Server) dropClient(c *clientConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.clients, c)
	if c.link != nil {
		s.unlinkLocked(c.link, nil)
	}
	if c.expiry != nil {
		c.expiry.Stop()
	}
}

func (s *Server) onClientMessage(c *clientConn, data []byte) {
	msg, perr := ParseMessage(data)
	if !c.limiter.Allow() {
		if msg.Kind() == KindRequest {
			c.send(EncodeError(msg.ID, Errorf(CodeServerError, "Rate limit exceeded: at most %g messages a second (bursts of %d); slow down and try again", s.opts.ClientRate, s.opts.ClientBurst)))
		}
		return
	}
	if perr != nil {
		c.send(EncodeError(msg.ID, perr))
		return
	}
	switch msg.Kind() {
	case KindResponse:
		s.log.Debug("relay: ignoring a response from an MCP client (clients only ask)", "client", c.id)
		return
	case KindNotification:
		s.log.Debug("relay: ignoring a notification from an MCP client", "client", c.id, "method", msg.Method)
		return
	}
	if msg.Reserved() {
		c.send(EncodeError(msg.ID, Errorf(CodeInvalidRequest, "Invalid Request: ids that start with %q or %q are reserved for the proxy and browsers; use a number or a UUID", ProxyIDPrefix, ExtIDPrefix)))
		return
	}
	s.mu.Lock()
	authed := c.user != ""
	s.mu.Unlock()
	if !authed && msg.Method != MethodHandshake {
		c.send(EncodeError(msg.ID, Errorf(CodeServerError, "Not authenticated: send mcp_handshake with params.accessToken first")))
		return
	}
	switch msg.Method {
	case MethodHandshake:
		s.handshake(c, msg)
	case MethodListExtensions:
		s.listExtensions(c, msg)
	case MethodConnect:
		s.connect(c, msg)
	case MethodDisconnect:
		s.disconnect(c, msg)
	case MethodAuthenticate, MethodAuthenticated, MethodStatus, MethodDisconnected:
		c.send(EncodeError(msg.ID, Errorf(CodeMethodNotFound, "Method not found: %s is sent by the proxy, not to it", msg.Method)))
	default:
		s.forward(c, msg)
	}
}

func (s *Server) handshake(c *clientConn, msg *Message) {
	s.mu.Lock()
	user := c.user
	s.mu.Unlock()
	if user != "" {
		c.send(EncodeError(msg.ID, Errorf(CodeServerError, "Already authenticated as user %s", user)))
		return
	}
	var params HandshakeParams
	if err := json.Unmarshal(msg.Params, &params); err != nil || params.AccessToken == "" {
		c.send(EncodeError(msg.ID, Errorf(CodeInvalidParams, "Invalid params: mcp_handshake needs params.accessToken (a JWT)")))
		return
	}
	id, err := s.opts.Auth.Authenticate(params.AccessToken)
	if err != nil {
		s.log.Warn("relay: refused an MCP client", "client", c.id, "err", err)
		c.send(EncodeError(msg.ID, Errorf(CodeServerError, "Authentication failed: %v", err)))
		c.closeAfter(websocket.StatusPolicyViolation, "authentication failed")
		return
	}
	s.mu.Lock()
	c.user = id.User
	if !id.Expires.IsZero() {
		c.expiry = time.AfterFunc(time.Until(id.Expires), func() {
			c.kill(websocket.StatusPolicyViolation, "the access token expired")
		})
	}
	c.send(EncodeResult(msg.ID, HandshakeResult{Authenticated: true, UserID: id.User, MCPClientID: c.id}))
	s.mu.Unlock()
	s.log.Info("relay: MCP client connected", "client", c.id, "user", id.User)
}

func (s *Server) listExtensions(c *clientConn, msg *Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := []ExtensionInfo{}
	for _, e := range s.exts {
		if e.user == c.user {
			list = append(list, ExtensionInfo{ID: e.id, Name: e.name, Connected: true})
		}
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].Name != list[j].Name {
			return list[i].Name < list[j].Name
		}
		return list[i].ID < list[j].ID
	})
	c.send(EncodeResult(msg.ID, ListExtensionsResult{Extensions: list}))
}

func (s *Server) connect(c *clientConn, msg *Message) {
	var params ConnectParams
	if err := json.Unmarshal(msg.Params, &params); err != nil || params.ExtensionID == "" {
		c.send(EncodeError(msg.ID, Errorf(CodeInvalidParams, "Invalid params: connect needs params.extension_id (an id from list_extensions)")))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.link != nil {
		c.send(EncodeError(msg.ID, Errorf(CodeAlreadyConnected, "MCP client already connected to an extension")))
		return
	}
	e, ok := s.exts[params.ExtensionID]
	if !ok || e.user != c.user {
		// The same answer for another user's browser: ids are not probed.
		c.send(EncodeError(msg.ID, Errorf(CodeServerError, "Extension not found or not accessible")))
		return
	}
	l := &link{id: "conn-" + newUUID(), client: c, ext: e, pending: make(map[string]*pending)}
	e.links[l.id] = l
	s.links[l.id] = l
	c.link = l
	c.send(EncodeResult(msg.ID, ConnectResult{ConnectionID: l.id, ExtensionID: e.id, ExtensionName: e.name}))
	s.statusLocked(e)
	s.log.Info("relay: MCP client connected to a browser", "client", c.id, "extension", e.id, "connection", l.id)
}

func (s *Server) disconnect(c *clientConn, msg *Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := c.link; l != nil {
		s.unlinkLocked(l, Errorf(CodeServerError, "Cancelled: the client disconnected from the browser before it answered"))
		s.log.Info("relay: MCP client disconnected from a browser", "client", c.id, "connection", l.id)
	}
	c.send(EncodeResult(msg.ID, DisconnectResult{Disconnected: true}))
}

// unlinkLocked removes a client's connection to a browser. Its requests in
// flight are forgotten, answered with failed when it is not nil.
func (s *Server) unlinkLocked(l *link, failed *Error) {
	for _, p := range l.pending {
		s.unpendLocked(p)
		if failed != nil {
			l.client.send(EncodeError(p.orig, failed))
		}
	}
	delete(l.ext.links, l.id)
	delete(s.links, l.id)
	l.client.link = nil
	s.statusLocked(l.ext)
}

// statusLocked tells a browser and its clients how many clients it has.
func (s *Server) statusLocked(e *extConn) {
	st := encodeNotification(MethodStatus, newStatus(true, len(e.links), s.now()))
	e.send(st)
	for _, l := range e.links {
		l.client.send(st)
	}
}

// forward sends a client's request to its browser with the id mapped.
func (s *Server) forward(c *clientConn, msg *Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := c.link
	switch {
	case l == nil:
		c.send(EncodeError(msg.ID, Errorf(CodeServerError, "Not connected to an extension: call list_extensions, then connect, before %s", msg.Method)))
		return
	case msg.ConnectionID != "" && msg.ConnectionID != l.id:
		c.send(EncodeError(msg.ID, Errorf(CodeServerError, "connectionId %q is not this client's connection (%s)", msg.ConnectionID, l.id)))
		return
	case len(l.pending) >= s.opts.MaxInflight:
		c.send(EncodeError(msg.ID, Errorf(CodeServerError, "Too many requests in flight (%d): wait for answers before sending more", s.opts.MaxInflight)))
		return
	}
	mapped := MapID(l.id, msg)
	if _, dup := l.pending[mapped]; dup {
		c.send(EncodeError(msg.ID, Errorf(CodeInvalidRequest, "Invalid Request: a request with id %s is already in flight", msg.ID)))
		return
	}
	p := &pending{link: l, orig: msg.ID, mapped: mapped}
	p.timer = time.AfterFunc(s.opts.RequestTimeout, func() { s.timeout(p) })
	l.pending[mapped] = p
	l.ext.pending[mapped] = p
	l.ext.send(EncodeRequest(stringID(mapped), msg.Method, msg.Params))
}

// timeout fails a request the browser did not answer in time.
func (s *Server) timeout(p *pending) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.link.ext.pending[p.mapped] != p {
		return
	}
	s.unpendLocked(p)
	p.link.client.send(EncodeError(p.orig, Errorf(CodeServerError, "The browser did not answer within %s", s.opts.RequestTimeout)))
}

// Stats counts what the server holds, for logs and tests.
type Stats struct {
	Browsers, Clients, Connections, Pending int // authenticated browsers, clients, client-browser connections, forwarded requests awaiting answers
}

// Stats returns the current counts.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Browsers: len(s.exts), Clients: len(s.clients), Connections: len(s.links)}
	for _, e := range s.exts {
		st.Pending += len(e.pending)
	}
	return st
}
