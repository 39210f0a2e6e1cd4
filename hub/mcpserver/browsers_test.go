package mcpserver_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// browserTabs is fakeTabs over several browsers (mcpserver.BrowserOpener).
type browserTabs struct{ *fakeTabs }

func (b browserTabs) OpenIn(ctx context.Context, browser, url string) (string, error) {
	if err := b.record("open-in " + browser + " " + url); err != nil {
		return "", err
	}
	return b.Open(ctx, url)
}

// TestOpenTabInBrowser: with several browsers webmcp_open_tab takes an
// optional browser, and opens there when given; with one, a browser is
// refused with what to do.
func TestOpenTabInBrowser(t *testing.T) {
	bt := browserTabs{&fakeTabs{}}
	e := startOpts(t, nil, mcpserver.Options{Tabs: bt})
	bt.hub = e.hub
	schema, err := json.Marshal(e.list(t)["webmcp_open_tab"].InputSchema)
	if err != nil || !strings.Contains(string(schema), `"browser"`) {
		t.Fatalf("webmcp_open_tab's schema %s has no browser", schema)
	}
	e.call(t, "webmcp_open_tab", map[string]any{"url": "http://127.0.0.1:9/a", "browser": "grid", "wait_ms": 1})
	e.call(t, "webmcp_open_tab", map[string]any{"url": "http://127.0.0.1:9/b", "wait_ms": 1})
	want := []string{"open-in grid http://127.0.0.1:9/a", "open http://127.0.0.1:9/a", "open http://127.0.0.1:9/b"}
	if ops := bt.snapshot(); !reflect.DeepEqual(ops, want) {
		t.Errorf("the browsers were asked %q, want %q", ops, want)
	}

	one := start(t, &fakeTabs{})
	if schema, _ := json.Marshal(one.list(t)["webmcp_open_tab"].InputSchema); strings.Contains(string(schema), `"browser"`) {
		t.Errorf("with one browser webmcp_open_tab's schema has a browser: %s", schema)
	}
	r := one.call(t, "webmcp_open_tab", map[string]any{"url": "http://127.0.0.1:9/a", "browser": "grid"})
	if got := textOf(t, r); !r.IsError || !strings.Contains(got, "serves one browser") {
		t.Errorf("a browser with one browser: %v %q", r.IsError, got)
	}
}

// TestTagNamesBrowser: with several browsers the tag names the browser.
func TestTagNamesBrowser(t *testing.T) {
	for _, tt := range []struct {
		p    core.Provenance
		want string
	}{
		{core.Provenance{Site: "s", Tab: 2, Holders: 1, Browser: "grid"}, "[s · browser grid · tab 2]"},
		{core.Provenance{Site: "s", Cached: true, Browser: "b2"}, "[s · browser b2 · cached]"},
	} {
		if got := mcpserver.Tag(tt.p); got != tt.want {
			t.Errorf("Tag(%+v) = %q, want %q", tt.p, got, tt.want)
		}
	}
}
