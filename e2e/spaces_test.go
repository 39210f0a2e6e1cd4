package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The spaces tests (--isolate user, issue 38) run a hub that a team's
// agents reach over HTTP with OAuth tokens of a real oidc-provider: each
// person (a client of its own: alice, bob, carol, p01 to p20) gets a
// browser context of their own in one shared Chromium. The site's pages
// keep who signed in (a cookie and localStorage) and count the calls that
// reach them.

// spacesSite serves /team/ (sign_in, whoami) and /private/ (private_count:
// the calls that reached this page; a cached tool, listed while its page
// is closed).
func spacesSite(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	page := func(script string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<!doctype html><title>%s</title><script>\nconst mc = navigator.modelContext;\n%s\n</script>", r.URL.Path, script)
		}
	}
	mux.HandleFunc("/team/", page(`
mc.registerTool({name: 'sign_in', description: 'Sign in to the team site as a person.',
  inputSchema: {type: 'object', properties: {name: {type: 'string'}}, required: ['name']},
  execute: ({name}) => { document.cookie = 'who=' + name + '; path=/'; localStorage.setItem('who', name); return 'signed in as ' + name; }});
mc.registerTool({name: 'whoami', description: 'Who is signed in to the team site (cookie and localStorage).',
  inputSchema: {type: 'object', properties: {}},
  execute: () => { const m = document.cookie.match(/(?:^|; )who=([^;]*)/); return (m ? m[1] : '-') + '/' + (localStorage.getItem('who') || '-'); }});`))
	mux.HandleFunc("/private/", page(`
let calls = 0;
mc.registerTool({name: 'private_count', description: 'Count the calls that reached this page.',
  inputSchema: {type: 'object', properties: {}}, annotations: {cache: true},
  execute: () => String(++calls)});`))
	return serveHandler(t, mux)
}

// teamUserscript is an operator's userscript on the team site: its
// team_greeting says hello to who is signed in, in the page's own context.
const teamUserscript = `// ==UserScript==
// @name  Team greeting
// @match http://127.0.0.1:*/team/*
// @grant none
// ==/UserScript==
document.modelContext.registerTool({
  name: 'team_greeting', description: 'Say hello to who is signed in to the team site.',
  inputSchema: {type: 'object', properties: {}},
  execute: () => { const m = document.cookie.match(/(?:^|; )who=([^;]*)/); return 'hello ' + (m ? m[1] : '-'); }});
`

// mcpbResourceOnly is a page server with a resource and no tool: a tab of
// it changes its person's resources, not their tools.
const mcpbResourceOnly = `
import { McpServer } from "@modelcontextprotocol/server";
import { TabServerTransport } from "@mcp-b/transports";

const server = new McpServer({ name: "notes", version: "1.0.0" });
server.registerResource("note", "note://mine", { mimeType: "text/plain" },
  async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "a note" }] }));
server.connect(new TabServerTransport({ allowedOrigins: [window.location.origin] }));
`

// spacesHub is one webmcp-cdp serving a space per person.
type spacesHub struct {
	endpoint string
	logs     *urlSpotter
	as       *authServer
	pid      int
}

// startSpacesHub runs webmcp-cdp with args on a port of its own whose
// /mcp is the tokens' audience, trusting as, and waits until it serves.
func startSpacesHub(t *testing.T, as *authServer, args ...string) *spacesHub {
	t.Helper()
	port := strconv.Itoa(freePort(t))
	endpoint := "http://127.0.0.1:" + port + "/mcp"
	args = append(args, "--http", "127.0.0.1:"+port, "--oauth-issuer", as.Issuer)
	got, spot, pid := startHTTPProc(t, nil, args...)
	if got != endpoint {
		t.Fatalf("webmcp-cdp serves %s, want %s", got, endpoint)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("webmcp-cdp %v stderr:\n%s", args, spot.String())
		}
	})
	return &spacesHub{endpoint: endpoint, logs: spot, as: as, pid: pid}
}

// person connects who's agent, with a token of its own for this hub.
func (h *spacesHub) person(t *testing.T, who string) *client {
	t.Helper()
	return httpClient(t, h.endpoint, h.as.token(t, h.as.Issuer, who, "webmcp:read webmcp:call", h.endpoint))
}

