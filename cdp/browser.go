package cdp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
)

// LaunchOptions configures Launch.
type LaunchOptions struct {
	// Chrome is the browser executable; empty finds one of Channel
	// (System.FindBrowser).
	Chrome string
	// Channel is the release channel to look for when Chrome is empty
	// (default stable).
	Channel Channel
	// Headless forces headless mode; without it the browser is headless only
	// when there is no display.
	Headless bool
	// UserDataDir is the profile; empty makes a temporary one that Close
	// removes.
	UserDataDir string
	// Args are extra command-line flags for the browser.
	Args []string
	// EnableNative adds --enable-features=WebMCP.
	EnableNative bool
	// ProxyServer is --proxy-server (e.g. http://127.0.0.1:3128), and
	// ProxyBypass its --proxy-bypass-list (e.g. "<-loopback>;*.internal").
	ProxyServer, ProxyBypass string
	// WindowWidth and WindowHeight, when set, are the window size
	// (--window-size): the viewport in headless mode.
	WindowWidth, WindowHeight int
	// Logger receives the log (default slog.Default()).
	Logger *slog.Logger

	// firstWait bounds the first start's wait for an answer (default
	// firstAnswerTimeout); tests shorten it.
	firstWait time.Duration
}

// Process is a browser started by Launch.
type Process struct {
	cmd     *exec.Cmd
	conn    *Conn
	tempDir string
	logger  *slog.Logger
	exited  chan struct{}

	// What Close does, and how long it waits; tests change them.
	grace     time.Duration // for the browser to exit once its pipe closed
	killWait  time.Duration // for the browser to die once killed
	kill      func()
	removeAll func(string) error

	closeOnce sync.Once
	closeErr  error

	mu      sync.Mutex
	waitErr error
	tail    []string // the last lines the browser printed
	partial []byte   // the start of a line not yet ended
}

const (
	// launchTimeout bounds the wait for a new browser's first answer
	// (measured: 0.3–0.6 s).
	launchTimeout = 30 * time.Second
	// firstAnswerTimeout bounds that wait on the first start: a browser
	// still running and silent by then is taken for hung (seen once in CI:
	// Chromium 156 running, its pipe silent for 30 s), killed, and
	// started once more, which then gets launchTimeout.
	firstAnswerTimeout = 15 * time.Second
	// outputDelay bounds how long the browser's helpers may keep its output
	// open after it exited.
	outputDelay = 2 * time.Second
	// tailLines is how many of the browser's last lines ExitReason quotes.
	tailLines = 20
)

// browserArgs returns the command line, and logs why each group of flags
// that the user did not ask for is there.
func browserArgs(opts LaunchOptions, userDataDir string, logger *slog.Logger) []string {
	args := []string{
		"--remote-debugging-pipe",
		"--user-data-dir=" + userDataDir,
		"--disable-popup-blocking",
	}
	logger.Debug("adding --remote-debugging-pipe (our CDP transport) and --disable-popup-blocking (window.open popups must open to get their tools)")
	headless := opts.Headless || (os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "")
	if headless {
		args = append(args, "--headless")
		if !opts.Headless {
			logger.Info("adding --headless: no display ($DISPLAY and $WAYLAND_DISPLAY are empty)")
		}
	}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox")
		logger.Info("adding --no-sandbox: running as root, where Chromium's sandbox cannot start")
	}
	args = append(args,
		"--disable-gpu", "--disable-quic", "--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
	)
	logger.Debug("adding --disable-gpu --disable-quic --no-first-run --disable-background-networking --disable-component-update --disable-sync: no background traffic, no first-run UI")
	args = append(args,
		"--disable-background-timer-throttling", "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows",
	)
	logger.Debug("adding --disable-background-timer-throttling --disable-renderer-backgrounding --disable-backgrounding-occluded-windows: a page in a background tab runs its timers on time, so its late tools come when they would in front")
	var enable, disable []string
	if opts.EnableNative {
		enable = append(enable, "WebMCP")
		logger.Info("adding --enable-features=WebMCP: --backend native needs Chromium's own WebMCP")
	}
	// Chromium gives a sandboxed frame without allow-same-origin a process
	// of its own, and a sandboxed srcdoc frame then starts running before
	// auto-attach can pause it: its scripts may run before the page script
	// (about 1 run in 3 here). In-process, it gets the page script from
	// its tab (docs/decisions/2026-11-26-sandboxed-frames.md).
	disable = append(disable, "IsolateSandboxedIframes")
	logger.Debug("adding --disable-features=IsolateSandboxedIframes: sandboxed frames stay in their tab's process, where the page script reaches them before their scripts run")
	if opts.ProxyServer != "" {
		args = append(args, "--proxy-server="+opts.ProxyServer)
	}
	if opts.ProxyBypass != "" {
		args = append(args, "--proxy-bypass-list="+opts.ProxyBypass)
	}
	if opts.WindowWidth > 0 && opts.WindowHeight > 0 {
		args = append(args, fmt.Sprintf("--window-size=%d,%d", opts.WindowWidth, opts.WindowHeight))
	}
	args = append(args, opts.Args...)
	args = mergeFeatures(args, enable, disable)
	// Start on about:blank: URLs are opened after auto-attach is in place,
	// or their early registrations would be lost.
	return append(args, "about:blank")
}

