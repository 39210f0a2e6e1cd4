package e2e

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub/relay"
)

// relayProc is a `webmcp-cdp relay` process on 127.0.0.1.
type relayProc struct {
	t      testing.TB
	addr   string
	secret string // the secret file
	stderr *syncBuffer
}

var listening = regexp.MustCompile(`relay listening"? addr=(\S+)`)

// startRelay runs the relay on a free port, with extra flags, and waits
// until it listens.
func startRelay(t testing.TB, flags ...string) *relayProc {
	t.Helper()
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	key := make([]byte, 48)
	rand.Read(key)
	if err := os.WriteFile(secret, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &relayProc{t: t, secret: secret, stderr: &syncBuffer{}}
	cmd := exec.Command(binary, append([]string{"relay", "--listen", "127.0.0.1:0", "--jwt-secret-file", secret}, flags...)...)
	cmd.Stderr = r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("relay stderr:\n%s", r.stderr.String())
		}
	})
	r.stderr.waitFor("relay listening", 10*time.Second)
	m := listening.FindStringSubmatch(r.stderr.String())
	if m == nil {
		t.Fatalf("the relay did not start:\n%s", r.stderr.String())
	}
	r.addr = m[1]
	return r
}

func (r *relayProc) url(path string) string { return "ws://" + r.addr + path }

// token issues a token for user with `webmcp-cdp relay token`.
func (r *relayProc) token(user string) string {
	r.t.Helper()
	out, err := exec.Command(binary, "relay", "token", "--jwt-secret-file", r.secret, "--sub", user, "--ttl", "1h").Output()
	if err != nil {
		r.t.Fatalf("relay token: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// browserSide runs `webmcp-cdp launch --headless --relay ...` for user and
// waits until the relay accepted it.
type browserSide struct {
	cmd     *exec.Cmd
	stderr  *syncBuffer
	profile string
}

func (r *relayProc) startBrowserSide(t testing.TB, token, name string, urls ...string) *browserSide {
	t.Helper()
	profile := t.TempDir()
	args := append([]string{"launch", "--headless", "--user-data-dir", profile,
		"--relay", r.url("/extension"), "--relay-token", token, "--name", name}, urls...)
	b := &browserSide{cmd: exec.Command(binary, args...), stderr: &syncBuffer{}, profile: profile}
	b.cmd.Stderr = b.stderr
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.kill()
		if t.Failed() {
			t.Logf("browser side %s stderr:\n%s", name, b.stderr.String())
		}
	})
	if !b.stderr.waitFor("the relay accepted this browser", 20*time.Second) {
		t.Fatalf("the browser side did not register with the relay:\n%s", b.stderr.String())
	}
	return b
}

// kill ends the browser side at once (SIGKILL; Chromium dies with it, and
// kill waits for that, so the profile can be removed).
func (b *browserSide) kill() {
	b.cmd.Process.Kill()
	b.cmd.Wait()
	for deadline := time.Now().Add(10 * time.Second); len(browserPIDs(b.profile)) > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond) // poll interval: Chromium's processes are not our children, so their exit has no event
	}
}

// status returns webmcp_relay_status's structured output.
func (c *client) relayStatus() relay.RemoteStatus {
	c.t.Helper()
	res := c.call("webmcp_relay_status", map[string]any{})
	var st relay.RemoteStatus
	if err := json.Unmarshal([]byte(text(res)), &st); err != nil {
		c.t.Fatalf("webmcp_relay_status gave %q: %v", text(res), err)
	}
	return st
}

