// Package bench measures webmcp-cdp end to end on this machine and prints
// one table. Each latency row times tools/call through webmcp-cdp (over
// stdio, then over streamable HTTP) in the same loop as raw CDP
// Runtime.callFunctionOn calls into the same bench page, alternating which
// goes first, so that noise on the machine falls on both and their ratio
// means something. The table also has 8 concurrent callers over stdio next
// to 8 raw CDP callers (alternating rounds), navigation to the client
// having the page's new tools, the memory of the webmcp-cdp process
// with 1, 10 and 100 tabs, and what a space per person costs beside a
// second browser launched for them (spaces.go).
//
// It drives real parts only: a webmcp-cdp binary as a subprocess, the go-sdk
// client, Chromium, and the bench page served on 127.0.0.1. The cmd
// package's `webmcp-cdp bench` is its front end.
package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/fixtures"
)

// forwardFlag is the hidden flag of `webmcp-cdp bench` that runs Forward
// on the page it names, on stdin and stdout.
const forwardFlag = "--forward-page"

// CPUProfileEnv is the environment variable that makes a webmcp-cdp process
// write a CPU profile of its whole life to the file it names.
const CPUProfileEnv = "WEBMCP_CDP_CPUPROFILE"

// MemProfileEnv is the environment variable that makes a webmcp-cdp process
// write a heap profile to the file it names when it is asked to stop (or
// ends), before it tears anything down.
const MemProfileEnv = "WEBMCP_CDP_MEMPROFILE"

// Options configures Run.
type Options struct {
	// Binary is the webmcp-cdp executable to measure.
	Binary string
	// Calls is the number of call pairs per latency row (default 200).
	Calls int
	// Tabs lists the tab counts of the memory rows (default 1, 10, 100).
	Tabs []int
	// CPUProfile, when set, is the file that the webmcp-cdp process
	// measured over stdio (the latency, concurrency and navigation rows)
	// writes its CPU profile to, through CPUProfileEnv.
	CPUProfile string
	// MemProfile, when set, is the file that the webmcp-cdp process of the
	// memory rows (over HTTP) writes a heap profile to, through
	// MemProfileEnv, when the rows are done.
	MemProfile string
	// Logger receives progress (default slog.Default()).
	Logger *slog.Logger
	// Rows names the groups of rows to measure (RowGroups); empty
	// measures them all (the grid rows only with Grid; the navsteps rows
	// only when named).
	Rows []string
	// Grid is the Selenium Grid of the grid rows (http://host:4444), with
	// at least three free slots.
	Grid string
}

// RowGroups names the groups of rows Options.Rows can select, in the order
// they run.
var RowGroups = []string{"startup", "stdio", "pageserver", "http", "hints", "surface", "attach", "browsers", "spaces", "pagescript", "navload", "navsteps", "grid"}

// selected reports whether the row group named group is to be measured.
func (o *Options) selected(group string) bool {
	return len(o.Rows) == 0 || slices.Contains(o.Rows, group)
}

// checkRows says which name of Options.Rows is no row group.
func (o *Options) checkRows() error {
	for _, r := range o.Rows {
		if !slices.Contains(RowGroups, r) {
			return fmt.Errorf("no row group %q: the groups are %s", r, strings.Join(RowGroups, ", "))
		}
	}
	return nil
}

const (
	// warmup call pairs run before each latency row and are not counted.
	warmup = 20
	// workers is the number of concurrent callers of the throughput row.
	workers = 8
	// round and rounds shape the throughput row: each side gets rounds
	// rounds of length round, alternating with the other side.
	round  = 250 * time.Millisecond
	rounds = 8
	// navigations is the number of navigations of the navigation row.
	navigations = 20
)

