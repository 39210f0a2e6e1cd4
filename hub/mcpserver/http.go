package mcpserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/internal/sdklog"
	"github.com/webmcp-cdp/webmcp-cdp/internal/userscript"
)

// HTTPOptions configures the streamable HTTP endpoint.
type HTTPOptions struct {
	// Addr is where to listen: "host:port", ":port" or "port". A missing
	// host means 127.0.0.1.
	Addr string
	// Token is the bearer token every request must carry. It is required
	// when Addr is not a loopback address.
	Token string
	// MaxBodyBytes bounds a request body (default 4 MiB).
	MaxBodyBytes int64
	// AllowedHosts are further Host/Origin host names accepted besides the
	// listening address (for a server behind a name): "name", "name:port"
	// or an origin "https://name:port".
	AllowedHosts []string
	// ReadTimeout bounds the reading of a request's headers, and again of
	// its body (default DefaultReadTimeout). It does not bound the response:
	// event streams and long tool calls go on.
	ReadTimeout time.Duration
	// MaxConnsPerIP bounds the connections one client address may hold
	// open at once (default DefaultMaxConnsPerIP); MaxConns bounds them all
	// (default 1024, and never below MaxConnsPerIP). A connection over
	// either bound gets 503 and is closed.
	MaxConnsPerIP int
	MaxConns      int
	// Browser is the browser's product and version, and Titles returns the
	// tabs' current titles by tab id, for the status page.
	Browser string
	Titles  func(ctx context.Context) (map[string]string, error)
	// Browsers, when the server serves several browsers, returns their
	// states: the status page lists them and groups the tabs by browser.
	// Not shown in spaces mode, where the browsers are other people's.
	Browsers func() []BrowserStatus
	// StatusLink is told the status page's address once listening: with a
	// Token, a one-time link (and again when someone asks for the page
	// without one). Default: the log.
	StatusLink func(url string)
	// Auth, when set, puts the endpoint in OAuth mode (oauth.go): tokens
	// of an authorization server instead of Token, never both.
	Auth *AuthOptions
	// Metrics, when set, is served at GET /metrics behind the same guard
	// as /mcp: the bearer Token, or in OAuth mode a token with the read
	// scope (metrics show the sites called, as the status page does).
	Metrics http.Handler
	// Userscripts, when set, returns the operator's userscripts in force
	// (--userscript), each with the documents it ran in through s (in
	// spaces mode, s is the person's own space: the documents are theirs
	// alone), for the status page. It is asked at each showing, so a
	// reload shows at once.
	Userscripts func(s *Server) []userscript.Status
	// Spaces, when set, gives each person a Server of their own, chosen per
	// request by the OAuth token's principal (spaces_http.go). It needs
	// OAuth mode (Auth), and is served by ServeSpaces.
	Spaces Spaces
}

// BrowserStatus is one of several browsers served, for the status page.
type BrowserStatus struct {
	// Name is the browser's short name; State is "up", "connecting" or
	// "stopped", and Error why it is not up.
	Name, State, Error string
	// Drops counts the connections it lost.
	Drops int
}

// DefaultReadTimeout is HTTPOptions.ReadTimeout's default.
const DefaultReadTimeout = 10 * time.Second

// DefaultMaxConnsPerIP is HTTPOptions.MaxConnsPerIP's default: room for a
// few dozen local clients, each with its event stream and a request or two.
const DefaultMaxConnsPerIP = 64

// idleTimeout is how long a kept-alive connection may wait for its next
// request.
const idleTimeout = 60 * time.Second

// ListenAddr normalises an --http value and says whether it is loopback.
func ListenAddr(addr string) (string, bool, error) {
	if addr == "" {
		return "", false, errors.New("--http needs an address such as 127.0.0.1:8808")
	}
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false, fmt.Errorf("--http %q: %w", addr, err)
	}
	if port == "" {
		return "", false, fmt.Errorf("--http %q: no port", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	ip := net.ParseIP(host)
	loopback := host == "localhost" || (ip != nil && ip.IsLoopback())
	return net.JoinHostPort(host, port), loopback, nil
}

// HTTP is a running streamable HTTP endpoint.
type HTTP struct {
	srv *http.Server
	ln  net.Listener
}

// Addr returns the address the endpoint listens on.
func (h *HTTP) Addr() string { return h.ln.Addr().String() }

// Close stops the endpoint. Requests in flight get a grace period of 2 s
// to finish (a bound on the shutdown, not a poll); then they are cut.
func (h *HTTP) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return h.srv.Shutdown(ctx)
}

