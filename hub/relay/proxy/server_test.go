package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"
)

// TestExtensionAuthentication follows the seed's section 1: the browser
// connects and waits, the proxy asks with id "proxy:1", the browser answers
// with name and token, the proxy confirms with authenticated (and a status).
func TestExtensionAuthentication(t *testing.T) {
	h := newHarness(t, nil)
	e := h.dial("/extension")
	first := e.read()
	if first.Kind() != KindRequest || string(first.ID) != `"proxy:1"` || first.Method != "authenticate" || string(first.Params) != `{}` {
		t.Fatalf("first message: kind %d id %s method %s params %s", first.Kind(), first.ID, first.Method, first.Params)
	}
	e.send(`{"jsonrpc":"2.0","id":"proxy:1","result":{"name":"Chrome 141","accessToken":"` + h.token("83898119-db4f") + `"}}`)
	n := e.read()
	if n.Kind() != KindNotification || n.Method != MethodAuthenticated || n.ID != nil {
		t.Fatalf("second message: %s %s", n.Method, n.ID)
	}
	var p AuthenticatedParams
	mustUnmarshal(t, n.Params, &p)
	if p.UserID != "83898119-db4f" || !strings.HasPrefix(p.ExtensionID, "ext-") || len(p.ExtensionID) != len("ext-")+36 {
		t.Fatalf("authenticated %+v", p)
	}
	st := e.notification(MethodStatus)
	var sp StatusParams
	mustUnmarshal(t, st.Params, &sp)
	if !sp.Connected || sp.PeerCount != 0 {
		t.Fatalf("status %+v", sp)
	}
	if _, err := time.Parse(StatusTimeLayout, sp.Timestamp); err != nil {
		t.Fatalf("timestamp %q: %v", sp.Timestamp, err)
	}
}