// listedTool waits until c lists the page tool ending in _suffix and returns
// its name.
func listedTool(c *client, suffix string) string {
	c.t.Helper()
	return toolWithSuffix(c.waitFor(suffix, hasSuffix(suffix, 1)), suffix)[0]
}

// TestSpacesPerPerson: with --oauth-issuer each person works in a browser
// context of their own: what Alice signs in to, the tabs she opens and
// their tools are hers alone; a call by the name of her tool is refused to
// Bob as one that never existed and never reaches her page; Carol, later,
// starts clean; twenty people at once each see only their own sign-in;
// with --isolate none the shared browser is back.
func TestSpacesPerPerson(t *testing.T) {
	t.Parallel()
	site := spacesSite(t)
	as := startAuthServer(t, "http://127.0.0.1:1/mcp") // every token names its hub
	records := t.TempDir()
	scripts := t.TempDir() // the operator's userscript (issue 42), for every space alike
	if err := os.WriteFile(filepath.Join(scripts, "greeting.user.js"), []byte(teamUserscript), 0o644); err != nil {
		t.Fatal(err)
	}
	hub := startSpacesHub(t, as, "launch", "--headless", "--record", filepath.Join(records, "session.yaml"), "--userscript", scripts, site+"/team/")
	bobsNotes := serveMCPB(t, mcpbResourceOnly, nil)

	// Bob's client also tells, at each resources/list_changed, how many
	// tools/list_changed it had received before it (notifications are
	// handled in the order they come, and all come on the session's one
	// stream): the resources/list_changed of a tab Bob opens himself marks
	// a point after any tools/list_changed that Alice's tab could have
	// sent him.
	var bobSeen atomic.Pointer[client]
	bobMarks := make(chan int, 64)
	alice := hub.person(t, "alice")
	bob := httpClientWith(t, hub.endpoint, as.token(t, as.Issuer, "bob", "webmcp:read webmcp:call", hub.endpoint), &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			if c := bobSeen.Load(); c != nil {
				select {
				case bobMarks <- len(c.changes):
				default: // (never holds up the notifications after it)
				}
			}
		},
	}, "")
	bobSeen.Store(bob)
	signIn, whoami := listedTool(alice, "sign_in"), listedTool(alice, "whoami")
	alice.callOK(signIn, map[string]any{"name": "alice"})
	if got := alice.callOK(whoami, map[string]any{}); got != "alice/alice" {
		t.Fatalf("Alice's whoami after signing in: %q", got)
	}
	if got := bob.callOK(listedTool(bob, "whoami"), map[string]any{}); got != "-/-" {
		t.Fatalf("Bob's copy of the start page shows %q signed in, want nobody", got)
	}

	t.Run("the operator's userscript runs in each space alike", func(t *testing.T) {
		for c, want := range map[*client]string{alice: "hello alice", bob: "hello -"} {
			if got := c.callOK(listedTool(c, "team_greeting"), map[string]any{}); got != want {
				t.Errorf("the userscript's team_greeting answers %q, want %q (in the person's own context)", got, want)
			}
		}
	})

	t.Run("Alice's tab is hers alone", func(t *testing.T) {
		bob.drainChanges()
		alice.callOK("webmcp_open_tab", map[string]any{"url": site + "/private/"})
		private := listedTool(alice, "private_count")
		if got := alice.callOK(private, map[string]any{}); got != "1" {
			t.Fatalf("Alice's first private_count: %q", got)
		}
		if got := toolWithSuffix(bob.tools(), "private_count"); len(got) != 0 {
			t.Errorf("Bob lists Alice's tool: %v", got)
		}
		for _, tab := range bob.tabs() {
			if strings.Contains(tab.URL, "/private/") {
				t.Errorf("Bob's tab list shows Alice's tab: %+v", tab)
			}
		}
		// Bob opens a tab of his own, a page server with a resource and no
		// tool: its resources/list_changed comes after any
		// tools/list_changed for Alice's tab, which had been listed to her
		// before.
		for len(bobMarks) > 0 {
			<-bobMarks
		}
		bob.callOK("webmcp_open_tab", map[string]any{"url": bobsNotes + "/index.html"})
		select {
		case n := <-bobMarks:
			if n != 0 {
				t.Errorf("Bob got %d tools/list_changed after Alice opened her tab, before the resources/list_changed of his own", n)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Bob got no resources/list_changed for the page server he opened")
		}
		theirs, none := bob.call(private, map[string]any{}), bob.call(strings.Replace(private, "private_count", "never_was", 1), map[string]any{})
		if !theirs.IsError || !none.IsError {
			t.Fatalf("Bob's call of Alice's tool: error %v %q; of a tool that never was: error %v", theirs.IsError, text(theirs), none.IsError)
		}
		if a, b := text(theirs), strings.ReplaceAll(text(none), "never_was", "private_count"); a != b {
			t.Errorf("Bob's call of Alice's tool says %q, but a tool that never was %q: the answers must not differ", a, b)
		}
		if got := alice.callOK(private, map[string]any{}); got != "2" {
			t.Errorf("Alice's page counted %q calls, want 2: Bob's call reached it", got)
		}
	})

	t.Run("each person's calls are recorded apart", func(t *testing.T) {
		files, _ := filepath.Glob(filepath.Join(records, "session.*.yaml"))
		// Alice signed in and called her page; Bob only looked (his call of
		// her tool's name reached no page, so no recording has it).
		var withAlice, bobs int
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case strings.Contains(string(b), "alice"):
				withAlice++
			case strings.Contains(string(b), "whoami"):
				bobs++
			}
		}
		if len(files) != 2 || withAlice != 1 || bobs != 1 {
			t.Errorf("recordings %v: %d with Alice's calls, %d with Bob's alone; want two files, one each", files, withAlice, bobs)
		}
	})

	t.Run("Carol arrives later and starts clean", func(t *testing.T) {
		carol := hub.person(t, "carol")
		if got := carol.callOK(listedTool(carol, "whoami"), map[string]any{}); got != "-/-" {
			t.Errorf("Carol's start page shows %q signed in", got)
		}
		tabs := carol.tabs()
		if len(tabs) != 1 || !strings.Contains(tabs[0].URL, "/team/") {
			t.Errorf("Carol's tabs: %+v, want the start page alone", tabs)
		}
	})

	t.Run("twenty people at once", func(t *testing.T) {
		// Their spaces open side by side (people: a bare initialize each,
		// which may wait longer than a client's 20 s to connect on a
		// loaded machine), then all sign in and look at once.
		who := make([]string, 20)
		for i := range who {
			who[i] = fmt.Sprintf("p%02d", i+1)
		}
		clients := hub.people(t, who...)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var wrong []string
		for i, c := range clients {
			wg.Go(func() {
				c.callOK(listedTool(c, "sign_in"), map[string]any{"name": who[i]})
				if got := c.callOK(listedTool(c, "whoami"), map[string]any{}); got != who[i]+"/"+who[i] {
					mu.Lock()
					wrong = append(wrong, who[i]+" sees "+got)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(wrong) > 0 {
			t.Errorf("cross-space answers: %v", wrong)
		}
		t.Logf("webmcp-cdp and its browser with 23 spaces: %s", treeMemory(t, hub.pid))
		if got := alice.callOK(whoami, map[string]any{}); got != "alice/alice" {
			t.Errorf("Alice sees %q after the twenty", got)
		}
	})

	t.Run("isolate none shares the browser", func(t *testing.T) {
		shared := startSpacesHub(t, as, "attach", "--browser-url", startChrome(t, "about:blank"), "--isolate", "none", site+"/team/")
		a, b := shared.person(t, "alice"), shared.person(t, "bob")
		a.callOK(listedTool(a, "sign_in"), map[string]any{"name": "alice-shared"})
		if got := b.callOK(listedTool(b, "whoami"), map[string]any{}); got != "alice-shared/alice-shared" {
			t.Errorf("with --isolate none Bob sees %q, want Alice's sign-in", got)
		}
		if !strings.Contains(shared.logs.String(), "--isolate none") {
			t.Errorf("--isolate none is not said at start:\n%s", shared.logs.String())
		}
	})
}

// TestSpacesBounds: past --max-spaces a newcomer gets 503 with Retry-After
// and no space is closed for them; a space idle for --space-idle closes
// (its context with it) and the newcomer gets in, seeing none of the
// first person's tabs, tools or titles on their status page; the first
// person, back later, has the tools of the tab they had opened at once,
// under the same names, from their own cached tools.
func TestSpacesBounds(t *testing.T) {
	t.Parallel()
	site := spacesSite(t)
	as := startAuthServer(t, "http://127.0.0.1:1/mcp")
	chrome := startChrome(t, "about:blank")
	hub := startSpacesHub(t, as, "attach", "--browser-url", chrome, "--max-spaces", "1", "--space-idle", "3s", site+"/team/")
	alice := hub.person(t, "alice")
	listedTool(alice, "whoami")
	alice.callOK("webmcp_open_tab", map[string]any{"url": site + "/private/"})
	private := listedTool(alice, "private_count")
	alice.callOK(private, map[string]any{})
	if page := hub.statusPage(t, "alice"); !strings.Contains(page, `<td class="title">/private/</td>`) {
		t.Errorf("Alice's status page does not show her tab's title:\n%s", page)
	}

	resp, body, err := hub.initialize(as.token(t, as.Issuer, "bob", "webmcp:read webmcp:call", hub.endpoint))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "maximum of 1 spaces") {
		t.Fatalf("Bob past --max-spaces 1: %s, Retry-After %q, %s", resp.Status, resp.Header.Get("Retry-After"), body)
	}
	if got := alice.callOK(listedTool(alice, "whoami"), map[string]any{}); got != "-/-" {
		t.Errorf("Alice's space after Bob was turned away: %q", got)
	}
	// Alice stops; her space closes once idle, and Bob gets in.
	if !hub.logs.waitFor("space closed", 30*time.Second) {
		t.Fatalf("Alice's idle space did not close:\n%s", hub.logs.String())
	}
	if !regexp.MustCompile(`space closed.*why=idle`).MatchString(hub.logs.String()) {
		t.Errorf("the space closed for another reason:\n%s", hub.logs.String())
	}
	bob := hub.person(t, "bob")
	if got := bob.callOK(listedTool(bob, "whoami"), map[string]any{}); got != "-/-" {
		t.Errorf("Bob's new space shows %q signed in", got)
	}
	if got := toolWithSuffix(bob.tools(), "private_count"); len(got) != 0 {
		t.Errorf("Bob lists Alice's cached tool: %v", got)
	}
	if page := hub.statusPage(t, "bob"); strings.Contains(page, "private") {
		t.Errorf("Bob's status page shows Alice's tab or tool:\n%s", page)
	}

	// Bob stops too; Alice comes back with a new client.
	if !hub.logs.waitForN("space closed", 2, 30*time.Second) {
		t.Fatalf("Bob's idle space did not close:\n%s", hub.logs.String())
	}
	back := hub.person(t, "alice")
	if got := toolWithSuffix(back.tools(), "private_count"); len(got) != 1 || got[0] != private {
		t.Fatalf("Alice's first list when back has %v, want her cached %s at once", got, private)
	}
	if got := back.callOK(private, map[string]any{}); got != "1" {
		t.Errorf("Alice's cached tool, called when back: %q, want 1 (its page opened afresh)", got)
	}
}

// statusPage GETs the status page of who's space, with their token.
func (h *spacesHub) statusPage(t *testing.T, who string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(h.endpoint, "mcp"), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+h.as.token(t, h.as.Issuer, who, "webmcp:read webmcp:call", h.endpoint))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s's status page: %s %v\n%s", who, resp.Status, err, b)
	}
	return string(b)
}

// treeMemory sums the proportional set size (PSS: shared pages split
// among their processes) of process pid and its descendants (webmcp-cdp
// and the browser it launched), for the log.
func treeMemory(t *testing.T, pid int) string {
	t.Helper()
	out, err := exec.Command("ps", "-eo", "pid=,ppid=").Output()
	if err != nil {
		return "unknown: " + err.Error()
	}
	children := map[int][]int{}
	for _, line := range strings.Split(string(out), "\n") {
		var p, pp int
		if n, _ := fmt.Sscan(line, &p, &pp); n == 2 {
			children[pp] = append(children[pp], p)
		}
	}
	pss := func(p int) int {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", p))
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "Pss:" {
				kb, _ := strconv.Atoi(f[1])
				return kb
			}
		}
		return 0
	}
	kb, procs := 0, 0
	for todo := []int{pid}; len(todo) > 0; todo = todo[1:] {
		kb += pss(todo[0])
		procs++
		todo = append(todo, children[todo[0]]...)
	}
	return fmt.Sprintf("%d MiB PSS in %d processes (webmcp-cdp itself %d MiB)", kb/1024, procs, pss(pid)/1024)
}
