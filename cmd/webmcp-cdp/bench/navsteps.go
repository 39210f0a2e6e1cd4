package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	cdpt "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// navStepsRuns is the number of measured navigations of each navsteps row.
const navStepsRuns = 30

// navStep is one variant of the navsteps rows: a tab set up with some of
// the steps of webmcp-cdp's per-tab setup (cdp/targets.go), or one that
// `webmcp-cdp attach` follows.
type navStep struct {
	name string
	// steps are the CDP setup steps, in targets.go's order: R
	// Runtime.enable, B Runtime.addBinding, S the page script
	// (runImmediately), A auto-attach (iframes, paused), N Network.enable
	// (1 KB buffers), W WebMCP.enable. Page.enable is always on (the bench
	// waits for the load event with it).
	steps string
	// attached: `webmcp-cdp attach` follows the tab, and the client waits
	// for the ten tools at each navigation.
	attached bool
	// second puts the steps on a second session of the tab, over the pipe
	// ("pipe") or over a WebSocket connection of its own that also
	// discovers targets ("ws"), as webmcp-cdp attach's are: the bench's
	// session only navigates.
	second string
}

// navStepsFor lists the variants of one backend.
func navStepsFor(side backendSide) []navStep {
	domain, name := "N", "Network.enable (Permissions-Policy headers)"
	if side.native {
		domain, name = "W", "WebMCP.enable"
	}
	return []navStep{
		{name: "bare (Page.enable only)"},
		{name: "Runtime.enable", steps: "R"},
		{name: "the binding and the page script", steps: "BS"},
		{name: "auto-attach (iframes, paused)", steps: "A"},
		{name: name, steps: domain},
		{name: "all of the setup, nothing reading", steps: "RBSA" + domain},
		{name: "all of the setup on a second session, nothing reading", steps: "RBSA" + domain, second: "pipe"},
		{name: "all of the setup on a WebSocket session discovering targets, nothing reading", steps: "RBSA" + domain, second: "ws"},
		{name: "webmcp-cdp attach following it, the client waiting for the 10 tools", attached: true},
		{name: "bare again (the noise between two bare browsers)"},
	}
}

// navStepsRows adds, per backend, what each step of webmcp-cdp's per-tab
// setup costs a navigation of the bench page: each variant has a browser
// of its own (so the CPU its processes take is its own), and the browsers
// navigate a tab each in turn, navStepsRuns times after 3 unmeasured. For
// each variant: navigation start → load (p50 and the paired median of each
// navigation's ratio to the first bare browser's in the same round), and
// the CPU time per navigation of all the browser's processes, of its
// renderers, and of the webmcp-cdp process that follows it. CPU time
// (Linux /proc) moves far less with the machine's load than wall time.
func navStepsRows(ctx context.Context, bin, url string, add func(what, value string)) error {
	for _, side := range backendSides {
		if err := navSteps(ctx, bin, url, side, add); err != nil {
			return fmt.Errorf("navsteps (%s): %w", side.name, err)
		}
	}
	return nil
}

// navStepTab is one variant's browser and tab.
type navStepTab struct {
	dir   string // the browser's profile: its processes' command lines name it
	nav   func(context.Context, string) error
	attch *exec.Cmd // the webmcp-cdp process of an attached variant
	lat   Latencies // navigation start → load
	tools Latencies // → the client has the ten tools (attached variants)
	// loadTook is the load time of an attached variant's last navigation.
	loadTook time.Duration
	cpu0     map[string]float64
	own0     float64
}

// pid is the webmcp-cdp process's (its command line names the profile
// too, but it is no process of the browser), or 0.
func (t *navStepTab) pid() int {
	if t.attch == nil || t.attch.Process == nil {
		return 0
	}
	return t.attch.Process.Pid
}

