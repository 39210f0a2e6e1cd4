package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/fixtures"
	"github.com/webmcp-cdp/webmcp-cdp/hub/ci"
)

// recordSite serves the fixture pages and /record/price, whose price the
// test changes: the fixture's get_price returns what it says.
func recordSite(t *testing.T) (base string, price *atomic.Int64) {
	t.Helper()
	price = &atomic.Int64{}
	price.Store(12)
	mux := http.NewServeMux()
	mux.Handle("/", fixtures.Handler())
	mux.HandleFunc("/record/price", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(map[string]any{"sku": r.URL.Query().Get("sku"), "price": price.Load()})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, price
}

// TestRecordSession is issue 31's "done when": three calls made by real MCP
// clients over HTTP (one on the 2025-11-25 revision, with a session, two on
// 2026-07-28, without) are recorded by --record, then a reload of the tab
// and a fourth call; `test FILE` replays them in a fresh browser and passes; with the page's server changed so that
// get_price returns another price, `test` exits 1 with a diff naming that
// step and the page's console error; `test --update` rewrites that snapshot
// (keeping an ignore mark) and the next `test` passes. The password never
// reaches the file, nor the status page's download of the session.
func TestRecordSession(t *testing.T) {
	t.Parallel()
	base, price := recordSite(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "session.yaml")
	const password = "hunter2-correct-horse"

	endpoint := startHTTP(t, "launch", "--headless", "--http", "127.0.0.1:0", "--record", file, base+"/record/index.html")
	old := httpClientWith(t, endpoint, "", nil, "2025-11-25")
	tools := old.waitFor("the record fixture's tools", hasSuffix("get_price", 1))
	name := func(tool string) string {
		n := toolWithSuffix(tools, tool)
		if len(n) != 1 {
			t.Fatalf("want one tool ending in _%s, got %v", tool, n)
		}
		return n[0]
	}
	if got := old.callOK(name("sign_in"), map[string]any{"user": "alice", "password": password}); got != "Welcome back, alice." {
		t.Fatalf("sign_in: %q", got)
	}
	fresh := httpClient(t, endpoint, "") // 2026-07-28: a session per request
	if got := fresh.callOK(name("add_item"), map[string]any{"name": "desk lamp"}); !strings.Contains(got, `"count":1`) {
		t.Fatalf("add_item: %q", got)
	}
	if got := fresh.callOK(name("get_price"), map[string]any{"sku": "A1"}); !strings.Contains(got, `"price":12`) {
		t.Fatalf("get_price: %q", got)
	}
	// Read-only own tools are not recorded; a reload is, as a new page of
	// the same URL: the cart is empty again, in the session as in the
	// replay.
	tabs := fresh.tabs()
	if len(tabs) != 1 {
		t.Fatalf("tabs: %+v", tabs)
	}
	fresh.callOK("webmcp_reload_tab", map[string]any{"tab": tabs[0].Tab})
	fresh.waitFor("the tools back after the reload", hasSuffix("add_item", 1))
	if got := fresh.callOK(name("add_item"), map[string]any{"name": "chair"}); !strings.Contains(got, `"count":1`) {
		t.Fatalf("add_item after the reload: %q", got)
	}

	// The file is written as the session goes: it has the three calls
	// while webmcp-cdp still runs.
	recorded, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded:\n%s", recorded)
	if strings.Contains(string(recorded), password) {
		t.Fatalf("the password is in the recorded file:\n%s", recorded)
	}
	spec, err := ci.ParseSpec(recorded)
	if err != nil {
		t.Fatalf("the recorded file is not a spec: %v\n%s", err, recorded)
	}
	if len(spec.Secrets) != 1 || spec.Secrets[0] != "PASSWORD" || len(spec.Pages) != 2 || len(spec.Pages[0].Calls) != 3 || len(spec.Pages[1].Calls) != 1 || spec.Pages[1].URL != "record/" {
		t.Fatalf("recorded spec: secrets %v, %d pages\n%s", spec.Secrets, len(spec.Pages), recorded)
	}
	if got := string(spec.Pages[0].Calls[0].Args); got != `{"password":"${PASSWORD}","user":"alice"}` {
		t.Errorf("sign_in's args are recorded as %s", got)
	}
	// The tab's URL, as the browser has it (the file server redirects
	// index.html to its directory), relative to the origin kept in base.
	if spec.Base != base+"/" || spec.Pages[0].URL != "record/" {
		t.Errorf("base %q, url %q", spec.Base, spec.Pages[0].URL)
	}
	for i, tool := range []string{"sign_in", "add_item", "get_price"} {
		if c := spec.Pages[0].Calls[i]; c.Tool != tool || len(c.Expect.Snapshot) == 0 {
			t.Errorf("step %d: tool %q, snapshot %s", i+1, c.Tool, c.Expect.Snapshot)
		}
	}

	// The status page offers the same calls as a spec, password left out.
	download := get(t, strings.TrimSuffix(endpoint, "/mcp")+"/session.yaml", nil)
	if strings.Contains(download, password) || !strings.Contains(download, "tool: get_price") || !strings.Contains(download, "${PASSWORD}") {
		t.Errorf("the status page's session spec:\n%s", download)
	}

	env := append(os.Environ(), "PASSWORD="+password)
	run := func(args ...string) (string, string, int) {
		t.Helper()
		cmd := ciCommand(append([]string{"test", "--timeout", "30s"}, args...)...)
		cmd.Env = env
		return runCommand(t, cmd)
	}

	// Replayed in a fresh browser, it passes.
	stdout, stderr, code := run(file)
	if code != 0 || lastLine(stdout) != "6 passed, 0 failed" {
		t.Fatalf("test exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	// Without the secret, it stops before the browser and says which.
	cmd := ciCommand("test", file)
	cmd.Env = os.Environ()
	for i, kv := range cmd.Env {
		if strings.HasPrefix(kv, "PASSWORD=") {
			cmd.Env[i] = "PASSWORD_UNSET_BY_TEST="
		}
	}
	_, stderr, code = runCommand(t, cmd)
	if code != 2 || !strings.Contains(stderr, "PASSWORD") || !strings.Contains(stderr, "not set in the environment") {
		t.Errorf("test without PASSWORD: exit %d\n%s", code, stderr)
	}

	// The page's server changes: get_price returns another price, and the
	// page logs a console error about it.
	price.Store(150)
	junit := filepath.Join(dir, "junit.xml")
	env = append(env, "GITHUB_ACTIONS=true")
	stdout, stderr, code = run(file, "--junit", junit)
	env = env[:len(env)-1]
	if code != 1 {
		t.Fatalf("test after the change: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"FAIL  step 3: get_price: the result differs from the snapshot",
		"tool: get_price",
		`arguments: {"sku":"A1"}`,
		"- $.price: 12",
		"+ $.price: 150",
		"price of A1 is over 100: 150",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the failure lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stdout, "\n5 passed, 1 failed\n") {
		t.Errorf("no summary line \"5 passed, 1 failed\"")
	}
	if doc := readJUnit(t, junit); doc.Failures != 1 {
		t.Errorf("JUnit: %+v", doc)
	}
	if !regexp.MustCompile(`::error file=[^,]*session.yaml,line=\d+,col=\d+,title=record/%3A step 3%3A get_price::the result differs from the snapshot%0Atool: get_price`).MatchString(stdout) {
		t.Errorf("no GitHub annotation on the step's line:\n%s", stdout)
	}

	// A mark the person added: currency is not compared. --update keeps it.
	marked := regexp.MustCompile(`(?s)(tool: get_price\n.*?expect:\n)`).ReplaceAllString(string(recorded), "${1}          ignore: [$.currency]\n")
	if marked == string(recorded) {
		t.Fatalf("could not mark the get_price step:\n%s", recorded)
	}
	if err := os.WriteFile(file, []byte(marked), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = run(file, "--update")
	if code != 0 {
		t.Fatalf("test --update: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "--update: rewrote 1 snapshot") || !strings.Contains(stdout, "step 3: get_price") || !strings.Contains(stdout, "+ $.price: 150") {
		t.Errorf("--update did not say what changed:\n%s", stdout)
	}
	updated, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("updated:\n%s", updated)
	after, err := ci.ParseSpec(updated)
	if err != nil {
		t.Fatalf("the updated file is not a spec: %v", err)
	}
	got := after.Pages[0].Calls[2].Expect
	if string(got.Snapshot) != `{"currency":"EUR","price":150,"sku":"A1"}` || len(got.Ignore) != 1 || got.Ignore[0] != "$.currency" {
		t.Errorf("after --update: snapshot %s, ignore %v", got.Snapshot, got.Ignore)
	}
	if strings.Contains(string(updated), password) {
		t.Errorf("the password is in the updated file")
	}
	stdout, stderr, code = run(file)
	if code != 0 {
		t.Fatalf("test after --update: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestRecordStdio: calls over stdio are recorded the same way, with the
// file named by the config file's record key, and the replay passes. The
// page's URL carries secrets in its query and fragment: the file has
// placeholders there instead, marked, and the replay opens the URL with
// them (this page needs no token).
func TestRecordStdio(t *testing.T) {
	t.Parallel()
	base, _ := recordSite(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "stdio.yaml")
	config := filepath.Join(dir, "webmcp-cdp.yaml")
	if err := os.WriteFile(config, []byte("record: "+file+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const token, idToken = "tok-e2e-41b7", "idt-e2e-93c2"
	c := start(t, "launch", "--headless", "--config", config, base+"/record/index.html?tab=cart&access_token="+token+"#id_token="+idToken+"&state=s1")
	tools := c.waitFor("the record fixture's tools", hasSuffix("add_item", 1))
	add := toolWithSuffix(tools, "add_item")[0]
	c.callOK(add, map[string]any{"name": "a"})
	c.callOK(add, map[string]any{"name": "b"})
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := ci.ParseSpec(data)
	if err != nil || len(spec.Pages) != 1 || len(spec.Pages[0].Calls) != 2 || string(spec.Pages[0].Calls[1].Expect.Snapshot) != `{"count":2,"items":["a","b"]}` {
		t.Fatalf("recorded (%v):\n%s", err, data)
	}
	if strings.Contains(string(data), token) || strings.Contains(string(data), idToken) {
		t.Errorf("a secret of the page's URL is in the file:\n%s", data)
	}
	if want := "record/?tab=cart&access_token=${ACCESS_TOKEN}#id_token=${ID_TOKEN}&state=s1"; spec.Pages[0].URL != want || len(spec.Secrets) != 0 ||
		!strings.Contains(string(data), "# redacted: fill in ACCESS_TOKEN, ID_TOKEN by hand") {
		t.Errorf("the page's URL %q, secrets %v, want %q and a comment saying it was redacted:\n%s", spec.Pages[0].URL, spec.Secrets, want, data)
	}
	stdout, stderr, code := ciRun(t, "", "test", file)
	if code != 0 || lastLine(stdout) != "3 passed, 0 failed" {
		t.Fatalf("test exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
