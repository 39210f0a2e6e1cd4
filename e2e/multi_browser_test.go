package e2e

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// TestMultiBrowserAttach: one stdio server over three real Chromium
// processes (--browser, repeatable), one of them behind the authenticating
// proxy (its header given with --browser-header, for that browser only). A
// real client lists and calls a page tool of each; the tool's provenance
// names its browser. Then the third browser's process is killed: its tool
// goes cached (list_changed), a call to it says the browser is reconnecting,
// and the other two keep answering. The browser is started again on the
// same port: the server reconnects on its own, and the tool comes back live
// under the same name, callable, without a client restart.
func TestMultiBrowserAttach(t *testing.T) {
	t.Parallel()
	sites := map[string]string{"a": serveFixtures(t), "b": serveFixtures(t), "c": serveFixtures(t)}
	urlA := startChrome(t, sites["a"]+"/current/")
	urlB := startChrome(t, sites["b"]+"/current/")
	p := startAuthProxy(t, urlB, false)
	portC := freePort(t)
	urlC, killC := startChromeOnPort(t, sites["c"]+"/current/", portC)

	c := start(t, "attach", "--log-level", "debug", "--state-dir", "", "--reload-existing",
		"--browser", "a="+urlA,
		"--browser", "b="+p.srv.URL+"/?token="+proxyToken,
		"--browser-header", "b=Authorization: Bearer "+proxyBearer,
		"--browser", "c="+urlC)

	// Each browser's echo tool, by browser name (from the provenance).
	echo := map[string]string{}
	c.waitListed("an echo tool from each of three browsers", func(tools map[string]*mcp.Tool) bool {
		clear(echo)
		for _, n := range toolWithSuffix(tools, "echo") {
			src := source(t, tools[n])
			if b, _ := src["browser"].(string); b != "" && src["cached"] != true && strings.HasPrefix(sites[b], src["origin"].(string)) {
				echo[b] = n
			}
		}
		return len(echo) == 3
	})
	for _, b := range []string{"a", "b", "c"} {
		if got := c.callOK(echo[b], map[string]any{"text": "hello " + b}); got != "hello "+b {
			t.Errorf("browser %s's echo returned %q", b, got)
		}
	}
	if p.upgrades.Load() < 1 {
		t.Error("browser b was not reached through the authenticating proxy")
	}
	if tabs := text(c.call("webmcp_list_tabs", map[string]any{})); !strings.Contains(tabs, `"browser":"b"`) || !strings.Contains(tabs, `"browser":"c"`) {
		t.Errorf("webmcp_list_tabs does not name the browsers: %s", tabs)
	}

	// Site a opened in browser b too: two browsers serve one site, so the
	// tab-level names carry the browser's name.
	c.callOK("webmcp_open_tab", map[string]any{"url": sites["a"] + "/current/", "browser": "b"})
	tools := c.waitListed("site a's echo in browser b under a name with b in it", func(tools map[string]*mcp.Tool) bool {
		for _, n := range toolWithSuffix(tools, "echo") {
			if strings.Contains(n, "_b_tab") {
				return true
			}
		}
		return false
	})
	for _, n := range toolWithSuffix(tools, "echo") {
		if strings.Contains(n, "_b_tab") {
			if got := source(t, tools[n])["browser"]; got != "b" {
				t.Errorf("%s leads to browser %v, want b", n, got)
			}
			if got := c.callOK(n, map[string]any{"text": "a in b"}); got != "a in b" {
				t.Errorf("%s returned %q", n, got)
			}
		}
		if len(n) > 48 {
			t.Errorf("%s is longer than 48 characters", n)
		}
	}
	if _, ok := tools[echo["a"]]; !ok {
		t.Errorf("browser a's echo %s lost its name when browser b opened the same site", echo["a"])
	}

	// Kill c: its tool goes cached, a and b go on.
	c.drainChanges()
	killC()
	c.waitListed("browser c's echo cached after its process was killed", func(tools map[string]*mcp.Tool) bool {
		tl := tools[echo["c"]]
		return tl != nil && source(t, tl)["cached"] == true
	})
	res := c.call(echo["c"], map[string]any{"text": "while down"})
	if !res.IsError || !strings.Contains(text(res), `browser "c" is not connected`) {
		t.Errorf("a call to the killed browser's tool gave isError=%v %q; want an error that says browser c is reconnecting", res.IsError, text(res))
	}
	for _, b := range []string{"a", "b"} {
		if got := c.callOK(echo[b], map[string]any{"text": "during the outage"}); got != "during the outage" {
			t.Errorf("browser %s's echo during c's outage returned %q", b, got)
		}
	}

	// Start c again where it was: its tool comes back live, same name.
	startChromeOnPort(t, sites["c"]+"/current/", portC)
	c.waitListed("browser c's echo live again after its restart", func(tools map[string]*mcp.Tool) bool {
		tl := tools[echo["c"]]
		return tl != nil && source(t, tl)["cached"] != true && source(t, tl)["browser"] == "c"
	})
	for _, b := range []string{"a", "b", "c"} {
		if got := c.callOK(echo[b], map[string]any{"text": "after " + b}); got != "after "+b {
			t.Errorf("browser %s's echo after the restart returned %q", b, got)
		}
	}
	if !c.stderr.waitFor("lost the browser", time.Second) || !strings.Contains(c.stderr.String(), "browser connected") {
		t.Error("the log does not tell the drop and the reconnection")
	}
	for _, secret := range []string{proxyBearer, proxyToken} {
		if strings.Contains(c.stderr.String(), secret) {
			t.Errorf("the log shows the secret %q", secret)
		}
	}
}

