package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// TestStatusPageRefusals: the status page shows the hub's refusals, newest
// first, with reason code, tool, origin and detail, escaped, and at most
// statusRefusals of them.
func TestStatusPageRefusals(t *testing.T) {
	tests := []struct {
		name     string
		refusals int // handed over by the browser, besides the hub's own
		want     []string
		wantNot  []string
	}{
		{name: "none", want: []string{"<h2>Refused tools</h2>", `<td colspan="5" class="muted">none</td>`}},
		{name: "a few", refusals: 2, want: []string{
			"<code>schema</code>", "<code>list_input</code>", "<code>http://s.test</code>",
			"<code>page</code>", "<code>&lt;img src=x&gt;0</code>", "could not read it 0",
			"<code>too-many</code>", `<span class="muted">several</span>`,
		}, wantNot: []string{"<img src=x>", "the last"}},
		{name: "more than the page shows", refusals: statusRefusals + 5, want: []string{
			fmt.Sprintf("the last %d of %d", statusRefusals, statusRefusals+7),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hub.New(noBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler), Limits: hub.Limits{ToolsPerDocument: 1}})
			s := New(t.Context(), h, Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
			if tt.refusals > 0 {
				doc := core.Source{Key: "d", Tab: "T", Frame: "F", Origin: "http://s.test", URL: "http://s.test/", Backend: "polyfill"}
				var refused []core.Refusal
				for i := range tt.refusals {
					refused = append(refused, core.Refusal{Reason: core.ReasonPage, Tool: fmt.Sprintf("<img src=x>%d", i), Detail: fmt.Sprintf("could not read it %d", i)})
				}
				h.Update(doc, []core.Tool{
					{Name: "list_input", Description: "Take a list.", InputSchema: []byte(`{"type":"array"}`)},
					{Name: "ok", Description: "Fine."},
					{Name: "over", Description: "One too many."},
				}, refused)
			}
			rec := httptest.NewRecorder()
			newStatusHandler(s, HTTPOptions{}, "127.0.0.1:0").render(rec, httptest.NewRequestWithContext(context.Background(), "GET", "/", nil))
			body := rec.Body.String()
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("the status page lacks %q", w)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(body, w) {
					t.Errorf("the status page has %q", w)
				}
			}
			if tt.refusals > 0 && tt.refusals < statusRefusals {
				// Newest first: the hub's own refusals came after the browser's.
				if strings.Index(body, "<code>too-many</code>") > strings.Index(body, "<code>page</code>") {
					t.Error("the refusals are not newest first")
				}
			}
			if t.Failed() {
				t.Logf("status page:\n%s", body)
			}
		})
	}
}

// TestOriginPolicy: an Origin is the server's own with its scheme, host and
// port; --allowed-host entries add a name (the server's port or the default
// port), a name:port or an exact origin.
func TestOriginPolicy(t *testing.T) {
	loop, err := newSitePolicy("127.0.0.1:8808", true, []string{"mcp.example.test", "proxy.test:9000", "https://app.example.test:8443"})
	if err != nil {
		t.Fatal(err)
	}
	wild, err := newSitePolicy("0.0.0.0:8808", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		p      *sitePolicy
		origin string
		want   string // "" accepted, else a part of the reason
	}{
		{loop, "http://127.0.0.1:8808", ""},
		{loop, "http://LOCALHOST:8808", ""},
		{loop, "http://[::1]:8808", ""},
		{loop, "http://127.0.0.1:9999", "port 8808, not port 9999"},
		{loop, "http://127.0.0.1", "not port 80"},
		{loop, "https://127.0.0.1:8808", "http, not https"},
		{loop, "http://evil.example:8808", `host "evil.example"`},
		{loop, "null", "not an http or https origin"},
		{loop, "file://", "not an http or https origin"},
		{loop, "https://mcp.example.test", ""},
		{loop, "http://mcp.example.test", ""},
		{loop, "http://mcp.example.test:8808", ""},
		{loop, "http://mcp.example.test:9999", "not port 9999"},
		{loop, "http://proxy.test:9000", ""},
		{loop, "https://proxy.test:9000", ""},
		{loop, "http://proxy.test:8808", "port 9000, not port 8808"},
		{loop, "https://app.example.test:8443", ""},
		{loop, "https://app.example.test", "not port 443"},
		{loop, "http://app.example.test:8443", "not http"},
		{wild, "http://127.0.0.1:8808", `host "127.0.0.1"`},
	}
	for _, tt := range tests {
		got := tt.p.checkOrigin(tt.origin)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("checkOrigin(%q) = %q, want %q", tt.origin, got, tt.want)
		}
	}
	for _, bad := range []string{"https://x.test/path", "ftp://x.test", "x.test:port", "a b", ""} {
		if err := CheckAllowedHosts([]string{bad}); err == nil {
			t.Errorf("--allowed-host %q accepted", bad)
		}
	}
}