// TestExtensionRefused: an invalid token (or answer) closes the connection.
func TestExtensionRefused(t *testing.T) {
	auth := testAuth(t)
	expired := sign(t, []byte(testSecret), jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice", "exp": time.Now().Add(-time.Minute).Unix()})
	forged := sign(t, []byte(strings.Repeat("z", 40)), jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice", "exp": time.Now().Add(time.Hour).Unix()})
	good, _ := auth.Issue("alice", time.Hour)
	tests := []struct {
		name, answer, why string
	}{
		{"forged token", `{"jsonrpc":"2.0","id":"proxy:1","result":{"name":"B","accessToken":"` + forged + `"}}`, "signature"},
		{"expired token", `{"jsonrpc":"2.0","id":"proxy:1","result":{"name":"B","accessToken":"` + expired + `"}}`, "expired"},
		{"no token", `{"jsonrpc":"2.0","id":"proxy:1","result":{"name":"B"}}`, "accessToken"},
		{"no name", `{"jsonrpc":"2.0","id":"proxy:1","result":{"accessToken":"` + good + `"}}`, "name"},
		{"error answer", `{"jsonrpc":"2.0","id":"proxy:1","error":{"code":-32000,"message":"no"}}`, "error"},
		{"wrong id", `{"jsonrpc":"2.0","id":"proxy:2","result":{"name":"B","accessToken":"` + good + `"}}`, "first"},
		{"handshake instead", `{"jsonrpc":"2.0","id":1,"method":"handshake","params":{}}`, "first"},
		{"not JSON", `hello`, "not valid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			e := h.dial("/extension")
			e.request()
			e.send(tt.answer)
			code, reason := e.closed()
			if code != websocket.StatusPolicyViolation || !strings.Contains(reason, tt.why) {
				t.Fatalf("closed with %v %q, want policy violation saying %q", code, reason, tt.why)
			}
			if st := h.srv.Stats(); st.Browsers != 0 {
				t.Fatalf("a refused browser is listed: %+v", st)
			}
		})
	}
}

// TestExtensionAuthTimeout: a browser that does not answer authenticate in
// time is closed with a reason that says so (before, the read's deadline
// dropped the connection without a close frame).
func TestExtensionAuthTimeout(t *testing.T) {
	h := newHarness(t, func(o *ServerOptions) { o.AuthTimeout = 100 * time.Millisecond })
	e := h.dial("/extension")
	e.request()
	if code, reason := e.closed(); code != websocket.StatusPolicyViolation || !strings.Contains(reason, "no answer to authenticate within 100ms") {
		t.Fatalf("closed with %v %q", code, reason)
	}
}

// TestHandshake follows the seed's section 2 and the errors of
// mcp_handshake.
func TestHandshake(t *testing.T) {
	h := newHarness(t, nil)
	c := h.dial("/mcp")
	res := c.call(`{"jsonrpc":"2.0","id":1,"method":"mcp_handshake","params":{"accessToken":"` + h.token("83898119") + `"}}`)
	if string(res.ID) != "1" || res.Error != nil {
		t.Fatalf("handshake answer %s %v", res.ID, res.Error)
	}
	var hr HandshakeResult
	mustUnmarshal(t, res.Result, &hr)
	if !hr.Authenticated || hr.UserID != "83898119" || !strings.HasPrefix(hr.MCPClientID, "mcp-") {
		t.Fatalf("handshake result %+v", hr)
	}
	wantError(t, c.call(`{"jsonrpc":"2.0","id":2,"method":"mcp_handshake","params":{"accessToken":"`+h.token("x")+`"}}`), CodeServerError, "Already authenticated")
}

func TestHandshakeRefused(t *testing.T) {
	forged := sign(t, []byte(strings.Repeat("z", 40)), jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice", "exp": time.Now().Add(time.Hour).Unix()})
	expired := sign(t, []byte(testSecret), jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice", "exp": time.Now().Add(-time.Second).Unix()})
	tests := []struct {
		name, token, why string
	}{
		{"forged", forged, "signature"},
		{"expired", expired, "expired"},
		{"garbage", "eyJhbGci...", "not a JWT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			c := h.dial("/mcp")
			res := c.call(`{"jsonrpc":"2.0","id":1,"method":"mcp_handshake","params":{"accessToken":"` + tt.token + `"}}`)
			wantError(t, res, CodeServerError, "Authentication failed: ")
			if !strings.Contains(res.Error.Message, tt.why) {
				t.Errorf("message %q does not say %q", res.Error.Message, tt.why)
			}
			if code, _ := c.closed(); code != websocket.StatusPolicyViolation {
				t.Fatalf("closed with %v, want policy violation", code)
			}
		})
	}
}

// TestBeforeHandshake: nothing but mcp_handshake works until it succeeds;
// a missing token is an invalid-params error that leaves the socket open.
func TestBeforeHandshake(t *testing.T) {
	h := newHarness(t, nil)
	c := h.dial("/mcp")
	wantError(t, c.call(`{"jsonrpc":"2.0","id":1,"method":"list_extensions","params":{}}`), CodeServerError, "Not authenticated")
	wantError(t, c.call(`{"jsonrpc":"2.0","id":2,"method":"createTab","params":{}}`), CodeServerError, "Not authenticated")
	wantError(t, c.call(`{"jsonrpc":"2.0","id":3,"method":"mcp_handshake","params":{}}`), CodeInvalidParams, "accessToken")
	res := c.call(`{"jsonrpc":"2.0","id":4,"method":"mcp_handshake","params":{"accessToken":"` + h.token("u") + `"}}`)
	if res.Error != nil {
		t.Fatal(res.Error)
	}
}

func TestHandshakeTimeout(t *testing.T) {
	h := newHarness(t, func(o *ServerOptions) { o.AuthTimeout = 100 * time.Millisecond })
	c := h.dial("/mcp")
	if code, _ := c.closed(); code != websocket.StatusPolicyViolation {
		t.Fatalf("closed with %v", code)
	}
}

// TestListExtensionsIsolation: each user sees only their own browsers.
func TestListExtensionsIsolation(t *testing.T) {
	h := newHarness(t, nil)
	_, a1 := h.extension("alice", "Chrome 141")
	_, a2 := h.extension("alice", "Chrome 140")
	_, b1 := h.extension("bob", "Bob's Chrome")
	tests := []struct {
		user string
		want []ExtensionInfo
	}{
		{"alice", []ExtensionInfo{{ID: a2, Name: "Chrome 140", Connected: true}, {ID: a1, Name: "Chrome 141", Connected: true}}},
		{"bob", []ExtensionInfo{{ID: b1, Name: "Bob's Chrome", Connected: true}}},
		{"carol", []ExtensionInfo{}},
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			c := h.client(tt.user)
			res := c.call(`{"jsonrpc":"2.0","id":2,"method":"list_extensions","params":{}}`)
			if tt.user == "carol" && string(res.Result) != `{"extensions":[]}` {
				t.Fatalf("an empty list is %s, want an empty array", res.Result)
			}
			var got ListExtensionsResult
			mustUnmarshal(t, res.Result, &got)
			if len(got.Extensions) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got.Extensions, tt.want)
			}
			for i := range tt.want {
				if got.Extensions[i] != tt.want[i] {
					t.Fatalf("got %+v, want %+v", got.Extensions, tt.want)
				}
			}
		})
	}
}

