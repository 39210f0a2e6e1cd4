package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
	"github.com/webmcp-cdp/webmcp-cdp/internal/userscript"
)

// The status page at / shows what a person setting up a client needs (the
// endpoint and a snippet to paste), and what is going on: the browser,
// connected clients, tabs, the last calls and the refused tools. Everything
// that comes from pages and clients is escaped by html/template.
//
// With a token, the page opens through a one-time link printed on stderr
// (HTTPOptions.StatusLink): /?once=VALUE sets an HttpOnly SameSite=Strict
// cookie (a value of its own, never the token) and redirects to /. A value
// is good once and for onceTTL. A request without a good cookie gets a page
// that says where to look, and a new link is printed (at most one every
// onceEvery), so a person who lost the first one can get in again. A client
// that sends the bearer token in Authorization is let in as well.

// Bounds of the status page's one-time links and cookie sessions.
const (
	onceTTL        = 10 * time.Minute // a one-time link is good this long
	onceEvery      = 10 * time.Second // at most one new link printed this often
	maxOnce        = 4                // one-time links outstanding at once
	cookieTTL      = 12 * time.Hour   // a status cookie is good this long
	maxCookies     = 16               // cookie sessions kept (oldest go first)
	statusCookie   = "webmcp_cdp_status"
	statusRefusals = 50 // refusals shown
	statusClients  = 50 // clients shown
)

// statusScript copies a snippet on a click and refreshes the live part of
// the page every 2 s without reloading it (a reload would lose a selection
// in the snippet). The page's CSP allows it by its hash and nothing else.
const statusScript = `for (const b of document.querySelectorAll('button[data-copy]')) {
  b.addEventListener('click', () => {
    navigator.clipboard.writeText(document.getElementById(b.dataset.copy).textContent)
      .then(() => { b.textContent = 'copied'; setTimeout(() => { b.textContent = 'copy'; }, 1500); });
  });
}
setInterval(async () => {
  try {
    const r = await fetch(location.pathname, {cache: 'no-store'});
    if (!r.ok) return;
    const live = new DOMParser().parseFromString(await r.text(), 'text/html').getElementById('live');
    if (live) document.getElementById('live').replaceWith(document.adoptNode(live));
  } catch { /* the server went away: keep what is shown */ }
}, 2000);`