// waitListed lists the tools until cond holds, listing again on each
// tools/list_changed (not on a timer); it fails after 30 s without.
func (c *client) waitListed(what string, cond func(map[string]*mcp.Tool) bool) map[string]*mcp.Tool {
	c.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		tools := c.tools()
		if cond(tools) {
			return tools
		}
		select {
		case <-c.changes:
		case <-deadline:
			c.t.Fatalf("timed out waiting for %s; tools: %v", what, names(tools))
		}
	}
}

// freePort returns a loopback TCP port free at the time of the call.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestLaunchRelaunch: launch --relaunch starts the browser again when its
// process is killed, and reopens the start page: the page's tool is cached
// meanwhile and comes back live under the same name, without a client
// restart.
func TestLaunchRelaunch(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	marker := "e2e-relaunch-" + strconv.Itoa(os.Getpid())
	c := start(t, "launch", "--headless", "--relaunch", "--state-dir", "", "--chrome-arg=--e2e-marker="+marker, base+"/current/")
	tools := c.waitListed("the start page's echo", hasSuffix("echo", 1))
	name := toolWithSuffix(tools, "echo")[0]
	if got := c.callOK(name, map[string]any{"text": "first"}); got != "first" {
		t.Fatalf("echo returned %q", got)
	}
	if b, ok := source(t, tools[name])["browser"]; ok {
		t.Errorf("a lone launched browser's tool names a browser (%v)", b)
	}

	main := mainBrowserPID(t, marker)
	c.drainChanges()
	if err := syscall.Kill(main, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.waitListed("the echo cached while the browser is down", func(tools map[string]*mcp.Tool) bool {
		tl := tools[name]
		return tl != nil && source(t, tl)["cached"] == true
	})
	c.waitListed("the echo live again after the relaunch", func(tools map[string]*mcp.Tool) bool {
		tl := tools[name]
		return tl != nil && source(t, tl)["cached"] != true
	})
	if got := c.callOK(name, map[string]any{"text": "again"}); got != "again" {
		t.Errorf("echo after the relaunch returned %q", got)
	}
	if pid := mainBrowserPID(t, marker); pid == main {
		t.Errorf("the browser process %d was not replaced", pid)
	}
	if !strings.Contains(c.stderr.String(), "the browser exited") {
		t.Error("the log does not say the browser exited")
	}
}

// mainBrowserPID returns the browser process (not a renderer or other
// helper) whose command line holds marker.
func mainBrowserPID(t *testing.T, marker string) int {
	t.Helper()
	for _, pid := range browserPIDs(marker) {
		cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err == nil && !strings.Contains(string(cmdline), "--type=") {
			return pid
		}
	}
	t.Fatalf("no browser process with %s", marker)
	return 0
}

// TestMultiBrowserBlip: the connection to a browser behind the proxy is cut
// (a network blip: the browser and its tab stay). Its tool goes cached, the
// other browser's tool keeps answering, the server reconnects on its own
// without reloading the person's tab, and the tab's document, whose page
// script the lost connection installed, is read live again on the new one:
// its tool is listed live before any call, and answers under the same name.
func TestMultiBrowserBlip(t *testing.T) {
	t.Parallel()
	sites := map[string]string{"a": serveFixtures(t), "b": serveFixtures(t)}
	urlA := startChrome(t, "about:blank")
	urlB := startChrome(t, "about:blank")
	p := startAuthProxy(t, urlB, false)
	wire := startWire(t, strings.TrimPrefix(p.srv.URL, "http://"))
	c := startEnv(t, []string{"WEBMCP_CDP_BROWSER_HEADER=b=Authorization: Bearer " + proxyBearer}, "attach", "--state-dir", "", "--browser", "a="+urlA, "--browser", "b=http://"+wire.addr+"/?token="+proxyToken)
	c.tools() // answered once each browser's first attempt to connect is over
	echo := map[string]string{}
	for _, b := range []string{"a", "b"} {
		c.callOK("webmcp_open_tab", map[string]any{"url": sites[b] + "/current/", "browser": b})
	}
	c.waitListed("an echo tool in each browser", func(tools map[string]*mcp.Tool) bool {
		for _, n := range toolWithSuffix(tools, "echo") {
			if b, _ := source(t, tools[n])["browser"].(string); b != "" {
				echo[b] = n
			}
		}
		return len(echo) == 2
	})

	c.drainChanges()
	wire.cut()
	c.waitListed("browser b's echo cached after the blip", func(tools map[string]*mcp.Tool) bool {
		tl := tools[echo["b"]]
		return tl != nil && source(t, tl)["cached"] == true
	})
	if got := c.callOK(echo["a"], map[string]any{"text": "a goes on"}); got != "a goes on" {
		t.Errorf("browser a's echo during b's blip returned %q", got)
	}
	if !c.stderr.waitFor("browser reconnected", 30*time.Second) {
		t.Fatal("browser b was not reconnected after the blip")
	}
	// The tab is still there with the same document: its page script,
	// installed by the lost connection, is read live again on the new one
	// (the same marks: the replayed bridge hand-off and the same binding),
	// without a reload and before any call.
	c.waitListed("browser b's echo live again", func(tools map[string]*mcp.Tool) bool {
		tl := tools[echo["b"]]
		return tl != nil && source(t, tl)["cached"] != true && source(t, tl)["browser"] == "b"
	})
	if got := c.callOK(echo["b"], map[string]any{"text": "b is back"}); got != "b is back" {
		t.Errorf("browser b's echo after the blip returned %q", got)
	}
	// The old page script's binding reaches the new connection too: a tool
	// the page registers now is listed (the page is driven over a CDP
	// connection of the test's own, straight to browser b).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := cdp.Attach(ctx, cdp.Endpoint{BrowserURL: urlB}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got := existingPage(ctx, t, conn, sites["b"]+"/current/").eval("toggleExtra().then(String)"); got != "true" {
		t.Fatalf("toggleExtra() in browser b's tab = %q, want true", got)
	}
	c.waitListed("the tool browser b's page registered after the blip", func(tools map[string]*mcp.Tool) bool {
		for _, n := range toolWithSuffix(tools, "extra") {
			if src := source(t, tools[n]); src["browser"] == "b" && src["cached"] != true {
				return true
			}
		}
		return false
	})
	if p.upgrades.Load() < 2 {
		t.Errorf("the proxy let %d WebSocket upgrades through, want a second one after the blip", p.upgrades.Load())
	}
	if strings.Contains(c.stderr.String(), "reloading a tab") {
		t.Error("a tab was reloaded after the blip; a reconnection must leave the person's tabs alone")
	}
}