// TestConnect covers connect's answers: success, already connected
// (-32001), unknown and foreign browsers (-32000, the same message), bad
// params (-32602).
func TestConnect(t *testing.T) {
	h := newHarness(t, nil)
	_, alices := h.extension("alice", "Chrome 141")
	_, bobs := h.extension("bob", "Bob's Chrome")
	c := h.client("alice")
	res := c.call(`{"jsonrpc":"2.0","id":3,"method":"connect","params":{"extension_id":"` + alices + `"}}`)
	var cr ConnectResult
	mustUnmarshal(t, res.Result, &cr)
	if !strings.HasPrefix(cr.ConnectionID, "conn-") || cr.ExtensionID != alices || cr.ExtensionName != "Chrome 141" {
		t.Fatalf("connect result %+v", cr)
	}
	wantError(t, c.call(`{"jsonrpc":"2.0","id":4,"method":"connect","params":{"extension_id":"`+alices+`"}}`), CodeAlreadyConnected, "MCP client already connected to an extension")

	other := h.client("alice")
	tests := []struct {
		name, params string
		code         int
		says         string
	}{
		{"unknown", `{"extension_id":"ext-nope"}`, CodeServerError, "Extension not found or not accessible"},
		{"another user's", `{"extension_id":"` + bobs + `"}`, CodeServerError, "Extension not found or not accessible"},
		{"no params", `{}`, CodeInvalidParams, "extension_id"},
		{"wrong type", `{"extension_id":7}`, CodeInvalidParams, "extension_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, other.call(`{"jsonrpc":"2.0","id":5,"method":"connect","params":`+tt.params+`}`), tt.code, tt.says)
		})
	}
}

