package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/fleet"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/serve"
)

func newDemo() *cobra.Command {
	var lf launchFlags
	var bf browserFlags
	var exit bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Serve the built-in notes app, launch Chromium on it, call its tools through MCP, then serve MCP on stdio",
		Long: "demo serves a notes app (five WebMCP tools) from this binary on 127.0.0.1, launches Chromium on it,\n" +
			"lists the tools that appeared and calls a few through an in-process MCP client, printing what\n" +
			"happened on stderr. It then serves MCP on stdio like launch, until the client goes away\n" +
			"(with --exit, it stops after the demo).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			backend, err := bf.check(cmd.Context())
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			pageURL, stopPage, err := serve.DemoPage()
			if err != nil {
				return err
			}
			defer stopPage()

			bf.serve.viewport = lf.viewport
			launched := fleet.Browser{Source: &browsers.Launch{Options: lf.options(backend)}, StartFails: true, URLs: []string{pageURL}}
			s, err := startSession(ctx, serve.Supplied{Browser: launched}, &bf.serve, backend, false)
			if err != nil {
				return err
			}
			defer s.Close()
			if err := s.Demo(ctx, os.Stderr, pageURL, version); err != nil {
				return err
			}
			if exit {
				return nil
			}
			if bf.http.addr == "" {
				fmt.Fprintln(os.Stderr, "\nServing MCP on stdio now; the notes app stays at", pageURL)
			}
			return bf.run(ctx, s)
		},
	}
	lf.register(cmd)
	bf.register(cmd.Flags())
	cmd.Flags().BoolVar(&exit, "exit", false, "stop after the demo instead of serving MCP on stdio")
	return cmd
}
