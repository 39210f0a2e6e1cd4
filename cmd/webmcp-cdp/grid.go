package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
)

// This file is launch on a Selenium Grid (--selenium URL, or Playwright's
// SELENIUM_REMOTE_URL): each browser a Grid session, served with the
// several-browsers code (multi.go) like --browsers N local ones.

// The environment variables Playwright reads to start its browsers on a
// Grid, read here the same way when the flags are not given.
const (
	envSeleniumURL          = "SELENIUM_REMOTE_URL"
	envSeleniumCapabilities = "SELENIUM_REMOTE_CAPABILITIES"
	envSeleniumHeaders      = "SELENIUM_REMOTE_HEADERS"
)

// gridFlags are launch's flags for a Selenium Grid.
type gridFlags struct {
	url          string
	capabilities string
	headers      []string
	keepAlive    time.Duration
}

func (f *gridFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.url, "selenium", "", "start the browsers as sessions on this Selenium Grid 4 (e.g. http://127.0.0.1:4444), instead of locally (default $"+envSeleniumURL+", as Playwright reads it); each session is deleted on exit")
	fs.StringVar(&f.capabilities, "selenium-capabilities", "", "the sessions' capabilities as a JSON object, over browserName chrome (default $"+envSeleniumCapabilities+"); launch's browser flags go first in goog:chromeOptions.args")
	fs.StringArrayVar(&f.headers, "selenium-header", nil, "an HTTP header 'Name: value' for the Grid (WebDriver requests and the CDP WebSocket), repeatable (default the JSON object in $"+envSeleniumHeaders+"); values are never logged")
	fs.DurationVar(&f.keepAlive, "selenium-keepalive", 0, "how often to keep each session from the Grid's idle timeout, and to ask whether the Grid still has it (default a third of the nodes' session timeout from /status, at most 1m)")
}

// grid returns the Grid source, or nil when no Grid is given (neither
// --selenium nor $SELENIUM_REMOTE_URL).
func (f *gridFlags) grid(getenv func(string) string, lf *launchFlags, opts cdp.LaunchOptions) (*browsers.GridOptions, error) {
	raw := f.url
	if raw == "" {
		raw = getenv(envSeleniumURL)
		if raw == "" {
			if f.capabilities != "" || len(f.headers) > 0 || f.keepAlive != 0 {
				return nil, cli.Usage(errors.New("--selenium-capabilities, --selenium-header and --selenium-keepalive need --selenium URL (or $" + envSeleniumURL + ")"))
			}
			return nil, nil
		}
		slog.Info("$" + envSeleniumURL + " is set: starting the browsers on the Selenium Grid")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, cli.Usage(fmt.Errorf("--selenium %s: give the Grid's http(s):// address, such as http://127.0.0.1:4444", cdp.RedactURL(raw)))
	}
	switch {
	case lf.chrome != "" || lf.channel != "":
		return nil, cli.Usage(errors.New("--chrome and --channel pick a local browser: on a Grid the node does (set goog:chromeOptions.binary in --selenium-capabilities to choose)"))
	case lf.userDataDir != "":
		return nil, cli.Usage(errors.New("--user-data-dir is a local profile: each Grid session has a profile of its own"))
	}
	g := &browsers.GridOptions{URL: u, Args: cdp.RemoteArgs(opts), Tag: browsers.NewTag(), KeepAlive: f.keepAlive}
	caps := f.capabilities
	if caps == "" {
		caps = getenv(envSeleniumCapabilities)
	}
	if caps != "" {
		if err := cli.DecodeObject(caps, &g.Capabilities); err != nil {
			return nil, cli.Usage(fmt.Errorf("--selenium-capabilities (or $%s): %w", envSeleniumCapabilities, err))
		}
	}
	lines := f.headers
	if len(lines) == 0 {
		if env := getenv(envSeleniumHeaders); env != "" {
			var m map[string]string
			if err := cli.DecodeObject(env, &m); err != nil {
				return nil, cli.Usage(fmt.Errorf("$%s: %w (its values must be strings)", envSeleniumHeaders, err))
			}
			for k, v := range m {
				lines = append(lines, k+": "+v)
			}
		}
	}
	if g.Header, err = cdp.ParseHeaders(lines); err != nil {
		return nil, cli.Usage(fmt.Errorf("--selenium-header (or $%s): %w", envSeleniumHeaders, err))
	}
	return g, nil
}