// TestDisconnectIdempotent: disconnect always answers {disconnected:true},
// keeps the socket, and allows a new connect.
func TestDisconnectIdempotent(t *testing.T) {
	h := newHarness(t, nil)
	_, ext := h.extension("alice", "Chrome")
	c := h.client("alice")
	for i := 0; i < 2; i++ {
		res := c.call(`{"jsonrpc":"2.0","id":4,"method":"disconnect","params":{}}`)
		if string(res.Result) != `{"disconnected":true}` {
			t.Fatalf("disconnect %s", res.Result)
		}
	}
	connectTo(t, c, ext)
	if res := c.call(`{"jsonrpc":"2.0","id":4,"method":"disconnect","params":{}}`); string(res.Result) != `{"disconnected":true}` {
		t.Fatalf("disconnect %s", res.Result)
	}
	wantError(t, c.call(`{"jsonrpc":"2.0","id":5,"method":"getTabs","params":{}}`), CodeServerError, "Not connected")
	connectTo(t, c, ext)
	if st := h.srv.Stats(); st.Connections != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestForwardingMapsIDs: two clients on one browser use the same id; the
// browser sees "conn-A:1" and "conn-B:1" without connectionId, and each
// client gets its own answer back under id 1, even when the answers come in
// the other order.
func TestForwardingMapsIDs(t *testing.T) {
	h := newHarness(t, nil)
	ext, extID := h.extension("alice", "Chrome 141")
	a, b := h.client("alice"), h.client("alice")
	connA, connB := connectTo(t, a, extID), connectTo(t, b, extID)

	a.send(`{"jsonrpc":"2.0","id":1,"method":"navigate","params":{"url":"https://a.example"},"connectionId":"` + connA + `"}`)
	fa := ext.request()
	b.send(`{"jsonrpc":"2.0","id":1,"method":"click","params":{"selector":"#b"}}`)
	fb := ext.request()
	if string(fa.ID) != `"`+connA+`:1"` || fa.Method != "navigate" || string(fa.Params) != `{"url":"https://a.example"}` || fa.ConnectionID != "" {
		t.Fatalf("browser got %s %s %s connectionId=%q", fa.ID, fa.Method, fa.Params, fa.ConnectionID)
	}
	if string(fb.ID) != `"`+connB+`:1"` || fb.Method != "click" {
		t.Fatalf("browser got %s %s", fb.ID, fb.Method)
	}
	ext.send(`{"jsonrpc":"2.0","id":"` + connB + `:1","result":{"clicked":"b"}}`)
	ext.send(`{"jsonrpc":"2.0","id":"` + connA + `:1","result":{"tabId":42,"url":"https://a.example"}}`)
	ra, rb := a.response(), b.response()
	if string(ra.ID) != "1" || string(ra.Result) != `{"tabId":42,"url":"https://a.example"}` {
		t.Fatalf("client A got %s %s", ra.ID, ra.Result)
	}
	if string(rb.ID) != "1" || string(rb.Result) != `{"clicked":"b"}` {
		t.Fatalf("client B got %s %s", rb.ID, rb.Result)
	}
	if st := h.srv.Stats(); st.Pending != 0 {
		t.Fatalf("requests still pending after their answers: %+v", st)
	}
}

// TestUnmapping: the client's id comes back with its JSON type (a UUID
// string stays a string, 1 stays a number), and errors are forwarded as the
// browser wrote them.
func TestUnmapping(t *testing.T) {
	h := newHarness(t, nil)
	ext, extID := h.extension("alice", "Chrome")
	c := h.client("alice")
	conn := connectTo(t, c, extID)
	tests := []struct {
		name, id, answer, wantResult string
		wantErr                      *Error
	}{
		{name: "uuid", id: `"550e8400-e29b-41d4-a716-446655440000"`, answer: `"result":{"ok":true}`, wantResult: `{"ok":true}`},
		{name: "number", id: `7`, answer: `"result":{}`, wantResult: `{}`},
		{name: "error", id: `100`, answer: `"error":{"code":-32000,"message":"Tab creation failed: Permission denied"}`,
			wantErr: &Error{Code: -32000, Message: "Tab creation failed: Permission denied"}},
		{name: "a colon in the id", id: `"a:b"`, answer: `"result":[1]`, wantResult: `[1]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.send(`{"jsonrpc":"2.0","id":` + tt.id + `,"method":"createTab","params":{"url":"https://example.com"}}`)
			req := ext.request()
			var orig json.RawMessage = json.RawMessage(tt.id)
			var key string
			if err := json.Unmarshal(orig, &key); err != nil {
				key = tt.id
			}
			if req.IDKey() != conn+":"+key {
				t.Fatalf("browser got id %q, want %q", req.IDKey(), conn+":"+key)
			}
			ext.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,` + tt.answer + `}`)
			res := c.response()
			if string(res.ID) != tt.id {
				t.Fatalf("client got id %s, want %s", res.ID, tt.id)
			}
			if tt.wantErr != nil {
				if res.Error == nil || res.Error.Code != tt.wantErr.Code || res.Error.Message != tt.wantErr.Message {
					t.Fatalf("client got error %+v, want %+v", res.Error, tt.wantErr)
				}
				return
			}
			if string(res.Result) != tt.wantResult {
				t.Fatalf("client got result %s, want %s", res.Result, tt.wantResult)
			}
		})
	}
}

// TestMalformedBrowserAnswer: an answer without result or error reaches the
// client as an internal error, not as silence.
func TestMalformedBrowserAnswer(t *testing.T) {
	h := newHarness(t, nil)
	ext, extID := h.extension("alice", "Chrome")
	c := h.client("alice")
	connectTo(t, c, extID)
	c.send(`{"jsonrpc":"2.0","id":9,"method":"getTabs","params":{}}`)
	req := ext.request()
	ext.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `}`)
	res := c.response()
	if string(res.ID) != "9" {
		t.Fatalf("id %s", res.ID)
	}
	wantError(t, res, CodeInternalError, "malformed")
}

