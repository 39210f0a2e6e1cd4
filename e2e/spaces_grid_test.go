package e2e

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The spaces on the real Selenium Grid of grid_harness_test.go (issue 38):
// with launch --selenium and --isolate user, each person's space is a Grid
// session of its own, created at their first request and deleted when the
// space goes idle.

var (
	// spaceOpened and spaceGridSession match the log lines of a space
	// opened and of a Grid session created, with their ids.
	spaceOpened      = regexp.MustCompile(`space opened.*?space=([0-9a-f]+)`)
	spaceGridSession = regexp.MustCompile(`Grid session created.*?session=([0-9a-f]+)`)
)

// logged returns the first group of every match of re in the hub's log.
func (h *spacesHub) logged(re *regexp.Regexp) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(h.logs.String(), -1) {
		out = append(out, m[1])
	}
	return out
}

// waitLogged waits (at most d) until re matches n times in the hub's log,
// waking on each write (the channel syncBuffer.waitFor waits on), and
// returns logged(re).
func (h *spacesHub) waitLogged(t *testing.T, re *regexp.Regexp, n int, d time.Duration) []string {
	t.Helper()
	deadline := time.After(d)
	for b := &h.logs.buf; ; {
		b.mu.Lock()
		if b.wrote == nil {
			b.wrote = make(chan struct{})
		}
		wrote := b.wrote
		b.mu.Unlock()
		if got := h.logged(re); len(got) >= n {
			return got
		}
		select {
		case <-wrote:
		case <-deadline:
			t.Fatalf("the log has %d lines that match %s within %s, want %d:\n%s", len(h.logged(re)), re, d, n, h.logs.String())
		}
	}
}

// gridSpaceIdle is the spaces' --space-idle on the Grid. With 3 s, Alice's
// space went idle while Bob's opened: a space's Grid session took 4 to 12 s
// to open on a 2-core machine at load 18 to 80 (1.3 s unloaded).
const gridSpaceIdle = 20 * time.Second

// startGridSpacesHub is startSpacesHub on the Grid g, its spaces idle after
// gridSpaceIdle. When the test ends, after the hub is killed (SIGKILL: it
// cannot delete its sessions), every session left on the Grid, ours since
// the test has the Grid's turn, is deleted: the next Grid test counts from
// none.
func startGridSpacesHub(t *testing.T, g *testGrid, as *authServer, site string, args ...string) *spacesHub {
	t.Helper()
	t.Cleanup(func() {
		var st gridStatus
		if g.get("/status", &st) != nil {
			return
		}
		for _, n := range st.Nodes {
			for _, s := range n.Slots {
				if s.Session != nil {
					g.do("DELETE", "/session/"+s.Session.SessionID, nil, nil)
				}
			}
		}
	})
	args = append([]string{"launch", "--headless", "--selenium", g.url, "--space-idle", gridSpaceIdle.String()}, args...)
	return startSpacesHub(t, as, append(args, site+"/team/")...)
}

// people opens the spaces of who at once (side by side, so that none goes
// idle while another's Grid session is made), connects each, and returns
// their clients in order once each space is open: its "space opened"
// logged and its start page's tools listed. A space is opened by a bare
// initialize (initialize), which may wait as long as its Grid session takes:
// on a loaded machine longer than a client's 20 s to connect.
func (h *spacesHub) people(t *testing.T, who ...string) []*client {
	t.Helper()
	opened := len(h.logged(spaceOpened)) + len(who)
	answers := make([]string, len(who))
	var wg sync.WaitGroup
	for i, w := range who {
		tok := h.as.token(t, h.as.Issuer, w, "webmcp:read webmcp:call", h.endpoint)
		wg.Go(func() {
			resp, body, err := h.initialize(tok)
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("%s: %s", resp.Status, body)
			}
			if err != nil {
				answers[i] = w + ": " + err.Error()
			}
		})
	}
	wg.Wait()
	if bad := slices.DeleteFunc(answers, func(a string) bool { return a == "" }); len(bad) > 0 {
		t.Fatalf("opening the spaces: %v", bad)
	}
	h.waitLogged(t, spaceOpened, opened, 2*time.Minute)
	var out []*client
	for _, w := range who {
		c := h.person(t, w)
		listedTool(c, "whoami") // the start page is there
		out = append(out, c)
	}
	return out
}

