package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	cdpt "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// navLoadRuns is the number of measured navigations of each navload row.
const navLoadRuns = 30

// navLoadRows adds, per backend, the navigation rows seen from outside: a
// browser that `webmcp-cdp attach` follows and a bare browser of the same
// flags (no webmcp-cdp) navigate a tab each to the same ten-tool page in
// turn. For the attached tab it times navigation start → the tab's own
// load event and → the client having list_changed and the ten new tools;
// for the bare tab, navigation start → load. A third tab, in the bare
// browser, is set up as webmcp-cdp sets up a tab (the page script and the
// same domains) with no webmcp-cdp behind it: what the browser's side
// costs, apart from webmcp-cdp's reading and the CPU it takes. A fourth,
// also in the bare browser, is that tab read by the bench itself over raw
// CDP as cdp/ reads one (navraw.go): the part of the gap that reading the
// tools over CDP costs, apart from what webmcp-cdp adds. A fifth is the
// same reader in a browser of its own reached as attach reaches one, over
// a WebSocket beside the bench's pipe: what that way in costs, apart from
// webmcp-cdp's process. The ratios
// are of p50s, and the median of each navigation's ratio to the bare one
// next to it (which load on a shared machine moves less); the attached
// tab's rows have them to the set-up tab too, the floor its targets are
// of.
func navLoadRows(ctx context.Context, bin, url string, add func(what, value string)) error {
	for _, side := range backendSides {
		m, err := navLoad(ctx, bin, url, side)
		if err != nil {
			return fmt.Errorf("navload (%s): %w", side.name, err)
		}
		cell := func(l Latencies) string {
			return fmt.Sprintf("%s; %s bare (p50s), paired median %s", l.summary(), times(float64(l.Percentile(50)), float64(m.bare.Percentile(50))), pairedRatio(l, m.bare))
		}
		add(fmt.Sprintf("%s: bare browser, navigation start → load (%d navigations, interleaved)", side.name, navLoadRuns), m.bare.summary())
		add(fmt.Sprintf("%s: bare browser, a tab set up as webmcp-cdp sets one up, no webmcp-cdp: navigation start → load", side.name), cell(m.setup))
		// The targets are of the floor (issue 41): the tab set up the same
		// way with nothing of webmcp-cdp reading it, in the same run.
		floor := func(l Latencies) string {
			return fmt.Sprintf("%s; %s the floor (p50s), paired median %s", cell(l), times(float64(l.Percentile(50)), float64(m.setup.Percentile(50))), pairedRatio(l, m.setup))
		}
		add(fmt.Sprintf("%s: attached tab, navigation start → its load (target ≤ 1.05× the floor's load)", side.name), floor(m.load))
		add(fmt.Sprintf("%s: attached tab, navigation start → client has list_changed and the 10 tools (target ≤ 1.1× the floor's load)", side.name), floor(m.tools))
		add(fmt.Sprintf("%s: attached tab, its load → client has the 10 tools (each navigation's difference)", side.name), pairedGap(m.tools, m.load))
		// That step split where the client sees it: until the notification
		// reaches it (the browser's report, webmcp-cdp's sink, hub and
		// ToolSet, the write to stdio), and from it to the list (MCP's
		// notify-then-list: the client's tools/list round trip and reading
		// the list).
		add(fmt.Sprintf("%s: attached tab, its load → the client gets the list_changed it lists the 10 tools after", side.name), pairedGap(m.notified, m.load))
		add(fmt.Sprintf("%s: attached tab, that list_changed → client has the 10 tools (its tools/list round trip)", side.name), pairedGap(m.tools, m.notified))
		// The split of the gap (navraw.go): reading the tools over CDP and
		// nothing else, against the floor; webmcp-cdp against that.
		add(fmt.Sprintf("%s: raw reader (the floor's setup, tools read over CDP as cdp/ does, nothing else), navigation start → its load", side.name), floor(m.rawLoad))
		add(fmt.Sprintf("%s: raw reader, navigation start → it has the 10 tools", side.name), floor(m.rawTools))
		add(fmt.Sprintf("%s: attached tab against the raw reader: its load, the client's 10 tools (paired medians)", side.name),
			fmt.Sprintf("%s, %s", pairedRatio(m.load, m.rawLoad), pairedRatio(m.tools, m.rawTools)))
		// The raw reader again, its browser reached as attach reaches one
		// (a WebSocket, a session of its own beside the bench's): the rest
		// of the gap split into how attach reaches a browser and
		// webmcp-cdp's own process.
		add(fmt.Sprintf("%s: raw reader over a WebSocket (its own browser, reached as attach reaches one), navigation start → its load", side.name), floor(m.wsLoad))
		add(fmt.Sprintf("%s: raw reader over a WebSocket, navigation start → it has the 10 tools", side.name), floor(m.wsTools))
		add(fmt.Sprintf("%s: raw reader over a WebSocket against the raw reader: its load, its 10 tools (paired medians)", side.name),
			fmt.Sprintf("%s, %s", pairedRatio(m.wsLoad, m.rawLoad), pairedRatio(m.wsTools, m.rawTools)))
		add(fmt.Sprintf("%s: attached tab against the raw reader over a WebSocket: its load, the client's 10 tools (paired medians)", side.name),
			fmt.Sprintf("%s, %s", pairedRatio(m.load, m.wsLoad), pairedRatio(m.tools, m.wsTools)))
	}
	return nil
}