// seedClient is a raw protocol client (the seed's MCP side) of the relay,
// with the notifications it received.
func (r *relayProc) seedClient(t testing.TB, token string) (*relay.Client, chan relay.DisconnectedParams) {
	t.Helper()
	lost := make(chan relay.DisconnectedParams, 8)
	c, err := relay.Dial(context.Background(), r.url("/mcp"), relay.ClientOptions{
		OnNotification: func(method string, params json.RawMessage) {
			if method == relay.MethodDisconnected {
				var p relay.DisconnectedParams
				json.Unmarshal(params, &p)
				lost <- p
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Handshake(context.Background(), token); err != nil {
		t.Fatal(err)
	}
	return c, lost
}

// TestRelay: relay, browser side (real Chromium) and connect (driven over
// stdio by the go-sdk client), as separate processes of the real binary.
func TestRelay(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	r := startRelay(t)
	alice, bob := r.token("alice"), r.token("bob")
	bs := r.startBrowserSide(t, alice, "e2e-chromium", base+"/current/")
	ctx := context.Background()

	a := start(t, "connect", "--relay", r.url("/mcp"), "--token", alice)
	tools := a.waitFor("the page's echo tool across the relay", hasSuffix("echo", 1))
	echo := toolWithSuffix(tools, "echo")[0]

	t.Run("a page tool is listed and called across the relay", func(t *testing.T) {
		if got := a.callOK(echo, map[string]any{"text": "across the relay"}); got != "across the relay" {
			t.Fatalf("echo = %q", got)
		}
		st := a.relayStatus()
		if !st.Connected || st.ExtensionName != "e2e-chromium" || st.UserID != "alice" {
			t.Fatalf("status %+v", st)
		}
		// The definition is the one the local MCP server lists for the same
		// page (the frame id aside: it is another browser).
		local := start(t, "launch", "--headless", base+"/current/")
		want := local.waitFor("the local echo tool", hasSuffix("echo", 1))[echo]
		got := tools[echo]
		gotSrc, wantSrc := source(t, got), source(t, want)
		delete(gotSrc, "frame")
		delete(wantSrc, "frame")
		if got.Description != want.Description || !reflect.DeepEqual(got.InputSchema, want.InputSchema) ||
			!reflect.DeepEqual(got.Annotations, want.Annotations) || !reflect.DeepEqual(gotSrc, wantSrc) {
			t.Fatalf("across the relay:\n%+v %v\nlocally:\n%+v %v", got, gotSrc, want, wantSrc)
		}
	})

	t.Run("browser tools map onto forwarded methods", func(t *testing.T) {
		out := a.callOK("webmcp_list_tabs", map[string]any{})
		if !strings.Contains(out, base+"/current/") || !strings.Contains(out, echo) {
			t.Fatalf("webmcp_list_tabs = %s", out)
		}
		res := a.call("webmcp_screenshot", map[string]any{})
		if res.IsError || len(res.Content) != 1 {
			t.Fatalf("webmcp_screenshot = %v %q", res.IsError, text(res))
		}
		img, ok := res.Content[0].(*mcp.ImageContent)
		if !ok || img.MIMEType != "image/png" || !strings.HasPrefix(string(img.Data), "\x89PNG") {
			t.Fatalf("webmcp_screenshot gave %T", res.Content[0])
		}
		if res := a.call("webmcp_click", map[string]any{"selector": "#no-such-element"}); !res.IsError || !strings.Contains(text(res), "no element matches") {
			t.Fatalf("webmcp_click on nothing = %v %q", res.IsError, text(res))
		}
		// Raw CDP is off unless the browser side allows it.
		seed, _ := r.seedClient(t, alice)
		list, err := seed.ListExtensions(ctx)
		if err != nil || len(list) != 1 {
			t.Fatalf("list %v %v", list, err)
		}
		if _, err := seed.Connect(ctx, list[0].ID); err != nil {
			t.Fatal(err)
		}
		var rpcErr *relay.Error
		err = seed.Call(ctx, "forwardCDPCommand", map[string]any{"method": "Runtime.evaluate", "params": map[string]any{"expression": "1"}}, nil)
		if !errors.As(err, &rpcErr) || rpcErr.Code != relay.CodeMethodNotFound || !strings.Contains(rpcErr.Message, "--allow-raw-cdp") {
			t.Fatalf("forwardCDPCommand without --allow-raw-cdp: %v", err)
		}
	})

	t.Run("navigation and input reach the real page", func(t *testing.T) {
		a.callOK("webmcp_navigate", map[string]any{"url": base + "/notes/"})
		notes := a.waitFor("the notes tools", hasSuffix("list_notes", 1))
		a.callOK("webmcp_type", map[string]any{"selector": "#note-title", "text": "typed across the relay"})
		a.callOK("webmcp_type", map[string]any{"selector": "#note-content", "text": "with real key input"})
		a.callOK("webmcp_hover", map[string]any{"selector": "h1"})
		a.callOK("webmcp_click", map[string]any{"selector": "button[type=submit]"})
		if got := a.callOK(toolWithSuffix(notes, "list_notes")[0], map[string]any{}); !strings.Contains(got, "typed across the relay") || !strings.Contains(got, "with real key input") {
			t.Fatalf("list_notes after typing and clicking = %s", got)
		}
		// Back comes from the back-forward cache, which fires no load event:
		// the wait ends on the restore instead.
		if out := a.callOK("webmcp_go_back", map[string]any{}); !strings.Contains(out, base+"/current/") {
			t.Fatalf("webmcp_go_back = %s", out)
		}
		a.waitFor("the echo tool again", hasSuffix("echo", 1))
	})

	t.Run("another user's client cannot see the browser", func(t *testing.T) {
		b := start(t, "connect", "--relay", r.url("/mcp"), "--token", bob)
		deadline := time.Now().Add(10 * time.Second)
		st := b.relayStatus()
		for st.Problem == "" && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond) // poll interval: webmcp_relay_status has no push
			st = b.relayStatus()
		}
		if st.Connected || len(st.Browsers) != 0 || !strings.Contains(st.Problem, "no browser") {
			t.Fatalf("bob's status %+v", st)
		}
		for name := range b.tools() {
			if !strings.HasPrefix(name, "webmcp_") {
				t.Fatalf("bob sees %s", name)
			}
		}
		if ok, out := tryCall(b, echo); ok {
			t.Fatalf("bob called alice's tool: %q", out)
		}
		// At the protocol level too: bob lists nothing and cannot connect to
		// alice's browser by id.
		seedBob, _ := r.seedClient(t, bob)
		if list, err := seedBob.ListExtensions(ctx); err != nil || len(list) != 0 {
			t.Fatalf("bob lists %v %v", list, err)
		}
		seedAlice, _ := r.seedClient(t, alice)
		list, err := seedAlice.ListExtensions(ctx)
		if err != nil || len(list) != 1 {
			t.Fatalf("alice lists %v %v", list, err)
		}
		var rpcErr *relay.Error
		if _, err := seedBob.Connect(ctx, list[0].ID); !errors.As(err, &rpcErr) || rpcErr.Code != relay.CodeServerError {
			t.Fatalf("bob connected to alice's browser: %v", err)
		}
	})

	t.Run("killing the browser side gives disconnected; restarting it reconnects", func(t *testing.T) {
		seed, lost := r.seedClient(t, alice)
		list, err := seed.ListExtensions(ctx)
		if err != nil || len(list) != 1 {
			t.Fatalf("list %v %v", list, err)
		}
		conn, err := seed.Connect(ctx, list[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		bs.kill()
		select {
		case p := <-lost:
			if p.ConnectionID != conn.ConnectionID || !strings.HasPrefix(p.Reason, "Extension closed") {
				t.Fatalf("disconnected %+v, want connection %s", p, conn.ConnectionID)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("no disconnected notification after the browser side died")
		}
		a.waitFor("the page tools to go", func(tools map[string]*mcp.Tool) bool { return len(toolWithSuffix(tools, "echo")) == 0 })
		if st := a.relayStatus(); st.Connected || !strings.Contains(st.LastDisconnect, "Extension closed") {
			t.Fatalf("status after the browser left: %+v", st)
		}
		if ok, out := tryCall(a, echo); ok {
			t.Fatalf("a call without a browser succeeded: %q", out)
		}

		bs = r.startBrowserSide(t, alice, "e2e-chromium", base+"/current/")
		a.waitFor("the page tools to come back", hasSuffix("echo", 1))
		if got := a.callOK(echo, map[string]any{"text": "again"}); got != "again" {
			t.Fatalf("echo after reconnecting = %q", got)
		}
	})
}

// tryCall calls a tool that may not be listed; ok is false when the call
// fails or the result is an error.
func tryCall(c *client, name string) (ok bool, out string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "x"}})
	if err != nil {
		return false, err.Error()
	}
	return !res.IsError, text(res)
}

// TestRelayCLIErrors: the relay's and connect's flag checks, worded for the
// user.
func TestRelayCLIErrors(t *testing.T) {
	t.Parallel()
	r := startRelay(t)
	short := filepath.Join(t.TempDir(), "short")
	os.WriteFile(short, []byte("tiny"), 0o600)
	tests := []struct {
		name string
		args []string
		says string
	}{
		{"ws off loopback", []string{"relay", "--listen", "0.0.0.0:0", "--jwt-secret-file", r.secret}, "not a loopback address"},
		{"short secret", []string{"relay", "--listen", "127.0.0.1:0", "--jwt-secret-file", short}, "at least 32"},
		{"connect without a token", []string{"connect", "--relay", r.url("/mcp")}, "needs a token"},
		{"connect with a bad token", []string{"connect", "--relay", r.url("/mcp"), "--token", "nope"}, "refused the handshake"},
		{"connect to ws off loopback", []string{"connect", "--relay", "ws://relay.example.com/mcp", "--token", "x"}, "wss://"},
		{"relay flags without --relay", []string{"launch", "--relay-token", "x"}, "need --relay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(binary, tt.args...)
			cmd.Env = append(os.Environ(), "WEBMCP_CDP_RELAY_TOKEN=")
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), tt.says) {
				t.Fatalf("%v: err %v, output:\n%s\nwant it to say %q", tt.args, err, out, tt.says)
			}
		})
	}
}