// initialize posts an MCP initialize with token, as a client without an
// SDK would, waiting at most two minutes (a Grid's wait for a free slot),
// and returns the answer and its body.
func (h *spacesHub) initialize(token string) (*http.Response, string, error) {
	req, err := http.NewRequest(http.MethodPost, h.endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}`))
	if err != nil {
		return nil, "", err
	}
	req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Authorization": {"Bearer " + token}}
	resp, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, string(body), err
}

// stopGridSpacesHub stops the hub with SIGTERM, which closes every space,
// and waits until the Grid has no session left.
func stopGridSpacesHub(t *testing.T, g *testGrid, hub *spacesHub) {
	t.Helper()
	if err := syscall.Kill(hub.pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	g.waitNoSessions(t, 10*time.Second)
}

// TestSpacesOnGrid: with launch --selenium and --isolate user, Alice and
// Bob get a Grid session each (her sign-in is not his), each deleted when
// its space goes idle, and Alice's next request opens a new one; with
// --browsers 2 a third person gets 503 with Retry-After while the two
// spaces are open. The test has the Grid to itself (gridTurn, as every Grid
// test), so the Grid's sessions are this webmcp-cdp's.
func TestSpacesOnGrid(t *testing.T) {
	t.Parallel()
	site := spacesSite(t)
	as := startAuthServer(t, "http://127.0.0.1:1/mcp") // every token names its hub
	g := startGrid(t)

	t.Run("a Grid session per person, deleted when idle", func(t *testing.T) {
		hub := startGridSpacesHub(t, g, as, site)
		both := hub.people(t, "alice", "bob")
		alice, bob := both[0], both[1]
		alice.callOK(listedTool(alice, "sign_in"), map[string]any{"name": "alice"})
		if a, b := alice.callOK(listedTool(alice, "whoami"), map[string]any{}), bob.callOK(listedTool(bob, "whoami"), map[string]any{}); a != "alice/alice" || b != "-/-" {
			t.Fatalf("Alice signed in: her whoami says %q, Bob's %q; want alice/alice and -/- (nobody)", a, b)
		}
		spaces, ours := hub.logged(spaceOpened), hub.logged(spaceGridSession)
		on := g.sessions(t)
		if len(spaces) != 2 || len(ours) != 2 || len(on) != 2 || on[ours[0]] == "" || on[ours[1]] == "" {
			t.Fatalf("want two spaces on two Grid sessions; the log names spaces %v and sessions %v, the Grid has %v", spaces, ours, on)
		}
		t.Logf("Alice and Bob on the Grid's sessions %v", on)

		// Neither calls again: both spaces close once idle, and with them
		// their sessions.
		for _, id := range spaces {
			if !hub.logs.waitFor("space closed space="+id, gridSpaceIdle+time.Minute) {
				t.Fatalf("space %s did not close when idle:\n%s", id, hub.logs.String())
			}
		}
		if n := strings.Count(hub.logs.String(), "why=idle"); n != 2 {
			t.Errorf("%d of the two spaces closed as idle:\n%s", n, hub.logs.String())
		}
		// Polled (/status, every 100 ms): the Grid has no event to wait on.
		g.waitNoSessions(t, 10*time.Second)

		// Alice comes back: a new space on a new Grid session, a new
		// browser, where she is not signed in.
		alice = hub.people(t, "alice")[0]
		if got := alice.callOK(listedTool(alice, "whoami"), map[string]any{}); got != "-/-" {
			t.Errorf("Alice's new space shows %q signed in", got)
		}
		again := hub.logged(spaceGridSession)
		on = g.sessions(t)
		if len(again) != 3 || slices.Contains(ours, again[2]) || len(on) != 1 || on[again[2]] == "" {
			t.Fatalf("Alice's return: the log names sessions %v, the Grid has %v; want one new session", again, on)
		}
		stopGridSpacesHub(t, g, hub)
	})

	t.Run("--browsers 2: a third person is turned away", func(t *testing.T) {
		hub := startGridSpacesHub(t, g, as, site, "--browsers", "2")
		hub.people(t, "alice", "bob")
		resp, body, err := hub.initialize(as.token(t, as.Issuer, "carol", "webmcp:read webmcp:call", hub.endpoint))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "maximum of 2 spaces") {
			t.Errorf("Carol while Alice's and Bob's spaces are open with --browsers 2: %s, Retry-After %q, %s", resp.Status, resp.Header.Get("Retry-After"), body)
		}
		if on := g.sessions(t); len(on) != 2 || len(hub.logged(spaceOpened)) != 2 {
			t.Errorf("the Grid has %v, the log names spaces %v; want Alice's and Bob's alone", on, hub.logged(spaceOpened))
		}
		stopGridSpacesHub(t, g, hub)
	})
}