// pairedRatio is the median of a[i]/b[i].
func pairedRatio(a, b Latencies) string {
	r := make([]float64, 0, len(a))
	for i := range min(len(a), len(b)) {
		if b[i] > 0 {
			r = append(r, float64(a[i])/float64(b[i]))
		}
	}
	if len(r) == 0 {
		return "n/a"
	}
	slices.Sort(r)
	return strconv.FormatFloat(r[(len(r)-1)/2], 'f', 2, 64) + "×"
}

// pairedGap is the p50 and p95 of a[i]-b[i] (negative when a came first).
func pairedGap(a, b Latencies) string {
	d := make(Latencies, 0, len(a))
	for i := range min(len(a), len(b)) {
		d = append(d, a[i]-b[i])
	}
	if len(d) == 0 {
		return "n/a"
	}
	return fmt.Sprintf("p50 %s ms, p95 %s ms", ms(d.Percentile(50)), ms(d.Percentile(95)))
}

// navMeasures are the samples of navLoad, one per navigation of each tab.
type navMeasures struct {
	bare, setup, load, tools, rawLoad, rawTools Latencies
	wsLoad, wsTools                             Latencies // the raw reader over a WebSocket
	// notified is, for the attached tab, navigation start → the client got
	// the list_changed after which it listed the ten tools.
	notified Latencies
}

// navLoad measures one backend of navLoadRows.
func navLoad(ctx context.Context, bin, url string, side backendSide) (navMeasures, error) {
	var m navMeasures
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	bareProc, err := cdp.Launch(ctx, cdp.LaunchOptions{Headless: true, EnableNative: side.native, Logger: quiet})
	if err != nil {
		return m, fmt.Errorf("launching the bare browser: %w", err)
	}
	defer bareProc.Close()
	bareSess, err := blankTab(ctx, bareProc.Conn())
	if err != nil {
		return m, err
	}
	bareNav, err := loadNavigator(ctx, bareSess)
	if err != nil {
		return m, err
	}
	setupNav, err := setUpTab(ctx, bareProc.Conn(), side)
	if err != nil {
		return m, err
	}
	raw, err := rawReaderTab(ctx, bareProc.Conn(), side)
	if err != nil {
		return m, err
	}
	wsRaw, closeWS, err := wsReaderTab(ctx, side, quiet)
	if err != nil {
		return m, err
	}
	defer closeWS()

	dir, proc, stop, err := portBrowser(ctx, side.native, quiet)
	if err != nil {
		return m, fmt.Errorf("the attached browser: %w", err)
	}
	defer stop()
	sess, err := blankTab(ctx, proc.Conn())
	if err != nil {
		return m, err
	}
	nav, err := loadNavigator(ctx, sess)
	if err != nil {
		return m, err
	}
	s := &server{changes: make(chan struct{}, 1024)}
	s.cmd = exec.Command(bin, "attach", "--auto-connect", "--user-data-dir", dir, "--state-dir", "", "--backend", string(side.backend), "--log-level", "warn")
	s.cmd.Stderr = os.Stderr
	cs, err := newClient(s.changes).Connect(ctx, &mcp.CommandTransport{Command: s.cmd}, nil)
	if err != nil {
		return m, fmt.Errorf("starting %s attach: %w", bin, err)
	}
	s.cs = cs
	defer s.close()
	if _, err := listAll(ctx, cs); err != nil { // the first list: attach is in place
		return m, err
	}

	const warm = 2 // navigations not counted
	for i := range navLoadRuns + warm {
		prefix := ""
		if i%2 == 0 {
			prefix = fmt.Sprintf("n%d_", i)
		}
		u := url + "?p=" + prefix
		timed := func(nav func(context.Context, string) error, into *Latencies) func() error {
			return func() error {
				nctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				t0 := time.Now()
				if err := nav(nctx, u); err != nil {
					return err
				}
				if i >= warm {
					*into = append(*into, time.Since(t0))
				}
				return nil
			}
		}
		attached := func() error {
			for len(s.changes) > 0 {
				<-s.changes
			}
			nctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			loaded := make(chan error, 1)
			t0 := time.Now()
			var loadTook time.Duration
			go func() {
				err := nav(nctx, u)
				loadTook = time.Since(t0)
				loaded <- err
			}()
			notified, err := waitTen(nctx, s, prefix)
			toolsTook := time.Since(t0)
			if lerr := <-loaded; err == nil {
				err = lerr
			}
			if err != nil {
				return fmt.Errorf("attached tab: %w", err)
			}
			if i >= warm {
				m.load = append(m.load, loadTook)
				m.tools = append(m.tools, toolsTook)
				m.notified = append(m.notified, notified.Sub(t0))
			}
			return nil
		}
		rawRead := func(r *rawReader, loads, tools *Latencies) func() error {
			return func() error {
				nctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				load, took, err := r.navigate(nctx, u, prefix)
				if err != nil {
					return fmt.Errorf("raw reader's tab: %w", err)
				}
				if i >= warm {
					*loads = append(*loads, load)
					*tools = append(*tools, took)
				}
				return nil
			}
		}
		// Each round goes through the five tabs, starting one further on.
		steps := []func() error{timed(bareNav, &m.bare), timed(setupNav, &m.setup), rawRead(raw, &m.rawLoad, &m.rawTools),
			rawRead(wsRaw, &m.wsLoad, &m.wsTools), attached}
		for j := range steps {
			if err := steps[(i+j)%len(steps)](); err != nil {
				return m, fmt.Errorf("navigation %d: %w", i+1, err)
			}
		}
	}
	return m, nil
}

