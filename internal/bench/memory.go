package bench

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// memory opens tabs of page in s until each count in tabs is reached, and
// for each count reports the RSS of the webmcp-cdp process and how long a
// full tools/list takes.
func memory(ctx context.Context, s *server, page string, tabs []int, add func(what, value string)) error {
	open := 1
	for _, n := range tabs {
		for ; open < n; open++ {
			if _, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "webmcp_open_tab", Arguments: map[string]any{"url": page, "wait_ms": 1}}); err != nil {
				return fmt.Errorf("opening tab %d: %w", open+1, err)
			}
		}
		if err := waitCount(ctx, s.cs, "echo_0", n); err != nil {
			return err
		}
		t0 := time.Now()
		if _, err := listAll(ctx, s.cs); err != nil {
			return err
		}
		listTook := time.Since(t0)
		rss, err := rssOf(s.cmd.Process.Pid)
		if err != nil {
			return err
		}
		add(fmt.Sprintf("webmcp-cdp process with %d tab(s) of 10 tools", n),
			fmt.Sprintf("RSS %.1f MB; full tools/list %s ms", float64(rss)/(1<<20), ms(listTook)))
	}
	return nil
}

// rssOf reads a process's resident set size from /proc.
func rssOf(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the RSS of process %d: %w", pid, err)
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		return 0, fmt.Errorf("no VmRSS line in /proc/%d/status", pid)
	}
	kb, err := strconv.ParseInt(string(m[1]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("reading the RSS of process %d: %w", pid, err)
	}
	return kb << 10, nil
}
