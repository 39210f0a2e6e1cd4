package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
)

// TestSurfaceInProcess runs the measurements of surface.go that need no
// browser and checks them: the own tools within 2 KB, --list active far
// smaller than --list all, and a search row.
func TestSurfaceInProcess(t *testing.T) {
	lists, err := syntheticLists(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all, active := lists[mcpserver.ListAll], lists[mcpserver.ListActive]
	t.Logf("--list all: %s; --list active: %s", all, active)
	if all.own == 0 || all.own > 2048 || active.own != all.own {
		t.Errorf("own tools: %d B with --list all, %d B with --list active; want the same, at most 2048", all.own, active.own)
	}
	// 100 tabs of one site: 10 site-level and 1000 tab-level names, against
	// the active tab's 10; 7 own tools.
	if all.tools != 7+10+1000 || active.tools != 7+10 || active.all*10 > all.all {
		t.Errorf("--list all %+v, --list active %+v: want 1017 and 17 tools", all, active)
	}
	var row string
	searchRow(func(what, value string) { row = what + ": " + value })
	t.Log(row)
	if !strings.HasPrefix(row, "tool search over 2000 tools") || !strings.Contains(row, "p50 ") {
		t.Errorf("search row %q", row)
	}
}
