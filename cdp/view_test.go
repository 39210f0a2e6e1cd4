package cdp

import (
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestViewsOverThePipe: two views of a launched browser's pipe (NewView),
// each with a browser context made on it and a Browser following it, keep
// their sign-ins apart as two connections would; closing a view ends its
// Browser's connection and leaves the pipe and the other view going.
func TestViewsOverThePipe(t *testing.T) {
	t.Parallel()
	if _, err := HostSystem().FindBrowser("", ""); err != nil {
		t.Skipf("no Chromium here to test views on (install chromium, or set CHROME_PATH): %v", err)
	}
	quiet := slog.New(slog.DiscardHandler)
	p, err := Launch(context.Background(), LaunchOptions{Headless: true, UserDataDir: t.TempDir(), Args: []string{"--no-sandbox"}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	base := servePages(t)
	ctx := context.Background()
	view := func(name string) *space {
		v, err := p.Conn().NewView(ctx)
		if err != nil {
			t.Fatal(err)
		}
		id, err := NewBrowserContext(ctx, v, nil)
		if err != nil {
			t.Fatal(err)
		}
		return startSpace(t, v, name, id)
	}
	a, b := view("A"), view("B")
	docs := map[*space]string{}
	for _, sp := range []*space{a, b} {
		tab := sp.openLoaded(t, base+"/")
		docs[sp] = sp.sink.toolDoc(t, tab, "recall").Key
	}
	call := func(sp *space, tool, input string) string {
		res, err := sp.b.Invoke(ctx, docs[sp], tool, []byte(input))
		if err != nil || res.Err != "" {
			t.Fatalf("%s: %s: %v %s", sp.name, tool, err, res.Err)
		}
		return res.Value
	}
	call(a, "remember", `{"who":"alice"}`)
	if got := call(b, "recall", `{}`); !strings.Contains(got, "cookie=[] stored=[null]") {
		t.Errorf("B recalls %s after A kept alice", got)
	}
	if got := call(a, "recall", `{}`); !strings.Contains(got, "who=alice") {
		t.Errorf("A recalls %s", got)
	}
	if err := a.conn.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.conn.Done():
	case <-timeout(t):
		t.Fatal("A's view was not done once closed")
	}
	if got := call(b, "recall", `{}`); !strings.Contains(got, "cookie=[]") {
		t.Errorf("B after A's view closed: %s", got)
	}
	if _, err := p.Conn().Browser().Send("Browser.getVersion", nil); err != nil {
		t.Errorf("the pipe after a view closed: %v", err)
	}
}
