package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/time/rate"
)

// The client end of the proxy: /mcp, the control methods, and the requests
// forwarded to a client's browser.

func (s *Server) serveClient(w http.ResponseWriter, r *http.Request) {
	release, ok := s.admit(w, r)
	if !ok {
		return
	}
	defer release()
	p, err := s.accept(w, r, s.opts.MaxClientMessageBytes,
		fmt.Sprintf("send mcp_handshake first: messages before it may be at most %d bytes", s.opts.MaxHandshakeBytes))
	if err != nil {
		return
	}
	defer p.kill(websocket.StatusNormalClosure, "")
	c := s.newClient(p)
	c.release = release
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
	// Its place among the unauthenticated is free, and its messages may be
	// as big as a client's, before it hears that it is in: a client that
	// dials again (or sends a big request) at once is never refused.
	if c.release != nil {
		c.release()
	}
	c.setLimit(s.opts.MaxClientMessageBytes,
		fmt.Sprintf("message too big: a client's messages may be at most %d bytes (relay --max-client-message-bytes)", s.opts.MaxClientMessageBytes))
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
		s.abandonLocked(p)
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
	s.abandonLocked(p)
	p.link.client.send(EncodeError(p.orig, Errorf(CodeServerError, "The browser did not answer within %s", s.opts.RequestTimeout)))
}
