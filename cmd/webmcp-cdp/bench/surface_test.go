package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
)

// TestSurfaceInProcess runs the measurements of surface.go that need no
// browser and checks them: the own tools within 2 KB, --list active far
// smaller than --list all, and rows that print their targets.
func TestSurfaceInProcess(t *testing.T) {
	lists, err := syntheticLists(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all, active := lists[mcpserver.ListAll], lists[mcpserver.ListActive]
	t.Logf("--list all: %s; --list active: %s", all, active)
	if all.own == 0 || all.own > ownToolsTarget || active.own != all.own {
		t.Errorf("own tools: %d B with --list all, %d B with --list active; want the same, at most %d", all.own, active.own, ownToolsTarget)
	}
	// 100 tabs of one site: 10 site-level and 1000 tab-level names, against
	// the active tab's 10; 7 own tools.
	if all.tools != 7+10+1000 || active.tools != 7+10 || active.all*10 > all.all {
		t.Errorf("--list all %+v, --list active %+v: want 1017 and 17 tools", all, active)
	}
	var rows []string
	add := func(what, value string) { rows = append(rows, what+": "+value) }
	searchRow(add)
	if err := syntheticListRows(context.Background(), add); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		t.Log(r)
	}
	if len(rows) != 3 || !strings.HasPrefix(rows[0], "tool search over 2000 tools") || !strings.Contains(rows[0], "target p50 ≤ 5ms)") || !strings.Contains(rows[0], ": p50 ") {
		t.Errorf("search row %q, want its figures and the target p50 ≤ 5ms", rows[0])
	}
	for _, r := range rows[1:] {
		if !strings.Contains(r, "(own tools: target ≤ 2048 B): own tools ") {
			t.Errorf("list row %q, want the own tools' target beside their figure", r)
		}
	}
}
