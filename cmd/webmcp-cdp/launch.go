package main

import (
	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

type launchFlags struct {
	chrome      string
	headless    bool
	userDataDir string
	chromeArgs  []string
}

func (f *launchFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.chrome, "chrome", "", "browser executable (default $CHROME_PATH, then chromium, chromium-browser, google-chrome, google-chrome-stable on PATH)")
	fs.BoolVar(&f.headless, "headless", false, "force headless mode (default: headful when a display exists, headless otherwise)")
	fs.StringVar(&f.userDataDir, "user-data-dir", "", "browser profile directory (default: a fresh temporary profile, removed on exit)")
	fs.StringArrayVar(&f.chromeArgs, "chrome-arg", nil, "extra browser flag, repeatable (e.g. --chrome-arg=--enable-features=WebMCP)")
}

func (f *launchFlags) options(backend polyfill.Backend) cdp.LaunchOptions {
	return cdp.LaunchOptions{
		Chrome:       f.chrome,
		Headless:     f.headless,
		UserDataDir:  f.userDataDir,
		Args:         f.chromeArgs,
		EnableNative: backend == polyfill.BackendNative,
	}
}

func newLaunch() *cobra.Command {
	var lf launchFlags
	bf := browserFlags{relay: &relayFlags{}}
	cmd := &cobra.Command{
		Use:   "launch [flags] [URL...]",
		Short: "Start Chromium, open the URLs, and serve their WebMCP tools over MCP on stdio",
		RunE: func(cmd *cobra.Command, urls []string) error {
			backend, err := bf.check()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			proc, err := cdp.Launch(ctx, lf.options(backend))
			if err != nil {
				return err
			}
			defer proc.Close()
			s, err := startSession(ctx, proc.Conn(), &bf.serve, backend, false)
			if err != nil {
				return err
			}
			if err := s.openURLs(ctx, urls); err != nil {
				return err
			}
			if len(urls) > 0 {
				go s.settleStartPages(ctx, s.waitTools)
			} else {
				s.releaseFirstList()
			}
			return s.run(ctx, &bf, proc.Exited(), proc.ExitReason)
		},
	}
	lf.register(cmd)
	bf.register(cmd.Flags())
	cmd.MarkFlagsMutuallyExclusive("relay", "http")
	return cmd
}
