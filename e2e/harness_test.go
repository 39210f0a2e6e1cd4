// Package e2e drives the real webmcp-cdp binary as an MCP stdio server with
// the go-sdk client, against a real Chromium and the fixture pages served on
// 127.0.0.1. Chromium is required: without it the tests fail and say how to
// install it.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/fixtures"
)

// binary is the webmcp-cdp built by TestMain.
var binary string

// smokeTests are the e2e tests `go test -short` runs, a few seconds in
// all: launch, list and call (the notes app, the demo), an MCP-B page
// server, CI mode's inspect and attach to a running browser. The README's
// test command runs every test.
const smokeTests = "^(TestNotesApp|TestDemoExit|TestMCPBPageServer|TestCIInspectGood|TestAttach)$"

// e2eParallel is how many tests run at once when -parallel is not given.
// Each runs its own webmcp-cdp and most their own Chromium; on CI's 2 cores
// 8 at once keeps the CPU busy without starving any of them (measured in
// docs/decisions/2026-12-03-parallel-e2e.md).
const e2eParallel = 8

func TestMain(m *testing.M) {
	if _, err := cdp.FindChrome(""); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: these tests need a real Chromium:", err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "webmcp-cdp-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "webmcp-cdp")
	// Every webmcp-cdp the tests start keeps its cached tools here, not in
	// the machine's ~/.local/state: one run must not see another's tools.
	if err := os.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state")); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	// With -race (the README's test command) the binary under test is a
	// race build too, so that races in webmcp-cdp fail the e2e tests.
	// Otherwise it is built as the release builds it (packaging/npm/pack.sh:
	// no cgo, -trimpath), so that TestNpmPackages's build of the release
	// binary finds every package compiled already.
	build := exec.Command("go", "build", "-trimpath", "-o", binary, "../cmd/webmcp-cdp")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if raceBuild {
		build = exec.Command("go", "build", "-race", "-o", binary, "../cmd/webmcp-cdp")
	}
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building webmcp-cdp:", err)
		os.Exit(1)
	}
	// The tests mostly wait on Chromium, a page or a server, not the CPU:
	// unless -parallel is given, run up to e2eParallel of them at once
	// rather than GOMAXPROCS (2 on CI's machine).
	flag.Parse()
	given := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if !given["test.parallel"] {
		flag.Set("test.parallel", strconv.Itoa(e2eParallel))
	}
	// -short runs the smoke set alone, unless -run names tests.
	if testing.Short() && !given["test.run"] {
		flag.Set("test.run", smokeTests)
	}
	code := m.Run()
	stopGrid()        // grid_harness_test.go: started by the first test that needs it
	stopPrometheus()  // prometheus_harness_test.go: likewise
	stopBrowserless() // browserless_test.go: likewise
	os.RemoveAll(dir)
	os.Exit(code)
}