// TestClientErrors: the seed's error codes, as a client sees them.
func TestClientErrors(t *testing.T) {
	h := newHarness(t, nil)
	ext, extID := h.extension("alice", "Chrome")
	c := h.client("alice")
	conn := connectTo(t, c, extID)
	tests := []struct {
		name, send string
		id         string
		code       int
		says       string
	}{
		{"parse error", `{"jsonrpc":"2.0","id":1,`, "null", CodeParseError, "Parse error"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"getTabs"}]`, "null", CodeInvalidRequest, "batches"},
		{"no jsonrpc", `{"id":2,"method":"getTabs"}`, "2", CodeInvalidRequest, "jsonrpc"},
		{"no method", `{"jsonrpc":"2.0","id":3}`, "3", CodeInvalidRequest, "result"},
		{"proxy prefix", `{"jsonrpc":"2.0","id":"proxy:1","method":"getTabs"}`, `"proxy:1"`, CodeInvalidRequest, "reserved"},
		{"ext prefix", `{"jsonrpc":"2.0","id":"ext:1","method":"getTabs"}`, `"ext:1"`, CodeInvalidRequest, "reserved"},
		{"escaped proxy prefix", `{"jsonrpc":"2.0","id":"\u0070roxy:auth","method":"getTabs"}`, `"\u0070roxy:auth"`, CodeInvalidRequest, "reserved"},
		{"reserved prefix on a control method", `{"jsonrpc":"2.0","id":"proxy:2","method":"list_extensions"}`, `"proxy:2"`, CodeInvalidRequest, "reserved"},
		{"authenticate from a client", `{"jsonrpc":"2.0","id":5,"method":"authenticate","params":{}}`, "5", CodeMethodNotFound, "sent by the proxy"},
		{"foreign connectionId", `{"jsonrpc":"2.0","id":6,"method":"getTabs","connectionId":"conn-other"}`, "6", CodeServerError, "connectionId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := c.call(tt.send)
			if string(res.ID) != tt.id {
				t.Fatalf("id %s, want %s", res.ID, tt.id)
			}
			wantError(t, res, tt.code, tt.says)
		})
	}
	// None of them reached the browser: the next request it sees is this one.
	c.send(`{"jsonrpc":"2.0","id":99,"method":"getTabs","params":{}}`)
	if req := ext.request(); req.IDKey() != conn+":99" {
		t.Fatalf("the browser got %s first", req.ID)
	}
}

// TestDuplicateInFlight: 1 and "1" from one client map to the same id; the
// second is refused while the first waits.
func TestDuplicateInFlight(t *testing.T) {
	h := newHarness(t, nil)
	ext, extID := h.extension("alice", "Chrome")
	c := h.client("alice")
	connectTo(t, c, extID)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"getTabs"}`)
	req := ext.request()
	wantError(t, c.call(`{"jsonrpc":"2.0","id":"1","method":"getTabs"}`), CodeInvalidRequest, "already in flight")
	ext.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{}}`)
	if res := c.response(); string(res.ID) != "1" {
		t.Fatalf("id %s", res.ID)
	}
	// Once answered, the id may be used again.
	c.send(`{"jsonrpc":"2.0","id":1,"method":"getTabs"}`)
	ext.request()
}

// TestNotifications: status goes to the browser and its clients when a
// client connects or leaves.
func TestNotifications(t *testing.T) {
	h := newHarness(t, nil)
	ext, extID := h.extension("alice", "Chrome")
	ext.notification(MethodStatus) // the one after authenticated
	a := h.client("alice")
	connectTo(t, a, extID)
	wantStatus(t, ext.notification(MethodStatus), 1)
	wantStatus(t, a.notification(MethodStatus), 1)
	b := h.client("alice")
	connectTo(t, b, extID)
	wantStatus(t, ext.notification(MethodStatus), 2)
	wantStatus(t, a.notification(MethodStatus), 2)
	wantStatus(t, b.notification(MethodStatus), 2)
	b.call(`{"jsonrpc":"2.0","id":9,"method":"disconnect"}`)
	wantStatus(t, ext.notification(MethodStatus), 1)
	wantStatus(t, a.notification(MethodStatus), 1)
}

func wantStatus(t *testing.T, m *Message, peers int) {
	t.Helper()
	var p StatusParams
	mustUnmarshal(t, m.Params, &p)
	if !p.Connected || p.PeerCount != peers {
		t.Fatalf("status %+v, want %d peers", p, peers)
	}
}

// TestBrowserGoesAway: each connected client gets disconnected with its
// connection id, and its requests in flight fail at once (the request
// timeout here is an hour).
func TestBrowserGoesAway(t *testing.T) {
	h := newHarness(t, func(o *ServerOptions) { o.RequestTimeout = time.Hour })
	ext, extID := h.extension("alice", "Chrome 141")
	a, b := h.client("alice"), h.client("alice")
	connA, connB := connectTo(t, a, extID), connectTo(t, b, extID)
	a.send(`{"jsonrpc":"2.0","id":1,"method":"screenshot","params":{}}`)
	ext.request()
	ext.ws.CloseNow()

	for _, c := range []struct {
		r    *raw
		conn string
	}{{a, connA}, {b, connB}} {
		n := c.r.notification(MethodDisconnected)
		var p DisconnectedParams
		mustUnmarshal(t, n.Params, &p)
		if p.ConnectionID != c.conn || !strings.HasPrefix(p.Reason, "Extension closed") {
			t.Fatalf("disconnected %+v, want connection %s", p, c.conn)
		}
	}
	res := a.response()
	if string(res.ID) != "1" {
		t.Fatalf("id %s", res.ID)
	}
	wantError(t, res, CodeServerError, "disconnected before answering")
	// The clients stay authenticated and can list (and see no browser).
	if res := b.call(`{"jsonrpc":"2.0","id":2,"method":"list_extensions"}`); string(res.Result) != `{"extensions":[]}` {
		t.Fatalf("list after the browser left: %s", res.Result)
	}
	wantError(t, b.call(`{"jsonrpc":"2.0","id":3,"method":"getTabs"}`), CodeServerError, "Not connected")
}

// TestClientGoesAway: a client that leaves takes only its own requests with
// it; another client's request on the same browser is answered.
func TestClientGoesAway(t *testing.T) {
	h := newHarness(t, nil)
	ext, extID := h.extension("alice", "Chrome")
	a, b := h.client("alice"), h.client("alice")
	connectTo(t, a, extID)
	connectTo(t, b, extID)
	a.send(`{"jsonrpc":"2.0","id":1,"method":"getTabs"}`)
	ra := ext.request()
	b.send(`{"jsonrpc":"2.0","id":1,"method":"getTabs"}`)
	rb := ext.request()
	a.ws.Close(websocket.StatusNormalClosure, "")
	// The statuses come in order: 1 and 2 for the connects, 1 when a's
	// connection is gone.
	ext.status(1)
	ext.status(2)
	ext.status(1)
	ext.send(`{"jsonrpc":"2.0","id":` + string(ra.ID) + `,"result":{"late":true}}`)
	ext.send(`{"jsonrpc":"2.0","id":` + string(rb.ID) + `,"result":{"for":"b"}}`)
	if res := b.response(); string(res.Result) != `{"for":"b"}` {
		t.Fatalf("b got %s", res.Result)
	}
	if st := h.srv.Stats(); st.Pending != 0 || st.Connections != 1 || st.Clients != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestDisconnectFailsOwnRequests: disconnect answers the client's requests
// in flight at once, and the browser's late answers are dropped.
func TestDisconnectFailsOwnRequests(t *testing.T) {
	h := newHarness(t, nil)
	ext, extID := h.extension("alice", "Chrome")
	c := h.client("alice")
	connectTo(t, c, extID)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"getTabs"}`)
	req := ext.request()
	c.send(`{"jsonrpc":"2.0","id":2,"method":"disconnect"}`)
	first, second := c.response(), c.response()
	if string(first.ID) != "1" || first.Error == nil || string(second.ID) != "2" || string(second.Result) != `{"disconnected":true}` {
		t.Fatalf("got %s %v then %s %s", first.ID, first.Error, second.ID, second.Result)
	}
	ext.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{}}`)
	// The late answer was dropped: the next message is the answer to this.
	if res := c.call(`{"jsonrpc":"2.0","id":3,"method":"list_extensions"}`); string(res.ID) != "3" {
		t.Fatalf("got %s", res.ID)
	}
}

func TestBrowserRequestsRefused(t *testing.T) {
	h := newHarness(t, nil)
	ext, _ := h.extension("alice", "Chrome")
	res := ext.call(`{"jsonrpc":"2.0","id":"ext:1","method":"getTabs","params":{}}`)
	if string(res.ID) != `"ext:1"` {
		t.Fatalf("id %s", res.ID)
	}
	wantError(t, res, CodeMethodNotFound, "only answers")
}

func TestBrowserFlood(t *testing.T) {
	h := newHarness(t, func(o *ServerOptions) { o.BrowserRate = 1 })
	ext, _ := h.extension("alice", "Chrome")
	for i := 0; i < 60; i++ {
		// Writes start failing once the proxy has closed the connection.
		_ = ext.ws.Write(context.Background(), websocket.MessageText, []byte(`{"jsonrpc":"2.0","method":"noise"}`))
	}
	if code, _ := ext.closed(); code != websocket.StatusPolicyViolation {
		t.Fatalf("closed with %v", code)
	}
}

// TestLimits: rate limit, requests in flight, message size, request
// timeout.
func TestLimits(t *testing.T) {
	t.Run("rate", func(t *testing.T) {
		h := newHarness(t, func(o *ServerOptions) { o.ClientRate, o.ClientBurst = 0.001, 3 })
		c := h.client("alice") // one message of the burst
		c.call(`{"jsonrpc":"2.0","id":2,"method":"list_extensions"}`)
		c.call(`{"jsonrpc":"2.0","id":3,"method":"list_extensions"}`)
		wantError(t, c.call(`{"jsonrpc":"2.0","id":4,"method":"list_extensions"}`), CodeServerError, "Rate limit")
	})
	t.Run("in flight", func(t *testing.T) {
		h := newHarness(t, func(o *ServerOptions) { o.MaxInflight = 2 })
		ext, extID := h.extension("alice", "Chrome")
		c := h.client("alice")
		connectTo(t, c, extID)
		c.send(`{"jsonrpc":"2.0","id":1,"method":"getTabs"}`)
		c.send(`{"jsonrpc":"2.0","id":2,"method":"getTabs"}`)
		ext.request()
		ext.request()
		wantError(t, c.call(`{"jsonrpc":"2.0","id":3,"method":"getTabs"}`), CodeServerError, "in flight")
	})
	t.Run("message size", func(t *testing.T) {
		h := newHarness(t, func(o *ServerOptions) { o.MaxClientMessageBytes = 1024 })
		c := h.client("alice")
		c.send(`{"jsonrpc":"2.0","id":2,"method":"list_extensions","params":{"pad":"` + strings.Repeat("x", 2048) + `"}}`)
		if code, _ := c.closed(); code != websocket.StatusMessageTooBig {
			t.Fatalf("closed with %v, want message too big", code)
		}
	})
	t.Run("request timeout", func(t *testing.T) {
		h := newHarness(t, func(o *ServerOptions) { o.RequestTimeout = 50 * time.Millisecond })
		ext, extID := h.extension("alice", "Chrome")
		c := h.client("alice")
		connectTo(t, c, extID)
		res := c.call(`{"jsonrpc":"2.0","id":1,"method":"getTabs"}`)
		wantError(t, res, CodeServerError, "did not answer")
		req := ext.request()
		ext.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{}}`) // late: dropped
		if st := h.srv.Stats(); st.Pending != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// TestTokenExpiryCloses: a connection ends when its token expires.
