package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/coder/websocket"
	"golang.org/x/time/rate"
)

// The browser end of the proxy: /extension, authenticate, and the answers
// routed back to the clients that asked.

func (s *Server) serveExtension(w http.ResponseWriter, r *http.Request) {
	release, ok := s.admit(w, r)
	if !ok {
		return
	}
	defer release()
	p, err := s.accept(w, r, s.opts.MaxBrowserMessageBytes,
		fmt.Sprintf("answer authenticate first: messages before it may be at most %d bytes", s.opts.MaxHandshakeBytes))
	if err != nil {
		return
	}
	defer p.kill(websocket.StatusNormalClosure, "")
	// Once authenticated, its place among the unauthenticated is free and
	// its messages may be as big as a browser's, before it is told so: a
	// browser (or a second one) that acts on "authenticated" at once is
	// never refused for a place not yet given back.
	e, err := s.authenticateExtension(p, func() {
		release()
		p.setLimit(s.opts.MaxBrowserMessageBytes,
			fmt.Sprintf("message too big: a browser's messages may be at most %d bytes (relay --max-browser-message-bytes)", s.opts.MaxBrowserMessageBytes))
	})
	if errors.Is(err, errTooBig) || errors.Is(err, errTimedOut) {
		// Closed already, with the reason.
		s.log.Warn("relay: refused a browser", "remote", r.RemoteAddr, "err", err)
		return
	}
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

// authenticateExtension sends authenticate and checks the answer; admitted
// runs once the token is good, before the browser is told.
func (s *Server) authenticateExtension(p *peer, admitted func()) (*extConn, error) {
	const authID = ProxyIDPrefix + "1"
	p.send(EncodeRequest(stringID(authID), MethodAuthenticate, nil))
	// A deadline on the read itself would drop the connection without a
	// close frame; the timer closes it with the reason instead.
	var late atomic.Bool
	deadline := time.AfterFunc(s.opts.AuthTimeout, func() {
		late.Store(true)
		p.kill(websocket.StatusPolicyViolation, fmt.Sprintf("authentication failed: no answer to authenticate within %s", s.opts.AuthTimeout))
	})
	data, err := p.read(s.ctx)
	deadline.Stop()
	switch {
	case late.Load():
		return nil, fmt.Errorf("no answer to authenticate within %s: %w", s.opts.AuthTimeout, errTimedOut)
	case err != nil && errors.Is(err, errTooBig):
		return nil, err
	case err != nil:
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
	admitted()
	e := &extConn{
		peer:    p,
		id:      "ext-" + newUUID(),
		name:    res.Name,
		user:    id.User,
		limiter: rate.NewLimiter(rate.Limit(s.opts.BrowserRate), 50),
		links:   make(map[string]*link),
		pending: make(map[string]*pending),

		abandoned: make(map[string]struct{}),
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
	if !e.limiter.Allow() && !e.closing() {
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
	if !ok && msg.idString {
		if _, late := e.abandoned[msg.IDKey()]; late {
			delete(e.abandoned, msg.IDKey())
			s.log.Debug("relay: dropping a browser's late answer to a request its client no longer waits for", "extension", e.id, "id", msg.IDKey())
			return true
		}
	}
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

// maxAbandoned bounds the abandoned requests a browser's late answers are
// recognised for.
const maxAbandoned = 4096

// abandonLocked forgets a pending request that will not be answered to its
// client (the client left, disconnected, or waited too long), and remembers
// its id for a while: the browser's late answer to it is dropped quietly,
// not counted as a message that answers nothing.
func (s *Server) abandonLocked(p *pending) {
	s.unpendLocked(p)
	e := p.link.ext
	if _, ok := e.abandoned[p.mapped]; ok {
		return
	}
	if len(e.abandonedOrder) >= maxAbandoned {
		delete(e.abandoned, e.abandonedOrder[0])
		e.abandonedOrder = e.abandonedOrder[1:]
	}
	e.abandoned[p.mapped] = struct{}{}
	e.abandonedOrder = append(e.abandonedOrder, p.mapped)
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
