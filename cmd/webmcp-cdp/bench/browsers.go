package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// The shape of the browsers row: this many browsers, each with this many
// open tabs of the bench page, served by one hub.
const (
	scaleBrowsers = 4
	scaleTabs     = 25
)

// browsersRows measures one hub over several browsers: scaleBrowsers
// browsers with scaleTabs native WebMCP tabs of page each, then `attach
// --browser b1=... --browser b2=...` timed until its first tools/list
// (which must hold every tab's tools), a full tools/list once it runs,
// tools/call p50 into a tab of each browser interleaved with raw CDP calls
// (raw), and the RSS of the webmcp-cdp process.
func browsersRows(ctx context.Context, bin, page string, calls int, raw func(context.Context) error, add func(what, value string)) error {
	args := []string{"attach", "--state-dir", "", "--wait-tools", "120s", "--log-level", "warn"}
	for i := range scaleBrowsers {
		u, stop, err := debuggingBrowser(ctx, page, scaleTabs)
		if err != nil {
			return fmt.Errorf("browser %d of the browsers row: %w", i+1, err)
		}
		defer stop()
		args = append(args, "--browser", fmt.Sprintf("b%d=%s", i+1, u))
	}

	s := &server{changes: make(chan struct{}, 1024)}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stderr = os.Stderr
	t0 := time.Now()
	cs, err := newClient(s.changes).Connect(ctx, &mcp.CommandTransport{Command: s.cmd}, nil)
	if err != nil {
		return fmt.Errorf("starting %s attach --browser ×%d: %w", bin, scaleBrowsers, err)
	}
	s.cs = cs
	defer s.close()
	tools, err := listAll(ctx, cs)
	if err != nil {
		return err
	}
	first := time.Since(t0)
	// One tab-level name per tab, with its browser's name in it (every
	// browser serves the same site), plus the site-level one.
	byBrowser := map[string]string{}
	n := 0
	for _, t := range tools {
		if !strings.HasSuffix(t.Name, "_echo_0") {
			continue
		}
		n++
		for i := range scaleBrowsers {
			b := fmt.Sprintf("b%d", i+1)
			if strings.Contains(t.Name, "_"+b+"_tab") {
				byBrowser[b] = t.Name
			}
		}
	}
	if n != scaleBrowsers*scaleTabs+1 || len(byBrowser) != scaleBrowsers {
		return fmt.Errorf("browsers row: the first tools/list has %d names for echo_0 (%d browsers), want %d", n, len(byBrowser), scaleBrowsers*scaleTabs+1)
	}
	shape := fmt.Sprintf("%d browsers × %d native WebMCP tabs, one attach --browser ×%d", scaleBrowsers, scaleTabs, scaleBrowsers)
	add(fmt.Sprintf("%s → complete first tools/list (%d tools)", shape, len(tools)), fmt.Sprintf("%s ms", ms(first)))
	t1 := time.Now()
	if _, err := listAll(ctx, cs); err != nil {
		return err
	}
	add(fmt.Sprintf("%s: full tools/list", shape), fmt.Sprintf("%s ms", ms(time.Since(t1))))

	names := make([]string, scaleBrowsers)
	for i := range names {
		names[i] = fmt.Sprintf("b%d", i+1)
	}
	return perBrowserRows(ctx, s, shape, "raw CDP", names, byBrowser, calls, raw, add)
}

// perBrowserRows adds, for each browser of names, the p50 of tools/call
// into its tab-level tool byBrowser[name] interleaved with raw calls (the
// floor, described by floor), then the RSS of the server's process.
func perBrowserRows(ctx context.Context, s *server, shape, floor string, names []string, byBrowser map[string]string, calls int, raw func(context.Context) error, add func(what, value string)) error {
	for _, b := range names {
		via := caller(s.cs, byBrowser[b])
		if _, _, err := Paired(ctx, warmup, via, raw); err != nil {
			return fmt.Errorf("warming up browser %s: %w", b, err)
		}
		mcpL, rawL, err := Paired(ctx, calls, via, raw)
		if err != nil {
			return fmt.Errorf("browser %s latency: %w", b, err)
		}
		add(fmt.Sprintf("%s: tools/call into a tab of %s vs %s (%d each, interleaved)", shape, b, floor, calls),
			fmt.Sprintf("p50 %s ms vs %s ms (%s)", ms(mcpL.Percentile(50)), ms(rawL.Percentile(50)), times(float64(mcpL.Percentile(50)), float64(rawL.Percentile(50)))))
	}
	rss, err := rssOf(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	add(fmt.Sprintf("%s: webmcp-cdp process", shape), fmt.Sprintf("RSS %.1f MB", float64(rss)/(1<<20)))
	return nil
}

// debuggingBrowser is nativeBrowser's debugging address.
func debuggingBrowser(ctx context.Context, page string, tabs int) (string, func(), error) {
	dir, stop, err := nativeBrowser(ctx, page, tabs)
	if err != nil {
		return "", nil, err
	}
	raw, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort"))
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("reading its debugging port: %w", err)
	}
	port, _, err := cdp.ParseActivePort(string(raw))
	if err != nil {
		stop()
		return "", nil, err
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port), stop, nil
}

// portBrowser launches a headless browser in a fresh profile directory
// with remote debugging on, as a person's Chrome that attach finds (it
// writes DevToolsActivePort in dir), native WebMCP on when native is set.
// stop ends it and removes the profile.
func portBrowser(ctx context.Context, native bool, logger *slog.Logger) (dir string, proc *cdp.Process, stop func(), err error) {
	dir, err = os.MkdirTemp("", "webmcp-cdp-bench-")
	if err != nil {
		return "", nil, nil, fmt.Errorf("making a profile: %w", err)
	}
	proc, err = cdp.Launch(ctx, cdp.LaunchOptions{Headless: true, UserDataDir: dir, EnableNative: native,
		Args: []string{"--remote-debugging-port=0"}, Logger: logger})
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, nil, fmt.Errorf("launching a browser with a DevTools port: %w", err)
	}
	return dir, proc, func() {
		proc.Close()
		os.RemoveAll(dir)
	}, nil
}

// nativeBrowser launches a headless browser with native WebMCP and remote
// debugging on (so it writes DevToolsActivePort in its profile dir), opens
// tabs tabs of page in it, and returns its profile directory and a func
// that stops it and removes the profile.
func nativeBrowser(ctx context.Context, page string, tabs int) (string, func(), error) {
	dir, proc, stop, err := portBrowser(ctx, true, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return "", nil, err
	}
	if err := openLoaded(ctx, proc.Conn(), page, tabs); err != nil {
		stop()
		return "", nil, err
	}
	return dir, stop, nil
}
