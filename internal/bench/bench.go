// Package bench measures webmcp-cdp end to end on this machine and prints
// one table: raw CDP calls into a page next to tools/call through webmcp-cdp
// over stdio and HTTP, navigation to list_changed, concurrent throughput, and
// the memory of the webmcp-cdp process with 1, 10 and 100 tabs.
//
// It drives real parts only: a webmcp-cdp binary as a subprocess, the go-sdk
// client, Chromium, and the bench page served on 127.0.0.1.
package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	cdpt "github.com/chromedp/cdproto/cdp"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/fixtures"
)

// Options configures Run.
type Options struct {
	// Binary is the webmcp-cdp executable to measure.
	Binary string
	// Calls is the number of sequential calls per latency row (default 200).
	Calls int
	// Tabs lists the tab counts of the memory rows (default 1, 10, 100).
	Tabs []int
	// Logger receives progress (default slog.Default()).
	Logger *slog.Logger
}

// Row is one line of the table.
type Row struct {
	What  string
	Value string
}

// Report is the result of a run.
type Report struct {
	Date    time.Time
	Machine string
	Browser string
	Rows    []Row
}

// Table renders the report as an aligned text table.
func (r *Report) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "webmcp-cdp bench, %s, %s, %s\n\n", r.Date.Format("2006-01-02"), r.Machine, r.Browser)
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "what\tresult")
	fmt.Fprintln(w, "----\t------")
	for _, row := range r.Rows {
		fmt.Fprintf(w, "%s\t%s\n", row.What, row.Value)
	}
	w.Flush()
	return b.String()
}

// Markdown renders the report as a Markdown table.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured on %s on %s, %s, with `webmcp-cdp bench`:\n\n", r.Date.Format("2006-01-02"), r.Machine, r.Browser)
	b.WriteString("| what | result |\n|---|---|\n")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "| %s | %s |\n", row.What, row.Value)
	}
	return b.String()
}

type latencies []time.Duration

func (l latencies) pct(p int) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := append(latencies(nil), l...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 3, 64)
}

func (l latencies) summary() string {
	return fmt.Sprintf("p50 %s ms, p95 %s ms, p99 %s ms", ms(l.pct(50)), ms(l.pct(95)), ms(l.pct(99)))
}

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
	log := opts.Logger
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("serving the bench page: %w", err)
	}
	srv := &http.Server{Handler: fixtures.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	page := "http://" + ln.Addr().String() + "/bench/"
	rep := &Report{Date: time.Now(), Machine: machine()}
	add := func(what, value string) {
		rep.Rows = append(rep.Rows, Row{what, value})
		log.Info("bench", "what", what, "result", value)
	}

	// Raw CDP into the page, in a browser driven directly.
	rawCall, closeRaw, product, err := RawCaller(ctx, page)
	if err != nil {
		return nil, err
	}
	rep.Browser = product
	var raw latencies
	for i := 0; i < opts.Calls; i++ {
		t0 := time.Now()
		if err := rawCall(ctx); err != nil {
			closeRaw()
			return nil, err
		}
		raw = append(raw, time.Since(t0))
	}
	closeRaw()
	add(fmt.Sprintf("raw Runtime.callFunctionOn into the page (%d sequential)", opts.Calls), raw.summary())

	// tools/call over stdio.
	stdio, err := startStdio(ctx, opts.Binary, page)
	if err != nil {
		return nil, err
	}
	echo, err := waitTool(ctx, stdio.cs, "echo_0", 10)
	if err != nil {
		stdio.close()
		return nil, err
	}
	viaStdio, err := sequential(ctx, stdio.cs, echo, opts.Calls)
	if err != nil {
		stdio.close()
		return nil, err
	}
	add(fmt.Sprintf("tools/call over stdio into the same page (%d sequential)", opts.Calls), viaStdio.summary())
	add("ratio stdio / raw (p50)", fmt.Sprintf("%.2f×", float64(viaStdio.pct(50))/float64(raw.pct(50))))

	// Navigation start → the client's list_changed with the 10 tools back.
	nav, err := navigation(ctx, stdio, page, 20)
	if err != nil {
		stdio.close()
		return nil, err
	}
	add("navigation start → client has list_changed and the 10 new tools (20 navigations)", nav.summary())

	// Throughput with 8 concurrent callers.
	perSec, err := concurrent(ctx, stdio.cs, echo, 8, 2*time.Second)
	if err != nil {
		stdio.close()
		return nil, err
	}
	add("tools/call with 8 concurrent callers over stdio", fmt.Sprintf("%.0f calls/s", perSec))
	stdio.close()

	// tools/call over HTTP, and memory with many tabs.
	h, err := startHTTP(ctx, opts.Binary, page)
	if err != nil {
		return nil, err
	}
	defer h.close()
	echo, err = waitTool(ctx, h.cs, "echo_0", 10)
	if err != nil {
		return nil, err
	}
	viaHTTP, err := sequential(ctx, h.cs, echo, opts.Calls)
	if err != nil {
		return nil, err
	}
	add(fmt.Sprintf("tools/call over streamable HTTP into the same page (%d sequential)", opts.Calls), viaHTTP.summary())
	add("ratio HTTP / raw (p50)", fmt.Sprintf("%.2f×", float64(viaHTTP.pct(50))/float64(raw.pct(50))))
	open := 1
	for _, n := range opts.Tabs {
		for ; open < n; open++ {
			if _, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "webmcp_open_tab", Arguments: map[string]any{"url": page, "wait_ms": 1}}); err != nil {
				return nil, fmt.Errorf("opening tab %d: %w", open+1, err)
			}
		}
		if err := waitCount(ctx, h.cs, "echo_0", n); err != nil {
			return nil, err
		}
		t0 := time.Now()
		if _, err := listAll(ctx, h.cs); err != nil {
			return nil, err
		}
		listTook := time.Since(t0)
		rss, err := rssOf(h.cmd.Process.Pid)
		if err != nil {
			return nil, err
		}
		add(fmt.Sprintf("webmcp-cdp process with %d tab(s) of 10 tools", n), fmt.Sprintf("RSS %.1f MB; full tools/list %s ms", float64(rss)/(1<<20), ms(listTook)))
	}
	return rep, nil
}

