package proxy

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// testSecret signs the tokens of the tests.
const testSecret = "0123456789abcdef0123456789abcdef-test-secret"

func testAuth(t testing.TB) *HS256 {
	t.Helper()
	a, err := NewHS256([]byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// harness is a proxy on a test HTTP server.
type harness struct {
	t    testing.TB
	srv  *Server
	http *httptest.Server
	auth *HS256
}

func newHarness(t testing.TB, mod func(*ServerOptions)) *harness {
	t.Helper()
	auth := testAuth(t)
	opts := ServerOptions{Auth: auth, Logger: quietLogger()}
	if mod != nil {
		mod(&opts)
	}
	srv, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		hs.Close()
	})
	return &harness{t: t, srv: srv, http: hs, auth: auth}
}

func (h *harness) url(path string) string {
	return "ws" + strings.TrimPrefix(h.http.URL, "http") + path
}

func (h *harness) token(user string) string {
	h.t.Helper()
	tok, err := h.auth.Issue(user, time.Hour)
	if err != nil {
		h.t.Fatal(err)
	}
	return tok
}

// raw is a bare WebSocket peer that sends and reads protocol messages as
// text, the way the seed writes them.
type raw struct {
	t      testing.TB
	ws     *websocket.Conn
	in     chan []byte
	err    error
	done   chan struct{}
	queued []*Message
}

// received is a parsed message with the text it came in.
func (h *harness) dial(path string) *raw {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, h.url(path), nil)
	if err != nil {
		h.t.Fatalf("dialing %s: %v", path, err)
	}
	ws.SetReadLimit(64 << 20)
	r := &raw{t: h.t, ws: ws, in: make(chan []byte, 256), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for {
			_, data, err := ws.Read(context.Background())
			if err != nil {
				r.err = err
				return
			}
			r.in <- data
		}
	}()
	h.t.Cleanup(func() { ws.CloseNow() })
	return r
}

func (r *raw) send(s string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.ws.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		r.t.Fatalf("writing %s: %v", s, err)
	}
}

// read returns the next message, parsed; it fails the test after 10 s.
func (r *raw) read() *Message {
	r.t.Helper()
	var data []byte
	select {
	case data = <-r.in:
	case <-r.done:
		// Messages read before the end come first.
		select {
		case data = <-r.in:
		default:
			r.t.Fatalf("the connection ended: %v", r.err)
		}
	case <-time.After(10 * time.Second):
		r.t.Fatal("no message within 10 s")
	}
	m, err := ParseMessage(data)
	if err != nil {
		r.t.Fatalf("received an invalid message %s: %v", data, err)
	}
	return m
}

// next returns the first message (queued or new) that matches.
func (r *raw) next(match func(*Message) bool) *Message {
	r.t.Helper()
	for i, m := range r.queued {
		if match(m) {
			r.queued = append(r.queued[:i:i], r.queued[i+1:]...)
			return m
		}
	}
	for {
		m := r.read()
		if match(m) {
			return m
		}
		r.queued = append(r.queued, m)
	}
}

// response returns the next response.
func (r *raw) response() *Message {
	r.t.Helper()
	return r.next(func(m *Message) bool { return m.Kind() == KindResponse })
}

// request returns the next request (what a browser receives).
func (r *raw) request() *Message {
	r.t.Helper()
	return r.next(func(m *Message) bool { return m.Kind() == KindRequest })
}

// notification returns the next notification of method.
func (r *raw) notification(method string) *Message {
	r.t.Helper()
	return r.next(func(m *Message) bool { return m.Kind() == KindNotification && m.Method == method })
}

// status returns the next status notification that counts peers clients.
func (r *raw) status(peers int) *Message {
	r.t.Helper()
	return r.next(func(m *Message) bool {
		if m.Kind() != KindNotification || m.Method != MethodStatus {
			return false
		}
		var p StatusParams
		return json.Unmarshal(m.Params, &p) == nil && p.PeerCount == peers && p.Connected
	})
}

// call sends a request and returns its response.
func (r *raw) call(s string) *Message {
	r.t.Helper()
	r.send(s)
	return r.response()
}

// closed waits for the connection to end and returns the close status.
func (r *raw) closed() (websocket.StatusCode, string) {
	r.t.Helper()
	for {
		select {
		case <-r.in:
			continue
		case <-r.done:
			code, reason, _ := CloseReason(r.err)
			return code, reason
		case <-time.After(10 * time.Second):
			r.t.Fatal("the connection stayed open")
			return 0, ""
		}
	}
}

// extension connects a browser of user that answers authenticate, and
// returns it with its extension id.
func (h *harness) extension(user, name string) (*raw, string) {
	h.t.Helper()
	e := h.dial("/extension")
	auth := e.request()
	if auth.Method != MethodAuthenticate || auth.IDKey() != "proxy:1" {
		h.t.Fatalf("first message %s %s, want authenticate proxy:1", auth.Method, auth.ID)
	}
	e.send(`{"jsonrpc":"2.0","id":"proxy:1","result":{"name":` + quote(name) + `,"accessToken":"` + h.token(user) + `"}}`)
	n := e.notification(MethodAuthenticated)
	var p AuthenticatedParams
	mustUnmarshal(h.t, n.Params, &p)
	if p.UserID != user || !strings.HasPrefix(p.ExtensionID, "ext-") {
		h.t.Fatalf("authenticated %+v", p)
	}
	return e, p.ExtensionID
}

// client connects an MCP client of user and completes the handshake.
func (h *harness) client(user string) *raw {
	h.t.Helper()
	c := h.dial("/mcp")
	res := c.call(`{"jsonrpc":"2.0","id":1,"method":"mcp_handshake","params":{"accessToken":"` + h.token(user) + `"}}`)
	if res.Error != nil {
		h.t.Fatalf("handshake: %v", res.Error)
	}
	return c
}

// connect connects a client to a browser and returns the connection id.
func connectTo(t testing.TB, c *raw, extID string) string {
	t.Helper()
	res := c.call(`{"jsonrpc":"2.0","id":"c","method":"connect","params":{"extension_id":"` + extID + `"}}`)
	if res.Error != nil {
		t.Fatalf("connect: %v", res.Error)
	}
	var cr ConnectResult
	mustUnmarshal(t, res.Result, &cr)
	return cr.ConnectionID
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func mustUnmarshal(t testing.TB, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
}

// wantError checks a response's error code and that its message says
// something.
func wantError(t testing.TB, m *Message, code int, says string) {
	t.Helper()
	if m.Error == nil {
		t.Fatalf("got result %s, want error %d", m.Result, code)
	}
	if m.Error.Code != code || !strings.Contains(m.Error.Message, says) {
		t.Fatalf("got error %d %q, want %d containing %q", m.Error.Code, m.Error.Message, code, says)
	}
}