// existingPage attaches to the open tab showing url in the browser behind
// conn.
func existingPage(ctx context.Context, t *testing.T, conn *cdp.Conn, url string) *cdpPage {
	t.Helper()
	var targets target.GetTargetsResult
	if err := conn.Browser().Call(ctx, target.CommandGetTargets, &target.GetTargetsParams{}, &targets); err != nil {
		t.Fatal(err)
	}
	for _, ti := range targets.TargetInfos {
		if ti.Type != "page" || ti.URL != url {
			continue
		}
		var attached target.AttachToTargetResult
		if err := conn.Browser().Call(ctx, target.CommandAttachToTarget, &target.AttachToTargetParams{TargetID: ti.TargetID, Flatten: ptrTo(true)}, &attached); err != nil {
			t.Fatal(err)
		}
		return &cdpPage{t: t, ctx: ctx, sess: conn.Attach(attached.SessionID)}
	}
	t.Fatalf("no tab shows %s", url)
	return nil
}

// wire is a loopback TCP forwarder whose connections can be cut at once, as
// a network blip does, while it keeps accepting new ones.
type wire struct {
	addr  string
	mu    sync.Mutex
	conns []net.Conn
}

func startWire(t *testing.T, target string) *wire {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := &wire{addr: l.Addr().String()}
	t.Cleanup(func() { l.Close(); w.cut() })
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			w.mu.Lock()
			w.conns = append(w.conns, in, out)
			w.mu.Unlock()
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	return w
}

// cut closes every connection open now.
func (w *wire) cut() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.conns {
		c.Close()
	}
	w.conns = nil
}
