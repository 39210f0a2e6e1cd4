package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFirstListHasTheStartPagesTools (issue 11, point 1): a client that
// lists tools once, right after connecting (one-shot agents, the
// Inspector's CLI), sees a tool the start page registers a second after
// load: launch holds the first tools/list until the start pages' tools
// have settled. Before, that list had only the webmcp_* tools.
func TestFirstListHasTheStartPagesTools(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	for i := range 3 {
		began := time.Now()
		c := start(t, "launch", "--headless", base+"/current/late.html")
		names := listOnce(t, c)
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, "_late_echo") }) {
			t.Errorf("run %d: the first tools/list lacks late_echo: %v", i+1, names)
		}
		t.Logf("run %d: first tools/list answered %s after start, with %d tools", i+1, time.Since(began).Round(time.Millisecond), len(names))
		c.cs.Close()
	}
}

// TestFirstListWaitsForEachStartPage (issue 11, point 1): the first
// tools/list waits for every start page on its own, not for the first
// tool in the catalog: a page that registers one tool at once and another
// a second after load, and two start pages of which one is served a second
// late and registers a second after its load, each give a one-shot client
// every tool in its only list.
func TestFirstListWaitsForEachStartPage(t *testing.T) {
	t.Parallel()
	fixtures := serveFixtures(t)
	// /slow/ serves the fixture pages a second late, as a slow site does.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Second):
		case <-r.Context().Done():
			return
		}
		http.Redirect(w, r, fixtures+r.URL.Path, http.StatusFound)
	}))
	t.Cleanup(slow.Close)
	for _, tc := range []struct {
		name  string
		pages []string
		want  []string // suffixes of the tools the only list must hold
	}{
		{"one page, tools at once and a second after load", []string{fixtures + "/current/twice.html"}, []string{"_first_echo", "_second_echo"}},
		// The page inspect is tested on (TestCISettleFollowsThePage): one
		// rule, one default for both (issue 29 point 2).
		{"the CI fixture with a tool 1.2 s after load", []string{fixtures + "/ci/late.html?early"}, []string{"_early_tool", "_late_tool"}},
		// Its main thread busy 2.5 s from load: the late timer runs after
		// the quiet period's clock ran out, and is waited for (cdp.Drain).
		{"the CI fixture on a renderer too busy for its timer", []string{fixtures + "/ci/late.html?early&busy"}, []string{"_early_tool", "_late_tool"}},
		{"two pages, one served late and registering late", []string{fixtures + "/notes/", slow.URL + "/current/late.html"}, []string{"_add_note", "_get_stats", "_late_echo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			began := time.Now()
			c := start(t, append([]string{"launch", "--headless", "--state-dir", ""}, tc.pages...)...)
			names := listOnce(t, c)
			for _, suffix := range tc.want {
				if !slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, suffix) }) {
					t.Errorf("the only tools/list lacks *%s: %v", suffix, names)
				}
			}
			t.Logf("first tools/list answered %s after start, with %d tools", time.Since(began).Round(time.Millisecond), len(names))
		})
	}
}

// listOnce lists the tools once, as a one-shot client does (the first page
// of tools/list only), and returns their names.
func listOnce(t *testing.T, c *client) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(res.Tools))
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}
