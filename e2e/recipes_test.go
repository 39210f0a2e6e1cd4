package e2e

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// The remote recipes of the README and docs/remote.md (issue 28, "docs
// that run"): each marked <!-- recipe: NAME --> before its code block, run
// here as written but for the addresses, against the real services: the
// Selenium Grid of grid_harness_test.go (itself started from the hub and
// node recipes), a standalone Grid from its recipe, browserless and a plain
// Chromium.

// docRecipe returns the code block marked <!-- recipe: name --> in the
// README or docs/remote.md.
func docRecipe(name string) (string, error) {
	re := regexp.MustCompile("(?s)<!-- recipe: " + regexp.QuoteMeta(name) + " -->\n```[a-z]*\n(.*?)```\n")
	for _, f := range []string{"../README.md", "../docs/remote.md"} {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		if m := re.FindSubmatch(b); m != nil {
			return string(m[1]), nil
		}
	}
	return "", fmt.Errorf("no recipe %q in the README or docs/remote.md", name)
}

// runRecipe runs a shell recipe with the addresses replaced (old, new
// pairs), webmcp-cdp on the PATH, as the MCP server of a client.
func runRecipe(t *testing.T, name string, subst ...string) *client {
	t.Helper()
	return runRecipeEnv(t, name, nil, subst...)
}

// runRecipeEnv is runRecipe with more environment.
func runRecipeEnv(t *testing.T, name string, env []string, subst ...string) *client {
	t.Helper()
	script, err := docRecipe(name)
	if err != nil {
		t.Fatal(err)
	}
	script = strings.NewReplacer(subst...).Replace(script)
	cmd := exec.Command("bash", "-euc", script)
	// No display here: the browsers webmcp-cdp launches are headless.
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"), "WEBMCP_CDP_HEADLESS=true")
	cmd.Env = append(cmd.Env, env...)
	return startCmd(t, nil, "", cmd)
}

// echoes waits for n live echo tools and calls each.
func (c *client) echoes(n int) {
	c.t.Helper()
	tools := c.waitListed(strconv.Itoa(n)+" echo tools", hasSuffix("echo", n))
	for _, name := range toolWithSuffix(tools, "echo") {
		if got := c.callOK(name, map[string]any{"text": name}); got != name {
			c.t.Errorf("%s returned %q", name, got)
		}
	}
}

// TestGridRecipes: docs/remote.md's Grid recipes (the environment
// Playwright reads, and a session made by hand with curl) and the README's
// recipe that serves a Grid browser, browserless and a plain Chromium in
// one server.
func TestGridRecipes(t *testing.T) {
	t.Parallel()
	g := startGrid(t)
	base := serveFixtures(t)
	page := base + "/current/"
	grid := []string{"http://grid.example:4444", g.url, "https://example.com/app", page}

	t.Run("remote-grid-env", func(t *testing.T) {
		c := runRecipe(t, "remote-grid-env", grid...)
		c.callOK("webmcp_open_tab", map[string]any{"url": page, "browser": "grid2"})
		c.echoes(3) // the site's, and each browser's tab
		if s := g.sessions(t); len(s) != 2 {
			t.Errorf("the Grid has %d sessions, want 2", len(s))
		}
		c.cs.Close()
		g.waitNoSessions(t, 10*time.Second)
	})

	t.Run("remote-grid-curl", func(t *testing.T) {
		if _, err := exec.LookPath("jq"); err != nil {
			gridUnavailable(t, "the recipe needs jq: %v", err)
		}
		c := runRecipe(t, "remote-grid-curl", grid...)
		c.echoes(1)
		c.cs.Close()
		// Made by hand, the session is left for whoever made it to delete.
		for id := range g.sessions(t) {
			if err := g.do("DELETE", "/session/"+id, nil, nil); err != nil {
				t.Error(err)
			}
		}
	})

	t.Run("readme-chrome, readme-browserless, readme-all", func(t *testing.T) {
		chrome := startChrome(t, "about:blank")
		addr, token := startBrowserless(t)
		local := []string{"http://127.0.0.1:9222", chrome, "wss://production-sfo.browserless.io/chromium?token=YOUR_TOKEN", "ws://" + addr + "/chromium?token=" + token, "YOUR_PROXY_TOKEN", "unused", "https://example.com/app", page}
		c := runRecipe(t, "readme-chrome", local...)
		c.callOK("webmcp_open_tab", map[string]any{"url": page})
		c.echoes(1)
		c.cs.Close()

		c = runRecipe(t, "readme-browserless", local...)
		c.echoes(1)
		c.cs.Close()

		c = runRecipe(t, "readme-all", append(local, grid[:2]...)...)
		c.tools()
		for _, b := range []string{"grid", "desk", "bl"} {
			c.callOK("webmcp_open_tab", map[string]any{"url": page, "browser": b})
		}
		c.echoes(4) // the site's, and one tab in each browser
		c.cs.Close()
		g.waitNoSessions(t, 10*time.Second)
	})
}

