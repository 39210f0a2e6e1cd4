package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/fleet"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/serve"
	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

type launchFlags struct {
	chrome      string
	channel     cli.Channel
	headless    bool
	userDataDir string
	chromeArgs  []string
	proxyServer string
	proxyBypass string
	viewport    cli.Viewport
}

func (f *launchFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.chrome, "chrome", "", "browser executable (default $CHROME_PATH, then Chrome, Chrome for Testing, Chromium, Edge or Brave of --channel at their usual install paths, then on PATH)")
	fs.Var(&f.channel, "channel", "release channel to look for when --chrome is not given: stable, beta, dev or canary")
	cli.OneOf(fs, "channel", cdp.Channels())
	fs.BoolVar(&f.headless, "headless", false, "force headless mode (default: headful when a display exists, headless otherwise)")
	fs.StringVar(&f.userDataDir, "user-data-dir", "", "browser profile directory (default: a fresh temporary profile, removed on exit)")
	fs.StringArrayVar(&f.chromeArgs, "chrome-arg", nil, "extra browser flag, repeatable (e.g. --chrome-arg=--enable-features=WebMCP)")
	fs.StringVar(&f.proxyServer, "proxy-server", "", "send the browser's traffic through this proxy (e.g. http://127.0.0.1:3128 or socks5://host:1080)")
	fs.StringVar(&f.proxyBypass, "proxy-bypass", "", "hosts that skip --proxy-server, ';'-separated (e.g. '*.internal;10.0.0.0/8'); loopback always skips it unless this has '<-loopback>'")
	fs.Var(&f.viewport, "viewport", "the pages' viewport `WxH` (e.g. 1280x720), and the window's size")
}

func (f *launchFlags) options(backend polyfill.Backend) cdp.LaunchOptions {
	return cdp.LaunchOptions{
		Chrome:       f.chrome,
		Headless:     f.headless,
		UserDataDir:  f.userDataDir,
		Args:         f.chromeArgs,
		EnableNative: backend == polyfill.BackendNative,
		Channel:      cdp.Channel(f.channel),
		ProxyServer:  f.proxyServer,
		ProxyBypass:  f.proxyBypass,
		WindowWidth:  f.viewport.W,
		WindowHeight: f.viewport.H,
	}
}

func newLaunch() *cobra.Command {
	var lf launchFlags
	var ef endpointFlags // --browser, --browser-header, --ca-file (multi.go)
	var gf gridFlags     // --selenium... (grid.go)
	var relaunch bool
	var count int
	var sf spaceFlags // spaces.go
	bf := browserFlags{relay: &relayFlags{}}
	cmd := &cobra.Command{
		Use:   "launch [flags] [URL...]",
		Short: "Start Chromium, open the URLs, and serve their WebMCP tools over MCP on stdio",
		RunE: func(cmd *cobra.Command, urls []string) error {
			backend, err := bf.check(cmd.Context())
			if err != nil {
				return err
			}
			if err := sf.check(bf.http.oauth.enabled(), bf.relay.enabled()); err != nil {
				return err
			}
			if urls, err = cli.StartURLs(urls); err != nil {
				return cli.Usage(err)
			}
			ctx := cmd.Context()
			bf.serve.viewport = lf.viewport
			named, err := ef.named()
			if err != nil {
				return err
			}
			if count < 1 || count > maxBrowsers {
				return cli.Usage(fmt.Errorf("--browsers %d: give 1 to %d", count, maxBrowsers))
			}
			grid, err := gf.grid(os.Getenv, &lf, lf.options(backend))
			if err != nil {
				return err
			}
			if count > 1 && lf.userDataDir != "" {
				return cli.Usage(errors.New("--browsers with --user-data-dir: browsers cannot share a profile; drop --user-data-dir (each gets a temporary one)"))
			}
			if sf.mode(bf.http.oauth.enabled()) == isolateUser {
				return launchSpaces(ctx, &bf, &sf, backend, urls, lf, grid, count, cmd.Flags().Changed("browsers"), len(named) > 0 || relaunch)
			}
			if grid != nil || relaunch || count > 1 || len(named) > 0 {
				var sup []serve.Supplied
				if grid != nil {
					sup = serve.GridBrowsers(ctx, *grid, count)
				} else {
					opts := lf.options(backend)
					sup = serve.Numbered(launchedName, count, func(name string) serve.Supplied {
						o := opts
						o.Logger = slog.Default().With("browser", name)
						return serve.Supplied{Browser: fleet.Browser{Name: name, Source: &browsers.Launch{Options: o}, Restart: relaunch, StartFails: true}}
					})
				}
				return runMulti(ctx, append(sup, serve.EndpointBrowsers(named)...), &bf, backend, false, urls)
			}
			launched := fleet.Browser{Source: &browsers.Launch{Options: lf.options(backend)}, StartFails: true, URLs: urls}
			s, err := startSession(ctx, serve.Supplied{Browser: launched}, &bf.serve, backend, false)
			if err != nil {
				return err
			}
			defer s.Close()
			return bf.run(ctx, s)
		},
	}
	lf.register(cmd)
	gf.register(cmd)
	cmd.Flags().IntVar(&count, "browsers", 1, "how many browsers to start, locally or on --selenium's Grid (which spreads them over its nodes), served as one; the start URLs open in the first")
	ef.registerMulti(cmd, true)
	cmd.Flags().BoolVar(&relaunch, "relaunch", false, "start the browser again when it exits or crashes, and reopen the URLs; its tools stay listed as cached meanwhile")
	bf.register(cmd.Flags())
	sf.register(cmd.Flags())
	cmd.MarkFlagsMutuallyExclusive("relay", "http")
	cmd.MarkFlagsMutuallyExclusive("chrome", "channel")
	return cmd
}

// launchedName is the name of the browser launch starts (local1 to
// localN with --browsers N), among --browser's.
const launchedName = "local"

// maxBrowsers bounds --browsers.
const maxBrowsers = 64