// setUpTab opens a tab through conn set up as webmcp-cdp sets up a tab of
// side's backend (Runtime.enable, the binding, Page.enable, the page
// script, Network.enable on the polyfill backend, WebMCP.enable on the
// native one), with nothing reading what it reports, and returns its
// navigator.
func setUpTab(ctx context.Context, conn *cdp.Conn, side backendSide) (func(context.Context, string) error, error) {
	_, nav, _, err := setUpSession(ctx, conn, side)
	return nav, err
}

// setUpSession is setUpTab's tab with its session and the binding's name
// (whose suffix is the page script's nonce).
func setUpSession(ctx context.Context, conn *cdp.Conn, side backendSide) (*cdp.Session, func(context.Context, string) error, string, error) {
	binding, script, err := benchScript(side)
	if err != nil {
		return nil, nil, "", err
	}
	sess, nav, err := instrumentedTab(ctx, conn, binding, []string{script})
	if err != nil {
		return nil, nil, "", err
	}
	return sess, nav, binding, enableSide(ctx, sess, side)
}

// setUpOn sets up sess, attached to a tab, as setUpSession sets up its
// own tab, and returns the binding's name; its navigator is not used.
func setUpOn(ctx context.Context, sess *cdp.Session, side backendSide) (string, error) {
	binding, script, err := benchScript(side)
	if err != nil {
		return "", err
	}
	if _, err := instrumentSession(ctx, sess, binding, []string{script}); err != nil {
		return "", err
	}
	return binding, enableSide(ctx, sess, side)
}

// enableSide turns on the domain webmcp-cdp turns on for side's backend:
// Network (the polyfill's Permissions-Policy headers) or WebMCP (native).
func enableSide(ctx context.Context, sess *cdp.Session, side backendSide) error {
	method, params := "Network.enable", any(map[string]any{"maxTotalBufferSize": 1024, "maxResourceBufferSize": 1024})
	if side.native {
		method, params = "WebMCP.enable", nil
	}
	if err := sess.Call(ctx, method, params, nil); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// waitTen waits for list_changed notifications until the client lists the
// ten bench tools of prefix, and returns when the notification that led to
// that list reached the client.
func waitTen(ctx context.Context, s *server, prefix string) (time.Time, error) {
	for {
		select {
		case <-s.changes:
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("the client did not get the ten tools of %q: %w", prefix, ctx.Err())
		}
		notified := time.Now()
		list, err := listAll(ctx, s.cs)
		if err != nil {
			return time.Time{}, err
		}
		count := 0
		for _, t := range list {
			src, _ := t.Meta["webmcp-cdp/source"].(map[string]any)
			name, _ := src["tool"].(string)
			if strings.HasPrefix(name, prefix+"echo_") && (prefix != "" || !strings.HasPrefix(name, "n")) {
				count++
			}
		}
		if count == 10 {
			return notified, nil
		}
	}
}

// blankTab opens an about:blank tab through conn and attaches to it.
func blankTab(ctx context.Context, conn *cdp.Conn) (*cdp.Session, error) {
	sess, _, err := blankTarget(ctx, conn)
	return sess, err
}

// blankTarget is blankTab, with the tab's target ID.
func blankTarget(ctx context.Context, conn *cdp.Conn) (*cdp.Session, target.ID, error) {
	created, err := cdpt.Call(ctx, conn.Browser(), target.CreateTarget, target.CreateTargetParams{URL: "about:blank"})
	if err != nil {
		return nil, "", fmt.Errorf("opening a tab: %w", err)
	}
	sess, err := attachTab(ctx, conn, created.TargetID)
	return sess, created.TargetID, err
}

// attachTab attaches to the tab id through conn (a session of its own).
func attachTab(ctx context.Context, conn *cdp.Conn, id target.ID) (*cdp.Session, error) {
	flatten := true
	att, err := cdpt.Call(ctx, conn.Browser(), target.AttachToTarget, target.AttachToTargetParams{TargetID: id, Flatten: &flatten})
	if err != nil {
		return nil, fmt.Errorf("attaching to a tab: %w", err)
	}
	return conn.Attach(att.SessionID), nil
}
