package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/fixtures"
)

// hostileTitle is what a page sets as its title: markup that must reach
// the status page as text.
const hostileTitle = `<img src=x onerror="document.body.dataset.pwned=1"><script>document.body.dataset.pwned=2</script>`

// hostilePage sets hostileTitle (written "<\/" inside the script, which
// "</script>" would end) and registers one tool.
var hostilePage = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>x</title></head><body><script>
document.title = ` + "`" + strings.ReplaceAll(hostileTitle, "</", `<\/`) + "`" + `;
document.modelContext.registerTool({name: "shout", description: "Upper-case the text.",
  inputSchema: {type: "object", properties: {text: {type: "string"}}}, execute: ({text}) => String(text).toUpperCase()});
</script></body></html>`

// TestStatusPageInBrowser: with --http and --token, the status page opens in
// a real browser through the one-time link printed on stderr, which is good
// once; the page shows the endpoint, a client snippet, the browser, the
// connected client, the tabs' real titles and a call with a rounded
// duration, escapes what pages and clients sent, and never holds the token.
func TestStatusPageInBrowser(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle("/", fixtures.Handler())
	mux.HandleFunc("/hostile-title/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(hostilePage))
	})
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)

	// The browser that views the page starts meanwhile.
	type started struct {
		proc *cdp.Process
		err  error
	}
	viewerc := make(chan started, 1)
	go func() {
		p, err := cdp.Launch(context.Background(), cdp.LaunchOptions{Headless: true, Logger: slog.New(slog.DiscardHandler)})
		viewerc <- started{p, err}
	}()
	t.Cleanup(func() {
		if v := <-viewerc; v.proc != nil {
			v.proc.Close()
		}
	})

	const token = "status-e2e-secret-4b1d"
	_, _, stderr := runRawNoWait(t, "launch", "--headless", "--http", "127.0.0.1:0", "--token", token, site.URL+"/current/", site.URL+"/hostile-title/")
	if !stderr.waitFor("?once=", 60*time.Second) {
		t.Fatalf("webmcp-cdp printed no one-time link:\n%s", stderr.String())
	}
	link := regexp.MustCompile(`status page \(one-time link[^)]*\): (http://\S+)`).FindStringSubmatch(stderr.String())
	endpoint := regexp.MustCompile(`url=(http://\S+/mcp)`).FindStringSubmatch(stderr.String())
	if link == nil || endpoint == nil {
		t.Fatalf("no status link or endpoint on stderr:\n%s", stderr.String())
	}
	if strings.Contains(link[1], token) {
		t.Fatalf("the one-time link %s holds the token", link[1])
	}

	// A client with a hostile name makes a call.
	hc := &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl := mcp.NewClient(&mcp.Implementation{Name: `<b id="pwn">status-client</b>`, Version: "7"}, nil)
	cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint[1], HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	c := &client{t: t, cs: cs, changes: make(chan struct{}, 100)}
	tools := c.waitFor("the pages' tools", func(m map[string]*mcp.Tool) bool {
		return len(toolWithSuffix(m, "echo")) > 0 && len(toolWithSuffix(m, "shout")) > 0
	})
	if got := c.callOK(toolWithSuffix(tools, "echo")[0], map[string]any{"text": "hi"}); got != "hi" {
		t.Fatalf("echo = %q", got)
	}

	// A browser of its own (started with webmcp-cdp's) opens the link.
	v := <-viewerc
	viewerc <- v // for the cleanup
	if v.err != nil {
		t.Fatal(v.err)
	}
	viewer := v.proc
	page := openPage(ctx, t, viewer.Conn())
	page.navigate(link[1])

	evalJSON := func(expr string, out any) {
		t.Helper()
		if err := json.Unmarshal([]byte(page.eval(expr)), out); err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
	}
	var got struct {
		URL, Endpoint, Browser, Claude, JSON, Clients, Cookie, HTML string
		Titles, Took                                                []string
		Injected                                                    bool
	}
	evalJSON(`JSON.stringify({
		URL: location.href,
		Endpoint: document.getElementById('endpoint').textContent,
		Browser: document.getElementById('browser').textContent,
		Claude: document.getElementById('snippet-claude').textContent,
		JSON: document.getElementById('snippet-json').textContent,
		Clients: document.getElementById('clients').textContent,
		Cookie: document.cookie,
		HTML: document.documentElement.outerHTML,
		Titles: [...document.querySelectorAll('#tabs td.title')].map(e => e.textContent),
		Took: [...document.querySelectorAll('#calls td.took')].map(e => e.textContent),
		Injected: !!document.querySelector('#tabs img, #tabs script, #clients b, #pwn') || 'pwned' in document.body.dataset,
	})`, &got)
	base := strings.TrimSuffix(endpoint[1], "/mcp") + "/"
	checks := []struct {
		what string
		ok   bool
	}{
		{"the one-time link redirects to /", got.URL == base},
		{"the endpoint is shown", got.Endpoint == endpoint[1]},
		{"the browser's product and version are shown", strings.Contains(got.Browser, "Chrome/")},
		{"the Claude Code snippet names the endpoint and the token's place", strings.Contains(got.Claude, "claude mcp add --transport http webmcp "+endpoint[1]) && strings.Contains(got.Claude, "$WEBMCP_CDP_TOKEN")},
		{"the JSON snippet names the endpoint", strings.Contains(got.JSON, `"url": "`+endpoint[1]+`"`)},
		{"the connected client is shown by name, as text", strings.Contains(got.Clients, `<b id="pwn">status-client</b>`)},
		{"the start page's real title is shown", slices.Contains(got.Titles, "WebMCP current API")},
		{"the hostile title is shown as text", slices.Contains(got.Titles, hostileTitle)},
		{"a call is shown with a rounded duration", len(got.Took) > 0 && regexp.MustCompile(`^\d+(\.\d)? (ms|s)$`).MatchString(got.Took[0])},
		{"nothing from a page or a client became markup", !got.Injected},
		{"the cookie is HttpOnly (not visible to scripts)", got.Cookie == ""},
		{"the token is nowhere in the page", !strings.Contains(got.HTML, token)},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: got %+v", c.what, got)
		}
	}
	var snippet map[string]map[string]map[string]any
	if err := json.Unmarshal([]byte(got.JSON), &snippet); err != nil || snippet["mcpServers"]["webmcp"]["url"] != endpoint[1] {
		t.Errorf("the JSON snippet does not parse or names another URL (%v):\n%s", err, got.JSON)
	}

	// The copy button puts the snippet on the clipboard.
	if err := viewer.Conn().Browser().Call(ctx, "Browser.grantPermissions", map[string]any{
		"origin": strings.TrimSuffix(base, "/"), "permissions": []string{"clipboardReadWrite", "clipboardSanitizedWrite"},
	}, nil); err != nil {
		t.Fatal(err)
	}
	if err := page.sess.Call(ctx, "Emulation.setFocusEmulationEnabled", map[string]any{"enabled": true}, nil); err != nil {
		t.Fatal(err)
	}
	copied := page.eval(`(async () => {
		const b = document.querySelector('button[data-copy="snippet-claude"]');
		b.click();
		for (let i = 0; i < 100 && b.textContent !== 'copied'; i++) await new Promise(r => setTimeout(r, 50));
		return navigator.clipboard.readText();
	})()`)
	if copied != got.Claude {
		t.Errorf("the copy button put %q on the clipboard, want the Claude Code snippet %q", copied, got.Claude)
	}

	// The live part refreshes in place (the script runs under the page's
	// CSP): a second call shows up without a reload.
	c.callOK(toolWithSuffix(tools, "shout")[0], map[string]any{"text": "hi"})
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(page.eval(`document.getElementById('calls').textContent`), "_shout") {
		if time.Now().After(deadline) {
			t.Fatal("the second call did not appear on the open page (the live refresh did not run)")
		}
		time.Sleep(200 * time.Millisecond) // poll interval: the page's DOM has no event to wait on from here
	}

	shot := page.screenshot()
	path := filepath.Join(t.ArtifactDir(), "status.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the status page: %s (%d bytes)", path, len(shot))

	// The link is good once: in the browser (which has the cookie) and for
	// anyone else.
	page.navigate(link[1])
	if why := page.eval(`document.getElementById('why')?.textContent ?? ''`); !strings.Contains(why, "already used") {
		t.Errorf("the one-time link worked a second time; the page says %q", why)
	}
	if code, _ := do(t, http.MethodGet, link[1], nil, ""); code != http.StatusForbidden {
		t.Errorf("the one-time link a third time: status %d, want 403", code)
	}
	if code, body := do(t, http.MethodGet, base, nil, ""); code != http.StatusUnauthorized || strings.Contains(body, token) {
		t.Errorf("the page without the cookie: status %d, want 401 without the token", code)
	}
}