var statusCSP = func() string {
	sum := sha256.Sum256([]byte(statusScript))
	return "default-src 'none'; style-src 'unsafe-inline'; connect-src 'self'; script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}()

var statusTemplate = template.Must(template.New("status").Funcs(template.FuncMap{"took": roundDuration, "count": count}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><noscript><meta http-equiv="refresh" content="5"></noscript>
<title>webmcp-cdp status</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;background:#14161a;color:#e3e6eb}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{padding:.2rem .6rem;border-bottom:1px solid #333;text-align:left;vertical-align:top}
code,pre{font-family:ui-monospace,monospace}pre{background:#0d0f12;padding:.6rem;margin:.3rem 0;user-select:all;white-space:pre-wrap}
button{font:inherit;margin-right:.5rem}.err{color:#f88}.ok{color:#8f8}.muted{color:#8b93a1}</style></head>
<body><h1>webmcp-cdp {{.Version}}</h1>
<p>Browser: <span id="browser">{{if .Browser}}{{.Browser}}{{else}}<span class="muted">unknown</span>{{end}}</span></p>
<h2>Connect a client</h2>
<p>Endpoint: <code id="endpoint">{{.Endpoint}}</code>{{if .Token}} <span class="muted">(send the --token value as a bearer token)</span>{{end}}</p>
<p><button data-copy="snippet-claude">copy</button>Claude Code</p>
<pre id="snippet-claude">{{.ClaudeSnippet}}</pre>
<p><button data-copy="snippet-json">copy</button>Cursor and other clients that take a URL (<code>mcpServers</code> JSON)</p>
<pre id="snippet-json">{{.JSONSnippet}}</pre>
<div id="live">
{{if .Spaces}}<p id="spaces">This is your own space: its tabs, clients and calls are yours alone. Other people's spaces open now: <span id="other-spaces">{{.OtherSpaces}}</span>.</p>{{end}}
<h2>Clients</h2>
<table id="clients"><tr><th>client</th><th>version</th><th>session</th></tr>
{{range .Clients}}<tr><td>{{.Name}}</td><td>{{.Version}}</td><td><code>{{.Session}}</code></td></tr>
{{else}}<tr><td colspan="3" class="muted">no client connected</td></tr>{{end}}</table>
{{if .Browsers}}<h2>Browsers</h2>
<table id="browsers"><tr><th>browser</th><th>state</th><th>drops</th><th>why not up</th></tr>
{{range .Browsers}}<tr><td><code>{{.Name}}</code></td><td>{{if eq .State "up"}}<span class="ok">up</span>{{else}}<span class="err">{{.State}}</span>{{end}}</td><td>{{.Drops}}</td><td>{{.Error}}</td></tr>
{{end}}</table>{{end}}
<h2>Tabs</h2>
<table id="tabs"><tr><th>tab</th><th>title</th><th>URL</th><th>tools</th><th>page servers (MCP-B)</th></tr>
{{range .Tabs}}<tr><td>{{if .Browser}}<code>{{.Browser}}</code> · {{end}}{{.N}}{{if .Active}} (active){{end}}</td><td class="title">{{if .Title}}{{.Title}}{{else}}<span class="muted">no title</span>{{end}}</td><td><code>{{.URL}}</code></td><td>{{range .Tools}}<code>{{.}}</code><br>{{else}}<span class="muted">none</span>{{end}}</td><td class="servers">{{range .Servers}}<div class="server"><code>{{.Channel}}</code> {{if eq .Kind "iframe"}}<span class="muted">in an iframe of <code>{{.FrameOrigin}}</code></span> {{end}}{{count .Tools "tool" "tools"}}, {{count .Resources "resource" "resources"}}, {{count .Templates "template" "templates"}}, {{count .Prompts "prompt" "prompts"}}</div>{{else}}<span class="muted">none</span>{{end}}</td></tr>
{{else}}<tr><td colspan="5" class="muted">no tabs</td></tr>{{end}}</table>
{{if .Userscripts}}<h2>Userscripts</h2>
<table id="userscripts"><tr><th>script</th><th>file</th><th>runs on</th><th>run at</th><th>ran in</th><th>its tools</th><th>tabs</th></tr>
{{range .Userscripts}}<tr><td><code>{{.Name}}</code>{{if .Gone}} <span class="muted">(no longer loaded)</span>{{end}}</td><td>{{if .File}}<code>{{.File}}</code>{{end}}</td><td>{{range .Matches}}<code>{{.}}</code><br>{{end}}{{range .Excludes}}<span class="muted">not</span> <code>{{.}}</code><br>{{end}}</td><td>{{.RunAt}}{{if .NoFrames}}, top documents only{{end}}</td><td class="ran">{{if .Ran}}{{count .Ran "document" "documents"}}{{range .Documents}}<br><code>{{.}}</code>{{end}}{{else if .Loaded}}<span class="muted">none yet</span>{{end}}</td><td>{{range .Tools}}<code>{{.}}</code><br>{{else}}<span class="muted">none</span>{{end}}</td><td>{{range $i, $n := .Tabs}}{{if $i}}, {{end}}{{$n}}{{else}}{{if .Tools}}<span class="muted">cached</span>{{end}}{{end}}</td></tr>
{{end}}</table>{{end}}
<h2>Last calls</h2>
<p><a id="session-spec" href="/session.yaml" download>Download the session's calls as a test spec</a> <span class="muted">(the recent calls{{if .RecordingSince}} made since this page was first opened, at {{.RecordingSince}}{{end}}; run it with <code>webmcp-cdp test FILE</code>; secrets are placeholders)</span></p>
<table id="calls"><tr><th>when</th><th>tool</th><th>tab</th><th>took</th><th>result</th></tr>
{{range .Calls}}<tr><td>{{.At.Format "15:04:05"}}</td><td><code>{{.Tool}}</code>{{if .Caller}} <span class="muted">by {{.Caller}}</span>{{end}}</td><td>{{.Tab}}</td><td class="took">{{took .Took}}</td><td>{{if .OK}}<span class="ok">ok</span>{{else}}<span class="err">error</span> {{.Error}}{{end}}</td></tr>
{{else}}<tr><td colspan="5" class="muted">no calls yet</td></tr>{{end}}</table>
<h2>Refused tools</h2>
{{if gt .RefusedTotal (len .Refusals)}}<p class="muted">the last {{len .Refusals}} of {{.RefusedTotal}}</p>{{end}}
<table id="refused"><tr><th>when</th><th>reason</th><th>tool</th><th>origin</th><th>detail</th></tr>
{{range .Refusals}}<tr><td>{{.At.Format "15:04:05"}}</td><td><code>{{.Reason}}</code></td><td>{{if eq .Tool "*"}}<span class="muted">several</span>{{else}}<code>{{.Tool}}</code>{{end}}</td><td><code>{{.Origin}}</code></td><td>{{.Detail}}</td></tr>
{{else}}<tr><td colspan="5" class="muted">none</td></tr>{{end}}</table>
</div>
<script>{{.Script}}</script>
</body></html>`))

var statusDenied = template.Must(template.New("denied").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>webmcp-cdp status</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;background:#14161a;color:#e3e6eb}</style></head>
<body><h1>webmcp-cdp status</h1><p id="why">{{.}}</p>
<p>With <code>--token</code> set, this page opens through a one-time link that webmcp-cdp prints on its stderr
(<code>status page: http://…/?once=…</code>). A new link has been printed there now, if none was printed in the last few seconds.</p>
</body></html>`))

// statusClient is a connected MCP client as the page shows it.
type statusClient struct {
	Name, Version, Session string
}

// statusHandler serves the status page and guards it when a token is set.
type statusHandler struct {
	s       *Server
	token   string
	browser string
	titles  func(ctx context.Context) (map[string]string, error)
	// browserStates is HTTPOptions.Browsers.
	browserStates func() []BrowserStatus
	announce      func(link string)
	// scripts is HTTPOptions.Userscripts.
	scripts func(*Server) []userscript.Status
	// others, in spaces mode, counts the other people's spaces open.
	others   func() int
	linkBase string // http://host:port/ for printed links

	mu       sync.Mutex
	once     map[string]time.Time // one-time values → expiry
	cookies  map[string]time.Time // cookie values → expiry
	lastLink time.Time
}

// newStatusHandler returns the status page of s served on bound.
func newStatusHandler(s *Server, opts HTTPOptions, bound string) *statusHandler {
	if opts.Titles == nil {
		opts.Titles = s.opts.Titles
	}
	h := &statusHandler{
		s: s, token: opts.Token, browser: opts.Browser, titles: opts.Titles, announce: opts.StatusLink, browserStates: opts.Browsers, scripts: opts.Userscripts,
		linkBase: statusLink(bound),
		once:     map[string]time.Time{}, cookies: map[string]time.Time{},
	}
	if h.announce == nil {
		h.announce = func(link string) { s.logger.Info("status page", "url", link) }
	}
	return h
}

// statusLink is the status page's address on bound, for a person to open.
func statusLink(bound string) string {
	host, port, _ := net.SplitHostPort(bound)
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

// start prints the page's address: a one-time link when a token is set.
func (h *statusHandler) start() {
	if h.token == "" {
		h.announce(h.linkBase)
		return
	}
	h.newLink()
}

// newLink prints a new one-time link, at most one every onceEvery.
func (h *statusHandler) newLink() {
	h.mu.Lock()
	now := time.Now()
	if now.Sub(h.lastLink) < onceEvery {
		h.mu.Unlock()
		return
	}
	h.lastLink = now
	expire(h.once, now)
	for len(h.once) >= maxOnce {
		delete(h.once, oldest(h.once))
	}
	v := randomValue()
	h.once[v] = now.Add(onceTTL)
	h.mu.Unlock()
	h.announce(h.linkBase + "?once=" + v)
}

func (h *statusHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("X-Frame-Options", "DENY")
	if h.token == "" {
		h.serve(w, r)
		return
	}
	if v := r.URL.Query().Get("once"); v != "" {
		if !h.useOnce(v) {
			h.deny(w, http.StatusForbidden, "This one-time link was already used or has expired.")
			return
		}
		http.SetCookie(w, &http.Cookie{Name: statusCookie, Value: h.newCookie(), Path: "/", MaxAge: int(cookieTTL / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if h.allowed(r) {
		h.serve(w, r)
		return
	}
	h.deny(w, http.StatusUnauthorized, "This status page needs the one-time link that webmcp-cdp printed when it started.")
}

// useOnce spends a one-time value: true the first time, within onceTTL.
func (h *statusHandler) useOnce(v string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	exp, ok := h.once[v]
	delete(h.once, v)
	return ok && time.Now().Before(exp)
}

// newCookie starts a cookie session and returns its value.
func (h *statusHandler) newCookie() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	expire(h.cookies, now)
	for len(h.cookies) >= maxCookies {
		delete(h.cookies, oldest(h.cookies))
	}
	v := randomValue()
	h.cookies[v] = now.Add(cookieTTL)
	return v
}

// allowed says whether r carries a good status cookie or the bearer token.
func (h *statusHandler) allowed(r *http.Request) bool {
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
		return subtle.ConstantTimeCompare([]byte(strings.TrimPrefix(a, "Bearer ")), []byte(h.token)) == 1
	}
	c, err := r.Cookie(statusCookie)
	if err != nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	exp, ok := h.cookies[c.Value]
	return ok && time.Now().Before(exp)
}

func (h *statusHandler) deny(w http.ResponseWriter, code int, why string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	w.WriteHeader(code)
	statusDenied.Execute(w, why)
	h.newLink()
}

// sessionPath is where the status page offers the session's calls as a
// spec of webmcp-cdp test.
const sessionPath = "/session.yaml"

// serve writes the page, or the session's spec. The first request of
// either hooks the recorder to the calls (without --record, it is not
// before: a session nobody looks at pays nothing for it).
func (h *statusHandler) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == sessionPath {
		h.session(w)
		return
	}
	h.render(w, r)
}

// session writes the last calls of the session as a spec to download.
func (h *statusHandler) session(w http.ResponseWriter) {
	h.s.startRecording()
	var b strings.Builder
	if err := h.s.recorder.WriteSpec(&b); err != nil {
		http.Error(w, "cannot write the session as a spec: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="webmcp-session.yaml"`)
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	io.WriteString(w, b.String())
}

// render writes the page.
func (h *statusHandler) render(w http.ResponseWriter, r *http.Request) {
	since := h.s.startRecording()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", statusCSP)
	endpoint := "http://" + r.Host + "/mcp"
	refusals, total := h.s.recentRefusals(statusRefusals)
	claude, conf := clientSnippets(endpoint, h.token != "")
	recordingSince := "" // --record: every call, from the first
	if h.s.recording.lazy {
		recordingSince = since.Format("15:04:05")
	}
	if err := statusTemplate.Execute(w, map[string]any{
		"Version":        h.s.opts.Version,
		"Browser":        h.browser,
		"Endpoint":       endpoint,
		"Token":          h.token != "",
		"ClaudeSnippet":  claude,
		"JSONSnippet":    conf,
		"Clients":        h.s.statusClients(statusClients),
		"Tabs":           h.tabs(r.Context()),
		"Userscripts":    h.userscripts(),
		"Browsers":       h.browsers(),
		"Calls":          h.s.calls.list(),
		"RecordingSince": recordingSince,
		"Refusals":       refusals,
		"RefusedTotal":   int(total),
		"Script":         template.JS(statusScript),
		"Spaces":         h.others != nil,
		"OtherSpaces":    h.otherSpaces(),
	}); err != nil {
		h.s.logger.Debug("writing the status page", "err", err)
	}
}

// browsers returns the browsers' states when the server serves several.
func (h *statusHandler) browsers() []BrowserStatus {
	if h.browserStates == nil {
		return nil
	}
	return h.browserStates()
}

// statusTab is a tab as the page shows it: with its page servers.
type statusTab struct {
	hub.TabInfo
	Servers []hub.PageServerInfo
}

// tabs lists the hub's tabs with their current titles where the browser
// gives them (within a second), and no title where a tab's title is only
// its URL (as Chrome reports a page without a title), each with its page
// servers.
func (h *statusHandler) tabs(ctx context.Context) []statusTab {
	infos := h.s.hub.Tabs()
	servers := map[string][]hub.PageServerInfo{}
	for _, ps := range h.s.hub.PageServers() {
		servers[ps.Tab] = append(servers[ps.Tab], ps)
	}
	var titles map[string]string
	if h.titles != nil {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		var err error
		if titles, err = h.titles(ctx); err != nil {
			h.s.logger.Debug("the status page shows the titles the tabs had when they loaded", "err", err)
		}
	}
	tabs := make([]statusTab, len(infos))
	for i, t := range infos {
		if title, ok := titles[t.ID]; ok {
			t.Title = title
		}
		if u, err := url.Parse(t.URL); err == nil && (t.Title == t.URL || t.Title == strings.TrimPrefix(t.URL, u.Scheme+"://")) {
			t.Title = ""
		}
		tabs[i] = statusTab{TabInfo: t, Servers: servers[t.ID]}
	}
	// Grouped by browser when there are several (a stable sort keeps the
	// numbers' order within each).
	slices.SortStableFunc(tabs, func(a, b statusTab) int { return strings.Compare(a.Browser, b.Browser) })
	return tabs
}

// count words n things: "1 tool", "3 tools".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// clientSnippets returns a Claude Code command and an mcpServers JSON entry
// for endpoint. With a token they name its place, never its value.
func clientSnippets(endpoint string, token bool) (string, string) {
	type server struct {
		Type    string            `json:"type"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers,omitempty"`
	}
	claude := "claude mcp add --transport http webmcp " + endpoint
	entry := server{Type: "http", URL: endpoint}
	if token {
		claude += ` --header "Authorization: Bearer $WEBMCP_CDP_TOKEN"`
		entry.Headers = map[string]string{"Authorization": "Bearer YOUR_TOKEN"}
	}
	b, _ := json.MarshalIndent(map[string]map[string]server{"mcpServers": {"webmcp": entry}}, "", "  ")
	return claude, string(b)
}

// statusClients lists the connected MCP clients, at most n.
// Clients of MCP 2026-07-28 over HTTP have no session; they are shown as
// last seen (recent.go).
func (s *Server) statusClients(n int) []statusClient {
	out := s.recent.list(time.Now())
	out = out[:min(len(out), n)]
	for ss := range s.mcp.Sessions() {
		if len(out) == n {
			break
		}
		if stateless(ss) {
			continue // shown above
		}
		c := statusClient{Name: "unknown", Session: ss.ID()}
		if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
			c.Name, c.Version = cut(p.ClientInfo.Name, 100), cut(p.ClientInfo.Version, 40)
		}
		c.Session = cut(c.Session, 12)
		out = append(out, c)
	}
	return out
}

// recentRefusals returns the hub's last n refusals, newest first, and the
// number of refusals made so far. They come from the hub's refusal log,
// the record CI mode and the log read too.
func (s *Server) recentRefusals(n int) ([]core.Refusal, uint64) {
	recs, total := s.hub.Refusals(0)
	recs = recs[max(len(recs)-n, 0):]
	slices.Reverse(recs)
	return recs, total
}

// roundDuration words a duration for a person: 0.4 ms, 12 ms, 1.3 s, 42 s,
// 2 min 5 s.
func roundDuration(d time.Duration) string {
	switch {
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Round(time.Millisecond)/time.Millisecond)
	case d < 10*time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%d s", d.Round(time.Second)/time.Second)
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%d min %d s", d/time.Minute, (d%time.Minute)/time.Second)
}

// cut shortens s to at most n bytes, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// randomValue is 32 random bytes in hex.
func randomValue() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// expire drops the entries of m that expired by now.
func expire(m map[string]time.Time, now time.Time) {
	for k, exp := range m {
		if !now.Before(exp) {
			delete(m, k)
		}
	}
}

// oldest is the key of m that expires first.
func oldest(m map[string]time.Time) string {
	var key string
	var first time.Time
	for k, exp := range m {
		if key == "" || exp.Before(first) {
			key, first = k, exp
		}
	}
	return key
}
