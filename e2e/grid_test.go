package e2e

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Selenium Grid tests (issue 28): launch --selenium starts browsers as
// Grid sessions on the real Grid of grid_harness_test.go, keeps them alive,
// replaces one the Grid ended, and deletes them all on exit.

// sessionCreated matches the log line of a new Grid session.
var sessionCreated = regexp.MustCompile(`Grid session created browser=(\S+) session=([0-9a-f]+)`)

// gridSessionsOf returns the sessions the server's log says it created, by
// browser name (the latest for each).
func gridSessionsOf(c *client) map[string]string {
	out := map[string]string{}
	for _, m := range sessionCreated.FindAllStringSubmatch(c.stderr.String(), -1) {
		out[m[1]] = m[2]
	}
	return out
}

// echoByBrowser waits until each of the browsers has a live echo tool, and
// returns the tools' names by browser: the tab-level names, which carry the
// browser's name (the site-level name goes to whichever tab is live).
func echoByBrowser(t *testing.T, c *client, browsers ...string) map[string]string {
	t.Helper()
	echo := map[string]string{}
	c.waitListed("an echo tool live in each of "+strings.Join(browsers, ", "), func(tools map[string]*mcp.Tool) bool {
		for _, n := range toolWithSuffix(tools, "echo") {
			src := source(t, tools[n])
			if b, _ := src["browser"].(string); b != "" && src["cached"] != true && strings.Contains(n, "_"+b+"_tab") {
				echo[b] = n
			}
		}
		return len(echo) == len(browsers)
	})
	return echo
}

// TestGridLaunch: launch --selenium URL --browsers 2 starts two sessions,
// on the Grid's two nodes; the tools of both browsers are listed and
// answer; a session deleted by hand comes back with its tools under the
// same names; closing the client leaves the Grid with no session within
// 10 s.
func TestGridLaunch(t *testing.T) {
	t.Parallel()
	g := startGrid(t)
	base := serveFixtures(t)
	c := start(t, "launch", "--selenium", g.url, "--browsers", "2", "--headless", "--state-dir", "", base+"/current/")
	c.tools()
	c.callOK("webmcp_open_tab", map[string]any{"url": base + "/current/", "browser": "grid2"})
	echo := echoByBrowser(t, c, "grid1", "grid2")
	for b, n := range echo {
		if got := c.callOK(n, map[string]any{"text": "hi " + b}); got != "hi "+b {
			t.Fatalf("%s's echo returned %q", b, got)
		}
	}
	ids := gridSessionsOf(c)
	on := g.sessions(t)
	if len(ids) != 2 || len(on) != 2 || on[ids["grid1"]] == "" || on[ids["grid1"]] == on[ids["grid2"]] {
		t.Fatalf("want the two browsers' sessions %v on the Grid's two nodes; the Grid has %v", ids, on)
	}

	// An operator deletes grid1's session: the server learns it from the
	// Grid (not from the CDP socket, which the Grid leaves open), starts a
	// new session with the start page, and grid1's tools are live again
	// under the same names; grid2 goes on. (The cached spell is too short,
	// a keep-alive period and a session start, for a test to catch.)
	siteEcho := ""
	for _, n := range toolWithSuffix(c.tools(), "echo") {
		if !strings.Contains(n, "_tab") {
			siteEcho = n
		}
	}
	if err := g.do("DELETE", "/session/"+ids["grid1"], nil, nil); err != nil {
		t.Fatal(err)
	}
	if !c.stderr.waitFor("the Grid ended session "+ids["grid1"], 3*gridSessionTimeout) {
		t.Fatal("the server did not notice that the Grid ended grid1's session")
	}
	// Meanwhile the site-level name reaches the live tab, grid2's (the
	// tab-level names are there only while several tabs have the tool).
	if got := c.callOK(siteEcho, map[string]any{"text": "grid2 goes on"}); got != "grid2 goes on" {
		t.Errorf("the site's echo while grid1 is replaced returned %q", got)
	}
	if !c.stderr.waitFor("browser reconnected", 30*time.Second) {
		t.Fatal("grid1 was not given a new session")
	}
	c.waitListed("grid1's echo live again under the same name", func(tools map[string]*mcp.Tool) bool {
		tl := tools[echo["grid1"]]
		return tl != nil && source(t, tl)["cached"] != true
	})
	if got := c.callOK(echo["grid1"], map[string]any{"text": "back"}); got != "back" {
		t.Errorf("grid1's echo in its new session returned %q", got)
	}
	if again := gridSessionsOf(c)["grid1"]; again == ids["grid1"] || g.sessions(t)[again] == "" {
		t.Errorf("grid1 was not given a new session on the Grid (log: %s, Grid: %v)", again, g.sessions(t))
	}

	// The client goes: every session is deleted.
	c.cs.Close()
	g.waitNoSessions(t, 10*time.Second)
}

