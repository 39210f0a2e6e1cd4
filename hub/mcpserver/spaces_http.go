package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/oauth"
)

// This file is the HTTP edge's spaces mode (issue 38): one endpoint, a
// Server per person. ServeSpaces listens as ServeHTTP does (the same
// connection bounds, body deadline, origin guard and OAuth guard); after
// the OAuth guard, each request to /mcp or the status page goes to the
// Server of its person's space (Spaces.Space), whose handlers are built at
// the space's first request and kept on that Server. A person's sessions,
// tools, tabs and status page are their space's alone; /metrics and the
// OAuth metadata are the endpoint's.

// ServeSpaces listens on opts.Addr and serves MCP at /mcp and a status
// page at / in spaces mode: each request goes, after the OAuth guard, to
// the Server of the person its token names (opts.Spaces). opts.Auth is
// required; opts.Token is refused, and opts.Browsers is not shown (the
// browsers are other people's). The status page shows a person their own
// space, and how many other spaces are open, never whose. logger gets the
// endpoint's log (default slog.Default()); errors of the listener after
// start go to errc. A space's Server is only ever asked for its handlers
// by this endpoint: to drop a space, close its Server's sessions
// (CloseSessions) and forget it.
func ServeSpaces(opts HTTPOptions, logger *slog.Logger, errc chan<- error) (*HTTP, error) {
	if opts.Spaces == nil {
		return nil, errors.New("ServeSpaces needs HTTPOptions.Spaces, the spaces to serve; for one Server, call its ServeHTTP")
	}
	if err := checkSpaces(opts); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	opts.Browsers = nil
	opts, tcp, loopback, err := listenHTTP(opts)
	if err != nil {
		return nil, err
	}
	e := &spacesEdge{opts: opts, bound: tcp.Addr().String(), logger: logger}
	h, err := edgeHandler(opts, e.bound, loopback, logger, http.HandlerFunc(e.serveMCP), http.HandlerFunc(e.serveStatus))
	if err != nil {
		tcp.Close()
		return nil, err
	}
	hs := serveOn(tcp, h, opts, logger, errc)
	logger.Info("serving MCP over HTTP, a space per person", "url", "http://"+hs.Addr()+"/mcp", "oauth", true, "spaces", opts.Spaces.Count())
	if link := statusLink(e.bound); opts.StatusLink != nil {
		opts.StatusLink(link)
	} else {
		logger.Info("status page", "url", link)
	}
	return hs, nil
}

// checkSpaces says why opts cannot serve a space per person: spaces need
// OAuth mode, where each request's token names its person.
func checkSpaces(opts HTTPOptions) error {
	if opts.Auth == nil {
		return errors.New("a space per person needs --oauth-issuer: only an OAuth token names the person a request comes from (a static --token is everyone's)")
	}
	return nil
}

// spacesEdge routes each request to its person's space.
type spacesEdge struct {
	opts   HTTPOptions
	bound  string
	logger *slog.Logger
}

// serveMCP serves a request to /mcp with its person's space's MCP handler.
// A request that keeps the space awake counts as in flight until answered
// (SpaceActivity).
func (e *spacesEdge) serveMCP(w http.ResponseWriter, r *http.Request) {
	s := e.space(w, r, true)
	if s == nil {
		return
	}
	h := s.spaceHandlers(e)
	if keepsAwake(r, e.opts.MaxBodyBytes) {
		h.begin()
		defer h.end()
	}
	h.mcp.ServeHTTP(w, r)
}

// keepsAwake says whether r keeps its space from closing for idleness
// while in flight: a POST, such as a long tool call or a first tools/list
// held until the start pages settle, unless it is only a
// subscriptions/listen, whose event stream stays open for as long as the
// client listens (a client that only listens is idle). A GET (the event
// stream before MCP 2026-07-28) or a DELETE does not. The body, read
// (bounded by max) and put back, was read by the OAuth guard already.
func keepsAwake(r *http.Request, max int64) bool {
	if r.Method != http.MethodPost {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	if err != nil {
		return true
	}
	msgs := peekMessages(body)
	for _, m := range msgs {
		var method string
		if unmarshalExact(m.Method, &method) != nil || method != "subscriptions/listen" {
			return true
		}
	}
	return len(msgs) == 0
}

// serveStatus serves the status page of the person's space.
func (e *spacesEdge) serveStatus(w http.ResponseWriter, r *http.Request) {
	if s := e.space(w, r, false); s != nil {
		s.spaceHandlers(e).status.ServeHTTP(w, r)
	}
}

// space returns the Server of the space of r's person, opening it if need
// be, or answers r and returns nil. rpc says whether a refusal is worded
// as a JSON-RPC error (for /mcp) or as text.
func (e *spacesEdge) space(w http.ResponseWriter, r *http.Request, rpc bool) *Server {
	p, err := personOf(oauth.PrincipalFrom(r.Context()))
	if err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return nil
	}
	s, err := e.opts.Spaces.Space(r.Context(), p)
	if err == nil && s == nil {
		err = errors.New("the space opened with no MCP server")
	}
	if err == nil {
		return s
	}
	var full *SpacesFullError
	switch {
	case errors.As(err, &full):
		secs := max(int(math.Ceil(full.RetryAfter.Seconds())), 1)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		e.logger.Warn("a newcomer gets no space: the hub holds its maximum of spaces (--max-spaces)", "max", full.Max, "retry_after_s", secs)
		unavailable(w, rpc, fmt.Sprintf("the hub holds its maximum of %d spaces, one per person, and cannot open one for you now: try again in %d s", full.Max, secs))
		return nil
	case r.Context().Err() != nil:
		e.logger.Debug("a client went away while its space opened", "err", err)
	default:
		e.logger.Error("could not open a person's space", "err", err)
	}
	unavailable(w, rpc, "the hub could not open your space: try again later")
	return nil
}

