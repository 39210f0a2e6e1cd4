package cdp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto"
	cdpt "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Browser spaces on a real Chromium: browser contexts made on one launched
// browser, each followed by a Browser on a WebSocket of its own
// (contexts.go; the harness is in spaces_harness_test.go).

// TestSpacesApart: two contexts on one Chromium, each followed by its own
// Browser on its own connection, open the same page. What one keeps in a
// cookie and localStorage the other does not see; each Browser shows only
// its own context's tabs and tools and cannot touch the other's tab; a
// popup of A's page is followed by A's Browser, with the tool it
// registered at once, and never by B's; disposing of A's context closes
// its tabs, which A's Browser reports, while B goes on.
func TestSpacesApart(t *testing.T) {
	t.Parallel()
	_, ws := launchShared(t)
	base := servePages(t)
	ctx := context.Background()
	a, b := openSpace(t, ws, "A"), openSpace(t, ws, "B")
	if a.id == b.id {
		t.Fatalf("both spaces got context %s", a.id)
	}
	tabs := map[*space]string{}
	docs := map[*space]core.Source{}
	for _, sp := range []*space{a, b} {
		// The browser's first tab is in its default context: neither's.
		if blank := sp.b.BlankTab(); blank != "" {
			t.Errorf("%s: BlankTab = %s, want none (the first tab is in the default context)", sp.name, blank)
		}
		tabs[sp] = sp.openLoaded(t, base+"/")
		docs[sp] = sp.sink.toolDoc(t, tabs[sp], "recall")
	}
	if tabs[a] == tabs[b] {
		t.Fatalf("both spaces opened tab %s", tabs[a])
	}
	for _, sp := range []*space{a, b} {
		titles, err := sp.b.Titles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(titles) != 1 || titles[tabs[sp]] == "" {
			t.Errorf("%s: Titles = %v, want its own tab %s only", sp.name, titles, tabs[sp])
		}
	}

	// What A keeps, B does not see; then B keeps its own.
	for _, step := range []struct {
		sp           *space
		tool, arg    string
		wantA, wantB string
	}{
		{a, "remember", "alice", "cookie=[who=alice] stored=[alice]", "cookie=[] stored=[null]"},
		{b, "remember", "bob", "cookie=[who=alice] stored=[alice]", "cookie=[who=bob] stored=[bob]"},
	} {
		step.sp.call(t, docs[step.sp], step.tool, fmt.Sprintf(`{"who":%q}`, step.arg))
		for sp, want := range map[*space]string{a: step.wantA, b: step.wantB} {
			if got := sp.call(t, docs[sp], "recall", `{}`); !strings.Contains(got, want) {
				t.Errorf("after %s kept %s: %s recalls %s, want %s", step.sp.name, step.arg, sp.name, got, want)
			}
		}
	}

	// A's Browser cannot reach B's tab or document: the same answers as
	// for a tab or document that does not exist.
	for _, tc := range []struct {
		name string
		do   func() error
		want error
	}{
		{"close", func() error { return a.b.CloseTab(ctx, tabs[b]) }, ErrTargetGone},
		{"activate", func() error { return a.b.ActivateTab(ctx, tabs[b]) }, ErrTargetGone},
		{"navigate", func() error { return a.b.Navigate(ctx, tabs[b], base+"/popup") }, ErrTargetGone},
		{"reload", func() error { return a.b.Reload(ctx, tabs[b]) }, ErrTargetGone},
		{"invoke", func() error { _, err := a.b.Invoke(ctx, docs[b].Key, "recall", []byte(`{}`)); return err }, ErrNavigated},
	} {
		if err := tc.do(); !errors.Is(err, tc.want) {
			t.Errorf("A's Browser, %s B's tab: %v, want %v", tc.name, err, tc.want)
		}
	}
	if got := b.call(t, docs[b], "recall", `{}`); !strings.Contains(got, "who=bob") {
		t.Errorf("B's tab after A's attempts: %s", got)
	}

	// A popup of A's page, with the tool it registered as it started.
	if got := a.call(t, docs[a], "open_popup", `{}`); !strings.Contains(got, "opened") {
		t.Fatalf("open_popup: %s", got)
	}
	popup := a.sink.toolDoc(t, "", "popup_ping", tabs[a])
	if got := a.call(t, popup, "popup_ping", `{}`); !strings.Contains(got, "pong") {
		t.Errorf("popup_ping: %s", got)
	}
	b.settled(t)
	if open, ever := b.sink.shown(); fmt.Sprint(open) != fmt.Sprint([]string{tabs[b]}) || len(ever) != 1 {
		t.Errorf("B's sink shows tabs %v (ever %v), want only its own %s", open, ever, tabs[b])
	}
	b.sink.mu.Lock()
	for _, d := range b.sink.docs {
		if d.src.Tab != tabs[b] {
			t.Errorf("B's sink has a document of tab %s (%s)", d.src.Tab, d.src.URL)
		}
	}
	b.sink.mu.Unlock()

	// Disposing of A closes its two tabs; A's Browser says so; B goes on.
	if err := DisposeBrowserContext(ctx, a.conn, a.id); err != nil {
		t.Fatal(err)
	}
	a.sink.wait(t, "A's tabs closed", func() bool { return len(a.sink.tabs) == 0 && len(a.sink.docs) == 0 })
	if err := a.conn.Err(); err != nil {
		t.Errorf("A's connection ended with its context: %v", err)
	}
	if _, err := a.b.Open(ctx, base+"/"); err == nil {
		t.Error("A's Browser opened a tab in its disposed context")
	}
	if got := b.call(t, docs[b], "recall", `{}`); !strings.Contains(got, "who=bob") {
		t.Errorf("B after A was disposed of: %s", got)
	}
	b.settled(t)
	if open, _ := b.sink.shown(); len(open) != 1 {
		t.Errorf("B's sink shows %v after A was disposed of, want its own tab", open)
	}
}