func navSteps(ctx context.Context, bin, url string, side backendSide, add func(what, value string)) error {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	variants := navStepsFor(side)
	tabs := make([]*navStepTab, len(variants))
	for i, v := range variants {
		dir, err := os.MkdirTemp("", "webmcp-cdp-bench-")
		if err != nil {
			return fmt.Errorf("making a profile: %w", err)
		}
		defer os.RemoveAll(dir)
		var args []string
		if v.attached || v.second == "ws" {
			args = []string{"--remote-debugging-port=0"}
		}
		proc, err := cdp.Launch(ctx, cdp.LaunchOptions{Headless: true, UserDataDir: dir, EnableNative: side.native, Args: args, Logger: quiet})
		if err != nil {
			return fmt.Errorf("launching a browser: %w", err)
		}
		defer proc.Close()
		tab := &navStepTab{dir: dir}
		tabs[i] = tab
		if !v.attached {
			conn := proc.Conn()
			if v.second == "ws" {
				ap, err := cdp.FindActivePort([]cdp.UserDataDir{{Dir: dir}}, os.ReadFile)
				if err != nil {
					return err
				}
				if conn, err = cdp.AutoConnect(ctx, ap, cdp.AutoConnectOptions{Logger: quiet}); err != nil {
					return err
				}
				defer conn.Close()
				if err := conn.Browser().Call(ctx, "Target.setDiscoverTargets", map[string]any{"discover": true}, nil); err != nil {
					return err
				}
			}
			if tab.nav, err = stepTab(ctx, proc.Conn(), conn, side, v.steps, v.second != ""); err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			continue
		}
		sess, err := blankTab(ctx, proc.Conn())
		if err != nil {
			return err
		}
		nav, err := loadNavigator(ctx, sess)
		if err != nil {
			return err
		}
		s := &server{changes: make(chan struct{}, 1024)}
		s.cmd = exec.Command(bin, "attach", "--auto-connect", "--user-data-dir", dir, "--state-dir", "", "--backend", string(side.backend), "--log-level", "warn")
		s.cmd.Stderr = os.Stderr
		cs, err := newClient(s.changes).Connect(ctx, &mcp.CommandTransport{Command: s.cmd}, nil)
		if err != nil {
			return fmt.Errorf("starting %s attach: %w", bin, err)
		}
		s.cs = cs
		defer s.close()
		if _, err := listAll(ctx, cs); err != nil {
			return err
		}
		tab.attch = s.cmd
		tab.nav = func(ctx context.Context, u string) error {
			for len(s.changes) > 0 {
				<-s.changes
			}
			loaded := make(chan error, 1)
			t0 := time.Now()
			go func() {
				err := nav(ctx, u)
				tab.loadTook = time.Since(t0)
				loaded <- err
			}()
			_, prefix, _ := strings.Cut(u, "?p=")
			_, err := waitTen(ctx, s, prefix)
			if lerr := <-loaded; err == nil {
				err = lerr
			}
			return err
		}
	}

	const warm = 3
	for i := range navStepsRuns + warm {
		if i == warm {
			for _, tab := range tabs {
				tab.cpu0 = cpuByType(tab.dir, tab.pid())
				if tab.attch != nil {
					tab.own0 = processCPU(tab.pid())
				}
			}
		}
		u := url + "?p=" + fmt.Sprintf("n%d_", i%2)
		// Each round goes through the browsers, starting one further on.
		for j := range tabs {
			k := (i + j) % len(tabs)
			nctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			t0 := time.Now()
			err := tabs[k].nav(nctx, u)
			cancel()
			if err != nil {
				return fmt.Errorf("%s, navigation %d: %w", variants[k].name, i+1, err)
			}
			took := time.Since(t0)
			if i < warm {
				continue
			}
			if tabs[k].attch != nil {
				tabs[k].tools = append(tabs[k].tools, took)
				took = tabs[k].loadTook
			}
			tabs[k].lat = append(tabs[k].lat, took)
		}
	}
	bare := tabs[0].lat
	for i, v := range variants {
		tab := tabs[i]
		cpu := cpuByType(tab.dir, tab.pid())
		per := func(typ string) float64 { return (cpu[typ] - tab.cpu0[typ]) / navStepsRuns * 1000 }
		total := 0.0
		for typ := range cpu {
			total += per(typ)
		}
		value := fmt.Sprintf("p50 %.1f ms, paired median %s bare; CPU per navigation: browser's processes %.1f ms (browser process %.1f, renderers %.1f)",
			float64(tab.lat.Percentile(50))/1e6, pairedRatio(tab.lat, bare), total, per("browser"), per("renderer"))
		if tab.attch != nil {
			value += fmt.Sprintf(", webmcp-cdp %.1f ms; → the client has the 10 tools p50 %.1f ms, paired median %s bare",
				(processCPU(tab.pid())-tab.own0)/navStepsRuns*1000, float64(tab.tools.Percentile(50))/1e6, pairedRatio(tab.tools, bare))
		}
		add(fmt.Sprintf("%s: navigation start → load, %s (%d navigations, a browser each, interleaved)", side.name, v.name, navStepsRuns), value)
	}
	return nil
}

