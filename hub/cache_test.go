package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// openingBrowser is a fake browser that can open tabs (hub.Opener). Each
// Open makes a new tab id and runs onOpen on its own goroutine, the way a
// page loads after Target.createTarget returns.
type openingBrowser struct {
	*fakeBrowser
	onOpen  func(url, tab string)
	failFor int // the first failFor opens fail
	// failInTab makes a failed open return its tab with the error, as
	// cdp.Browser.Open does when the page does not load.
	failInTab bool

	mu     sync.Mutex
	opened []string
	closed []string // tabs closed through CloseTab
}

func (b *openingBrowser) Open(_ context.Context, url string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.opened = append(b.opened, url)
	tab := fmt.Sprintf("opened-%d", len(b.opened))
	if len(b.opened) <= b.failFor {
		if b.failInTab {
			return tab, errors.New("the page did not load")
		}
		return "", errors.New("the browser is busy")
	}
	if b.onOpen != nil {
		go b.onOpen(url, tab)
	}
	return tab, nil
}

// CloseTab implements hub.TabCloser. It fails when ctx has ended, as a
// browser would.
func (b *openingBrowser) CloseTab(ctx context.Context, tab string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = append(b.closed, tab)
	return nil
}

func (b *openingBrowser) closes() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.closed...)
}

func (b *openingBrowser) opens() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.opened...)
}

// cachedTool is a tool that asks to be cached.
func cachedTool(name string) core.Tool {
	return core.Tool{Name: name, Description: "does " + name, Annotations: map[string]any{"cache": true},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}
}

// loadPage returns an onOpen that registers tools in the opened tab after
// delay, as a page at url would.
func loadPage(h *hub.Hub, delay time.Duration, tools ...core.Tool) func(url, tab string) {
	return func(url, tab string) {
		time.Sleep(delay) // the page taking its time, not a poll
		h.TabOpened(tab, url, "reopened")
		h.Update(core.Source{Key: "doc-" + tab, Tab: tab, Frame: tab, Origin: origin, URL: url, Backend: "polyfill"}, tools, nil)
	}
}

func findTool(t *testing.T, h *hub.Hub, name string) hub.RoutedTool {
	t.Helper()
	for _, rt := range h.Tools() {
		if rt.Name == name {
			return rt
		}
	}
	t.Fatalf("%s is not listed: %q", name, names(h))
	return hub.RoutedTool{}
}

func TestCachedToolOutlivesItsTab(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{})
	d := mkDoc("a", "A", origin)
	h.Update(d, []core.Tool{cachedTool("find"), {Name: "plain", Description: "not cached"}}, nil)
	h.TabClosed("A")
	rt := findTool(t, h, site+"_find")
	if !strings.HasPrefix(described(rt), "["+site+" · cached] does find") {
		t.Errorf("description = %q, want the cached tag", described(rt))
	}
	want := map[string]any{"tool": "find", "origin": origin, "url": d.URL, "backend": "polyfill", "cached": true}
	if got, w := jsonOf(t, rt.Source), jsonOf(t, want); got != w {
		t.Errorf("source = %s, want %s", got, w)
	}
	if got := names(h); len(got) != 1 {
		t.Errorf("names = %q, want only the cached tool", got)
	}
	// Registered again without the flag, it is no longer cached.
	h.Update(mkDoc("b", "B", origin), mkTools("find"), nil)
	h.TabClosed("B")
	if got := names(h); len(got) != 0 {
		t.Errorf("names = %q, want none: the page dropped the cache flag", got)
	}
}