// BenchmarkRelayCallOverhead measures, in one run, 200 sequential tools/call
// through connect -> relay -> browser side -> page, and 200 over local
// stdio (launch) into the same page, and reports both p50s and the ratio.
//
//	go test ./e2e -run '^$' -bench RelayCallOverhead -benchtime 3x
func BenchmarkRelayCallOverhead(b *testing.B) {
	base := serveFixtures(b)
	// The default rate limit (100 messages a second) is for people; a tight
	// loop of calls goes faster.
	r := startRelay(b, "--client-rate", "1e6", "--client-burst", "1000000")
	tok := r.token("bench")
	r.startBrowserSide(b, tok, "bench", base+"/current/")
	remote := start(b, "connect", "--relay", r.url("/mcp"), "--token", tok)
	local := start(b, "launch", "--headless", base+"/current/")
	remoteEcho := toolWithSuffix(remote.waitFor("remote tools", hasSuffix("echo", 1)), "echo")[0]
	localEcho := toolWithSuffix(local.waitFor("local tools", hasSuffix("echo", 1)), "echo")[0]
	var viaRelay, viaStdio []time.Duration
	for b.Loop() {
		for i := 0; i < 200; i++ {
			t0 := time.Now()
			remote.callOK(remoteEcho, map[string]any{"text": "x"})
			viaRelay = append(viaRelay, time.Since(t0))
			t0 = time.Now()
			local.callOK(localEcho, map[string]any{"text": "x"})
			viaStdio = append(viaStdio, time.Since(t0))
		}
	}
	p50r, p50l := percentile(viaRelay, 50), percentile(viaStdio, 50)
	b.ReportMetric(ms(p50r), "ms/p50-tools-call-relay")
	b.ReportMetric(ms(percentile(viaRelay, 99)), "ms/p99-tools-call-relay")
	b.ReportMetric(ms(p50l), "ms/p50-tools-call-stdio")
	b.ReportMetric(ms(percentile(viaStdio, 99)), "ms/p99-tools-call-stdio")
	b.ReportMetric(float64(p50r)/float64(p50l), "x-relay-vs-stdio")
}