func machine() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if m := regexp.MustCompile(`model name\s*:\s*(.+)`).FindSubmatch(b); m != nil {
			cpu = strings.TrimSpace(string(m[1]))
		}
	}
	return fmt.Sprintf("%d cores, %s, %s/%s", runtime.NumCPU(), cpu, runtime.GOOS, runtime.GOARCH)
}

// RawCaller launches its own browser on url and returns a func making one
// Runtime.callFunctionOn round trip into the page (the floor that tools/call
// is compared with), a func that closes the browser, and its product name.
func RawCaller(ctx context.Context, url string) (func(context.Context) error, func(), string, error) {
	proc, err := cdp.Launch(ctx, cdp.LaunchOptions{Headless: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, nil, "", err
	}
	fail := func(err error) (func(context.Context) error, func(), string, error) {
		proc.Close()
		return nil, nil, "", err
	}
	conn := proc.Conn()
	v, err := cdp.Version(ctx, conn)
	if err != nil {
		return fail(err)
	}
	created, err := cdpt.Call(ctx, conn.Browser(), target.CreateTarget, target.CreateTargetParams{URL: url})
	if err != nil {
		return fail(err)
	}
	flatten := true
	att, err := cdpt.Call(ctx, conn.Browser(), target.AttachToTarget, target.AttachToTargetParams{TargetID: created.TargetID, Flatten: &flatten})
	if err != nil {
		return fail(err)
	}
	sess := conn.Attach(att.SessionID)
	var obj cdpruntime.RemoteObjectID
	for deadline := time.Now().Add(10 * time.Second); obj == ""; {
		res, err := cdpt.Call(ctx, sess, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: "location.href !== 'about:blank' && document.readyState === 'complete' ? document : null"})
		if err == nil && res.Result != nil {
			obj = res.Result.ObjectID
		}
		if time.Now().After(deadline) {
			return fail(fmt.Errorf("the bench page did not load in the raw browser"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	yes := true
	params := cdpruntime.CallFunctionOnParams{
		FunctionDeclaration: "async function(s){return JSON.stringify({ok:true,value:s})}",
		ObjectID:            obj,
		Arguments:           []*cdpruntime.CallArgument{{Value: []byte(`"x"`)}},
		AwaitPromise:        &yes,
		ReturnByValue:       &yes,
	}
	call := func(ctx context.Context) error {
		if _, err := cdpt.Call(ctx, sess, cdpruntime.CallFunctionOn, params); err != nil {
			return fmt.Errorf("raw callFunctionOn: %w", err)
		}
		return nil
	}
	return call, func() { proc.Close() }, v.Product, nil
}

type server struct {
	cmd     *exec.Cmd
	cs      *mcp.ClientSession
	changes chan struct{}
}

func (s *server) close() {
	s.cs.Close()
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
	}
}

func newClient(changes chan struct{}) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "webmcp-cdp-bench", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changes <- struct{}{}:
			default:
			}
		},
	})
}