// serveFixtures serves the fixture pages on 127.0.0.1 and returns the base
// URL (no trailing slash).
func serveFixtures(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(fixtures.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// client is a go-sdk client session on a webmcp-cdp subprocess.
type client struct {
	t       testing.TB
	cs      *mcp.ClientSession
	cmd     *exec.Cmd
	stderr  *syncBuffer
	changes chan struct{}
}

type syncBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{} // closed and replaced on every write
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wrote != nil {
		close(s.wrote)
		s.wrote = nil
	}
	return s.b.Write(p)
}

// waitFor reports whether sub appears in the buffer within d, waking on
// each write rather than polling.
func (s *syncBuffer) waitFor(sub string, d time.Duration) bool { return s.waitForN(sub, 1, d) }

// waitForN reports whether sub appears n times in the buffer within d.
func (s *syncBuffer) waitForN(sub string, n int, d time.Duration) bool {
	return s.waitUntil(func(text string) bool { return strings.Count(text, sub) >= n }, d)
}

// waitForAny reports whether any of subs appears in the buffer within d.
func (s *syncBuffer) waitForAny(subs []string, d time.Duration) bool {
	return s.waitUntil(func(text string) bool {
		return slices.ContainsFunc(subs, func(sub string) bool { return strings.Contains(text, sub) })
	}, d)
}

// waitUntil reports whether the buffer's text satisfies match within d,
// waking on each write rather than polling.
func (s *syncBuffer) waitUntil(match func(text string) bool, d time.Duration) bool {
	deadline := time.After(d)
	for {
		s.mu.Lock()
		if match(s.b.String()) {
			s.mu.Unlock()
			return true
		}
		if s.wrote == nil {
			s.wrote = make(chan struct{})
		}
		wrote := s.wrote
		s.mu.Unlock()
		select {
		case <-wrote:
		case <-deadline:
			return false
		}
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs webmcp-cdp with args as a stdio MCP server and connects.
func start(t testing.TB, args ...string) *client {
	t.Helper()
	return startWith(t, nil, args...)
}

// startEnv is start with more environment for webmcp-cdp (t.Setenv would
// change it for every test running in parallel).
func startEnv(t testing.TB, env []string, args ...string) *client {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	return startCmd(t, nil, "", cmd)
}

// startWith is start with client options (such as an elicitation handler).
func startWith(t testing.TB, opts *mcp.ClientOptions, args ...string) *client {
	t.Helper()
	return startProto(t, opts, "", args...)
}

// startProto is startWith with the MCP protocol version the client asks
// for ("" for the latest).
func startProto(t testing.TB, opts *mcp.ClientOptions, version string, args ...string) *client {
	t.Helper()
	return startCmd(t, opts, version, exec.Command(binary, args...))
}

// startCmd is startProto with the command that runs webmcp-cdp (a shell
// running a documented recipe, say).
func startCmd(t testing.TB, opts *mcp.ClientOptions, version string, cmd *exec.Cmd) *client {
	t.Helper()
	args := cmd.Args[1:]
	c := &client{t: t, stderr: &syncBuffer{}, changes: make(chan struct{}, 1000)}
	c.cmd = cmd
	c.cmd.Stderr = c.stderr
	// Its own state home: cached tools of another test never show up in
	// this one's lists (a test that restarts on the same state passes
	// --state-dir).
	env := c.cmd.Env
	if env == nil {
		env = os.Environ()
	}
	c.cmd.Env = append(env, "XDG_STATE_HOME="+t.TempDir())
	if opts == nil {
		opts = &mcp.ClientOptions{}
	}
	opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
		select {
		case c.changes <- struct{}{}:
		default:
		}
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, opts)
	// (Room for launch to start a hung browser once more: 15 s, then 30 s.)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := cl.Connect(ctx, &mcp.CommandTransport{Command: c.cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting to webmcp-cdp %v: %v\nstderr:\n%s", args, err, c.stderr.String())
	}
	c.cs = cs
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("webmcp-cdp stderr:\n%s", c.stderr.String())
		}
	})
	return c
}

// tools lists the tools by name. The bound is for a server that hangs: a
// client's first tools/list may rightly wait --wait-tools (10 s by default)
// for start pages that never settle, such as the conformance pages, whose
// frames register and unregister tools until their cases are done.
func (c *client) tools() map[string]*mcp.Tool {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := make(map[string]*mcp.Tool)
	for tl, err := range c.cs.Tools(ctx, nil) { // every page
		if err != nil {
			if ctx.Err() != nil {
				c.dumpGoroutines()
			}
			c.t.Fatalf("tools/list: %v", err)
		}
		out[tl.Name] = tl
	}
	return out
}