// Run measures and returns the report.
func Run(ctx context.Context, opts Options) (*Report, error) {
	if opts.Calls <= 0 {
		opts.Calls = 200
	}
	if len(opts.Tabs) == 0 {
		opts.Tabs = []int{1, 10, 100}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if err := opts.checkRows(); err != nil {
		return nil, err
	}
	if slices.Contains(opts.Rows, "grid") && opts.Grid == "" {
		return nil, errors.New("the grid rows need a Selenium Grid with three free slots: pass --selenium URL (or set SELENIUM_REMOTE_URL)")
	}
	env, err := profileEnv("--cpuprofile", CPUProfileEnv, opts.CPUProfile)
	if err != nil {
		return nil, err
	}
	memEnv, err := profileEnv("--memprofile", MemProfileEnv, opts.MemProfile)
	if err != nil {
		return nil, err
	}
	log := opts.Logger
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("serving the bench page: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", fixtures.Handler())
	mux.HandleFunc(largePath, largePage) // pagecost.go
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	page := "http://" + ln.Addr().String() + "/bench/"
	rep := &Report{Date: time.Now(), Machine: machine()}
	add := func(what, value string) {
		rep.Rows = append(rep.Rows, Row{what, value})
		log.Info("bench", "what", what, "result", value)
	}

	// The floor: raw CDP calls into the same page, in a browser of its own
	// that stays up for the whole run.
	rb, err := newRawBrowser(ctx, page)
	if err != nil {
		return nil, err
	}
	defer rb.close()
	raw := rb.call
	rep.Browser = rb.product

	// First contact (startup.go): cold starts on the demo page.
	if opts.selected("startup") {
		if err := startupRows(ctx, opts.Binary, "http://"+ln.Addr().String()+"/notes/", "_add_note", add); err != nil {
			return nil, err
		}
	}
	if opts.selected("stdio") {
		if err := stdioRows(ctx, opts, env, page, rb, add); err != nil {
			return nil, err
		}
	}
	if opts.selected("pageserver") {
		if err := pageServerRows(ctx, opts, env, add); err != nil {
			return nil, err
		}
	}
	if opts.selected("http") {
		if err := httpRows(ctx, opts, memEnv, page, raw, add); err != nil {
			return nil, err
		}
	}
	if opts.selected("hints") {
		if err := hintsRows(ctx, opts, page, raw, add); err != nil { // hints.go
			return nil, err
		}
	}
	if opts.selected("surface") {
		if err := surfaceRows(ctx, opts.Binary, "http://"+ln.Addr().String(), add); err != nil {
			return nil, err
		}
	}
	if opts.selected("attach") {
		if err := attach50(ctx, opts.Binary, page, add); err != nil { // attach50.go
			return nil, err
		}
	}
	if opts.selected("browsers") {
		if err := browsersRows(ctx, opts.Binary, page, opts.Calls, raw, add); err != nil { // browsers.go
			return nil, err
		}
	}
	if opts.selected("spaces") {
		if err := spacesRows(ctx, page, opts.Calls, add); err != nil { // spaces.go
			return nil, err
		}
	}
	if opts.selected("pagescript") {
		if err := scriptCostRows(ctx, "http://"+ln.Addr().String(), add); err != nil { // pagecost.go
			return nil, err
		}
	}
	if opts.selected("navload") {
		if err := navLoadRows(ctx, opts.Binary, page, add); err != nil { // navload.go
			return nil, err
		}
	}
	if slices.Contains(opts.Rows, "navsteps") {
		if err := navStepsRows(ctx, opts.Binary, page, add); err != nil { // navsteps.go
			return nil, err
		}
	}
	if opts.selected("grid") && opts.Grid != "" {
		if err := gridRows(ctx, opts.Binary, opts.Grid, page, opts.Calls, add); err != nil { // grid.go
			return nil, err
		}
	}
	return rep, nil
}

// profileEnv returns the environment that makes the server write a
// profile to path (made absolute): variable=path, or nothing when path is
// empty. flag names the option in an error.
func profileEnv(flag, variable, path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return []string{variable + "=" + abs}, nil
}

// stdioRows adds the rows measured over stdio: latency, throughput and
// navigation.
func stdioRows(ctx context.Context, opts Options, env []string, page string, rb *rawBrowser, add func(what, value string)) error {
	raw := rb.call
	stdio, err := startStdio(ctx, opts.Binary, page, env)
	if err != nil {
		return err
	}
	// Closing at the end lets the process write its CPU profile before
	// the HTTP rows start.
	defer stdio.close()
	echo, err := waitTool(ctx, stdio.cs, "echo_0", 10)
	if err != nil {
		return err
	}
	if err := pairedRows(ctx, "stdio", opts.Calls, caller(stdio.cs, echo), raw, add); err != nil {
		return err
	}
	viaStdio, direct, err := Throughput(ctx, workers, round, rounds, caller(stdio.cs, echo), raw)
	if err != nil {
		return fmt.Errorf("throughput: %w", err)
	}
	shape := fmt.Sprintf("alternating %v rounds, %v each", round, time.Duration(rounds)*round)
	add(fmt.Sprintf("%d concurrent raw CDP callers into one tab (%s)", workers, shape), fmt.Sprintf("%.0f calls/s", direct))
	add(fmt.Sprintf("%d concurrent tools/call callers over stdio into one tab (same rounds)", workers), fmt.Sprintf("%.0f calls/s", viaStdio))
	add("ratio stdio / raw throughput", times(viaStdio, direct))
	if err := leanRows(ctx, opts, page, echo, raw, add); err != nil {
		return err
	}
	if err := sdkForwarderRows(ctx, opts, page, raw, add); err != nil {
		return err
	}
	nav, rawNav, err := navigation(ctx, stdio, rb, page, navigations)
	if err != nil {
		return err
	}
	add(fmt.Sprintf("raw: navigation start → the page's load event (%d navigations, interleaved)", navigations), rawNav.summary())
	add(fmt.Sprintf("navigation start → client has list_changed and the 10 new tools (%d navigations)", navigations), nav.summary())
	add("ratio navigation → tools / raw navigation → load", ratios(nav, rawNav))
	return nil
}

// leanRows adds the latency and throughput rows of a minimal JSON-RPC
// client over stdio (leanClient), which show the server's own cost without
// the go-sdk client's, and the same rows of the minimal forwarder (Forward):
// the floor of any process between the client and the browser. (Neither
// writes a CPU profile: --cpuprofile is the go-sdk stdio server's.)
func leanRows(ctx context.Context, opts Options, page, echo string, raw func(context.Context) error, add func(what, value string)) error {
	for _, side := range []struct {
		what string // the transport, in the rows' words
		args []string
	}{
		{"stdio, minimal client", []string{"launch", "--headless", "--log-level", "warn", page}},
		{"stdio, minimal forwarder", []string{"bench", forwardFlag, page}},
	} {
		lean, err := startLean(ctx, opts.Binary, side.args, nil)
		if err != nil {
			return err
		}
		defer lean.close() // on an error; closed below otherwise
		call := lean.caller(echo)
		// The page's tools are listed a moment after the session starts.
		for deadline := time.Now().Add(20 * time.Second); call(ctx) != nil; {
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: %w", side.what, call(ctx))
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := pairedRows(ctx, side.what, opts.Calls, call, raw, add); err != nil {
			return err
		}
		viaLean, direct, err := Throughput(ctx, workers, round, rounds, call, raw)
		if err != nil {
			return fmt.Errorf("throughput over %s: %w", side.what, err)
		}
		add(fmt.Sprintf("%d concurrent raw CDP callers into one tab (same shape)", workers), fmt.Sprintf("%.0f calls/s", direct))
		add(fmt.Sprintf("%d concurrent callers over %s", workers, side.what), fmt.Sprintf("%.0f calls/s", viaLean))
		add(fmt.Sprintf("ratio %s / raw throughput", side.what), times(viaLean, direct))
		lean.close()
	}
	return nil
}

// sdkForwarderRows adds the latency and throughput rows of the go-sdk
// client over stdio into the minimal forwarder (Forward): the floor of the
// go-sdk rows, what that client and one more process cost with no server
// behind them.
func sdkForwarderRows(ctx context.Context, opts Options, page string, raw func(context.Context) error, add func(what, value string)) error {
	const what = "stdio, go-sdk client, minimal forwarder"
	fw, err := startCommand(ctx, opts.Binary, []string{"bench", forwardFlag, page}, nil)
	if err != nil {
		return err
	}
	defer fw.close()
	call := caller(fw.cs, "echo_0")
	if err := pairedRows(ctx, what, opts.Calls, call, raw, add); err != nil {
		return err
	}
	viaFw, direct, err := Throughput(ctx, workers, round, rounds, call, raw)
	if err != nil {
		return fmt.Errorf("throughput over %s: %w", what, err)
	}
	add(fmt.Sprintf("%d concurrent raw CDP callers into one tab (same shape)", workers), fmt.Sprintf("%.0f calls/s", direct))
	add(fmt.Sprintf("%d concurrent callers over %s", workers, what), fmt.Sprintf("%.0f calls/s", viaFw))
	add(fmt.Sprintf("ratio %s / raw throughput", what), times(viaFw, direct))
	return nil
}

// httpRows adds the rows measured over streamable HTTP: latency at MCP
// 2026-07-28 and 2025-11-25 beside the minimal stateless forwarder's
// (revisions.go), the latency of the minimal HTTP forwarder of the older
// revisions (the floor of 2025-11-25), and memory.
// env is added to the server's environment.
func httpRows(ctx context.Context, opts Options, env []string, page string, raw func(context.Context) error, add func(what, value string)) error {
	dir, err := os.MkdirTemp("", "webmcp-cdp-bench-")
	if err != nil {
		return fmt.Errorf("making a directory for the server's memory figures: %w", err)
	}
	defer os.RemoveAll(dir)
	stats := filepath.Join(dir, "memstats")
	h, err := startHTTP(ctx, opts.Binary, page, append(env, MemStatsEnv+"="+stats))
	if err != nil {
		return err
	}
	defer h.close()
	echo, err := waitTool(ctx, h.cs, "echo_0", 10)
	if err != nil {
		return err
	}
	if err := revisionRows(ctx, opts, h, echo, page, raw, add); err != nil { // revisions.go
		return err
	}
	if err := forwardHTTPRows(ctx, opts, page, raw, add); err != nil {
		return err
	}
	if err := memory(ctx, h, page, opts.Tabs, add); err != nil {
		return err
	}
	// The same moment seen from the kernel and from the Go runtime: the
	// resident set just before the server is asked to stop, and the
	// runtime's figures it writes when it is.
	rss, anon, err := residentOf(h.cmd.Process.Pid)
	if err != nil {
		return err
	}
	h.close()
	m, err := readMemStats(stats)
	if err != nil {
		return err
	}
	add(fmt.Sprintf("webmcp-cdp process with %d tab(s), after the lists", slices.Max(opts.Tabs)),
		fmt.Sprintf("RSS %.1f MB (anonymous %.1f, files %.1f); %s", float64(rss)/(1<<20), float64(anon)/(1<<20), float64(rss-anon)/(1<<20), m.summary()))
	return nil
}

// forwardHTTPRows adds the latency rows of the go-sdk client over
// streamable HTTP to the minimal HTTP forwarder (ForwardHTTP), interleaved
// with raw CDP: the floor of any process behind that client, with its
// tools/call answered as application/json and, as webmcp-cdp answers it,
// as an event stream.
func forwardHTTPRows(ctx context.Context, opts Options, page string, raw func(context.Context) error, add func(what, value string)) error {
	for _, side := range []struct {
		what  string // the transport, in the rows' words
		extra []string
	}{
		{"streamable HTTP, minimal forwarder", nil},
		{"streamable HTTP, minimal forwarder, SSE answers", []string{forwardHTTPSSEFlag}},
	} {
		args := func(addr string) []string {
			return append([]string{"bench", forwardHTTPFlag, page, forwardHTTPAddrFlag, addr}, side.extra...)
		}
		if err := forwardHTTPRow(ctx, opts, side.what, args, raw, add); err != nil {
			return err
		}
	}
	return nil
}

// forwardHTTPRow starts one HTTP forwarder (its arguments from args) and
// adds its paired rows, named by what.
func forwardHTTPRow(ctx context.Context, opts Options, what string, args func(addr string) []string, raw func(context.Context) error, add func(what, value string)) error {
	fw, err := startHTTPProcess(ctx, opts.Binary, nil, args)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer fw.close()
	return pairedRows(ctx, what, opts.Calls, caller(fw.cs, "echo_0"), raw, add)
}

// pairedRows adds the three rows of one transport: raw CDP and tools/call
// latencies measured in one loop (after a warm-up), and their ratios.
func pairedRows(ctx context.Context, transport string, n int, viaMCP, raw func(context.Context) error, add func(what, value string)) error {
	if _, _, err := Paired(ctx, warmup, viaMCP, raw); err != nil {
		return fmt.Errorf("warming up %s: %w", transport, err)
	}
	mcpL, rawL, err := Paired(ctx, n, viaMCP, raw)
	if err != nil {
		return fmt.Errorf("%s latency: %w", transport, err)
	}
	add(fmt.Sprintf("raw Runtime.callFunctionOn into the page (%d, interleaved with %s)", n, transport), rawL.summary())
	add(fmt.Sprintf("tools/call over %s into the same page (%d, interleaved with raw)", transport, n), mcpL.summary())
	add(fmt.Sprintf("ratio %s tools/call / raw", transport), ratios(mcpL, rawL))
	return nil
}
