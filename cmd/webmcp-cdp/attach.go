package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/fleet"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/serve"
)

func newAttach() *cobra.Command {
	var ef endpointFlags // endpoint.go
	var reload bool
	bf := browserFlags{relay: &relayFlags{}}
	var af autoConnectFlags // autoconnect.go
	var sf spaceFlags       // spaces.go
	cmd := &cobra.Command{
		Use:   "attach [--auto-connect | --browser-url URL | --ws-endpoint WS | --browser NAME=URL...] [URL...]",
		Short: "Connect to a Chrome started with --remote-debugging-port and serve its tabs' WebMCP tools over MCP on stdio",
		Long: "attach follows every tab of a running Chrome. It never closes, reloads or navigates a tab of yours\n" +
			"unless asked: --reload-existing reloads the tabs that loaded before it attached (their early\n" +
			"registrations are otherwise unseen), and URLs given as arguments open in new tabs.",
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
			named, err := ef.named()
			if err != nil {
				return err
			}
			if len(named) > 0 {
				return runMulti(cmd.Context(), serve.EndpointBrowsers(named), &bf, backend, reload, urls)
			}
			ep, err := ef.endpoint()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if sf.mode(bf.http.oauth.enabled()) == isolateUser {
				if af.personal(ef.given()) {
					return cli.Usage(errors.New("--isolate user with your own Chrome: it is signed in as you and serves you alone; attach to a shared browser with --browser-url or --ws-endpoint, or use --isolate none"))
				}
				dial := func(ctx context.Context) (*cdp.Conn, error) { return cdp.Attach(ctx, ep, nil) }
				return runSpaces(ctx, &bf, &sf, backend, urls, serve.SpaceBrowsers{Dial: dial})
			}
			src, err := af.source(ep)
			if err != nil {
				return err
			}
			af.defaults(cmd, &bf.serve, ef.given())
			// The user's tabs stay, blank ones too; ending it detaches: the
			// browser and its tabs stay.
			s, err := startSession(ctx, serve.Supplied{Browser: fleet.Browser{Source: src, StartFails: true, URLs: urls}}, &bf.serve, backend, reload)
			if err != nil {
				return err
			}
			defer s.Close()
			return bf.run(ctx, s)
		},
	}
	ef.register(cmd)
	for _, other := range []string{"browser-url", "ws-endpoint", "header"} {
		cmd.MarkFlagsMutuallyExclusive("browser", other)
	}
	cmd.Flags().BoolVar(&reload, "reload-existing", false, "reload the tabs that loaded before attaching, so their tools are seen")
	af.register(cmd)
	sf.register(cmd.Flags())
	cmd.MarkFlagsMutuallyExclusive("browser", "auto-connect")
	bf.register(cmd.Flags())
	cmd.MarkFlagsMutuallyExclusive("relay", "http")
	return cmd
}