//
// The token lives 3 s: its exp is in whole seconds, so it expires 2 to 3 s
// after it is issued, and the dial and handshake, which must succeed
// first, have at least 2 s on a loaded machine (1.5 s left as little as
// half a second).
func TestTokenExpiryCloses(t *testing.T) {
	h := newHarness(t, nil)
	tok, err := h.auth.Issue("alice", 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c := h.dial("/mcp")
	if res := c.call(`{"jsonrpc":"2.0","id":1,"method":"mcp_handshake","params":{"accessToken":"` + tok + `"}}`); res.Error != nil {
		t.Fatal(res.Error)
	}
	code, reason := c.closed()
	if code != websocket.StatusPolicyViolation || !strings.Contains(reason, "expired") {
		t.Fatalf("closed with %v %q", code, reason)
	}
}

func TestUnknownPath(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	if _, _, err := websocket.Dial(ctx, h.url("/other"), nil); err == nil {
		t.Fatal("dialed an unknown path")
	}
}

// TestPreAuthMessageLimit (issue 15, point 4): until a connection has
// authenticated its messages may be MaxHandshakeBytes at most; a bigger one
// closes it (1009) with a reason that says to authenticate first. After
// authenticating, the endpoint's own limit applies.
func TestPreAuthMessageLimit(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":"proxy:1","result":{"name":"B","accessToken":"` + strings.Repeat("x", 5000) + `"}}`
	h := newHarness(t, func(o *ServerOptions) { o.MaxHandshakeBytes = 4096 })
	t.Run("browser before authenticate", func(t *testing.T) {
		e := h.dial("/extension")
		e.request()
		e.send(big)
		if code, reason := e.closed(); code != websocket.StatusMessageTooBig || !strings.Contains(reason, "answer authenticate first") || !strings.Contains(reason, "4096") {
			t.Fatalf("closed with %v %q", code, reason)
		}
	})
	t.Run("client before mcp_handshake", func(t *testing.T) {
		c := h.dial("/mcp")
		c.send(`{"jsonrpc":"2.0","id":1,"method":"mcp_handshake","params":{"accessToken":"` + strings.Repeat("x", 5000) + `"}}`)
		if code, reason := c.closed(); code != websocket.StatusMessageTooBig || !strings.Contains(reason, "send mcp_handshake first") {
			t.Fatalf("closed with %v %q", code, reason)
		}
	})
	t.Run("after authenticating", func(t *testing.T) {
		ext, extID := h.extension("alice", "Chrome")
		c := h.client("alice")
		connectTo(t, c, extID)
		c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"pad":"` + strings.Repeat("c", 100_000) + `"}}`)
		req := ext.request()
		ext.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"pad":"` + strings.Repeat("b", 1_000_000) + `"}}`)
		if res := c.response(); res.Error != nil || len(res.Result) < 1_000_000 {
			t.Fatalf("answer %v, %d bytes", res.Error, len(res.Result))
		}
	})
}

