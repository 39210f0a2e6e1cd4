package e2e

import (
	"context"
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
	base := serveFixtures(t)
	for i := range 3 {
		began := time.Now()
		c := start(t, "launch", "--headless", base+"/current/late.html")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		res, err := c.cs.ListTools(ctx, nil)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		found := false
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
			found = found || strings.HasSuffix(tl.Name, "_late_echo")
		}
		if !found {
			t.Errorf("run %d: the first tools/list lacks late_echo: %v", i+1, names)
		}
		t.Logf("run %d: first tools/list answered %s after start, with %d tools", i+1, time.Since(began).Round(time.Millisecond), len(names))
		c.cs.Close()
	}
}
