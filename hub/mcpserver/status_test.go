package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/record"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// TestRoundDuration: call durations read as a person would write them.
func TestRoundDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0.0 ms"},
		{420 * time.Microsecond, "0.4 ms"},
		{2849 * time.Microsecond, "2.8 ms"},
		{12400 * time.Microsecond, "12 ms"},
		{999 * time.Millisecond, "999 ms"},
		{1260 * time.Millisecond, "1.3 s"},
		{42 * time.Second, "42 s"},
		{125 * time.Second, "2 min 5 s"},
	}
	for _, tt := range tests {
		if got := roundDuration(tt.d); got != tt.want {
			t.Errorf("roundDuration(%s) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// TestStatusOneTimeLink: with a token, the status page opens through the
// one-time link printed at start, which sets a cookie and is good once; a
// request without the cookie is refused and a new link is printed; the
// bearer token works too; the token never appears in the page.
func TestStatusOneTimeLink(t *testing.T) {
	const token = "t0ken-that-must-not-leak"
	h := hub.New(noBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	s := New(t.Context(), h, Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
	links := make(chan string, 8)
	srv, err := s.ServeHTTP(HTTPOptions{Addr: "127.0.0.1:0", Token: token, Browser: "Chrome/1.2.3", StatusLink: func(u string) { links <- u }}, make(chan error, 1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	link := <-links
	base := "http://" + srv.Addr() + "/"
	if !strings.HasPrefix(link, base+"?once=") {
		t.Fatalf("the printed link is %q, want %s?once=…", link, base)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	fetch := func(c *http.Client, u string, hdr http.Header) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", u, nil)
		for k, v := range hdr {
			req.Header[k] = v
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	if code, _ := fetch(http.DefaultClient, base, nil); code != http.StatusUnauthorized {
		t.Errorf("no cookie: status %d, want 401", code)
	}
	code, body := fetch(browser, link, nil)
	if code != http.StatusOK || !strings.Contains(body, "Chrome/1.2.3") {
		t.Fatalf("the one-time link: status %d, body:\n%s", code, body)
	}
	for _, c := range jar.Cookies(mustURL(t, base)) {
		if c.Value == token {
			t.Error("the cookie holds the token")
		}
	}
	if strings.Contains(body, token) {
		t.Error("the page shows the token")
	}
	if code, _ := fetch(browser, base, nil); code != http.StatusOK {
		t.Errorf("with the cookie: status %d, want 200", code)
	}
	if code, body := fetch(browser, link, nil); code != http.StatusForbidden || !strings.Contains(body, "already used") {
		t.Errorf("the link a second time: status %d, want 403 saying it was used:\n%s", code, body)
	}
	if code, _ := fetch(http.DefaultClient, base, http.Header{"Authorization": {"Bearer " + token}}); code != http.StatusOK {
		t.Errorf("with the bearer token: status %d, want 200", code)
	}
	if code, _ := fetch(http.DefaultClient, base, http.Header{"Authorization": {"Bearer nope"}}); code != http.StatusUnauthorized {
		t.Errorf("with a wrong bearer token: status %d, want 401", code)
	}
	if code, _ := fetch(http.DefaultClient, base+"?once=forged", nil); code != http.StatusForbidden {
		t.Errorf("a forged one-time value: status %d, want 403", code)
	}
}

// TestStatusOnceExpires: a one-time value past onceTTL is refused, and
// there are never more than maxOnce outstanding.
func TestStatusOnceExpires(t *testing.T) {
	sh := &statusHandler{once: map[string]time.Time{}, cookies: map[string]time.Time{}, announce: func(string) {}}
	sh.once["old"] = time.Now().Add(-time.Second)
	sh.once["fresh"] = time.Now().Add(time.Minute)
	if sh.useOnce("old") {
		t.Error("an expired one-time value was accepted")
	}
	if !sh.useOnce("fresh") || sh.useOnce("fresh") {
		t.Error("a fresh one-time value was not good exactly once")
	}
	for range maxOnce + 3 {
		sh.lastLink = time.Time{}
		sh.newLink()
	}
	if len(sh.once) > maxOnce {
		t.Errorf("%d one-time values outstanding, want at most %d", len(sh.once), maxOnce)
	}
}

// TestClientSnippets: the page's snippets name the endpoint and, with a
// token, only the token's place.
func TestClientSnippets(t *testing.T) {
	claude, conf := clientSnippets("http://127.0.0.1:8808/mcp", true)
	for _, s := range []string{claude, conf} {
		if !strings.Contains(s, "http://127.0.0.1:8808/mcp") || !strings.Contains(s, "Authorization") {
			t.Errorf("snippet %q lacks the endpoint or the header", s)
		}
	}
	if _, conf := clientSnippets("http://h/mcp", false); strings.Contains(conf, "headers") {
		t.Errorf("without a token the snippet has headers: %s", conf)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// statusSession is a page server's session for the status page test; it is
// never called.
type statusSession struct{}

func (statusSession) CallTool(context.Context, string, json.RawMessage) (core.Result, error) {
	return core.Result{}, nil
}

// TestStatusPageServers: the tabs table shows each tab's page servers, by
// channel (and frame origin for an iframe's), with counts of their tools,
// resources, templates and prompts; what the page named is escaped.
func TestStatusPageServers(t *testing.T) {
	const site = "http://127.0.0.1:8080"
	h := hub.New(noBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	s := New(t.Context(), h, Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
	h.TabOpened("T1", site+"/", "shop")
	h.TabOpened("T2", site+"/plain", "plain")
	decl := json.RawMessage(`{}`)
	tool := func(name string) core.Tool {
		return core.Tool{Name: name, Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`)}
	}
	servers := []struct {
		server    core.PageServer
		tools     []core.Tool
		resources []core.Resource
		templates []core.ResourceTemplate
		prompts   []core.Prompt
	}{
		{core.PageServer{ID: "t:mcp-default", Channel: "mcp-default", Kind: "tab"}, []core.Tool{tool("add"), tool("remove")},
			[]core.Resource{{URI: "cart://current", Raw: decl}}, nil, []core.Prompt{{Name: "help", Raw: decl}}},
		{core.PageServer{ID: "f1:<b>w</b>", Channel: "<b>w</b>", Kind: "iframe", FrameOrigin: "http://127.0.0.1:9090"}, []core.Tool{tool("echo")},
			nil, []core.ResourceTemplate{{URITemplate: "w://{id}", Raw: decl}, {URITemplate: "v://{id}", Raw: decl}}, nil},
	}
	for _, ps := range servers {
		src := core.Source{Key: "doc1#mcpb:" + ps.server.ID, Tab: "T1", Origin: site, URL: site + "/", Backend: core.BackendMCPB}
		h.SetPageServerClient(src, ps.server, statusSession{})
		h.Update(src, ps.tools, nil)
		h.SetServerCatalog(src, ps.server, ps.resources, ps.templates, ps.prompts)
	}
	rec := httptest.NewRecorder()
	newStatusHandler(s, HTTPOptions{}, "127.0.0.1:8808").render(rec, httptest.NewRequest("GET", "/", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`<th>page servers (MCP-B)</th>`,
		`<code>mcp-default</code> 2 tools, 1 resource, 0 templates, 1 prompt</div>`,
		`<code>&lt;b&gt;w&lt;/b&gt;</code> <span class="muted">in an iframe of <code>http://127.0.0.1:9090</code></span> 1 tool, 0 resources, 2 templates, 0 prompts</div>`,
		`<td class="servers"><span class="muted">none</span></td>`, // tab 2
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the status page lacks %s", want)
		}
	}
	if strings.Contains(body, "<b>w</b>") {
		t.Error("the page server's channel name reached the page as markup")
	}
}

// TestStatusPageBrowsers: with several browsers the page lists their states
// and groups the tabs by browser.
func TestStatusPageBrowsers(t *testing.T) {
	h := hub.New(noBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	s := New(t.Context(), h, Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
	for _, tb := range []struct{ id, browser string }{{"z/T1", "z"}, {"a/T2", "a"}, {"z/T3", "z"}} {
		h.TabOpened(tb.id, "http://127.0.0.1:8080/"+tb.id, "")
		h.SetTabBrowser(tb.id, tb.browser)
	}
	states := func() []BrowserStatus {
		return []BrowserStatus{{Name: "a", State: "up"}, {Name: "z", State: "connecting", Error: "dial <tcp>: refused", Drops: 2}}
	}
	rec := httptest.NewRecorder()
	newStatusHandler(s, HTTPOptions{Browsers: states}, "127.0.0.1:8808").render(rec, httptest.NewRequest("GET", "/", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`<tr><td><code>a</code></td><td><span class="ok">up</span></td><td>0</td><td></td></tr>`,
		`<tr><td><code>z</code></td><td><span class="err">connecting</span></td><td>2</td><td>dial &lt;tcp&gt;: refused</td></tr>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the status page lacks %s", want)
		}
	}
	a, z1, z3 := strings.Index(body, "<code>a</code> · 2"), strings.Index(body, "<code>z</code> · 1"), strings.Index(body, "<code>z</code> · 3")
	if a < 0 || z1 < 0 || z3 < 0 || !(a < z1 && z1 < z3) {
		t.Errorf("the tabs are not grouped by browser (a·2 at %d, z·1 at %d, z·3 at %d)", a, z1, z3)
	}
}

// TestStatusSessionSpec: the status page downloads the session's calls as
// a spec, behind the same guard as the page (here a token), and links it.
// Without --record the server's own recorder is hooked to the calls on the
// page's first request (a denied one does not count): a call before is
// not in the spec, and the page says since when it holds them; with
// --record every call is, from the first.
func TestStatusSessionSpec(t *testing.T) {
	const token = "t0ken"
	tests := []struct {
		name   string
		record bool // --record: the recorder is given
		// early is how many "tool: login" steps the call made before the
		// first view leaves in the spec.
		early int
		since bool // the page says since when it holds the calls
	}{
		{"own recorder", false, 0, true},
		{"--record", true, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hub.New(echoBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
			opts := Options{Version: "test", Logger: slog.New(slog.DiscardHandler)}
			if tt.record {
				var err error
				if opts.Recorder, err = record.New(record.Options{File: filepath.Join(t.TempDir(), "session.yaml"), Logger: opts.Logger}); err != nil {
					t.Fatal(err)
				}
			}
			s := New(t.Context(), h, opts)
			h.TabOpened("T", "http://s.test/app", "App")
			h.Update(core.Source{Key: "d", Tab: "T", Frame: "F", Origin: "http://s.test", URL: "http://s.test/app", Backend: "polyfill"},
				[]core.Tool{{Name: "login", Description: "Log in.", InputSchema: []byte(`{"type":"object","properties":{"pin":{"type":"string"}}}`)}}, nil)
			name := h.Tools()[0].Name
			call := func(pin string) {
				t.Helper()
				if res := h.Call(t.Context(), name, []byte(`{"pin":"`+pin+`"}`)); res.IsError {
					t.Fatalf("call: %+v", res)
				}
			}
			call("11111") // before the page's first view
			srv, err := s.ServeHTTP(HTTPOptions{Addr: "127.0.0.1:0", Token: token, StatusLink: func(string) {}}, make(chan error, 1))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			get := func(path string, hdr http.Header) (int, http.Header, string) {
				t.Helper()
				req, _ := http.NewRequest("GET", "http://"+srv.Addr()+path, nil)
				req.Header = hdr
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, resp.Header, string(b)
			}
			if code, _, body := get("/session.yaml", nil); code != http.StatusUnauthorized || strings.Contains(body, "login") {
				t.Errorf("without the token: %d\n%s", code, body)
			}
			auth := http.Header{"Authorization": {"Bearer " + token}}
			_, _, page := get("/", auth)
			if !strings.Contains(page, `href="/session.yaml"`) {
				t.Error("the status page does not link the session spec")
			}
			if got := strings.Contains(page, "made since this page was first opened"); got != tt.since {
				t.Errorf("the page says since when it holds the calls: %v, want %v", got, tt.since)
			}
			call("98765")
			code, hdr, body := get("/session.yaml", auth)
			if code != http.StatusOK || !strings.Contains(hdr.Get("Content-Disposition"), "attachment") ||
				strings.Count(body, ": login'") != 1+tt.early || !strings.Contains(body, "pin: ${PIN}") || strings.Contains(body, "98765") || strings.Contains(body, "11111") {
				t.Errorf("the session spec: %d %v, want %d steps\n%s", code, hdr, 1+tt.early, body)
			}
		})
	}
}