func TestCallingACachedToolReopensItsPage(t *testing.T) {
	tests := []struct {
		name     string
		failFor  int
		delay    time.Duration
		callers  int
		wantOpen int
	}{
		{"one call", 0, 50 * time.Millisecond, 1, 1},
		{"concurrent calls open one tab", 0, 100 * time.Millisecond, 5, 1},
		{"opening fails twice", 2, 10 * time.Millisecond, 1, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &openingBrowser{fakeBrowser: &fakeBrowser{}, failFor: tt.failFor}
			h := hub.New(b, hub.Options{})
			b.onOpen = loadPage(h, tt.delay, cachedTool("find"))
			d := mkDoc("a", "A", origin)
			h.Update(d, []core.Tool{cachedTool("find")}, nil)
			h.TabClosed("A")

			var wg sync.WaitGroup
			var failed atomic.Int32
			for range tt.callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := h.Call(context.Background(), site+"_find", json.RawMessage(`{"q":"x"}`))
					if r.IsError {
						failed.Add(1)
						t.Errorf("call failed: %s", text(t, r))
					}
				}()
			}
			wg.Wait()
			if opens := b.opens(); len(opens) != tt.wantOpen || opens[0] != d.URL {
				t.Errorf("opened %q, want %d opens of %s", opens, tt.wantOpen, d.URL)
			}
			if got := b.last(t); !strings.HasPrefix(got.DocKey, "doc-opened-") || got.Tool != "find" || string(got.Input) != `{"q":"x"}` {
				t.Errorf("the call went to %+v, want the reopened page", got)
			}
			// Now the page is open, the tool is live again.
			if rt := findTool(t, h, site+"_find"); rt.Source.Cached {
				t.Errorf("after reopening, the tool is still listed as cached: %v", rt.Source)
			}
		})
	}
}

func TestCachedCallRetriesWhenThePageGoesAway(t *testing.T) {
	b := &openingBrowser{fakeBrowser: &fakeBrowser{}}
	h := hub.New(b, hub.Options{})
	var calls atomic.Int32
	b.respond = func(_ context.Context, in invocation) (core.Result, error) {
		if calls.Add(1) == 1 {
			// The page redirects right after registering: its document goes.
			h.DropDoc(in.DocKey)
			go func() {
				time.Sleep(20 * time.Millisecond) // the redirect taking its time, not a poll
				h.Update(core.Source{Key: "after-redirect", Tab: "opened-1", Frame: "opened-1", Origin: origin, URL: origin + "/next"}, []core.Tool{cachedTool("find")}, nil)
			}()
			return core.Result{}, errors.New("the page navigated away")
		}
		return core.Result{Kind: "string", Value: "found in " + in.DocKey}, nil
	}
	b.onOpen = loadPage(h, 10*time.Millisecond, cachedTool("find"))
	h.Update(mkDoc("a", "A", origin), []core.Tool{cachedTool("find")}, nil)
	h.TabClosed("A")
	r := h.Call(context.Background(), site+"_find", nil)
	if r.IsError || text(t, r) != "found in after-redirect" {
		t.Errorf("result %v %q, want the retried call's answer", r.IsError, text(t, r))
	}
}

func TestCachedCallErrors(t *testing.T) {
	tests := []struct {
		name    string
		browser func(h **hub.Hub) hub.Browser
		timeout time.Duration
		args    string
		want    string
		opens   int
	}{
		{
			name:    "the browser cannot open tabs",
			browser: func(**hub.Hub) hub.Browser { return &fakeBrowser{} },
			want:    "this browser cannot open one",
		},
		{
			name: "the page never registers the tool",
			browser: func(h **hub.Hub) hub.Browser {
				b := &openingBrowser{fakeBrowser: &fakeBrowser{}}
				b.onOpen = func(url, tab string) { (*h).TabOpened(tab, url, "") }
				return b
			},
			want:  "the page was opened, but it did not register \"find\" within 300ms",
			opens: 1,
		},
		{
			name: "opening always fails",
			browser: func(h **hub.Hub) hub.Browser {
				return &openingBrowser{fakeBrowser: &fakeBrowser{}, failFor: 100}
			},
			timeout: 5 * time.Second,
			want:    "opening that page failed: opening " + origin + "/page-a: the browser is busy",
			opens:   3,
		},
		{
			name:    "invalid arguments are refused before opening",
			browser: func(h **hub.Hub) hub.Browser { return &openingBrowser{fakeBrowser: &fakeBrowser{}} },
			args:    `{"q":5}`,
			want:    "at /q: got number, want string",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h *hub.Hub
			b := tt.browser(&h)
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 300 * time.Millisecond
			}
			h = hub.New(b, hub.Options{CallTimeout: timeout})
			h.Update(mkDoc("a", "A", origin), []core.Tool{cachedTool("find")}, nil)
			h.TabClosed("A")
			r := h.Call(context.Background(), site+"_find", json.RawMessage(tt.args))
			if !r.IsError || !strings.Contains(text(t, r), tt.want) {
				t.Errorf("result %v %q, want an error containing %q", r.IsError, text(t, r), tt.want)
			}
			if ob, ok := b.(*openingBrowser); ok && len(ob.opens()) != tt.opens {
				t.Errorf("opened %d times, want %d", len(ob.opens()), tt.opens)
			}
		})
	}
}

func TestCachedToolsSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	h1 := hub.New(&fakeBrowser{}, hub.Options{StateDir: dir})
	h1.Update(mkDoc("a", "A", origin), []core.Tool{cachedTool("find"), {Name: "plain", Description: "p"}}, nil)
	if err := h1.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, hub.StateFile))
	if err != nil {
		t.Fatalf("no state file: %v", err)
	}
	if !strings.Contains(string(raw), `"find"`) || strings.Contains(string(raw), `"plain"`) {
		t.Errorf("state file = %s, want only the cached tool", raw)
	}
	if fi, err := os.Stat(filepath.Join(dir, hub.StateFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state file mode = %v, %v; want 0600", fi.Mode(), err)
	}

	b := &openingBrowser{fakeBrowser: &fakeBrowser{}}
	h2 := hub.New(b, hub.Options{StateDir: dir})
	t.Cleanup(func() { h2.Close() })
	b.onOpen = loadPage(h2, 10*time.Millisecond, cachedTool("find"))
	rt := findTool(t, h2, site+"_find")
	if !rt.Source.Cached {
		t.Errorf("after a restart, source = %v, want cached", rt.Source)
	}
	if r := h2.Call(context.Background(), site+"_find", nil); r.IsError {
		t.Errorf("calling the cached tool after a restart failed: %s", text(t, r))
	}
	if len(b.opens()) != 1 {
		t.Errorf("opened %q, want the tool's page once", b.opens())
	}
}

// writeState writes a state file with the given entries (as JSON values).
func writeState(t *testing.T, dir string, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, hub.StateFile), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func stateEntry(origin, tool string, seen time.Time) string {
	return fmt.Sprintf(`{"origin":%q,"url":%q,"name":"","tool":{"name":%q,"description":"d","annotations":{"cache":true}},"seen":%q}`,
		origin, origin+"/", tool, seen.Format(time.RFC3339Nano))
}

func TestStateFileOnStart(t *testing.T) {
	now := time.Now()
	deny, err := hub.NewOriginPolicy(nil, []string{"https://denied.example"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		content   string // "" for no file
		want      []string
		wantLog   string
		setAside  bool
		wantFiles int
	}{
		{name: "no file", want: nil},
		{
			name:    "fresh and stale entries",
			content: `{"version":1,"tools":[` + stateEntry(origin, "fresh", now.Add(-30*time.Minute)) + `,` + stateEntry(origin, "stale", now.Add(-2*time.Hour)) + `]}`,
			want:    []string{site + "_fresh"},
			wantLog: "pruned=1",
		},
		{
			name:    "denied origins are dropped",
			content: `{"version":1,"tools":[` + stateEntry("https://denied.example", "x", now) + `,` + stateEntry(origin, "ok", now) + `]}`,
			want:    []string{site + "_ok"},
		},
		{name: "not JSON", content: `{"version":1,"tools":[`, wantLog: "the state file is corrupt; set it aside", setAside: true},
		{name: "another version", content: `{"version":99,"tools":[]}`, wantLog: "format version 99", setAside: true},
		{name: "wrong shape", content: `{"version":1,"tools":{"a":1}}`, wantLog: "corrupt", setAside: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.content != "" {
				writeState(t, dir, tt.content)
			}
			var log logBuffer
			h := hub.New(&fakeBrowser{}, hub.Options{StateDir: dir, Origins: deny, Logger: log.logger()})
			t.Cleanup(func() { h.Close() })
			if got := names(h); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("names = %q, want %q", got, tt.want)
			}
			if !strings.Contains(log.String(), tt.wantLog) {
				t.Errorf("log = %q, want %q", log.String(), tt.wantLog)
			}
			aside, _ := filepath.Glob(filepath.Join(dir, hub.StateFile+".corrupt-*"))
			if tt.setAside != (len(aside) == 1) {
				t.Errorf("set-aside files %q, want one: %v", aside, tt.setAside)
			}
			if tt.setAside {
				if _, err := os.Stat(filepath.Join(dir, hub.StateFile)); !os.IsNotExist(err) {
					t.Errorf("the corrupt file is still in place: %v", err)
				}
				// The hub goes on and writes a fresh file.
				h.Update(mkDoc("a", "A", origin), []core.Tool{cachedTool("new")}, nil)
				if err := h.Close(); err != nil {
					t.Fatal(err)
				}
				if raw, err := os.ReadFile(filepath.Join(dir, hub.StateFile)); err != nil || !strings.Contains(string(raw), `"new"`) {
					t.Errorf("after a corrupt file, the new state file = %s, %v", raw, err)
				}
			}
		})
	}
}

