package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
)

// autoConnectFlags are attach's flags for the browser a person already
// uses, with remote debugging turned on at chrome://inspect.
type autoConnectFlags struct {
	on          bool
	channel     string
	userDataDir string
	timeout     time.Duration
}

func (f *autoConnectFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.BoolVar(&f.on, "auto-connect", false, "connect to your own running Chrome (Chrome 144+, remote debugging turned on at chrome://inspect/#remote-debugging): reads DevToolsActivePort from its user data directory and waits for you to click Allow")
	fs.StringVar(&f.channel, "channel", "", "with --auto-connect: the Chrome channel whose profile to look in (stable, beta, dev, canary); default: every channel of Chrome, then Chromium, Edge and Brave")
	cli.OneOf(fs, "channel", cdp.AutoConnectChannels())
	fs.StringVar(&f.userDataDir, "user-data-dir", "", "with --auto-connect: the browser's user data directory, where DevToolsActivePort is (default: the browser's usual one)")
	fs.DurationVar(&f.timeout, "connect-timeout", 60*time.Second, "with --auto-connect: how long to wait for you to click Allow in Chrome")
	cmd.MarkFlagsMutuallyExclusive("auto-connect", "browser-url")
	cmd.MarkFlagsMutuallyExclusive("auto-connect", "ws-endpoint")
	cmd.MarkFlagsMutuallyExclusive("user-data-dir", "browser-url")
	cmd.MarkFlagsMutuallyExclusive("user-data-dir", "ws-endpoint")
	cmd.MarkFlagsMutuallyExclusive("channel", "user-data-dir")
}

// personal reports whether attach connects to a person's own browser:
// --auto-connect, or none of --browser-url and --ws-endpoint (endpoint).
func (f *autoConnectFlags) personal(endpoint bool) bool {
	return f.on || !endpoint
}

// defaults applies what a personal browser needs unless the flags say
// otherwise: tools marked consequentialHint ask the client first.
func (f *autoConnectFlags) defaults(cmd *cobra.Command, sf *serveFlags, endpoint bool) {
	if f.personal(endpoint) && !cmd.Flags().Changed("confirm") {
		sf.confirm = "consequential"
		slog.Info("your own browser: tools marked consequentialHint ask you first (--confirm consequential; pass --confirm none to turn it off)")
	}
}

// source turns the flags into attach's browser source: the endpoint
// given, else the person's own browser that DevToolsActivePort names
// (browsers.AutoConnect). With no endpoint and no --auto-connect a failure
// says what attach needs.
func (f *autoConnectFlags) source(ep cdp.Endpoint) (browsers.Source, error) {
	if !f.personal(ep.BrowserURL != "" || ep.WSEndpoint != "") {
		return &browsers.Connect{Name: "the browser to attach to", Dial: func(ctx context.Context) (*cdp.Conn, error) {
			return cdp.Attach(ctx, ep, nil)
		}}, nil
	}
	if f.timeout <= 0 {
		return nil, fmt.Errorf("--connect-timeout %s: must be positive", f.timeout)
	}
	return &browsers.AutoConnect{
		UserDataDir: f.userDataDir,
		Channel:     f.channel,
		Timeout:     f.timeout,
		Implicit:    !f.on,
	}, nil
}