func startStdio(ctx context.Context, bin, page string) (*server, error) {
	s := &server{changes: make(chan struct{}, 1024)}
	s.cmd = exec.Command(bin, "launch", "--headless", "--log-level", "warn", page)
	s.cmd.Stderr = os.Stderr
	cs, err := newClient(s.changes).Connect(ctx, &mcp.CommandTransport{Command: s.cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("starting %s over stdio: %w", bin, err)
	}
	s.cs = cs
	return s, nil
}

func startHTTP(ctx context.Context, bin, page string) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &server{changes: make(chan struct{}, 1024)}
	s.cmd = exec.Command(bin, "launch", "--headless", "--log-level", "warn", "--http", addr, page)
	s.cmd.Stderr = os.Stderr
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	var cs *mcp.ClientSession
	for deadline := time.Now().Add(20 * time.Second); cs == nil; {
		cs, err = newClient(s.changes).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, nil)
		if err != nil {
			if time.Now().After(deadline) {
				s.cmd.Process.Kill()
				return nil, fmt.Errorf("connecting over HTTP: %w", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	s.cs = cs
	return s, nil
}

// waitTool waits until a tool named *_suffix is listed along with at least
// want page tools, and returns its routed name.
func waitTool(ctx context.Context, cs *mcp.ClientSession, suffix string, want int) (string, error) {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		res, err := listAll(ctx, cs)
		if err != nil {
			return "", err
		}
		found, pageTools := "", 0
		for _, t := range res.Tools {
			if !strings.HasPrefix(t.Name, "webmcp_") {
				pageTools++
			}
			if strings.HasSuffix(t.Name, "_"+suffix) {
				found = t.Name
			}
		}
		if found != "" && pageTools >= want {
			return found, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return "", fmt.Errorf("the bench page's tools did not appear")
}

// waitCount waits until n tab-level copies of a tool exist (n tabs loaded).
func waitCount(ctx context.Context, cs *mcp.ClientSession, suffix string, n int) error {
	deadline := time.Now().Add(2 * time.Minute)
	last := 0
	for time.Now().Before(deadline) {
		res, err := listAll(ctx, cs)
		if err != nil {
			return err
		}
		count := 0
		for _, t := range res.Tools {
			if strings.HasSuffix(t.Name, "_"+suffix) {
				count++
			}
		}
		// One site-level name plus one per tab once two or more tabs have it.
		if (n == 1 && count == 1) || count == n+1 {
			return nil
		}
		last = count
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%d tabs of the bench page did not all register their tools (%d names end in _%s)", n, last, suffix)
}

func sequential(ctx context.Context, cs *mcp.ClientSession, name string, n int) (latencies, error) {
	var l latencies
	for i := 0; i < n; i++ {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "x"}})
		if err != nil {
			return nil, err
		}
		if res.IsError {
			return nil, fmt.Errorf("%s failed during the bench", name)
		}
		l = append(l, time.Since(t0))
	}
	return l, nil
}

func concurrent(ctx context.Context, cs *mcp.ClientSession, name string, workers int, d time.Duration) (float64, error) {
	var done atomic.Int64
	var firstErr atomic.Value
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "x"}})
				if err == nil && res.IsError {
					err = fmt.Errorf("%s: %v", name, res.Content)
				}
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				done.Add(1)
			}
		}()
	}
	t0 := time.Now()
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return 0, err
	}
	return float64(done.Load()) / time.Since(t0).Seconds(), nil
}

// navigation makes the page navigate n times, alternating the prefix of its
// ten tools, and times the navigation's start → the client got
// list_changed and lists the ten new tools.
func navigation(ctx context.Context, s *server, page string, n int) (latencies, error) {
	var l latencies
	for i := 0; i < n; i++ {
		// Odd rounds go back to the page's own names, so the page ends as
		// it began (n is even).
		prefix := ""
		if i%2 == 0 {
			prefix = fmt.Sprintf("n%d_", i)
		}
		nav, err := waitTool(ctx, s.cs, "navigate", 1)
		if err != nil {
			return nil, err
		}
		for len(s.changes) > 0 {
			<-s.changes
		}
		t0 := time.Now()
		if _, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: nav, Arguments: map[string]any{"url": page + "?p=" + prefix}}); err != nil {
			return nil, err
		}
		for {
			select {
			case <-s.changes:
			case <-time.After(10 * time.Second):
				return nil, fmt.Errorf("no list_changed after a navigation")
			}
			res, err := listAll(ctx, s.cs)
			if err != nil {
				return nil, err
			}
			count := 0
			for _, t := range res.Tools {
				src, _ := t.Meta["webmcp-cdp/source"].(map[string]any)
				name, _ := src["tool"].(string)
				if strings.HasPrefix(name, prefix+"echo_") && (prefix != "" || !strings.HasPrefix(name, "n")) {
					count++
				}
			}
			if count == 10 {
				break
			}
		}
		l = append(l, time.Since(t0))
	}
	return l, nil
}

// listAll lists every page of tools (go-sdk serves 1000 a page).
func listAll(ctx context.Context, cs *mcp.ClientSession) (*mcp.ListToolsResult, error) {
	all := &mcp.ListToolsResult{}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		all.Tools = append(all.Tools, t)
	}
	return all, nil
}

// rssOf reads a process's resident set size.
func rssOf(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the RSS of webmcp-cdp: %w", err)
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		return 0, fmt.Errorf("no VmRSS for process %d", pid)
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10, nil
}
