package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

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
	// MaxHandshakeBytes bounds one message before a connection has
	// authenticated (default 8 KiB: an authenticate answer or an
	// mcp_handshake, a name and a token, fit many times over). The larger
	// limits above apply only once it has.
	MaxHandshakeBytes int64
	// MaxUnauthenticated bounds the connections that have not authenticated
	// yet, in all (default 512) and from one IP address
	// (MaxUnauthenticatedPerIP, default 32). A connection over either is
	// refused before the WebSocket upgrade (HTTP 503 and 429).
	MaxUnauthenticated      int
	MaxUnauthenticatedPerIP int // see MaxUnauthenticated
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
	if o.MaxHandshakeBytes <= 0 {
		o.MaxHandshakeBytes = 8 << 10
	}
	if o.MaxUnauthenticated <= 0 {
		o.MaxUnauthenticated = 512
	}
	if o.MaxUnauthenticatedPerIP <= 0 {
		o.MaxUnauthenticatedPerIP = 32
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
	// unauthed counts the connections that have not authenticated yet, in
	// all and by IP address.
	unauthed     int
	unauthedByIP map[string]int
}

// extConn is an authenticated browser.
type extConn struct {
	*peer
	id, name, user string
	limiter        *rate.Limiter
	links          map[string]*link    // by connection id
	pending        map[string]*pending // by mapped id
	// abandoned holds the mapped ids of requests forgotten before the
	// browser answered (abandonLocked), oldest first in abandonedOrder.
	abandoned      map[string]struct{}
	abandonedOrder []string
}

// clientConn is an MCP client.
type clientConn struct {
	*peer
	id      string
	user    string // "" until mcp_handshake succeeds
	release func() // frees its place among the unauthenticated
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

		unauthedByIP: make(map[string]int),
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

// admit counts a new connection among those that have not authenticated,
// or refuses it (and answers the request) when its address or the relay
// has too many. release frees the place; it may be called more than once.
func (s *Server) admit(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	host := r.RemoteAddr
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		host = h
	}
	s.mu.Lock()
	perIP, all := s.unauthedByIP[host], s.unauthed
	if perIP < s.opts.MaxUnauthenticatedPerIP && all < s.opts.MaxUnauthenticated {
		s.unauthedByIP[host]++
		s.unauthed++
		s.mu.Unlock()
		return sync.OnceFunc(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.unauthed--
			if s.unauthedByIP[host]--; s.unauthedByIP[host] <= 0 {
				delete(s.unauthedByIP, host)
			}
		}), true
	}
	s.mu.Unlock()
	retry := int(s.opts.AuthTimeout.Round(time.Second) / time.Second)
	w.Header().Set("Retry-After", fmt.Sprint(max(retry, 1)))
	if perIP >= s.opts.MaxUnauthenticatedPerIP {
		s.log.Warn("relay: refused a connection: too many from its address waiting to authenticate", "remote", r.RemoteAddr, "waiting", perIP)
		http.Error(w, fmt.Sprintf("webmcp-cdp relay: %d connections from %s are already waiting to authenticate, the most one address may have: "+
			"authenticate or close them, then retry (each has %s)", perIP, host, s.opts.AuthTimeout), http.StatusTooManyRequests)
		return nil, false
	}
	s.log.Warn("relay: refused a connection: too many waiting to authenticate", "remote", r.RemoteAddr, "waiting", all)
	http.Error(w, fmt.Sprintf("webmcp-cdp relay: %d connections are already waiting to authenticate, the most the relay takes: retry in %s",
		all, s.opts.AuthTimeout), http.StatusServiceUnavailable)
	return nil, false
}

// accept upgrades the request and starts the writer and the pinger. Until
// the peer authenticates, its messages may be at most MaxHandshakeBytes;
// a bigger one closes the connection with preAuth as the reason.
func (s *Server) accept(w http.ResponseWriter, r *http.Request, limit int64, preAuth string) (*peer, error) {
	if s.ctx.Err() != nil {
		http.Error(w, "the relay is shutting down", http.StatusServiceUnavailable)
		return nil, s.ctx.Err()
	}
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		s.log.Debug("relay: refused a WebSocket upgrade", "remote", r.RemoteAddr, "err", err)
		return nil, fmt.Errorf("upgrading to WebSocket: %w", err)
	}
	// peer.read enforces the limit of the phase; the library's limit is
	// only a backstop above both.
	ws.SetReadLimit(max(limit, s.opts.MaxHandshakeBytes) + 1)
	p := newPeer(ws, s.opts.QueueLength)
	p.setLimit(s.opts.MaxHandshakeBytes, preAuth)
	go p.writeLoop(s.ctx)
	go p.pingLoop(s.ctx, s.opts.PingInterval)
	return p, nil
}

// readLoop reads messages until the connection ends and hands each to fn.
func readLoop(ctx context.Context, p *peer, fn func([]byte)) error {
	for {
		data, err := p.read(ctx)
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
