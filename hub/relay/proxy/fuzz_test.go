package proxy

import (
	"encoding/json"
	"strings"
	"testing"

	"golang.org/x/time/rate"
)

// The seed corpus is in testdata/fuzz/<Fuzz name>/: the seed's message
// examples and the tricky cases of the protocol tests. `go test` runs it;
// `go test -fuzz FuzzParseMessage ./hub/relay` explores further.

// FuzzParseMessage: parsing never panics, an error always has an answer that
// is itself a valid response, and whatever parses survives re-encoding with
// the same meaning (so forwarding cannot change a message).
func FuzzParseMessage(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"mcp_handshake","params":{"accessToken":"x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, perr := ParseMessage(data)
		if m == nil {
			t.Fatal("nil message")
		}
		if perr != nil {
			ans, err := ParseMessage(EncodeError(m.ID, perr))
			if err != nil || ans.Kind() != KindResponse || ans.Error.Code != perr.Code {
				t.Fatalf("the answer to %q does not parse: %v", data, err)
			}
			return
		}
		var again []byte
		switch m.Kind() {
		case KindRequest, KindNotification:
			again = EncodeRequest(m.ID, m.Method, m.Params)
		case KindResponse:
			if m.Error != nil {
				again = EncodeError(m.ID, m.Error)
			} else {
				again = rawResult(m.ID, m.Result)
			}
		default:
			t.Fatalf("%q parsed without a kind", data)
		}
		m2, err := ParseMessage(again)
		if err != nil {
			t.Fatalf("%q re-encoded as %q, which does not parse: %v", data, again, err)
		}
		if m2.Kind() != m.Kind() || m2.Method != m.Method || m2.IDKey() != m.IDKey() || m2.Reserved() != m.Reserved() {
			t.Fatalf("%q changed meaning when re-encoded as %q", data, again)
		}
		if m.Kind() == KindRequest {
			conn, orig, ok := SplitID(MapID("conn-x", m))
			if !ok || conn != "conn-x" || orig != m.IDKey() {
				t.Fatalf("the mapped id of %q does not split back", data)
			}
		}
	})
}

// FuzzClientMessage drives the proxy's handling of one client message on a
// client connected to a browser, without sockets, and checks the routing
// invariants: a request is answered or forwarded exactly once; nothing
// forwarded carries a reserved id, a foreign connection id or connectionId;
// and once the browser answers, nothing stays pending.
func FuzzClientMessage(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":4,"method":"createTab","params":{"url":"https://example.com"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		srv, err := NewServer(ServerOptions{Auth: testAuth(t), Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		ext := &extConn{peer: newPeer(nil, 4096), id: "ext-1", name: "Chrome", user: "alice",
			limiter: rate.NewLimiter(10, 50), links: map[string]*link{}, pending: map[string]*pending{}}
		srv.exts[ext.id] = ext
		c := srv.newClient(newPeer(nil, 4096))
		c.user = "alice"
		connect, _ := ParseMessage([]byte(`{"jsonrpc":"2.0","id":"c","method":"connect","params":{"extension_id":"ext-1"}}`))
		srv.connect(c, connect)
		drain(c.peer)
		drain(ext.peer)
		linkID := c.link.id

		srv.onClientMessage(c, data)
		answers, forwards := drain(c.peer), drain(ext.peer)
		m, perr := ParseMessage(data)
		if perr == nil && m.Kind() == KindRequest {
			n := 0
			for _, fw := range forwards {
				if fw.Kind() == KindRequest {
					n++
				}
			}
			for _, a := range answers {
				if a.Kind() == KindResponse {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("%q: %d answers and forwards, want 1", data, n)
			}
		}
		for _, fw := range forwards {
			if fw.Kind() != KindRequest {
				continue // status notifications
			}
			if fw.Reserved() || !strings.HasPrefix(fw.IDKey(), linkID+":") || fw.ConnectionID != "" {
				t.Fatalf("%q was forwarded as %s", data, fw.ID)
			}
			// The browser answers; the client gets its own id back.
			srv.onExtensionMessage(ext, rawResult(fw.ID, json.RawMessage(`{}`)))
			back := drain(c.peer)
			if len(back) != 1 || string(back[0].ID) != string(m.ID) {
				t.Fatalf("%q: the answer came back as %v", data, back)
			}
		}
		if st := srv.Stats(); st.Pending != 0 {
			t.Fatalf("%q left %d requests pending", data, st.Pending)
		}
	})
}

// drain returns the messages queued on a peer without a socket.
func drain(p *peer) []*Message {
	var out []*Message
	for {
		select {
		case f := <-p.out:
			if f.close {
				continue
			}
			m, err := ParseMessage(f.data)
			if err != nil {
				panic("the proxy wrote an invalid message: " + string(f.data))
			}
			out = append(out, m)
		default:
			return out
		}
	}
}
