package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
)

// The shape of the grid rows: this many browsers on the Grid, each with
// gridTabs tabs of the bench page, served by one launch --selenium. The
// Grid needs one slot more, for the floor's session.
const (
	gridBrowsers = 2
	gridTabs     = 25
)

// gridRows measures launch --selenium on the Selenium Grid at gridURL:
// gridBrowsers sessions, gridTabs tabs of page opened in each with
// webmcp_open_tab, timed from the start of the process until tools/list
// holds every tab's tools; tools/call p50 into a tab of each browser
// interleaved with raw Runtime.callFunctionOn calls through the same Grid's
// CDP proxy (a session of the bench's own: the floor); and the RSS of the
// webmcp-cdp process.
func gridRows(ctx context.Context, bin, gridURL, page string, calls int, add func(what, value string)) error {
	u, err := url.Parse(gridURL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("grid rows: %q is not a Grid URL such as http://127.0.0.1:4444", gridURL)
	}
	floor, err := browsers.NewGrid(browsers.GridOptions{URL: u, Args: []string{"--headless"}, Tag: browsers.NewTag(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).Start(ctx)
	if err != nil {
		return fmt.Errorf("grid rows: the floor's own session: %w", err)
	}
	defer floor.End(context.WithoutCancel(ctx))
	sess, obj, err := rawTab(ctx, floor.Conn(), page)
	if err != nil {
		return fmt.Errorf("grid rows: the floor's tab: %w", err)
	}
	raw := rawCall(sess, obj)

	s := &server{changes: make(chan struct{}, 1024)}
	s.cmd = exec.Command(bin, "launch", "--selenium", gridURL, "--browsers", fmt.Sprint(gridBrowsers), "--headless",
		"--state-dir", "", "--wait-tools", "120s", "--log-level", "warn")
	s.cmd.Stderr = os.Stderr
	t0 := time.Now()
	cs, err := newClient(s.changes).Connect(ctx, &mcp.CommandTransport{Command: s.cmd}, nil)
	if err != nil {
		return fmt.Errorf("starting %s launch --selenium: %w", bin, err)
	}
	s.cs = cs
	defer s.close()
	for i := range gridBrowsers {
		b := fmt.Sprintf("grid%d", i+1)
		for range gridTabs {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "webmcp_open_tab", Arguments: map[string]any{"url": page, "browser": b}})
			if err != nil || res.IsError {
				return fmt.Errorf("grid rows: opening a tab in %s: %v %v", b, err, res)
			}
		}
	}
	byBrowser, n, err := waitGridList(ctx, s)
	if err != nil {
		return err
	}
	first := time.Since(t0)
	shape := fmt.Sprintf("launch --selenium --browsers %d on a local Grid of two nodes × %d tabs each", gridBrowsers, gridTabs)
	add(fmt.Sprintf("%s → complete tools/list (%d echo_0 names), from the process's start", shape, n), fmt.Sprintf("%s ms", ms(first)))
	names := make([]string, gridBrowsers)
	for i := range names {
		names[i] = fmt.Sprintf("grid%d", i+1)
	}
	return perBrowserRows(ctx, s, shape, "raw CDP through the Grid's CDP proxy", names, byBrowser, calls, raw, add)
}

// waitGridList waits (at most 5 minutes) until tools/list names echo_0 in
// every tab of every browser, and returns a tab-level name by browser and
// the number of echo_0 names.
func waitGridList(ctx context.Context, s *server) (map[string]string, int, error) {
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	for {
		tools, err := listAll(wctx, s.cs)
		if err != nil {
			return nil, 0, err
		}
		byBrowser := map[string]string{}
		n := 0
		for _, t := range tools {
			if !strings.HasSuffix(t.Name, "_echo_0") {
				continue
			}
			n++
			// A tab-level name (not the site's): its source names the
			// browser (the name may not, when it was given while one
			// browser served the site).
			src, _ := t.Meta["webmcp-cdp/source"].(map[string]any)
			if b, _ := src["browser"].(string); b != "" && strings.Contains(t.Name, "_tab") {
				byBrowser[b] = t.Name
			}
		}
		if n == gridBrowsers*gridTabs+1 && len(byBrowser) == gridBrowsers {
			return byBrowser, n, nil
		}
		select {
		case <-s.changes:
		case <-wctx.Done():
			return nil, 0, fmt.Errorf("grid rows: tools/list named echo_0 %d times, want %d: %w", n, gridBrowsers*gridTabs+1, wctx.Err())
		}
	}
}