// dumpGoroutines asks the webmcp-cdp process for its goroutines (on
// SIGQUIT the Go runtime prints them to stderr and exits), so that a
// request that got no answer shows where the server waits; the stderr goes
// into the failed test's log. It gives the dump up to 3 s to appear.
func (c *client) dumpGoroutines() {
	if c.cmd == nil || c.cmd.Process == nil || c.cmd.Process.Signal(syscall.SIGQUIT) != nil {
		return
	}
	if c.stderr.waitFor("\ngoroutine ", 3*time.Second) {
		// The rest of the dump: the exit that ends it is the SDK's to wait
		// for (its transport owns cmd.Wait), so there is no event here.
		time.Sleep(300 * time.Millisecond)
	}
}

// waitFor polls tools/list until cond holds, and fails after 20 s.
func (c *client) waitFor(what string, cond func(map[string]*mcp.Tool) bool) map[string]*mcp.Tool {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		tools := c.tools()
		if cond(tools) {
			return tools
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %s; tools: %v", what, names(tools))
		}
		// Poll interval: a list_changed sent before the session's
		// subscriptions/listen is in place never comes, and c.changes is
		// waitChange's.
		time.Sleep(40 * time.Millisecond)
	}
}

// toolWithSuffix returns the one page tool whose name ends in _suffix.
func toolWithSuffix(tools map[string]*mcp.Tool, suffix string) []string {
	var out []string
	for n := range tools {
		if strings.HasSuffix(n, "_"+suffix) && !strings.HasPrefix(n, "webmcp_") {
			out = append(out, n)
		}
	}
	return out
}

func hasSuffix(suffix string, n int) func(map[string]*mcp.Tool) bool {
	return func(tools map[string]*mcp.Tool) bool { return len(toolWithSuffix(tools, suffix)) >= n }
}

func names(tools map[string]*mcp.Tool) []string {
	out := make([]string, 0, len(tools))
	for n := range tools {
		out = append(out, n)
	}
	return out
}

// call calls a tool and returns its result.
func (c *client) call(name string, args any) *mcp.CallToolResult {
	c.t.Helper()
	return c.callWithin(name, args, 30*time.Second)
}

// callWithin calls a tool, failing the test when it has no answer within
// d (a bound for a hang), and returns its result.
func (c *client) callWithin(name string, args any, d time.Duration) *mcp.CallToolResult {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// text joins the text content of a result.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// callOK calls a tool and fails the test on isError.
func (c *client) callOK(name string, args any) string {
	c.t.Helper()
	res := c.call(name, args)
	if res.IsError {
		c.t.Fatalf("%s returned isError: %s", name, text(res))
	}
	return text(res)
}

// drainChanges forgets the list_changed notifications received so far.
func (c *client) drainChanges() {
	for {
		select {
		case <-c.changes:
		default:
			return
		}
	}
}

// waitChange waits for a notifications/tools/list_changed.
func (c *client) waitChange(what string) {
	c.t.Helper()
	select {
	case <-c.changes:
	case <-time.After(15 * time.Second):
		c.t.Fatalf("no tools/list_changed after %s", what)
	}
}

// tabs returns webmcp_list_tabs's structured output.
func (c *client) tabs() []struct {
	Tab   int      `json:"tab"`
	URL   string   `json:"url"`
	Tools []string `json:"tools"`
} {
	c.t.Helper()
	res := c.call("webmcp_list_tabs", map[string]any{})
	var out struct {
		Tabs []struct {
			Tab   int      `json:"tab"`
			URL   string   `json:"url"`
			Tools []string `json:"tools"`
		} `json:"tabs"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		c.t.Fatalf("webmcp_list_tabs gave %s: %v", b, err)
	}
	return out.Tabs
}

// source returns a tool's _meta["webmcp-cdp/source"].
func source(t testing.TB, tool *mcp.Tool) map[string]any {
	t.Helper()
	src, ok := tool.Meta["webmcp-cdp/source"].(map[string]any)
	if !ok {
		t.Fatalf("%s has no _meta webmcp-cdp/source: %v", tool.Name, tool.Meta)
	}
	return src
}