// stepTab opens a tab through conn set up with steps (navStep.steps) and
// nothing reading what it reports, and returns its navigator. With second,
// the steps go on a session of their own through setupConn.
func stepTab(ctx context.Context, conn, setupConn *cdp.Conn, side backendSide, steps string, second bool) (func(context.Context, string) error, error) {
	created, err := cdpt.Call(ctx, conn.Browser(), target.CreateTarget, target.CreateTargetParams{URL: "about:blank"})
	if err != nil {
		return nil, fmt.Errorf("opening a tab: %w", err)
	}
	attach := func(c *cdp.Conn) (*cdp.Session, error) {
		flatten := true
		att, err := cdpt.Call(ctx, c.Browser(), target.AttachToTarget, target.AttachToTargetParams{TargetID: created.TargetID, Flatten: &flatten})
		if err != nil {
			return nil, fmt.Errorf("attaching to a tab: %w", err)
		}
		return c.Attach(att.SessionID), nil
	}
	sess, err := attach(conn)
	if err != nil {
		return nil, err
	}
	nav, err := loadNavigator(ctx, sess)
	if err != nil {
		return nil, err
	}
	if second {
		if sess, err = attach(setupConn); err != nil {
			return nil, err
		}
		if err := sess.Call(ctx, "Page.enable", nil, nil); err != nil {
			return nil, fmt.Errorf("Page.enable: %w", err)
		}
	}
	binding, script, err := benchScript(side)
	if err != nil {
		return nil, err
	}
	commands := map[rune]struct {
		method string
		params any
	}{
		'R': {"Runtime.enable", nil},
		'B': {"Runtime.addBinding", map[string]any{"name": binding}},
		'S': {"Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": script, "runImmediately": true}},
		'A': {"Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true, "filter": []any{map[string]any{"type": "iframe"}}}},
		'N': {"Network.enable", map[string]any{"maxTotalBufferSize": 1024, "maxResourceBufferSize": 1024}},
		'W': {"WebMCP.enable", nil},
	}
	for _, s := range steps {
		c, ok := commands[s]
		if !ok {
			return nil, fmt.Errorf("no setup step %q", s)
		}
		if err := sess.Call(ctx, c.method, c.params, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", c.method, err)
		}
	}
	return nav, nil
}

// cpuByType adds up the CPU time (user and system, in seconds) of the
// processes whose command line contains sub, but for the process skip, by
// Chromium process type (--type=; "browser" for the browser process).
// Chromium's child processes rewrite their command line with spaces
// between the arguments. Empty where there is no /proc.
func cpuByType(sub string, skip int) map[string]float64 {
	out := map[string]float64{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == skip {
			continue
		}
		cl, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !strings.Contains(string(cl), sub) {
			continue
		}
		typ := "browser"
		for _, a := range strings.FieldsFunc(string(cl), func(r rune) bool { return r == 0 || r == ' ' }) {
			if v, ok := strings.CutPrefix(a, "--type="); ok {
				typ = v
			}
		}
		out[typ] += processCPU(pid)
	}
	return out
}

// processCPU is the CPU time (user and system, in seconds) a process took,
// from /proc (0 where there is none).
func processCPU(pid int) float64 {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(st)
	end := strings.LastIndexByte(s, ')')
	if end < 0 || end+2 > len(s) {
		return 0
	}
	f := strings.Fields(s[end+2:])
	if len(f) < 13 {
		return 0
	}
	// Fields 14 and 15 of stat (utime, stime), in clock ticks: 100 a
	// second on Linux.
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return (u + k) / 100
}
