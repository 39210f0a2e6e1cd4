package cdp

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdpt "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file holds the harness of the tests and benchmarks of browser
// spaces on a real Chromium (spaces_test.go, spaces_bench_test.go):
// browser contexts made on one launched browser, each followed by a
// Browser on a WebSocket of its own (contexts.go).

// wsLine catches the line in which Chromium names its debugging
// WebSocket ("DevTools listening on ws://…"), logged by Launch; it keeps
// the last one.
type wsLine struct {
	mu  *sync.Mutex
	url chan string // capacity 1
}

func (h *wsLine) Enabled(context.Context, slog.Level) bool { return true }
func (h *wsLine) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *wsLine) WithGroup(string) slog.Handler            { return h }
func (h *wsLine) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if _, u, ok := strings.Cut(a.Value.String(), "DevTools listening on "); ok {
			// The last one wins: Launch starts a browser that does not
			// answer at first once more, on another port.
			h.mu.Lock()
			select {
			case <-h.url:
			default:
			}
			h.url <- strings.TrimSpace(u)
			h.mu.Unlock()
		}
		return true
	})
	return nil
}

// launchShared launches a headless Chromium with a fresh profile that also
// listens for debugging WebSockets on a free loopback port, and returns it
// with its WebSocket URL. It skips the test when there is no Chromium.
func launchShared(tb testing.TB) (*Process, string) {
	tb.Helper()
	if _, err := HostSystem().FindBrowser("", ""); err != nil {
		tb.Skipf("no Chromium here to test browser contexts on (install chromium, or set CHROME_PATH): %v", err)
	}
	h := &wsLine{mu: new(sync.Mutex), url: make(chan string, 1)}
	p, err := Launch(context.Background(), LaunchOptions{
		Headless:    true,
		UserDataDir: tb.TempDir(),
		Args:        []string{"--no-sandbox", "--remote-debugging-port=0"},
		Logger:      slog.New(h),
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := p.Close(); err != nil {
			tb.Error(err)
		}
	})
	select {
	case u := <-h.url:
		return p, u
	case <-p.Exited():
		tb.Fatalf("Chromium ended before it named its WebSocket: %s", p.ExitReason())
	case <-timeout(tb):
		tb.Fatal("Chromium did not name its debugging WebSocket")
	}
	return nil, ""
}

// timeout is a channel that fires after patience.
func timeout(tb testing.TB) <-chan struct{} {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	tb.Cleanup(cancel)
	return ctx.Done()
}

// spacePage registers, through the page script's navigator.modelContext,
// tools that write and read the site's cookie and localStorage, and one
// that opens a popup; spacePopup registers its tool as soon as it starts,
// the early registration that a popup resumed too soon would lose.
const (
	spacePage = `<!DOCTYPE html><title>space</title><script>
navigator.modelContext.registerTool({name: "remember", description: "Keep a name in a cookie and localStorage.",
  inputSchema: {type: "object", properties: {who: {type: "string"}}, required: ["who"]},
  execute: ({who}) => { document.cookie = "who=" + who + "; path=/"; localStorage.setItem("who", who); return "kept " + who; }});
navigator.modelContext.registerTool({name: "recall", description: "Say the cookie and the localStorage value.",
  inputSchema: {type: "object", properties: {}},
  execute: () => "cookie=[" + document.cookie + "] stored=[" + localStorage.getItem("who") + "]"});
navigator.modelContext.registerTool({name: "open_popup", description: "Open the popup.",
  inputSchema: {type: "object", properties: {}},
  execute: () => window.open(location.search ? "/p" : "/popup") ? "opened" : "blocked"});
</script>`
	spacePopup = `<!DOCTYPE html><script>
navigator.modelContext.registerTool({name: "popup_ping", description: "Answer from the popup.",
  inputSchema: {type: "object", properties: {}}, execute: () => "pong"});
</script><title>popup</title>`
)

// servePages serves spacePage at / and spacePopup at /popup on 127.0.0.1.
func servePages(tb testing.TB) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, spacePage)
		case "/popup":
			fmt.Fprint(w, spacePopup)
		default:
			http.NotFound(w, r)
		}
	}))
	tb.Cleanup(srv.Close)
	return srv.URL
}

// spaceSink keeps what a Browser reported: the tabs it shows, every tab
// it ever showed, and each document's tools. Waiters wake on each report.
type spaceSink struct {
	mu      sync.Mutex
	tabs    map[string]string // open tab → URL
	ever    map[string]bool
	docs    map[string]sinkDoc
	changed chan struct{}
}

type sinkDoc struct {
	src   core.Source
	tools []string
}

func newSpaceSink() *spaceSink {
	return &spaceSink{tabs: map[string]string{}, ever: map[string]bool{}, docs: map[string]sinkDoc{}, changed: make(chan struct{})}
}