// mergeFeatures puts the features we enable and disable together with the
// user's (--chrome-arg) into one --enable-features and one
// --disable-features: Chromium reads only the last of each. The user's
// choice wins over ours: a feature the user disables is not enabled, and
// one the user enables is not disabled.
func mergeFeatures(args, enable, disable []string) []string {
	out := make([]string, 0, len(args)+2)
	var userEnable, userDisable []string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--enable-features="); ok {
			userEnable = append(userEnable, strings.Split(v, ",")...)
		} else if v, ok := strings.CutPrefix(a, "--disable-features="); ok {
			userDisable = append(userDisable, strings.Split(v, ",")...)
		} else {
			out = append(out, a)
		}
	}
	enable = uniqueNonEmpty(append(uniqueNonEmpty(enable, userDisable), userEnable...), nil)
	disable = uniqueNonEmpty(append(uniqueNonEmpty(disable, userEnable), userDisable...), nil)
	if len(enable) > 0 {
		out = append(out, "--enable-features="+strings.Join(enable, ","))
	}
	if len(disable) > 0 {
		out = append(out, "--disable-features="+strings.Join(disable, ","))
	}
	return out
}

// uniqueNonEmpty returns names in order without repeats, empty names or
// the features named in except (compared by featureName).
func uniqueNonEmpty(names, except []string) []string {
	var out []string
	for _, n := range names {
		if n != "" && !slices.Contains(out, n) && !slices.ContainsFunc(except, func(e string) bool { return featureName(e) == featureName(n) }) {
			out = append(out, n)
		}
	}
	return out
}

// featureName is the feature a --enable-features entry names, without
// Chromium's decorations: a leading "*", a field trial ("<Trial") and
// parameters (":k/v").
func featureName(entry string) string {
	entry = strings.TrimPrefix(entry, "*")
	if i := strings.IndexAny(entry, ":<"); i >= 0 {
		entry = entry[:i]
	}
	return entry
}

// Launch starts a browser with the pipe transport, checks that it answers,
// and returns it. The browser runs in its own process group, dies with this
// process, and is killed with its group by Close. When Launch fails, nothing
// it started or made is left: no process, descriptor or temporary profile.
func Launch(ctx context.Context, opts LaunchOptions) (*Process, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	exe, err := HostSystem().FindBrowser(opts.Chrome, opts.Channel)
	if err != nil {
		return nil, err
	}
	first := opts.firstWait
	if first <= 0 {
		first = firstAnswerTimeout
	}
	p, hung, err := launchOnce(ctx, exe, opts, logger, first)
	if hung && ctx.Err() == nil {
		logger.Warn("the browser started but did not answer; starting it once more", "waited", first, "err", err)
		p, _, err = launchOnce(ctx, exe, opts, logger, launchTimeout)
	}
	return p, err
}

// launchOnce starts the browser and waits at most wait for its first
// answer. hung reports a browser that was still running, silent, when the
// wait ended (it is closed, as after every failure).
func launchOnce(ctx context.Context, exe string, opts LaunchOptions, logger *slog.Logger, wait time.Duration) (_ *Process, hung bool, _ error) {
	p := &Process{
		logger:    logger,
		exited:    make(chan struct{}),
		grace:     3 * time.Second,
		killWait:  5 * time.Second,
		removeAll: os.RemoveAll,
	}
	var err error
	dir := opts.UserDataDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "webmcp-cdp-profile-"); err != nil {
			return nil, false, fmt.Errorf("making a temporary profile: %w", err)
		}
		p.tempDir = dir
	}
	args := browserArgs(opts, dir, logger)
	logger.Info("starting the browser", "path", exe)
	logger.Debug("the browser's command line", "args", strings.Join(args, " "))
	if err := p.start(exe, args); err != nil {
		if rerr := p.removeTemp(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return nil, false, err
	}
	// A browser that cannot run (a bad flag, a missing library, no
	// display) exits at once: say so here, with what it printed.
	hctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if _, err := Version(hctx, p.conn); err != nil {
		err = fmt.Errorf("the browser %s did not answer: %w", exe, err)
		select {
		case <-p.exited:
		default:
			hung = errors.Is(hctx.Err(), context.DeadlineExceeded)
		}
		if cerr := p.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		select {
		case <-p.exited:
			err = fmt.Errorf("%w (the browser %s)", err, p.ExitReason())
		default:
		}
		return nil, hung, err
	}
	return p, false, nil
}