// TestUnauthenticatedCap: connections that have not authenticated are
// capped per address (429) and in all (503), with a body that says what to
// do; authenticating frees the place.
func TestUnauthenticatedCap(t *testing.T) {
	dialStatus := func(h *harness, path string) (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ws, resp, err := websocket.Dial(ctx, h.url(path), nil)
		if err == nil {
			ws.CloseNow()
			return 101, ""
		}
		if resp == nil {
			t.Fatalf("dialing: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tt := range []struct {
		name   string
		mod    func(*ServerOptions)
		status int
		says   string
	}{
		{"per address", func(o *ServerOptions) { o.MaxUnauthenticatedPerIP = 2 }, http.StatusTooManyRequests, "authenticate or close them"},
		{"in all", func(o *ServerOptions) { o.MaxUnauthenticated = 2 }, http.StatusServiceUnavailable, "waiting to authenticate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.mod)
			e := h.dial("/extension")
			e.request()
			c := h.dial("/mcp")
			if status, body := dialStatus(h, "/extension"); status != tt.status || !strings.Contains(body, tt.says) {
				t.Fatalf("third connection: HTTP %d %q, want %d saying %q", status, body, tt.status, tt.says)
			}
			// The client authenticates: its place is free for another.
			if res := c.call(`{"jsonrpc":"2.0","id":1,"method":"mcp_handshake","params":{"accessToken":"` + h.token("alice") + `"}}`); res.Error != nil {
				t.Fatal(res.Error)
			}
			if status, body := dialStatus(h, "/mcp"); status != 101 {
				t.Fatalf("after a handshake: HTTP %d %q", status, body)
			}
		})
	}
}

// TestLateAnswersToAbandonedRequests: a browser that answers the requests
// of a client that left is not taken for a flooder: its late answers are
// dropped quietly, and its other clients keep it. Before, the 51st late
// answer closed the browser.
func TestLateAnswersToAbandonedRequests(t *testing.T) {
	h := newHarness(t, func(o *ServerOptions) { o.BrowserRate = 1; o.RequestTimeout = time.Hour })
	ext, extID := h.extension("alice", "Chrome")
	stays := h.client("alice")
	connectTo(t, stays, extID)
	leaves := h.client("alice")
	connectTo(t, leaves, extID)
	const n = 60
	for i := range n {
		leaves.send(`{"jsonrpc":"2.0","id":` + fmt.Sprint(i) + `,"method":"tools/call"}`)
	}
	reqs := make([]*Message, n)
	for i := range reqs {
		reqs[i] = ext.request()
	}
	leaves.ws.Close(websocket.StatusNormalClosure, "")
	ext.status(1)
	ext.status(2)
	ext.status(1) // the relay has dropped the client that left
	for _, r := range reqs {
		ext.send(`{"jsonrpc":"2.0","id":` + string(r.ID) + `,"result":{}}`)
	}
	stays.send(`{"jsonrpc":"2.0","id":"after","method":"tools/call"}`)
	req := ext.request()
	ext.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"ok":true}}`)
	if res := stays.response(); string(res.ID) != `"after"` || string(res.Result) != `{"ok":true}` {
		t.Fatalf("got %s %s %v", res.ID, res.Result, res.Error)
	}
}
