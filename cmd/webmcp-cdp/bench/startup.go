package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// startupRuns is how many cold starts the startup rows make of each kind;
// startupTarget is issue 11's target for the first complete list's p50.
const (
	startupRuns   = 7
	startupTarget = 400 * time.Millisecond
)

// startupRows adds the first-contact rows: binary start → the first
// tools/list answered with the start page's tools (a one-shot client lists
// once, right after initialize), next to the floor of a bare Chromium
// start → its first CDP answer, alternating which goes first.
func startupRows(ctx context.Context, bin, page, suffix string, add func(what, value string)) error {
	var first, floor Latencies
	missed := 0
	for i := range startupRuns {
		err := inTurn(i,
			func() error {
				d, ok, err := firstListTime(ctx, bin, page, suffix)
				if ok {
					first = append(first, d)
				} else if err == nil {
					missed++
				}
				return err
			},
			func() error {
				d, err := browserStartTime(ctx)
				floor = append(floor, d)
				return err
			})
		if err != nil {
			return err
		}
	}
	add(fmt.Sprintf("raw: Chromium start → Browser.getVersion answered (%d cold starts)", startupRuns), spread(floor))
	cell := spread(first)
	if missed > 0 {
		cell += fmt.Sprintf("; %d of %d first lists lacked the page's tools", missed, startupRuns)
	}
	add(fmt.Sprintf("binary start → first tools/list answered with the start page's tools (%d cold starts, --state-dir ''; target p50 ≤ %d ms)", startupRuns, startupTarget.Milliseconds()), cell)
	add("ratio first tools/list / raw browser start", ratios(first, floor))
	return nil
}

// spread is the cell of a few slow samples: p50, and the fastest and
// slowest.
func spread(l Latencies) string {
	return fmt.Sprintf("p50 %s ms (min %s, max %s)", ms(l.Percentile(50)), ms(l.Percentile(0)), ms(l.Percentile(100)))
}

// firstListTime starts `bin launch` on page with no cached tools, lists
// the tools once right after initialize, and returns the time from starting
// the process to that answer, and whether it held a tool named *suffix.
func firstListTime(ctx context.Context, bin, page, suffix string) (time.Duration, bool, error) {
	cmd := exec.Command(bin, "launch", "--headless", "--log-level", "warn", "--state-dir", "", page)
	client := mcp.NewClient(&mcp.Implementation{Name: "webmcp-cdp-bench", Version: "1"}, nil)
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	began := time.Now()
	cs, err := client.Connect(cctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return 0, false, fmt.Errorf("startup: starting %s: %w", bin, err)
	}
	s := &server{cmd: cmd, cs: cs}
	defer s.close()
	res, err := cs.ListTools(cctx, nil)
	took := time.Since(began)
	if err != nil {
		return 0, false, fmt.Errorf("startup: the first tools/list: %w", err)
	}
	for _, tl := range res.Tools {
		if strings.HasSuffix(tl.Name, suffix) {
			return took, true, nil
		}
	}
	return took, false, nil
}

// browserStartTime launches a headless Chromium the way webmcp-cdp does and
// returns the time to its first CDP answer.
func browserStartTime(ctx context.Context) (time.Duration, error) {
	began := time.Now()
	proc, err := cdp.Launch(ctx, cdp.LaunchOptions{Headless: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	took := time.Since(began) // Launch returns once Browser.getVersion answered
	if err != nil {
		return 0, fmt.Errorf("startup: launching the browser: %w", err)
	}
	if err := proc.Close(); err != nil {
		return 0, fmt.Errorf("startup: %w", err)
	}
	return took, nil
}