// TestGridRecipeStandalone: docs/remote.md's standalone Grid, started from
// its recipe (with this machine's browser and driver, headless, on a free
// port) behind the router's basic authentication, and the README's launch
// --selenium --browsers 2 against it with the credentials in
// SELENIUM_REMOTE_HEADERS (on WebDriver requests and the CDP WebSocket);
// wrong credentials end launch with exit code 2 and the Grid's 401.
func TestGridRecipeStandalone(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"java", "chromedriver"} {
		if _, err := exec.LookPath(tool); err != nil {
			gridUnavailable(t, "Selenium Grid needs %s (Debian: apt-get install default-jre-headless chromium-driver): %v", tool, err)
		}
	}
	jar, err := gridJar()
	if err != nil {
		gridUnavailable(t, "%v", err)
	}
	chrome, err := cdp.FindChrome("")
	if err != nil {
		t.Fatal(err)
	}
	driver, _ := exec.LookPath("chromedriver")
	conf, err := docRecipe("remote-grid-standalone")
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	g := &testGrid{url: "http://127.0.0.1:" + strconv.Itoa(port), dir: t.TempDir(), auth: "Basic " + base64.StdEncoding.EncodeToString([]byte("agent:e2e-secret"))}
	t.Cleanup(g.stop)
	conf = strings.Replace(nodeOnThisMachine(conf, chrome, driver), "port = 4444", "port = "+strconv.Itoa(port), 1)
	conf += "[router]\nusername = \"agent\"\npassword = \"e2e-secret\"\n"
	if err := g.run(jar, []string{"standalone"}, []string{conf}, 1); err != nil {
		t.Fatal(err)
	}
	base := serveFixtures(t)
	creds := `SELENIUM_REMOTE_HEADERS={"Authorization": "` + g.auth + `"}`
	c := runRecipeEnv(t, "readme-grid", []string{creds}, "http://grid.example:4444", g.url, "https://example.com/app", base+"/current/")
	c.callOK("webmcp_open_tab", map[string]any{"url": base + "/current/", "browser": "grid2"})
	c.echoes(3)
	if s := g.sessions(t); len(s) != 2 {
		t.Errorf("the standalone Grid has %d sessions, want 2", len(s))
	}
	if strings.Contains(c.stderr.String(), "e2e-secret") || strings.Contains(c.stderr.String(), g.auth) {
		t.Error("the log shows the credentials")
	}
	c.cs.Close()
	g.waitNoSessions(t, 10*time.Second)

	cmd := exec.Command(binary, "launch", "--selenium", g.url, "--headless", "--state-dir", "")
	cmd.Env = append(os.Environ(), `SELENIUM_REMOTE_HEADERS={"Authorization": "Basic d3Jvbmc6d3Jvbmc="}`)
	out, err := cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(lines[len(lines)-1], "said 401 Unauthorized: check the credentials in SELENIUM_REMOTE_HEADERS") {
		t.Errorf("launch with wrong credentials: %v, last line %q; want exit code 2 and the Grid's 401", err, lines[len(lines)-1])
	}
}
