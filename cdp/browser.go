package cdp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// LaunchOptions configures Launch.
type LaunchOptions struct {
	// Chrome is the browser executable; empty finds one (FindChrome).
	Chrome string
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
	// Logger receives the log (default slog.Default()).
	Logger *slog.Logger
}

// Process is a browser started by Launch.
type Process struct {
	cmd     *exec.Cmd
	conn    *Conn
	tempDir string
	logger  *slog.Logger
	exited  chan struct{}
	waitErr error

	mu   sync.Mutex
	tail []string // the last lines the browser printed
}

// FindChrome returns the browser to start: path if set, else $CHROME_PATH,
// else the first of chromium, chromium-browser, google-chrome and
// google-chrome-stable on PATH.
func FindChrome(path string) (string, error) {
	if path != "" {
		return exec.LookPath(path)
	}
	if p := os.Getenv("CHROME_PATH"); p != "" {
		return exec.LookPath(p)
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium or Chrome found on PATH: install one (on Debian: apt-get install -y chromium), or pass --chrome PATH or set CHROME_PATH")
}

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
	if opts.EnableNative {
		args = append(args, "--enable-features=WebMCP")
		logger.Info("adding --enable-features=WebMCP: --backend native needs Chromium's own WebMCP")
	}
	args = append(args, opts.Args...)
	// Start on about:blank: URLs are opened after auto-attach is in place,
	// or their early registrations would be lost.
	return append(args, "about:blank")
}

// Launch starts a browser with the pipe transport and returns the connection.
// The browser runs in its own process group, dies with this process, and is
// killed with its group by Close.
func Launch(ctx context.Context, opts LaunchOptions) (*Process, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	exe, err := FindChrome(opts.Chrome)
	if err != nil {
		return nil, err
	}
	p := &Process{logger: logger, exited: make(chan struct{})}
	dir := opts.UserDataDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "webmcp-cdp-profile-"); err != nil {
			return nil, fmt.Errorf("making a temporary profile: %w", err)
		}
		p.tempDir = dir
	}
	args := browserArgs(opts, dir, logger)
	cmdR, parentW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("making the command pipe: %w", err)
	}
	parentR, cmdW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("making the event pipe: %w", err)
	}
	cmd := exec.Command(exe, args...)
	cmd.ExtraFiles = []*os.File{cmdR, cmdW} // fds 3 and 4
	setProcessGroup(cmd)
	out, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("piping the browser's output: %w", err)
	}
	cmd.Stdout = nil
	logger.Info("starting the browser", "path", exe, "args", strings.Join(args, " "))
	if err := cmd.Start(); err != nil {
		p.removeTemp()
		return nil, fmt.Errorf("starting %s: %w", exe, err)
	}
	cmdR.Close()
	cmdW.Close()
	p.cmd = cmd
	go p.drain(out)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	p.conn = NewConn(chromedp.NewPipeConn(parentR, parentW), logger)
	return p, nil
}

func (p *Process) drain(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		p.logger.Debug("browser", "line", line)
		p.mu.Lock()
		p.tail = append(p.tail, line)
		if len(p.tail) > 20 {
			p.tail = p.tail[1:]
		}
		p.mu.Unlock()
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
// A temporary profile is removed.
func (p *Process) Close() error {
	p.conn.Close()
	select {
	case <-p.exited:
	case <-time.After(3 * time.Second):
		p.logger.Warn("the browser did not exit after its pipe closed; killing its process group")
	}
	killGroup(p.cmd)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
	}
	p.removeTemp()
	return nil
}

func (p *Process) removeTemp() {
	if p.tempDir != "" {
		os.RemoveAll(p.tempDir)
	}
}

// Attach connects to a browser started with --remote-debugging-port. Give
// either browserURL (http://127.0.0.1:9222) or wsEndpoint (ws://...).
func Attach(ctx context.Context, browserURL, wsEndpoint string, logger *slog.Logger) (*Conn, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if wsEndpoint == "" {
		if browserURL == "" {
			return nil, errors.New("attach needs --browser-url or --ws-endpoint")
		}
		var err error
		if wsEndpoint, err = resolveWS(ctx, browserURL); err != nil {
			return nil, err
		}
	}
	u, err := url.Parse(wsEndpoint)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") {
		return nil, fmt.Errorf("the WebSocket endpoint %q is not a ws:// or wss:// URL", wsEndpoint)
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ws, err := remote.DialContext(dctx, wsEndpoint)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", wsEndpoint, err)
	}
	logger.Info("attached to the browser", "endpoint", wsEndpoint)
	return NewConn(ws, logger), nil
}

// resolveWS reads the browser's WebSocket URL from /json/version.
func resolveWS(ctx context.Context, browserURL string) (string, error) {
	u, err := url.Parse(browserURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--browser-url %q is not an http:// URL such as http://127.0.0.1:9222", browserURL)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/json/version"
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("asking %s for the browser's WebSocket URL (is Chrome running with --remote-debugging-port?): %w", u, err)
	}
	defer resp.Body.Close()
	var v struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&v); err != nil || v.WS == "" {
		return "", fmt.Errorf("%s did not give a webSocketDebuggerUrl (status %s)", u, resp.Status)
	}
	return v.WS, nil
}
