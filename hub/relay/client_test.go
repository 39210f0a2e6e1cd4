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