func (s *spaceSink) note(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *spaceSink) Update(src core.Source, tools []core.Tool, _ []core.Refusal) {
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		names = append(names, t.Name)
	}
	s.note(func() { s.docs[src.Key] = sinkDoc{src: src, tools: names} })
}
func (s *spaceSink) DropDoc(key string) { s.note(func() { delete(s.docs, key) }) }
func (s *spaceSink) TabOpened(id, url, _ string) {
	s.note(func() { s.tabs[id], s.ever[id] = url, true })
}
func (s *spaceSink) TabClosed(id string) { s.note(func() { delete(s.tabs, id) }) }

// wait waits until cond, called with s.mu held, holds.
func (s *spaceSink) wait(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	late := timeout(tb)
	for {
		s.mu.Lock()
		ok, changed := cond(), s.changed
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-late:
			tb.Fatalf("waited %s for %s", patience, what)
		}
	}
}

// toolDoc waits for a document of tab, or of any tab but the ones in not
// when tab is "", that has tool, and returns its source.
func (s *spaceSink) toolDoc(tb testing.TB, tab, tool string, not ...string) core.Source {
	tb.Helper()
	var src core.Source
	s.wait(tb, "tool "+tool, func() bool {
		for _, d := range s.docs {
			mine := d.src.Tab == tab || (tab == "" && !slices.Contains(not, d.src.Tab))
			if mine && slices.Contains(d.tools, tool) {
				src = d.src
				return true
			}
		}
		return false
	})
	return src
}

// shown returns the tabs the sink shows now, and every tab it ever showed.
func (s *spaceSink) shown() (open, ever []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.tabs {
		open = append(open, id)
	}
	for id := range s.ever {
		ever = append(ever, id)
	}
	return open, ever
}

// space is one person's part of the shared browser: a context of its own,
// followed by a Browser on a connection of its own.
type space struct {
	name string
	conn *Conn
	id   string
	b    *Browser
	sink *spaceSink
	made time.Duration // NewBrowserContext took
}

// openSpace attaches a new connection to the browser at ws, makes a
// context on it, and starts a Browser that follows that context.
func openSpace(tb testing.TB, ws, name string) *space {
	tb.Helper()
	return follow(tb, ws, name, true)
}

// follow attaches a new connection to the browser at ws and starts a
// Browser on it that follows a new context (made on that connection) or
// the browser's default context. (One that follows every context would
// follow the spaces' tabs too, and put its page script in them.)
func follow(tb testing.TB, ws, name string, newContext bool) *space {
	tb.Helper()
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	conn, err := Attach(ctx, Endpoint{WSEndpoint: ws}, quiet)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	start := time.Now()
	var id string
	if newContext {
		id, err = NewBrowserContext(ctx, conn, nil)
	} else {
		var res target.GetBrowserContextsResult
		res, err = cdpt.Call(ctx, conn.Browser(), target.GetBrowserContexts, cdpt.Empty{})
		id = string(res.DefaultBrowserContextID)
	}
	if err != nil {
		tb.Fatal(err)
	}
	sp := startSpace(tb, conn, name, id)
	sp.made = time.Since(start)
	return sp
}

// startSpace starts a Browser on conn that follows context id, until the
// test ends.
func startSpace(tb testing.TB, conn *Conn, name, id string) *space {
	tb.Helper()
	b, err := NewBrowser(conn, Options{BrowserContext: id, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	life, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	sink := newSpaceSink()
	if err := b.Start(life, sink); err != nil {
		tb.Fatal(err)
	}
	return &space{name: name, conn: conn, id: id, b: b, sink: sink}
}

// openLoaded opens url in the space and waits until it has loaded.
func (sp *space) openLoaded(tb testing.TB, url string) string {
	tb.Helper()
	tab, loaded, err := sp.b.OpenLoaded(context.Background(), url)
	if err != nil {
		tb.Fatalf("%s: %v", sp.name, err)
	}
	select {
	case <-loaded:
	case <-timeout(tb):
		tb.Fatalf("%s: %s did not load", sp.name, url)
	}
	return tab
}

// call runs tool in the document src and returns its value.
func (sp *space) call(tb testing.TB, src core.Source, tool, input string) string {
	tb.Helper()
	res, err := sp.b.Invoke(context.Background(), src.Key, tool, []byte(input))
	if err != nil || res.Err != "" {
		tb.Fatalf("%s: calling %s: %v %s", sp.name, tool, err, res.Err)
	}
	return res.Value
}

// settled returns once the space's Browser has handled every event its
// browser sent before now (a round trip on its connection: the browser
// sends a connection's events in order with its answers) and its sink has
// heard of them.
func (sp *space) settled(tb testing.TB) {
	tb.Helper()
	if _, err := sp.b.Titles(context.Background()); err != nil {
		tb.Fatal(err)
	}
	if err := sp.b.sink.flush(context.Background()); err != nil {
		tb.Fatal(err)
	}
}
