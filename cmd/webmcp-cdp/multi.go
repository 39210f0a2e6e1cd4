package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/serve"
	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// This file is attach with several browsers (--browser NAME=URL, repeatable):
// one hub and one MCP server over a cdp/multi.Set, each browser kept
// connected by its own supervisor.

// registerMulti adds --browser and --browser-header (and --ca-file, with
// ca: attach has it already).
func (f *endpointFlags) registerMulti(cmd *cobra.Command, ca bool) {
	fs := cmd.Flags()
	if ca {
		fs.StringVar(&f.caFile, "ca-file", "", "a PEM file of certificate authorities to trust for https:// and wss:// --browser endpoints, besides the system's")
	}
	fs.StringArrayVar(&f.browsers, "browser", nil, "a browser to serve as NAME=URL, repeatable: one server for several browsers (URL: an http(s):// debugging address or a ws(s):// WebSocket URL; NAME: 1-16 of a-z 0-9 -); a browser that drops is reconnected with backoff, its tools cached meanwhile")
	fs.StringArrayVar(&f.browserHeaders, "browser-header", nil, "an HTTP header for one --browser as NAME='Header: value', repeatable; from the environment one per line in WEBMCP_CDP_BROWSER_HEADER; values are never logged")
}

// named checks --browser and --browser-header and returns the browsers, in
// the order given; none without --browser.
func (f *endpointFlags) named() ([]cli.NamedEndpoint, error) {
	return cli.NamedEndpoints(f.browsers, f.browserHeaders, f.caFile)
}

// runMulti serves several browsers through one hub (serve.RunFleet) as
// the flags say.
func runMulti(ctx context.Context, sup []serve.Supplied, bf *browserFlags, backend polyfill.Backend, reload bool, urls []string) error {
	opts, err := bf.serve.options(backend, reload)
	if err != nil {
		return err
	}
	sv, err := bf.serving(ctx)
	if err != nil {
		return err
	}
	return serve.RunFleet(ctx, sup, opts, sv, urls)
}
