package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startHTTP runs webmcp-cdp with --http and returns the /mcp URL it logs,
// as soon as it logs it.
func startHTTP(t *testing.T, args ...string) string {
	t.Helper()
	endpoint, _ := startHTTPEnv(t, nil, args...)
	return endpoint
}

// startHTTPEnv is startHTTP with more environment, and what webmcp-cdp
// writes to stderr.
func startHTTPEnv(t *testing.T, env []string, args ...string) (string, *urlSpotter) {
	t.Helper()
	endpoint, spot, _ := startHTTPProc(t, env, args...)
	return endpoint, spot
}

// startHTTPProc is startHTTPEnv that also returns the process id. Like
// start, it gives webmcp-cdp a state home of its own, so that cached tools
// of another test running at the same time never show up in this one's
// lists (a test that restarts on the same state passes --state-dir).
func startHTTPProc(t *testing.T, env []string, args ...string) (string, *urlSpotter, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(append(os.Environ(), env...), "XDG_STATE_HOME="+t.TempDir())
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	spot := &urlSpotter{re: regexp.MustCompile(`url=(http://\S+/mcp)`), found: make(chan string, 1)}
	cmd.Stdout, cmd.Stderr = io.Discard, spot
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	// A bound for a process that hangs, above webmcp-cdp's own for getting
	// a browser: a first Chromium that does not answer within 15 s is
	// killed and started once more (cdp's firstAnswerTimeout), as a run
	// beside stress-ng saw.
	bound := time.NewTimer(60 * time.Second)
	defer bound.Stop()
	select {
	case u := <-spot.found:
		return u, spot, cmd.Process.Pid
	case err := <-exited:
		exited <- err // for the cleanup
		t.Fatalf("webmcp-cdp exited (%v) before serving HTTP:\n%s", err, spot.String())
	case <-bound.C:
		t.Fatalf("webmcp-cdp did not say where it serves HTTP:\n%s", spot.String())
	}
	return "", spot, 0
}

// urlSpotter keeps what webmcp-cdp writes to stderr and sends the first
// match of re's group on found.
type urlSpotter struct {
	re    *regexp.Regexp
	found chan string // capacity 1

	buf  syncBuffer
	mu   sync.Mutex
	sent bool
}

func (s *urlSpotter) Write(p []byte) (int, error) {
	s.buf.Write(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.sent {
		if m := s.re.FindStringSubmatch(s.buf.String()); m != nil {
			s.sent = true
			s.found <- m[1]
		}
	}
	return len(p), nil
}

func (s *urlSpotter) String() string { return s.buf.String() }

// waitFor reports whether sub appears in what was written within d (see
// syncBuffer.waitFor).
func (s *urlSpotter) waitFor(sub string, d time.Duration) bool { return s.buf.waitFor(sub, d) }

// waitForN reports whether sub appears n times within d.
func (s *urlSpotter) waitForN(sub string, n int, d time.Duration) bool {
	return s.buf.waitForN(sub, n, d)
}

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// httpClient connects a go-sdk client to an HTTP endpoint.
func httpClient(t *testing.T, endpoint, token string) *client {
	t.Helper()
	return httpClientWith(t, endpoint, token, nil, "")
}

// httpClientWith is httpClient with client options and a protocol version.
func httpClientWith(t *testing.T, endpoint, token string, opts *mcp.ClientOptions, version string) *client {
	t.Helper()
	c := &client{t: t, stderr: &syncBuffer{}, changes: make(chan struct{}, 1000)}
	if opts == nil {
		opts = &mcp.ClientOptions{}
	}
	opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
		select {
		case c.changes <- struct{}{}:
		default:
		}
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "1"}, opts)
	hc := &http.Client{}
	if token != "" {
		hc.Transport = bearer{token: token, next: http.DefaultTransport}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	c.cs = cs
	t.Cleanup(func() { cs.Close() })
	return c
}

// TestHTTPTwoClients: two clients at once over streamable HTTP each see the
// page tools and each gets list_changed; the status page shows tabs, calls
// and the tools webmcp-cdp refused, with their reason codes.
func TestHTTPTwoClients(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	endpoint := startHTTP(t, "launch", "--headless", "--http", "127.0.0.1:0", base+"/current/")
	a := httpClient(t, endpoint, "")
	b := httpClient(t, endpoint, "")
	tools := a.waitFor("tools over HTTP", hasSuffix("echo", 1))
	b.waitFor("tools over HTTP (second client)", hasSuffix("echo", 1))
	if got := b.callOK(toolWithSuffix(tools, "echo")[0], map[string]any{"text": "two"}); got != "two" {
		t.Errorf("echo = %q", got)
	}
	a.drainChanges()
	b.drainChanges()
	a.callOK("webmcp_open_tab", map[string]any{"url": base + "/notes/"})
	a.waitChange("a tab opened (client a)")
	b.waitChange("a tab opened (client b)")

	status := get(t, strings.TrimSuffix(endpoint, "/mcp")+"/", nil)
	for _, want := range []string{"/current/", "/notes/", "_echo", "ok"} {
		if !strings.Contains(status, want) {
			t.Errorf("the status page lacks %q", want)
		}
	}

	// An MCP-B page server shows under its tab with what it lists (the
	// hand-written one on channel "wire" lists four tools).
	wire := mcpbHostilePage(t)
	ps := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(wire))
	}))
	t.Cleanup(ps.Close)
	a.callOK("webmcp_open_tab", map[string]any{"url": ps.URL + "/"})
	a.waitFor("the page server's tools", hasSuffix("abuse", 1))
	status = get(t, strings.TrimSuffix(endpoint, "/mcp")+"/", nil)
	if want := "<code>wire</code> 4 tools, 0 resources, 0 templates, 0 prompts"; !strings.Contains(status, want) {
		t.Errorf("the status page lacks the page server %q", want)
	}

	// webmcp_open_tab returns once the page's tools settled, and a page's
	// refusals come with its tools.
	a.callOK("webmcp_open_tab", map[string]any{"url": base + "/ci/bad.html"})
	status = get(t, strings.TrimSuffix(endpoint, "/mcp")+"/", nil)
	for _, want := range []string{"<h2>Refused tools</h2>", "<code>list_input</code>", "<code>schema</code>", "<code>way_too_long</code>", "<code>size</code>"} {
		if !strings.Contains(status, want) {
			t.Errorf("the status page lacks %q", want)
		}
	}
}