func TestUnwritableStateDirIsNotFatal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(dir, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	var log logBuffer
	b := &fakeBrowser{}
	h := hub.New(b, hub.Options{StateDir: dir, Logger: log.logger()})
	h.Update(mkDoc("a", "A", origin), []core.Tool{cachedTool("find")}, nil)
	if err := h.Close(); err == nil || !strings.Contains(err.Error(), "creating the state directory") {
		t.Errorf("Close = %v, want the write error", err)
	}
	if !strings.Contains(log.String(), "cannot write the state file") {
		t.Errorf("log = %q, want the write error reported", log.String())
	}
	if r := h.Call(context.Background(), site+"_find", nil); r.IsError {
		t.Errorf("the tool does not work: %s", text(t, r))
	}
}

// TestCachedToolKeepsWhatItCarries: a cached tool's outputSchema, icons,
// _meta and userscript outlive a restart, so it is listed as its page gave it while
// the page is closed; a reserved _meta key written into the state file by
// hand is dropped on reading, as a page's would be.
func TestCachedToolKeepsWhatItCarries(t *testing.T) {
	dir := t.TempDir()
	tool := cachedTool("find")
	tool.OutputSchema = json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)
	tool.Icons = json.RawMessage(`[{"src":"https://example.com/i.png"}]`)
	tool.Meta = json.RawMessage(`{"example.com/view":"v1"}`)
	tool.Userscript = "orders"
	h1 := hub.New(&fakeBrowser{}, hub.Options{StateDir: dir})
	h1.Update(mkDoc("a", "A", origin), []core.Tool{tool}, nil)
	if err := h1.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, hub.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	forged := strings.Replace(string(raw), `"example.com/view": "v1"`, `"example.com/view": "v1", "io.modelcontextprotocol/x": 1`, 1)
	if forged == string(raw) {
		t.Fatalf("the state file does not hold the tool's _meta:\n%s", raw)
	}
	writeState(t, dir, forged)

	h2 := hub.New(&fakeBrowser{}, hub.Options{StateDir: dir})
	t.Cleanup(func() { h2.Close() })
	rt := findTool(t, h2, site+"_find")
	if !rt.Source.Cached || rt.Source.Userscript != "orders" {
		t.Fatalf("source = %+v, want cached, from the userscript orders", rt.Source)
	}
	tests := []struct{ what, got, want string }{
		{"outputSchema", string(rt.Tool.OutputSchema), string(tool.OutputSchema)},
		{"icons", string(rt.Tool.Icons), string(tool.Icons)},
		{"_meta", compactJSON(t, rt.Tool.Meta), string(tool.Meta)},
	}
	for _, tt := range tests {
		if compactJSON(t, json.RawMessage(tt.got)) != compactJSON(t, json.RawMessage(tt.want)) {
			t.Errorf("the cached tool's %s after a restart = %s, want %s", tt.what, tt.got, tt.want)
		}
	}
}

// compactJSON is raw without insignificant space.
func compactJSON(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