// start starts the browser on a pipe pair. When it fails, it closes every
// descriptor it opened.
func (p *Process) start(exe string, args []string) error {
	cmdR, parentW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("making the command pipe to the browser: %w", err)
	}
	parentR, cmdW, err := os.Pipe()
	if err != nil {
		cmdR.Close()
		parentW.Close()
		return fmt.Errorf("making the event pipe from the browser: %w", err)
	}
	cmd := exec.Command(exe, args...)
	cmd.ExtraFiles = []*os.File{cmdR, cmdW} // fds 3 and 4
	setProcessGroup(cmd)
	// Through a Writer, not StderrPipe, so that Wait returns only once the
	// last lines are in (StderrPipe's reader is closed by Wait, racing with
	// the read of those lines); WaitDelay bounds the wait for helpers that
	// keep the output open.
	cmd.Stderr = (*outputTail)(p)
	cmd.WaitDelay = outputDelay
	err = cmd.Start()
	// The browser has its own copies of its ends now, or never will.
	cmdR.Close()
	cmdW.Close()
	if err != nil {
		parentR.Close()
		parentW.Close()
		return fmt.Errorf("starting the browser %s: %w", exe, err)
	}
	p.cmd = cmd
	p.kill = func() { killGroup(cmd) }
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.waitErr = err
		var last []string
		if len(p.partial) > 0 {
			last = p.addLineLocked(last, string(p.partial))
			p.partial = nil
		}
		p.mu.Unlock()
		p.logLines(last)
		close(p.exited)
	}()
	p.conn = NewConn(chromedp.NewPipeConn(parentR, parentW), p.logger)
	return nil
}

// outputTail is the browser's stderr: it logs each line and keeps the last
// ones for ExitReason.
type outputTail Process

func (w *outputTail) Write(b []byte) (int, error) {
	p := (*Process)(w)
	var lines []string
	p.mu.Lock()
	p.partial = append(p.partial, b...)
	for {
		i := bytes.IndexByte(p.partial, '\n')
		if i < 0 {
			break
		}
		lines = p.addLineLocked(lines, string(p.partial[:i]))
		p.partial = p.partial[i+1:]
	}
	if len(p.partial) > 64<<10 {
		lines = p.addLineLocked(lines, string(p.partial))
		p.partial = nil
	}
	p.mu.Unlock()
	// Logged without the lock: a log handler may call ExitReason.
	p.logLines(lines)
	return len(b), nil
}

// addLineLocked keeps a line of the browser's output for ExitReason, and
// appends it to lines for logging; p.mu is held.
func (p *Process) addLineLocked(lines []string, line string) []string {
	p.tail = append(p.tail, line)
	if len(p.tail) > tailLines {
		p.tail = p.tail[1:]
	}
	return append(lines, line)
}

// logLines logs lines of the browser's output.
func (p *Process) logLines(lines []string) {
	for _, line := range lines {
		p.logger.Debug("browser", "line", line)
	}
}

// Conn returns the connection to the browser.
func (p *Process) Conn() *Conn { return p.conn }

// Exited is closed when the browser process ended.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitReason describes how the browser ended, with the last lines it printed.
func (p *Process) ExitReason() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := fmt.Sprint(p.waitErr)
	if p.waitErr == nil {
		s = "exited with status 0"
	}
	if len(p.tail) > 0 {
		s += "; its last output: " + strings.Join(p.tail, " | ")
	}
	return s
}

// Close ends the browser: it closes the pipe (the browser then exits), and
// kills the process group if the browser is still there after a grace time.
// A temporary profile is removed. The error says what is left behind: a
// browser that would not die, or a profile that could not be removed.
// Calling Close again returns the first call's result.
func (p *Process) Close() error {
	p.closeOnce.Do(func() { p.closeErr = p.close() })
	return p.closeErr
}

func (p *Process) close() error {
	var errs []error
	if err := p.conn.Close(); err != nil {
		errs = append(errs, err)
	}
	if !p.waitExit(p.grace) {
		p.logger.Warn("the browser did not exit after its pipe closed; killing its process group", "pid", p.cmd.Process.Pid, "waited", p.grace)
	}
	// Kill the group even when the browser exited: its helpers may not have.
	p.kill()
	if !p.waitExit(p.killWait) {
		errs = append(errs, fmt.Errorf("the browser (pid %d) is still running %s after it was killed", p.cmd.Process.Pid, p.killWait))
	}
	if err := p.removeTemp(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("closing the browser: %w", errors.Join(errs...))
}

// waitExit reports whether the browser exited within d.
func (p *Process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

func (p *Process) removeTemp() error {
	if p.tempDir == "" {
		return nil
	}
	if err := p.removeAll(p.tempDir); err != nil {
		return fmt.Errorf("removing the temporary profile (%s is left on disk): %w", p.tempDir, err)
	}
	return nil
}

// RemoteArgs are the flags Launch would give a browser, for one that
// another program starts (a Selenium Grid node through chromedriver): not
// the transport, the profile or the first page, which that program
// chooses, nor what this machine's display or user decide (--headless only
// when opts.Headless, --no-sandbox only when in opts.Args).
func RemoteArgs(opts LaunchOptions) []string {
	quiet := slog.New(slog.DiscardHandler)
	var out []string
	for _, a := range browserArgs(opts, "", quiet) {
		switch {
		case a == "--remote-debugging-pipe", strings.HasPrefix(a, "--user-data-dir="), a == "about:blank":
		case a == "--headless" && !opts.Headless:
		case a == "--no-sandbox" && !slices.Contains(opts.Args, a):
		default:
			out = append(out, a)
		}
	}
	return out
}