func get(t *testing.T, url string, header http.Header) string {
	t.Helper()
	code, body := do(t, http.MethodGet, url, header, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, code, body)
	}
	return body
}

func do(t *testing.T, method, url string, header http.Header, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v[0]
			continue
		}
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// TestReliabilityHTTPGuards: DNS rebinding (foreign Host or Origin) is refused, bodies
// are bounded, and a non-loopback address needs a token that every request
// must then carry.
func TestReliabilityHTTPGuards(t *testing.T) {
	t.Parallel()
	endpoint := startHTTP(t, "launch", "--headless", "--http", "127.0.0.1:0", "--max-body-bytes", "10000")
	jsonHdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	with := func(k, v string) http.Header {
		h := jsonHdr.Clone()
		h.Set(k, v)
		return h
	}
	tests := []struct {
		name     string
		header   http.Header
		body     string
		wantCode int
	}{
		{"plain", jsonHdr, initialize, http.StatusOK},
		{"foreign origin", with("Origin", "http://evil.example"), initialize, http.StatusForbidden},
		{"null origin", with("Origin", "null"), initialize, http.StatusForbidden},
		{"own origin", with("Origin", strings.TrimSuffix(endpoint, "/mcp")), initialize, http.StatusOK},
		{"own host, other port", with("Origin", "http://localhost"), initialize, http.StatusForbidden},
		{"foreign host", with("Host", "evil.example:80"), initialize, http.StatusForbidden},
		{"huge body", jsonHdr, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 20000) + `"}}`, http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := do(t, http.MethodPost, endpoint, tt.header, tt.body)
			if code != tt.wantCode {
				t.Errorf("status %d, want %d: %.300s", code, tt.wantCode, body)
			}
			reliabilityRow(t, "HTTP guard: "+tt.name, fmt.Sprintf("HTTP %d", code))
		})
	}
}

func TestReliabilityHTTPToken(t *testing.T) {
	t.Parallel()
	// Without a token, a non-loopback address is refused at start.
	cmd, _, stderr := runRawNoWait(t, "launch", "--headless", "--http", "0.0.0.0:0")
	if code := waitExit(t, cmd); code == 0 || !strings.Contains(stderr.String(), "set --token") {
		t.Fatalf("exit %d without a token off loopback; stderr:\n%s", code, stderr.String())
	}

	endpoint := startHTTP(t, "launch", "--headless", "--http", "0.0.0.0:0", "--token", "s3cret")
	// The logged URL names 0.0.0.0: reach it on loopback.
	_, port, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(endpoint, "http://"), "/mcp"))
	endpoint = "http://127.0.0.1:" + port + "/mcp"
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	if code, _ := do(t, http.MethodPost, endpoint, hdr, initialize); code != http.StatusUnauthorized {
		t.Errorf("no token: status %d, want 401", code)
	}
	wrong := hdr.Clone()
	wrong.Set("Authorization", "Bearer nope")
	if code, _ := do(t, http.MethodPost, endpoint, wrong, initialize); code != http.StatusUnauthorized {
		t.Errorf("wrong token: status %d, want 401", code)
	}
	c := httpClient(t, endpoint, "s3cret")
	if _, ok := c.tools()["webmcp_list_tabs"]; !ok {
		t.Error("with the token, tools/list lacks webmcp_list_tabs")
	}
	reliabilityRow(t, "HTTP off loopback: no token, a wrong token, the right one", "refused at start without --token; 401, 401, served")
}

// runRawNoWait starts webmcp-cdp without waiting for it to get ready.
func runRawNoWait(t *testing.T, args ...string) (*exec.Cmd, io.WriteCloser, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill() })
	return cmd, stdin, stderr
}

// TestHTTPDialogElicitation: over HTTP too, a page dialog during a call is
// asked to the client, on both protocol generations.
func TestHTTPDialogElicitation(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	endpoint := startHTTP(t, "launch", "--headless", "--http", "127.0.0.1:0", base+"/notes/")
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			var asked atomic.Int32
			c := httpClientWith(t, endpoint, "", elicitor(map[string]any{"confirm": true}, &asked, make(chan string, 1)), version)
			tools := c.waitFor("notes tools", hasSuffix("delete_note", 1))
			added := c.callOK(toolWithSuffix(tools, "add_note")[0], map[string]any{"title": "h", "content": version})
			id := strings.TrimSuffix(strings.TrimPrefix(added, "Added note #"), ": h")
			n, _ := strconv.Atoi(id)
			if got := c.callOK(toolWithSuffix(tools, "delete_note")[0], map[string]any{"id": n}); got != "Deleted note #"+id {
				t.Errorf("delete_note = %q", got)
			}
			if asked.Load() != 1 {
				t.Errorf("asked %d times, want 1", asked.Load())
			}
		})
	}
}
