package e2e

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// The pages of a person's tabs, opened before attach. Each counts its loads
// in sessionStorage, and its tool answers with the count, so a reload by
// us would show.
const ownChromeCount = `const loads = (+sessionStorage.getItem("loads") || 0) + 1; sessionStorage.setItem("loads", String(loads));`

// ownChromeMCPB registers a tool through MCP-B's @mcp-b/global, which
// installs its own polyfill (or wraps native WebMCP where it exists).
const ownChromeMCPB = `import "@mcp-b/global";
` + ownChromeCount + `
(async () => {
  await document.modelContext.registerTool({
    name: "mcpb_echo",
    description: "Echo a text (a page built on @mcp-b/global)",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    execute: async ({ text }) => ({ content: [{ type: "text", text: "mcpb:" + text + " loads=" + sessionStorage.getItem("loads") }] }),
  });
  document.title = "ready";
})();
`

// ownChromeNative registers a tool with Chromium's own WebMCP.
const ownChromeNative = `<!doctype html><title>native</title><script>` + ownChromeCount + `
(async () => {
  await document.modelContext.registerTool({
    name: "native_echo",
    description: "Echo a text (native WebMCP)",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    execute: async ({ text }) => "native:" + text + " loads=" + sessionStorage.getItem("loads"),
  });
  document.title = "ready";
})();
</script>`

// ownChromePlain had no WebMCP API when it loaded: its tool would exist
// only after a reload.
const ownChromePlain = `<!doctype html><title>plain</title><script>` + ownChromeCount + `
if (document.modelContext) document.modelContext.registerTool({ name: "plain_tool", description: "x", execute: () => "x" });
document.title = "ready";
</script>`

