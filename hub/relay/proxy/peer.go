package proxy

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
)

// WriteTimeout bounds one WebSocket write; a peer that takes longer is gone.
const WriteTimeout = 15 * time.Second

// frame is one queued write: a message, or the close that follows the
// messages queued before it.
type frame struct {
	data   []byte
	close  bool
	code   websocket.StatusCode
	reason string
}

// peer is one WebSocket connection with an outbound queue: senders never
// block (a peer that cannot keep up is dropped, so one slow peer never holds
// up the messages of another), and one goroutine writes.
type peer struct {
	ws   *websocket.Conn // nil in tests that drive the handlers directly
	out  chan frame
	gone chan struct{}
	once sync.Once

	// limit bounds one incoming message, and tooBig is the close reason
	// for a bigger one. Only the goroutine that reads touches them: the
	// limit grows when the peer authenticates, between two reads.
	limit  int64
	tooBig string
}

func newPeer(ws *websocket.Conn, queue int) *peer {
	return &peer{ws: ws, out: make(chan frame, queue), gone: make(chan struct{})}
}

// setLimit sets the largest message read from now on, and the close reason
// for a bigger one. Call it from the goroutine that reads.
func (p *peer) setLimit(limit int64, tooBig string) {
	p.limit, p.tooBig = limit, tooBig
}

// errTooBig is the error of a read that met a message over the limit.
var errTooBig = errors.New("message too big")

// errTimedOut is the error of a connection closed for not authenticating
// in time.
var errTimedOut = errors.New("timed out")

// tooBigGrace is how long the close frame has to go out after a message
// over the limit; the rest of that message is never read.
const tooBigGrace = time.Second

// read returns the next message. It never holds more than the limit (plus
// one byte) of it: a bigger message closes the connection (1009) with the
// reason set for the phase, without reading the rest.
func (p *peer) read(ctx context.Context) ([]byte, error) {
	_, r, err := p.ws.Reader(ctx)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(r, p.limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > p.limit {
		p.kill(websocket.StatusMessageTooBig, p.tooBig)
		// The close handshake would wait for the unread rest of the
		// message; the connection ends once the close frame is out.
		time.AfterFunc(tooBigGrace, func() { _ = p.ws.CloseNow() })
		return nil, fmt.Errorf("%s: %w", p.tooBig, errTooBig)
	}
	return data, nil
}

// closing reports whether the connection is being closed.
func (p *peer) closing() bool {
	select {
	case <-p.gone:
		return true
	default:
		return false
	}
}

// send queues a message. A peer whose queue is full is closed.
func (p *peer) send(data []byte) {
	select {
	case <-p.gone:
		return
	default:
	}
	select {
	case p.out <- frame{data: data}:
	default:
		p.kill(websocket.StatusPolicyViolation, "too slow: the outbound queue is full")
	}
}

// closeAfter closes the connection once the messages queued so far are
// written.
func (p *peer) closeAfter(code websocket.StatusCode, reason string) {
	select {
	case p.out <- frame{close: true, code: code, reason: reason}:
	default:
		p.kill(code, reason)
	}
}

// kill closes the connection now (with a close handshake, in the
// background) and stops the writer.
func (p *peer) kill(code websocket.StatusCode, reason string) {
	p.once.Do(func() {
		close(p.gone)
		if p.ws != nil {
			go p.ws.Close(code, closeReason(reason))
		}
	})
}

// writeLoop writes the queue until the peer is killed.
func (p *peer) writeLoop(ctx context.Context) {
	for {
		select {
		case <-p.gone:
			return
		case <-ctx.Done():
			p.kill(websocket.StatusGoingAway, "shutting down")
			return
		case f := <-p.out:
			if f.close {
				p.kill(f.code, f.reason)
				return
			}
			wctx, cancel := context.WithTimeout(ctx, WriteTimeout)
			err := p.ws.Write(wctx, websocket.MessageText, f.data)
			cancel()
			if err != nil {
				p.kill(websocket.StatusInternalError, "write failed")
				return
			}
		}
	}
}

// pingLoop pings every interval and kills a peer that does not answer
// within the interval: it catches connections that died without a close.
func (p *peer) pingLoop(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-p.gone:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			pctx, cancel := context.WithTimeout(ctx, interval)
			err := p.ws.Ping(pctx)
			cancel()
			if err != nil {
				p.kill(websocket.StatusGoingAway, "no answer to ping")
				return
			}
		}
	}
}

// closeReason fits a close reason into the 123 bytes a close frame allows.
func closeReason(s string) string {
	const limit = 123
	if len(s) <= limit {
		return s
	}
	s = s[:limit]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// CloseReason returns the status code and reason of the close that ended a
// WebSocket connection, when err is one; ok is false for other errors.
func CloseReason(err error) (code websocket.StatusCode, reason string, ok bool) {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return ce.Code, ce.Reason, true
	}
	return 0, "", false
}

// DialOptions configures the WebSocket connections the browser side and the
// client side open to a relay.
type DialOptions struct {
	// Insecure allows ws:// to a host that is not a loopback address (the
	// token then crosses the network in the clear).
	Insecure bool
	// HTTPClient is used for the handshake (for example to trust a private
	// CA); nil uses http.DefaultClient.
	HTTPClient *http.Client
	// MaxMessageBytes bounds one incoming message (default 64 MiB).
	MaxMessageBytes int64
}

// CheckURL checks a relay URL: ws:// or wss://, and ws:// only to a loopback
// host unless insecure is set.
func CheckURL(raw string, insecure bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("the relay URL %q: %w", raw, err)
	}
	switch u.Scheme {
	case "wss":
	case "ws":
		if !insecure && !IsLoopback(u.Hostname()) {
			return nil, fmt.Errorf("the relay URL %s uses ws:// to a host that is not this machine: use wss:// (TLS), or pass the insecure flag to send the token in the clear", raw)
		}
	default:
		return nil, fmt.Errorf("the relay URL %q must start with ws:// or wss://", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("the relay URL %q has no host", raw)
	}
	return u, nil
}

// IsLoopback reports whether host (a name or an address, without a port)
// is this machine: localhost, 127.0.0.0/8 or ::1.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// DialWebSocket opens a WebSocket to a relay (the ends of the protocol use it).
func DialWebSocket(ctx context.Context, raw string, opts DialOptions) (*websocket.Conn, error) {
	if _, err := CheckURL(raw, opts.Insecure); err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(dctx, raw, &websocket.DialOptions{HTTPClient: opts.HTTPClient})
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("connecting to the relay at %s: %w", raw, err)
	}
	limit := opts.MaxMessageBytes
	if limit <= 0 {
		limit = 64 << 20
	}
	ws.SetReadLimit(limit)
	return ws, nil
}
