package bench

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listRounds is how many full tools/list of each kind the memory rows
// time after the first, for their medians.
const listRounds = 5

// memory opens tabs of page in s (served over streamable HTTP) until each
// count in tabs is reached, and for each count reports the RSS of the
// webmcp-cdp process and how long a full tools/list takes: the first one
// through the go-sdk client (the figure the table always had), then the
// median of listRounds through that client and of listRounds read raw
// (rawLister: the server's answer over loopback HTTP without the client's
// decoding, which for 1,000 tools is most of the go-sdk figure).
func memory(ctx context.Context, s *server, page string, tabs []int, add func(what, value string)) error {
	raw, err := newRawLister(ctx, s.endpoint)
	if err != nil {
		return err
	}
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
		first := time.Since(t0)
		rss, anon, err := residentOf(s.cmd.Process.Pid)
		if err != nil {
			return err
		}
		var sdk, rawT Latencies
		size := 0
		for range listRounds {
			t := time.Now()
			if _, err := listAll(ctx, s.cs); err != nil {
				return err
			}
			sdk = append(sdk, time.Since(t))
			t = time.Now()
			if size, err = raw.list(ctx); err != nil {
				return err
			}
			rawT = append(rawT, time.Since(t))
		}
		add(fmt.Sprintf("webmcp-cdp process with %d tab(s) of 10 tools", n),
			fmt.Sprintf("RSS %.1f MB (anonymous %.1f, files %.1f); full tools/list %s ms (go-sdk client, first list; median of %d: %s ms); server's answer read raw %s ms (median of %d, %d KB, not decoded)",
				float64(rss)/(1<<20), float64(anon)/(1<<20), float64(rss-anon)/(1<<20), ms(first), listRounds, ms(sdk.Percentile(50)), ms(rawT.Percentile(50)), listRounds, size>>10))
	}
	return nil
}

// rssOf reads a process's resident set size from /proc.
func rssOf(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the RSS of process %d: %w", pid, err)
	}
	rss, err := kBField(b, "VmRSS")
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	return rss, nil
}