// startOwnChrome starts Chromium as a person's browser stand-in: with
// --remote-debugging-port=0 it writes DevToolsActivePort as Chrome does
// when remote debugging is turned on at chrome://inspect. It opens urls
// and returns the browser's real HTTP address and its DevToolsActivePort
// text.
func startOwnChrome(t *testing.T, native bool, urls ...string) (string, string) {
	t.Helper()
	exe, err := cdp.FindChrome("")
	if err != nil {
		t.Fatal(err)
	}
	profile := t.TempDir()
	args := []string{"--headless", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--remote-debugging-port=0", "--user-data-dir=" + profile}
	if native {
		args = append(args, "--enable-features=WebMCP")
	}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	// Headless Chromium takes one URL on its command line; the others open
	// through the debugging address, as a person opens tabs.
	cmd := exec.Command(exe, append(args, urls[0])...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	file := filepath.Join(profile, cdp.ActivePortFile)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, err := os.ReadFile(file); err == nil {
			sc := bufio.NewScanner(strings.NewReader(string(b)))
			if sc.Scan() && sc.Text() != "" && sc.Scan() && sc.Text() != "" {
				browserURL := "http://127.0.0.1:" + strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
				for _, u := range urls[1:] {
					req, _ := http.NewRequest(http.MethodPut, browserURL+"/json/new?"+u, nil)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
				return browserURL, string(b)
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the browser did not write DevToolsActivePort")
		}
		time.Sleep(50 * time.Millisecond) // poll interval: the browser says nothing when its port is ready
	}
}

// allowProxy stands for Chrome's chrome://inspect debugging server in
// front of a real browser: every plain HTTP request gets 404 (and is
// counted: we must send none), and each WebSocket upgrade is held for hold
// (the person reading the Allow dialog) before it reaches the browser.
type allowProxy struct {
	srv       *httptest.Server
	plainHTTP atomic.Int32
	upgrades  atomic.Int32
}

func newAllowProxy(t *testing.T, browserURL string, hold time.Duration) *allowProxy {
	t.Helper()
	target, err := url.Parse(browserURL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	p := &allowProxy{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			p.plainHTTP.Add(1)
			http.NotFound(w, r)
			return
		}
		p.upgrades.Add(1)
		select {
		case <-time.After(hold):
		case <-r.Context().Done():
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// activePortDir writes a DevToolsActivePort that names the proxy, with the
// browser's WebSocket path, in a user data directory of its own.
func (p *allowProxy) activePortDir(t *testing.T, realFile string) string {
	t.Helper()
	lines := strings.SplitN(realFile, "\n", 3)
	port := strings.TrimPrefix(p.srv.URL, "http://127.0.0.1:")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, cdp.ActivePortFile), []byte(port+"\n"+strings.TrimSpace(lines[1])+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// servePages serves pages (path → HTML or JS) from a temp folder.
func servePages(t *testing.T, pages map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range pages {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return srv.URL
}

// waitReady waits until every page target whose URL ends in one of
// suffixes has the title "ready" (its tools are registered).
func waitReady(t *testing.T, browserURL string, suffixes ...string) map[string]devtoolsTarget {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(browserURL + "/json/list")
		if err != nil {
			t.Fatal(err)
		}
		var list []struct {
			devtoolsTarget
			Title string `json:"title"`
		}
		json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		got := map[string]devtoolsTarget{}
		for _, tg := range list {
			for _, s := range suffixes {
				if tg.Type == "page" && strings.HasSuffix(tg.URL, s) && tg.Title == "ready" {
					got[s] = tg.devtoolsTarget
				}
			}
		}
		if len(got) == len(suffixes) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pages did not get ready: %+v", list)
		}
		time.Sleep(50 * time.Millisecond) // poll interval: /json/list is a snapshot, with no push
	}
}

// TestOwnChrome: attach --auto-connect to a browser whose person turned
// remote debugging on, through a stand-in for Chrome's server (HTTP 404,
// each upgrade held 3 s for the Allow click). The tabs opened before
// attach list their tools in the first tools/list and run them: a page on
// MCP-B's @mcp-b/global (its own polyfill adopted live, or native-backed),
// a native WebMCP page. No page is reloaded, and every tab is left as it
// was on exit.
func TestOwnChrome(t *testing.T) {
	t.Parallel()
	mcpb := `<!doctype html><title>mcpb</title><script src="mcpb.js"></script>`
	base := servePages(t, map[string]string{
		"mcpb.html":   mcpb,
		"mcpb.js":     bundle(t, ownChromeMCPB),
		"native.html": ownChromeNative,
		"plain.html":  ownChromePlain,
	})
	for _, tc := range []struct {
		name   string
		native bool
		pages  []string
		tools  map[string]string // tool suffix → want result prefix
		note   string            // the page listed as "appear after a reload"
	}{
		{"polyfill", false, []string{"/mcpb.html", "/plain.html"},
			map[string]string{"mcpb_echo": "mcpb:hi loads=1"}, "/plain.html"},
		{"native", true, []string{"/mcpb.html", "/native.html"},
			map[string]string{"mcpb_echo": "mcpb:hi loads=1", "native_echo": "native:hi loads=1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var urls []string
			for _, p := range tc.pages {
				urls = append(urls, base+p)
			}
			browserURL, activePort := startOwnChrome(t, tc.native, urls...)
			before := waitReady(t, browserURL, tc.pages...)
			proxy := newAllowProxy(t, browserURL, 3*time.Second)
			dir := proxy.activePortDir(t, activePort)

			c := start(t, "attach", "--auto-connect", "--user-data-dir", dir, "--state-dir", "")
			first := c.tools() // the first tools/list
			for suffix, want := range tc.tools {
				got := toolWithSuffix(first, suffix)
				if len(got) != 1 {
					t.Fatalf("the first tools/list has %v for %s; want one (list: %v)", got, suffix, names(first))
				}
				if res := c.callOK(got[0], map[string]any{"text": "hi"}); res != want {
					t.Errorf("%s = %q, want %q (a count above 1 means the page was reloaded)", got[0], res, want)
				}
			}
			if !c.stderr.waitFor("click Allow in Chrome", time.Second) {
				t.Error("no line told the person to click Allow")
			}
			if n := strings.Count(c.stderr.String(), "click Allow in Chrome"); n != 1 {
				t.Errorf("the Allow line was printed %d times, want once", n)
			}
			if n := proxy.plainHTTP.Load(); n != 0 {
				t.Errorf("%d plain HTTP requests reached Chrome's debugging server; auto-connect must use only the WebSocket", n)
			}
			if n := proxy.upgrades.Load(); n != 1 {
				t.Errorf("%d WebSocket connections, want 1 (each asks the person to click Allow)", n)
			}
			res := c.call("webmcp_list_tabs", map[string]any{})
			var lt struct {
				Tabs []struct {
					URL   string   `json:"url"`
					Tools []string `json:"tools"`
					Note  string   `json:"note"`
				} `json:"tabs"`
			}
			b, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(b, &lt)
			for _, tab := range lt.Tabs {
				wantNote := tc.note != "" && strings.HasSuffix(tab.URL, tc.note)
				if got := strings.Contains(tab.Note, "tools appear after a reload"); got != wantNote {
					t.Errorf("tab %s: note %q; want the reload note: %v", tab.URL, tab.Note, wantNote)
				}
			}
			if len(lt.Tabs) != len(tc.pages) {
				t.Errorf("webmcp_list_tabs shows %d tabs, want %d: %s", len(lt.Tabs), len(tc.pages), b)
			}

			// On exit we detach: every tab stays, on the same document.
			c.cs.Close()
			c.cmd.Wait()
			after := waitReady(t, browserURL, tc.pages...)
			for p, tg := range before {
				if after[p] != tg {
					t.Errorf("the tab %s changed after webmcp-cdp exited: %+v, was %+v", p, after[p], tg)
				}
			}
		})
	}
}

// TestOwnChromeNotRunning: with no browser to connect to, attach
// --auto-connect fails at once with a message that names the file it read
// and says how to turn remote debugging on; so does a DevToolsActivePort
// left by a browser that closed (its port refuses).
func TestOwnChromeNotRunning(t *testing.T) {
	t.Parallel()
	missing := t.TempDir()
	stale := t.TempDir()
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	if err := os.WriteFile(filepath.Join(stale, cdp.ActivePortFile), []byte(strconv.Itoa(port)+"\n/devtools/browser/gone\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, dir, want string }{
		{"no file", missing, "does not exist"},
		{"stale port", stale, "nothing listens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			cmd := exec.Command(binary, "attach", "--auto-connect", "--user-data-dir", tc.dir)
			out, err := cmd.CombinedOutput()
			took := time.Since(start)
			if err == nil {
				t.Fatalf("attach succeeded with no browser:\n%s", out)
			}
			msg := string(out)
			for _, w := range []string{filepath.Join(tc.dir, cdp.ActivePortFile), "chrome://inspect/#remote-debugging", tc.want} {
				if !strings.Contains(msg, w) {
					t.Errorf("the message does not say %q:\n%s", w, msg)
				}
			}
			if took > 10*time.Second {
				t.Errorf("failing took %s, want under 10 s", took)
			}
		})
	}
}