// cdpPage is one tab of a browser driven over CDP with the repo's cdp
// package.
type cdpPage struct {
	t    *testing.T
	ctx  context.Context
	sess *cdp.Session
}

// openPage creates a blank tab in the browser behind conn and attaches to it.
func openPage(ctx context.Context, t *testing.T, conn *cdp.Conn) *cdpPage {
	t.Helper()
	var created target.CreateTargetResult
	if err := conn.Browser().Call(ctx, target.CommandCreateTarget, &target.CreateTargetParams{URL: "about:blank"}, &created); err != nil {
		t.Fatal(err)
	}
	var attached target.AttachToTargetResult
	if err := conn.Browser().Call(ctx, target.CommandAttachToTarget, &target.AttachToTargetParams{TargetID: created.TargetID, Flatten: ptrTo(true)}, &attached); err != nil {
		t.Fatal(err)
	}
	p := &cdpPage{t: t, ctx: ctx, sess: conn.Attach(attached.SessionID)}
	if err := p.sess.Call(ctx, "Page.enable", nil, nil); err != nil {
		t.Fatal(err)
	}
	return p
}

// navigate loads url and waits for its load event.
func (p *cdpPage) navigate(url string) {
	p.t.Helper()
	loaded, stop := p.sess.Subscribe("Page.loadEventFired")
	defer stop()
	if err := p.sess.Call(p.ctx, "Page.navigate", map[string]any{"url": url}, nil); err != nil {
		p.t.Fatal(err)
	}
	select {
	case <-loaded:
	case <-p.ctx.Done():
		p.t.Fatalf("%s did not load", url)
	}
}

// eval evaluates expr in the page and returns its value as a string.
func (p *cdpPage) eval(expr string) string {
	p.t.Helper()
	var res struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := p.sess.Call(p.ctx, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true, "userGesture": true}, &res); err != nil {
		p.t.Fatal(err)
	}
	if res.ExceptionDetails != nil {
		p.t.Fatalf("%s: %s", expr, res.ExceptionDetails.Text)
	}
	s, _ := res.Result.Value.(string)
	return s
}

// screenshot returns a PNG of the page.
func (p *cdpPage) screenshot() []byte {
	p.t.Helper()
	var res struct {
		Data string `json:"data"`
	}
	if err := p.sess.Call(p.ctx, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &res); err != nil {
		p.t.Fatal(err)
	}
	b, err := base64.StdEncoding.DecodeString(res.Data)
	if err != nil {
		p.t.Fatal(err)
	}
	return b
}