// ServeHTTP listens on opts.Addr and serves MCP at /mcp and a status page
// at /. MCP 2026-07-28 requests are served statelessly (go-sdk's streamable
// handler, list_changed through subscriptions/listen); older clients get
// sessions, with list_changed on their GET stream (revisions.go). Errors of the listener after start go to errc.
//
// One Server serves every client. To give each person a Server of their
// own, call ServeSpaces instead: ServeHTTP refuses opts.Spaces.
func (s *Server) ServeHTTP(opts HTTPOptions, errc chan<- error) (*HTTP, error) {
	if opts.Spaces != nil {
		if err := checkSpaces(opts); err != nil {
			return nil, err
		}
		return nil, errors.New("HTTPOptions.Spaces is served by mcpserver.ServeSpaces, not by one Server's ServeHTTP")
	}
	opts, tcp, loopback, err := listenHTTP(opts)
	if err != nil {
		return nil, err
	}
	status := newStatusHandler(s, opts, tcp.Addr().String())
	h, err := s.httpHandler(opts, tcp.Addr().String(), loopback, status)
	if err != nil {
		tcp.Close()
		return nil, err
	}
	hs := serveOn(tcp, h, opts, s.logger, errc)
	s.logger.Info("serving MCP over HTTP", "url", "http://"+hs.Addr()+"/mcp", "token", opts.Token != "", "oauth", opts.Auth != nil)
	status.start()
	return hs, nil
}

// listenHTTP checks opts, fills in their defaults, and listens on
// opts.Addr. It returns the options, the listener, and whether its address
// is loopback.
func listenHTTP(opts HTTPOptions) (HTTPOptions, net.Listener, bool, error) {
	addr, loopback, err := ListenAddr(opts.Addr)
	if err != nil {
		return opts, nil, false, err
	}
	if opts.Token != "" && opts.Auth != nil {
		return opts, nil, false, errors.New("--token and --oauth-issuer are both set: the HTTP endpoint takes either a static token or OAuth tokens; drop one")
	}
	if !loopback && opts.Token == "" && opts.Auth == nil {
		return opts, nil, false, fmt.Errorf("--http %s is not a loopback address: set --token (or WEBMCP_CDP_TOKEN) so that only your clients can call the browser's tools", addr)
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 4 << 20
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = DefaultReadTimeout
	}
	if opts.MaxConnsPerIP <= 0 {
		opts.MaxConnsPerIP = DefaultMaxConnsPerIP
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = 1024
	}
	opts.MaxConns = max(opts.MaxConns, opts.MaxConnsPerIP)
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return opts, nil, false, fmt.Errorf("listening on %s: %w", addr, err)
	}
	return opts, tcp, loopback, nil
}

// serveOn serves h on tcp, within the connection bounds of opts, until
// the returned HTTP is closed; errors of the listener go to errc.
func serveOn(tcp net.Listener, h http.Handler, opts HTTPOptions, logger *slog.Logger, errc chan<- error) *HTTP {
	ln := newConnLimiter(tcp, opts.MaxConnsPerIP, opts.MaxConns, logger)
	// Headers are bounded here, bodies by bodyDeadline, idle connections by
	// IdleTimeout. No WriteTimeout: it would cut event streams and long
	// tool calls. No ReadTimeout either: bodyDeadline does its work per
	// request with documented calls, and lifts the deadline once the body
	// is read (net/http's background read, which cancels the request's
	// context when a read fails, must then run without one).
	srv := &http.Server{
		Handler:           bodyDeadline(h, opts.ReadTimeout),
		ReadHeaderTimeout: opts.ReadTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("the HTTP endpoint stopped: %w", err)
		}
	}()
	return &HTTP{srv: srv, ln: ln}
}

func (s *Server) httpHandler(opts HTTPOptions, bound string, loopback bool, status http.Handler) (http.Handler, error) {
	return edgeHandler(opts, bound, loopback, s.logger, s.mcpHandler(opts), status)
}

// mcpHandler is the Server's MCP handler chain at /mcp, before the guards:
// the streamable handlers (stateful for older clients, stateless for MCP
// 2026-07-28), the fast path of calls, the Mcp-Param header check, and the
// splicing of tools/list pages.
func (s *Server) mcpHandler(opts HTTPOptions) http.Handler {
	getServer := func(*http.Request) *mcp.Server { return s.mcp }
	stateful := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Logger:              sdklog.Quiet(s.logger),
		MaxRequestBodyBytes: opts.MaxBodyBytes,
		SessionTimeout:      30 * time.Minute,
		// Stream events get ids and are kept (bounded) for resumption, so a
		// client whose SSE stream drops mid-call can resume it.
		EventStore: mcp.NewMemoryEventStore(nil),
	})
	// MCP 2026-07-28 and later: one request, one short-lived session
	// (revisions.go). A call ends when its client goes away.
	stateless := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Logger:                       sdklog.Quiet(s.logger),
		MaxRequestBodyBytes:          opts.MaxBodyBytes,
		Stateless:                    true,
		PropagateRequestCancellation: true,
	})
	// A call that cannot ask its client is answered without the SDK
	// (fast_http.go); the others have their Mcp-Param headers checked.
	newRevision := s.fastHTTPHandler(s.paramHeaderCheck(stateless, opts.MaxBodyBytes), opts.MaxBodyBytes)
	mcpHandler := revisionRouter(stateful, newRevision, opts.MaxBodyBytes)
	// tools/list pages go into the responses as rendered (fast_list.go).
	return s.tools.splicing(mcpHandler)
}