// unavailable answers 503 with msg: a JSON-RPC error (with no id, as for a
// request that could not be read) when rpc, else text.
func unavailable(w http.ResponseWriter, rpc bool, msg string) {
	if !rpc {
		http.Error(w, msg, http.StatusServiceUnavailable)
		return
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32000, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	w.Write(append(body, '\n'))
}

// spaceHandlers is a Server's HTTP handlers in spaces mode, built at its
// space's first request and dropped with it, and its requests in flight.
type spaceHandlers struct {
	once   sync.Once
	mcp    http.Handler
	status *statusHandler

	mu       sync.Mutex
	inFlight int       // requests that keep the space awake, in flight
	lastEnd  time.Time // when the last of them was answered
}

// begin and end bracket a request that keeps the space awake.
func (h *spaceHandlers) begin() {
	h.mu.Lock()
	h.inFlight++
	h.mu.Unlock()
}

func (h *spaceHandlers) end() {
	h.mu.Lock()
	h.inFlight--
	h.lastEnd = time.Now()
	h.mu.Unlock()
}

// SpaceActivity says, in spaces mode, whether a request that keeps s's
// space awake (see keepsAwake) is in flight, and when the last one was
// answered: a space is idle only with none in flight, counting from the
// later of its last request's arrival and lastEnd.
func (s *Server) SpaceActivity() (busy bool, lastEnd time.Time) {
	s.space.mu.Lock()
	defer s.space.mu.Unlock()
	return s.space.inFlight > 0, s.space.lastEnd
}

// spaceHandlers returns s's handlers in spaces mode, built once, by the
// first endpoint that asks.
func (s *Server) spaceHandlers(e *spacesEdge) *spaceHandlers {
	s.space.once.Do(func() {
		s.space.mcp = s.mcpHandler(e.opts)
		s.space.status = newStatusHandler(s, e.opts, e.bound)
		s.space.status.others = func() int { return max(e.opts.Spaces.Count()-1, 0) }
	})
	return &s.space
}

// CloseSessions ends the MCP sessions open on s (stdio's, and HTTP
// clients' before MCP 2026-07-28), as when s's space closes: their event
// streams end, and a client that comes back with its session id is told
// the session is gone (and starts a new one). It returns how many it
// closed.
func (s *Server) CloseSessions() int {
	n := 0
	for ss := range s.mcp.Sessions() {
		ss.Close()
		n++
	}
	return n
}

// Prefixes of Person.Subject.
const (
	clientPrefix  = "client:"
	subjectPrefix = "sub:"
)

// personOf is the person a principal is (see Person): its issuer and
// subject, or "client:" and its client id for a token with no subject. A
// subject that begins with "client:" or "sub:" gets "sub:" before it, so
// that no subject passes for a client, nor two principals for one person.
// A principal that names neither a subject nor a client is no one.
func personOf(p *oauth.Principal) (Person, error) {
	switch {
	case p == nil:
		return Person{}, errors.New("the request was let in without an OAuth token: the hub cannot tell whose space it is")
	case p.Subject != "":
		sub := p.Subject
		if strings.HasPrefix(sub, clientPrefix) || strings.HasPrefix(sub, subjectPrefix) {
			sub = subjectPrefix + sub
		}
		return Person{Issuer: p.Issuer, Subject: sub}, nil
	case p.ClientID != "":
		return Person{Issuer: p.Issuer, Subject: clientPrefix + p.ClientID}, nil
	}
	return Person{}, errors.New("the token names neither a subject (sub) nor a client (client_id), so the hub cannot tell whose space it is: ask the authorization server for tokens that carry a sub")
}

// otherSpaces counts, for the status page in spaces mode, the other
// people's spaces open now (0 in other modes).
func (h *statusHandler) otherSpaces() int {
	if h.others == nil {
		return 0
	}
	return h.others()
}
