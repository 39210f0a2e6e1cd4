package browsers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// AutoConnect is a source for the browser a person already uses (Chrome
// 144+, remote debugging turned on at chrome://inspect/#remote-debugging):
// it reads DevToolsActivePort from the browser's user data directory and
// connects to the browser it names, telling the person to click Allow while
// it waits. Ending it closes the connection only: the browser and its tabs
// stay.
type AutoConnect struct {
	// UserDataDir is the browser's user data directory, where
	// DevToolsActivePort is. Empty: the usual directories of Channel, or of
	// every channel of Chrome, then Chromium, Edge and Brave.
	UserDataDir string
	// Channel is the Chrome channel whose usual directory to look in
	// (cdp.AutoConnectChannels); empty: all of them. Used only without
	// UserDataDir.
	Channel string
	// Env decides the usual directories; the zero value means the host's
	// (HostUserDataEnv).
	Env cdp.UserDataEnv
	// Timeout bounds the wait for the person's Allow click (zero: 60 s,
	// cdp.AutoConnect's default).
	Timeout time.Duration
	// WaitNotice is how long the connection may wait before the person is
	// told to click Allow (zero: cdp.AutoConnect's default, 1 s).
	WaitNotice time.Duration
	// Notice receives the one line that tells the person to click Allow;
	// nil: os.Stderr.
	Notice io.Writer
	// Implicit is set when the person named no browser at all (attach with
	// neither an endpoint nor --auto-connect): a failure then also says how
	// else to give attach a browser.
	Implicit bool
	// Logger receives the log; nil: slog.Default().
	Logger *slog.Logger
}

// Start finds the browser and connects to it.
func (a *AutoConnect) Start(ctx context.Context) (*Browser, error) {
	// Like Connect's: closing the connection detaches, the tabs stay.
	return (&Connect{Name: a.String(), Dial: a.Dial}).Start(ctx)
}

// Fresh is false: the browser has tabs of its own.
func (a *AutoConnect) Fresh() bool { return false }

func (a *AutoConnect) String() string {
	if a.UserDataDir != "" {
		return "your own browser (" + a.UserDataDir + ")"
	}
	return "your own browser"
}

// Dial finds DevToolsActivePort and connects to the browser it names.
func (a *AutoConnect) Dial(ctx context.Context) (*cdp.Conn, error) {
	conn, err := a.dial(ctx)
	if err != nil && a.Implicit {
		return nil, fmt.Errorf("attach needs a browser: pass --browser-url or --ws-endpoint for a Chrome started with --remote-debugging-port, or use your own Chrome (--auto-connect); auto-connect failed: %w", err)
	}
	return conn, err
}

func (a *AutoConnect) dial(ctx context.Context) (*cdp.Conn, error) {
	dirs := []cdp.UserDataDir{{Browser: "the browser", Dir: a.UserDataDir}}
	if a.UserDataDir == "" {
		env := a.Env
		if env == (cdp.UserDataEnv{}) {
			env = HostUserDataEnv()
		}
		var err error
		dirs, err = cdp.UserDataDirs(env, a.Channel)
		if err != nil {
			return nil, err
		}
	}
	ap, err := cdp.FindActivePort(dirs, os.ReadFile)
	if err != nil {
		return nil, err
	}
	logger := a.Logger
	if logger == nil {
		logger = slog.Default()
	}
	logger.Info("connecting to your browser", "file", ap.File, "endpoint", ap.URL())
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	notice := a.Notice
	if notice == nil {
		notice = os.Stderr
	}
	return cdp.AutoConnect(ctx, ap, cdp.AutoConnectOptions{
		Timeout:    timeout,
		WaitNotice: a.WaitNotice,
		Logger:     a.Logger,
		OnWait: func() {
			// One line, not a log record: the person must act on it.
			fmt.Fprintf(notice, "webmcp-cdp: click Allow in Chrome to let webmcp-cdp connect (remote debugging request; waiting up to %s)\n", timeout)
		},
	})
}

// HostUserDataEnv reads the environment that decides the usual user data
// directories: the operating system, $HOME, %LOCALAPPDATA% and
// $XDG_CONFIG_HOME.
func HostUserDataEnv() cdp.UserDataEnv {
	home, _ := os.UserHomeDir()
	return cdp.UserDataEnv{
		GOOS:          runtime.GOOS,
		Home:          home,
		LocalAppData:  os.Getenv("LOCALAPPDATA"),
		XDGConfigHome: os.Getenv("XDG_CONFIG_HOME"),
	}
}
