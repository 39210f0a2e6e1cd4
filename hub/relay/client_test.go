package relay

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub/relay/proxy"
)

// TestTLS: the proxy behind TLS, reached with the Client over wss://.
func TestTLS(t *testing.T) {
	srv, err := proxy.NewServer(proxy.ServerOptions{Auth: testAuth(t), Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(srv)
	hs.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below
	hs.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	hs.StartTLS()
	t.Cleanup(func() { srv.Close(); hs.Close() })
	url := "wss" + strings.TrimPrefix(hs.URL, "https") + "/mcp"
	ctx := context.Background()
	if _, err := Dial(ctx, url, ClientOptions{Logger: quietLogger()}); err == nil {
		t.Fatal("a self-signed certificate was trusted without being configured")
	}
	c, err := Dial(ctx, url, ClientOptions{Dial: proxy.DialOptions{HTTPClient: hs.Client()}, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tok, _ := testAuth(t).Issue("alice", time.Hour)
	res, err := c.Handshake(ctx, tok)
	if err != nil || res.UserID != "alice" {
		t.Fatalf("handshake over TLS: %+v %v", res, err)
	}
}

// TestCallAnswerBeforeClose: when the relay answered and then closed (as
// one refusing a token does) before the call waited, the call gives the
// answer, never "the connection is closed" instead. (With both ready, a
// plain select picks one at random: 100 rounds fail surely without the
// fix.)
func TestCallAnswerBeforeClose(t *testing.T) {
	c := &Client{done: make(chan struct{}), err: ErrClientClosed}
	close(c.done)
	ch := make(chan *Message, 1)
	for i := range 100 {
		ch <- &Message{Error: proxy.Errorf(proxy.CodeServerError, "Authentication failed: no")}
		answered, err := c.await(context.Background(), MethodHandshake, ch, nil)
		if !answered || err == nil || !strings.Contains(err.Error(), "Authentication failed: no") {
			t.Fatalf("round %d: await: %v (answered %v), want the relay's answer", i, err, answered)
		}
	}
}