// TestGridKeptAlive: an agent idle for longer than the Grid's session
// timeout keeps its browser: a session made at the same time by a plain
// WebDriver client, which sends nothing, is ended by the Grid, while the
// server's session is still the same one and its tool answers. SIGTERM
// then deletes it.
func TestGridKeptAlive(t *testing.T) {
	t.Parallel()
	g := startGrid(t)
	base := serveFixtures(t)
	c := start(t, "launch", "--selenium", g.url, "--headless", "--state-dir", "", base+"/current/")
	tools := c.waitListed("the start page's echo", hasSuffix("echo", 1))
	name := toolWithSuffix(tools, "echo")[0]
	ours := gridSessionsOf(c)["grid"]
	idle := g.newSession(t)
	began := time.Now()
	// Without that, the timeout is not in force and this test shows nothing.
	g.waitSessions(t, 3*gridSessionTimeout+60*time.Second, "ended a plain idle session", func(s map[string]string) bool { return s[idle] == "" })
	if d := time.Since(began); d < 2*gridSessionTimeout {
		// The Grid ends an idle session at its first sweep after the
		// timeout: wait out twice the timeout in any case. The idle time
		// is what is tested, not a wait for an event.
		time.Sleep(2*gridSessionTimeout - d)
	}
	if got := c.callOK(name, map[string]any{"text": "still here"}); got != "still here" {
		t.Fatalf("the echo after %s idle returned %q", time.Since(began), got)
	}
	if _, ok := g.sessions(t)[ours]; !ok || len(sessionCreated.FindAllString(c.stderr.String(), -1)) != 1 {
		t.Errorf("the server's session %s did not last (the log shows %d sessions created)", ours, len(sessionCreated.FindAllString(c.stderr.String(), -1)))
	}
	t.Logf("idle for %s (session timeout %s); a plain session was ended by the Grid meanwhile", time.Since(began).Round(time.Second), gridSessionTimeout)
	// SIGTERM, not the client going: the session is deleted all the same.
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	g.waitNoSessions(t, 10*time.Second)
}

// TestGridLeftovers: a server killed with SIGKILL cannot delete its
// session; the next start names it in the log.
func TestGridLeftovers(t *testing.T) {
	t.Parallel()
	g := startGrid(t)
	base := serveFixtures(t)
	first := start(t, "launch", "--selenium", g.url, "--headless", "--state-dir", "", base+"/current/")
	first.waitListed("the start page's echo", hasSuffix("echo", 1))
	left := gridSessionsOf(first)["grid"]
	t.Cleanup(func() { g.do("DELETE", "/session/"+left, nil, nil) })
	// (The client's transport reaps it.)
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	second := start(t, "launch", "--selenium", g.url, "--headless", "--state-dir", "")
	second.tools()
	if !second.stderr.waitFor(left, 10*time.Second) || !strings.Contains(second.stderr.String(), "another webmcp-cdp created") {
		t.Fatalf("the second start does not name the session %s the killed one left:\n%s", left, second.stderr.String())
	}
	if !strings.Contains(second.stderr.String(), "pid "+strconv.Itoa(first.cmd.Process.Pid)) {
		t.Errorf("the log does not name the process that left the session (pid %d)", first.cmd.Process.Pid)
	}
	second.cs.Close()
	// Deleted here, or already ended by the nodes' idle timeout
	// (gridSessionTimeout), which a loaded machine can reach by now.
	if err := g.do("DELETE", "/session/"+left, nil, nil); err != nil && !strings.Contains(err.Error(), "invalid session id") {
		t.Fatal(err)
	}
	g.waitNoSessions(t, 10*time.Second)
}

// TestGridSaysNo: a Grid that cannot give a browser ends launch at once
// with exit code 2 and one line that names the Grid's answer.
func TestGridSaysNo(t *testing.T) {
	t.Parallel()
	g := startGrid(t)
	down := "http://127.0.0.1:" + strconv.Itoa(freePort(t))
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		full bool // the Grid's two slots are taken
		want []string
	}{
		{"down", []string{"--selenium", down}, nil, false, []string{"Selenium Grid " + down + " does not answer", "connection refused"}},
		{"unknown capabilities", []string{"--selenium", g.url}, []string{`SELENIUM_REMOTE_CAPABILITIES={"browserName":"firefox"}`}, false, []string{"said 500 session not created", "check SELENIUM_REMOTE_CAPABILITIES"}},
		// The Grid words the wait's end "New session request timed out",
		// or, on a loaded machine, "Timed out creating session": both are
		// its 500, which webmcp-cdp reads as no free slot.
		{"no free slot", []string{"--selenium", g.url}, nil, true, []string{"said 500 session not created", "no free slot"}},
		{"capabilities not JSON", nil, []string{"SELENIUM_REMOTE_URL=" + g.url, "SELENIUM_REMOTE_CAPABILITIES={browserName: chrome}"}, false, []string{"--selenium-capabilities (or $SELENIUM_REMOTE_CAPABILITIES): not a JSON object"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.full {
				// Held: the launch below waits for a slot longer than the
				// nodes' idle timeout.
				g.heldSession(t)
				g.heldSession(t)
			}
			cmd := exec.Command(binary, append([]string{"launch", "--headless", "--state-dir", ""}, tc.args...)...)
			cmd.Env = append(os.Environ(), tc.env...)
			var stderr syncBuffer
			cmd.Stderr = &stderr
			began := time.Now()
			err := cmd.Run()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 2 {
				t.Fatalf("launch %v: %v, want exit code 2\n%s", tc.args, err, stderr.String())
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "webmcp-cdp: ") {
				t.Fatalf("the last line is not the error: %q", last)
			}
			for _, w := range tc.want {
				if !strings.Contains(last, w) {
					t.Errorf("the error %q lacks %q", last, w)
				}
			}
			t.Logf("%s after %s", last, time.Since(began).Round(time.Millisecond))
		})
	}
	g.waitNoSessions(t, 10*time.Second)
}
