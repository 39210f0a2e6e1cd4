package cdp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/chromedp/chromedp/remote"
)

// This file connects to a browser whose person turned remote debugging on
// at chrome://inspect/#remote-debugging (Chrome 144 and later). That server
// is found only through the DevToolsActivePort file at the root of the user
// data directory; it answers 404 to every HTTP path (/json/version
// included), and each new WebSocket waits until the person clicks Allow.

// ActivePortFile is the name of the file Chrome writes at the root of its
// user data directory while remote debugging is on.
const ActivePortFile = "DevToolsActivePort"

// EnableHint tells a person how to let us in.
const EnableHint = "turn remote debugging on in Chrome at chrome://inspect/#remote-debugging (Chrome 144 or later), or start Chrome with --remote-debugging-port"

// maxActivePortBytes bounds the read of DevToolsActivePort (two short
// lines).
const maxActivePortBytes = 4 << 10

// An ActivePort is what DevToolsActivePort says: where the browser's
// debugging WebSocket is.
type ActivePort struct {
	// File is the DevToolsActivePort file read.
	File string
	// Port is the loopback port.
	Port int
	// Path is the browser's WebSocket path (/devtools/browser/<id>).
	Path string
}

// URL is the WebSocket URL of the browser endpoint.
func (a ActivePort) URL() string {
	return "ws://127.0.0.1:" + strconv.Itoa(a.Port) + a.Path
}

// ParseActivePort reads a DevToolsActivePort file's text: the port on the
// first line, the browser's WebSocket path on the second.
func ParseActivePort(text string) (port int, path string, err error) {
	if len(text) > maxActivePortBytes {
		return 0, "", fmt.Errorf("it is %d bytes long; a DevToolsActivePort file is two short lines", len(text))
	}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	port, err = strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || port < 1 || port > 65535 {
		return 0, "", fmt.Errorf("its first line %q is not a port number", strings.TrimSpace(lines[0]))
	}
	if len(lines) < 2 || !strings.HasPrefix(strings.TrimSpace(lines[1]), "/devtools/browser/") {
		return 0, "", errors.New("its second line is not the browser's WebSocket path (/devtools/browser/…)")
	}
	path = strings.TrimSpace(lines[1])
	if strings.ContainsAny(path, " ?#") {
		return 0, "", fmt.Errorf("its second line %q is not a plain WebSocket path", path)
	}
	return port, path, nil
}

// FindActivePort reads DevToolsActivePort in the first of dirs that has
// one, through readFile (os.ReadFile, or a fake in tests). The error names
// every file it looked for and says how to turn remote debugging on.
func FindActivePort(dirs []UserDataDir, readFile func(string) ([]byte, error)) (ActivePort, error) {
	var tried []string
	for _, d := range dirs {
		file := filepath.Join(d.Dir, ActivePortFile)
		b, err := readFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			tried = append(tried, file)
			continue
		}
		if err != nil {
			return ActivePort{}, fmt.Errorf("reading %s: %w", file, err)
		}
		port, path, err := ParseActivePort(string(b))
		if err != nil {
			return ActivePort{}, fmt.Errorf("%s is not a DevToolsActivePort file Chrome wrote (%w): %s", file, err, EnableHint)
		}
		return ActivePort{File: file, Port: port, Path: path}, nil
	}
	if len(tried) == 1 {
		return ActivePort{}, fmt.Errorf("no browser has remote debugging on: %s does not exist; %s", tried[0], EnableHint)
	}
	return ActivePort{}, fmt.Errorf("no browser has remote debugging on: none of %s exists; %s", strings.Join(tried, ", "), EnableHint)
}

// AutoConnectOptions configures AutoConnect.
type AutoConnectOptions struct {
	// Timeout bounds the wait for the person's Allow click (default 60 s).
	Timeout time.Duration
	// WaitNotice is how long the connection may wait before OnWait is
	// called (default 1 s: the Allow dialog is up by then).
	WaitNotice time.Duration
	// OnWait is called once, from another goroutine, when the connection
	// has waited WaitNotice: it tells the person to click Allow.
	OnWait func()
	// Logger receives the log (default slog.Default()).
	Logger *slog.Logger
}

// ErrNotAllowed is the error of a connection the browser refused or that
// was not allowed within the timeout.
var ErrNotAllowed = errors.New("the browser did not let us connect")

// AutoConnect connects to the browser that ap names, over its WebSocket
// only (never HTTP: that server answers 404 to every HTTP path), waiting
// for the person's Allow click up to opts.Timeout. A stale file (Chrome
// closed: connection refused) or a refusal fails at once; the error names
// the file and says how to turn remote debugging on.
func AutoConnect(ctx context.Context, ap ActivePort, opts AutoConnectOptions) (*Conn, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	if opts.WaitNotice <= 0 {
		opts.WaitNotice = time.Second
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	dctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	notice := time.AfterFunc(opts.WaitNotice, func() {
		if opts.OnWait != nil {
			opts.OnWait()
		}
	})
	start := time.Now()
	ws, err := remote.DialContext(dctx, ap.URL())
	notice.Stop()
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, syscall.ECONNREFUSED) || isRefused(err):
			return nil, fmt.Errorf("%s names port %d, but nothing listens there (Chrome was closed, or its remote debugging turned off); %s", ap.File, ap.Port, EnableHint)
		case dctx.Err() != nil:
			return nil, fmt.Errorf("%w: nobody clicked Allow in Chrome within %s (the browser named in %s); click Allow when Chrome asks, or raise --connect-timeout", ErrNotAllowed, opts.Timeout, ap.File)
		default:
			return nil, fmt.Errorf("%w: connecting to %s (from %s) failed after %s: %w; if Chrome asked, click Allow, and check that remote debugging is on at chrome://inspect/#remote-debugging", ErrNotAllowed, ap.URL(), ap.File, time.Since(start).Round(time.Millisecond), err)
		}
	}
	logger.Info("connected to your browser", "endpoint", ap.URL(), "file", ap.File, "waited", time.Since(start).Round(time.Millisecond))
	return NewConn(ws, logger), nil
}

// isRefused reports a refused TCP connection on systems whose errno is not
// ECONNREFUSED's (Windows' WSAECONNREFUSED).
func isRefused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" && strings.Contains(strings.ToLower(op.Err.Error()), "refused")
}