// slowBrowser answers every call after a delay.
type slowBrowser struct{ delay time.Duration }

func (b slowBrowser) Invoke(ctx context.Context, _, _ string, _ json.RawMessage) (core.Result, error) {
	select {
	case <-time.After(b.delay): // the page taking its time
		return core.Result{Kind: core.KindString, Value: "slow done"}, nil
	case <-ctx.Done():
		return core.Result{}, ctx.Err()
	}
}

// rawPost sends one JSON-RPC message and returns the response.
func rawPost(t *testing.T, url, session, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %.60s: %v", body, err)
	}
	return resp
}

// TestHTTPReadTimeouts (issue 15, point 5): a body trickled slower than the
// read timeout is cut off, while an event stream (GET) and a tool call that
// each last several read timeouts go on.
func TestHTTPReadTimeouts(t *testing.T) {
	const timeout = 300 * time.Millisecond
	logger := slog.New(slog.DiscardHandler)
	h := hub.New(slowBrowser{delay: 4 * timeout}, hub.Options{Logger: logger})
	doc := core.Source{Key: "d", Tab: "T", Frame: "F", Origin: "http://s.test", URL: "http://s.test/", Backend: "polyfill"}
	h.Update(doc, []core.Tool{{Name: "slow", Description: "Slow."}}, nil)
	s := New(t.Context(), h, Options{Logger: logger})
	srv, err := s.ServeHTTP(HTTPOptions{Addr: "127.0.0.1:0", ReadTimeout: timeout}, make(chan error, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	url := "http://" + srv.Addr() + "/mcp"

	// A trickled body is cut off.
	t.Run("trickled body", func(t *testing.T) {
		conn, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{", srv.Addr())
		conn.SetReadDeadline(time.Now().Add(5 * time.Second)) // a failure guard
		_, err = io.Copy(io.Discard, conn)
		took := time.Since(start)
		// The upper bound tells the read timeout from the 5 s guard, with
		// room for a loaded machine (1 s past the timeout was close).
		if err != nil || took < timeout || took > timeout+3*time.Second {
			t.Errorf("the connection ended after %s (%v), want after about %s", took, err, timeout)
		}
	})

	// A session, with its event stream and a long call.
	resp := rawPost(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %s, session %q", resp.Status, session)
	}
	resp = rawPost(t, url, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("GET the event stream: %v %v", err, stream.Status)
	}
	defer stream.Body.Close()
	events := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stream.Body)
		for sc.Scan() {
			events <- sc.Text()
		}
		close(events)
	}()

	start := time.Now()
	resp = rawPost(t, url, session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"s_test_slow","arguments":{}}}`)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if took := time.Since(start); err != nil || !strings.Contains(string(body), "slow done") {
		t.Errorf("a call of %s (read timeout %s) got %v %s", took, timeout, err, body)
	}

	// The event stream, open for several read timeouts now, still carries
	// list_changed.
	h.Update(doc, []core.Tool{{Name: "slow", Description: "Slow."}, {Name: "new", Description: "New."}}, nil)
	bound := time.After(5 * time.Second)
	for {
		select {
		case line, ok := <-events:
			if !ok {
				t.Fatalf("the event stream ended after %s", time.Since(start))
			}
			if strings.Contains(line, "notifications/tools/list_changed") {
				return
			}
		case <-bound:
			t.Fatal("no list_changed on the event stream")
		}
	}
}

// TestConnLimiter: one address may hold perIP connections at once; the next
// gets 503 with the reason; a closed one frees its place.
func TestConnLimiter(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := newConnLimiter(tcp, 3, 100, slog.New(slog.DiscardHandler))
	defer ln.Close()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", tcp.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	var held []net.Conn
	for range 3 {
		dial()
		held = append(held, <-accepted)
	}
	over := dial()
	over.SetReadDeadline(time.Now().Add(5 * time.Second)) // a failure guard
	got, _ := io.ReadAll(over)
	if !strings.HasPrefix(string(got), "HTTP/1.1 503") || !strings.Contains(string(got), "127.0.0.1 already has 3 connections open") {
		t.Errorf("the fourth connection got %q", got)
	}
	held[0].Close()
	dial()
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("a connection was refused after one closed")
	}
}