// edgeHandler puts the guards of opts (a static token, or OAuth mode)
// around the MCP handler h, the status page and opts.Metrics, serves them
// on one mux, and puts the origin guard in front.
func edgeHandler(opts HTTPOptions, bound string, loopback bool, logger *slog.Logger, h, status http.Handler) (http.Handler, error) {
	metrics := opts.Metrics
	if opts.Token != "" {
		verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
			if subtle.ConstantTimeCompare([]byte(token), []byte(opts.Token)) != 1 {
				return nil, fmt.Errorf("%w: wrong bearer token", auth.ErrInvalidToken)
			}
			return &auth.TokenInfo{UserID: "token-holder"}, nil
		}
		bearer := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
		h = bearer(h)
		if metrics != nil {
			metrics = bearer(metrics)
		}
	}
	// The status page guards itself: with a token it opens through a
	// one-time link and a cookie (status.go).
	mux := http.NewServeMux()
	if opts.Auth != nil {
		// OAuth mode (oauth.go): metadata, and a token with the scope each
		// request needs, for /mcp and the status page alike.
		if opts.Auth.PublicURL == "" {
			a := *opts.Auth
			a.PublicURL = "http://" + bound + "/mcp"
			opts.Auth = &a
		}
		e, err := newOAuthEdge(logger, opts)
		if err != nil {
			return nil, err
		}
		h, status = e.mcp(h), e.status(status)
		if metrics != nil {
			metrics = e.metrics(metrics)
		}
		e.mount(mux)
	}
	mux.Handle("/mcp", h)
	mux.Handle("GET /{$}", status)
	mux.Handle("GET "+sessionPath, status)
	if metrics != nil {
		mux.Handle("GET /metrics", metrics)
	}
	p, err := newSitePolicy(bound, loopback, opts.AllowedHosts)
	if err != nil {
		return nil, err
	}
	return originGuard(mux, p, loopback), nil
}

// bodyDeadline bounds the reading of each request body to d from the start
// of the handler: a client that trickles its body is cut off (its read
// fails, and the connection is closed). The deadline is lifted as soon as
// the body has been read to its end, so it never bounds the response: an
// event stream or a long tool call goes on. Requests without a body (the
// GET of an event stream) get none.
func bodyDeadline(next http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(d)); err == nil {
			r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the connection's read deadline once the body has been
// read to its end.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// connLimiter is a listener that bounds the connections open at once, per
// client address and in all. A connection over a bound gets a 503 and is
// closed at once, so a flood of connections costs little memory and the
// clients within the bounds go on.
type connLimiter struct {
	net.Listener
	perIP, total int
	logger       *slog.Logger

	mu       sync.Mutex
	byIP     map[string]int
	open     int
	refused  int       // since the last warning
	lastWarn time.Time // at most one warning every 10 s
}

func newConnLimiter(ln net.Listener, perIP, total int, logger *slog.Logger) *connLimiter {
	return &connLimiter{Listener: ln, perIP: perIP, total: total, logger: logger, byIP: make(map[string]int)}
}

// Accept returns the next connection within the bounds.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := c.RemoteAddr().String()
		if h, _, err := net.SplitHostPort(ip); err == nil {
			ip = h
		}
		if why := l.admit(ip); why != "" {
			refuse(c, why)
			continue
		}
		return &limitedConn{Conn: c, release: sync.OnceFunc(func() { l.release(ip) })}, nil
	}
}

// admit counts a new connection from ip, or says why it is over a bound.
func (l *connLimiter) admit(ip string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	why := ""
	switch {
	case l.byIP[ip] >= l.perIP:
		why = fmt.Sprintf("%s already has %d connections open, the most one address may have", ip, l.perIP)
	case l.open >= l.total:
		why = fmt.Sprintf("the server already has %d connections open, the most it takes", l.total)
	default:
		l.byIP[ip]++
		l.open++
		return ""
	}
	l.refused++
	if now := time.Now(); now.Sub(l.lastWarn) >= 10*time.Second {
		l.logger.Warn("refusing HTTP connections over the limit", "reason", why, "refused", l.refused)
		l.lastWarn, l.refused = now, 0
	}
	return why
}

func (l *connLimiter) release(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byIP[ip]--; l.byIP[ip] <= 0 {
		delete(l.byIP, ip)
	}
}

// refuse answers a connection over a bound with 503 and closes it. The
// write goes to the socket's empty send buffer; its deadline only guards.
func refuse(c net.Conn, why string) {
	body := "too many connections: " + why + "\n"
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nRetry-After: 1\r\n\r\n%s", len(body), body)
	c.Close()
}

// limitedConn gives its place back when it closes.
type limitedConn struct {
	net.Conn
	release func()
}

func (c *limitedConn) Close() error {
	c.release()
	return c.Conn.Close()
}