// TestContextEndsWithItsConnection: a context made with the default
// options is disposed of, its tab closed, when the WebSocket that made it
// closes; one made with KeepAfterDisconnect stays, with its tab, until
// DisposeBrowserContext (from any connection).
func TestContextEndsWithItsConnection(t *testing.T) {
	t.Parallel()
	_, ws := launchShared(t)
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	attach := func() *Conn {
		c, err := Attach(ctx, Endpoint{WSEndpoint: ws}, quiet)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	maker, watcher := attach(), attach()
	destroyed, stop := watcher.Browser().Subscribe(cdproto.EventTargetTargetDestroyed)
	defer stop()
	if err := watcher.Browser().Call(ctx, target.CommandSetDiscoverTargets, &target.SetDiscoverTargetsParams{Discover: true}, nil); err != nil {
		t.Fatal(err)
	}
	type made struct{ id, tab string }
	byKeep := map[bool]made{}
	for _, keep := range []bool{false, true} {
		id, err := NewBrowserContext(ctx, maker, &ContextOptions{KeepAfterDisconnect: keep})
		if err != nil {
			t.Fatal(err)
		}
		res, err := cdpt.Call(ctx, maker.Browser(), target.CreateTarget, target.CreateTargetParams{URL: "about:blank", BrowserContextID: cdpt.BrowserContextID(id)})
		if err != nil {
			t.Fatal(err)
		}
		byKeep[keep] = made{id, string(res.TargetID)}
	}
	maker.Close()
	// The disposed context's tab goes; the browser handles the whole
	// disconnection at once, so the kept one is decided by then too.
	for gone := false; !gone; {
		select {
		case p := <-destroyed:
			var ev target.EventTargetDestroyed
			if err := decode(p, &ev); err != nil {
				t.Fatal(err)
			}
			gone = string(ev.TargetID) == byKeep[false].tab
		case <-timeout(t):
			t.Fatal("the tab of the context made to be disposed of was not closed when its connection closed")
		}
	}
	list, err := cdpt.Call(ctx, watcher.Browser(), target.GetBrowserContexts, cdpt.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	for keep, m := range byKeep {
		if has := slices.Contains(list.BrowserContextIDs, cdpt.BrowserContextID(m.id)); has != keep {
			t.Errorf("KeepAfterDisconnect %v: the context is listed %v after its connection closed", keep, has)
		}
	}
	if _, err := cdpt.Call(ctx, watcher.Browser(), target.GetTargetInfo, target.GetTargetInfoParams{TargetID: target.ID(byKeep[true].tab)}); err != nil {
		t.Errorf("the kept context's tab: %v", err)
	}
	if err := DisposeBrowserContext(ctx, watcher, byKeep[true].id); err != nil {
		t.Fatal(err)
	}
	if err := DisposeBrowserContext(ctx, watcher, byKeep[true].id); err == nil || !strings.Contains(err.Error(), "disposing of browser context "+byKeep[true].id) {
		t.Errorf("disposing of it twice: %v, want an error that names it", err)
	}
}

// TestSpacesPopupsKeepEarlyTools: with other spaces' Browsers on the same
// browser, every popup of A's page has the page script before its own
// script runs: each registers its tool as it starts, and each tool is
// read. (Other Browsers that resumed A's paused popups, as a released
// target of the default context is, let them run too soon: 2 to 3 of 30
// lost their tool under -race with six spaces.)
func TestSpacesPopupsKeepEarlyTools(t *testing.T) {
	t.Parallel()
	_, ws := launchShared(t)
	base := servePages(t)
	a := openSpace(t, ws, "A")
	for i := range 4 {
		openSpace(t, ws, fmt.Sprint("other", i))
	}
	tab := a.openLoaded(t, base+"/")
	doc := a.sink.toolDoc(t, tab, "open_popup")
	const popups = 10
	for range popups {
		if got := a.call(t, doc, "open_popup", `{}`); !strings.Contains(got, "opened") {
			t.Fatalf("open_popup: %s", got)
		}
	}
	a.sink.wait(t, fmt.Sprintf("popup_ping in each of %d popups", popups), func() bool {
		n := 0
		for _, d := range a.sink.docs {
			if d.src.Tab != tab && slices.Contains(d.tools, "popup_ping") {
				n++
			}
		}
		return n == popups
	})
}
