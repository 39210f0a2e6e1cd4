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
	var sf serveFlags
	var hf httpFlags
	var rf relayFlags
	cmd := &cobra.Command{
		Use:   "launch [flags] [URL...]",
		Short: "Start Chromium, open the URLs, and serve their WebMCP tools over MCP on stdio",
		RunE: func(cmd *cobra.Command, urls []string) error {
			backend, err := sf.check()
			if err != nil {
				return err
			}
			if err := hf.check(); err != nil {
				return err
			}
			if err := rf.check(); err != nil {
				return err
			}
			ctx := cmd.Context()
			proc, err := cdp.Launch(ctx, lf.options(backend))
			if err != nil {
				return err
			}
			defer proc.Close()
			s, err := startSession(ctx, proc.Conn(), &sf, backend, false)
			if err != nil {
				return err
			}
			if err := s.openURLs(ctx, urls); err != nil {
				return err
			}
			if rf.enabled() {
				return s.serveRelay(ctx, &rf, proc.Exited(), proc.ExitReason)
			}
			return s.serve(ctx, &hf, proc.Exited(), proc.ExitReason)
		},
	}
	lf.register(cmd)
	sf.register(cmd.Flags())
	hf.register(cmd.Flags())
	rf.register(cmd.Flags())
	cmd.MarkFlagsMutuallyExclusive("relay", "http")
	return cmd
}
