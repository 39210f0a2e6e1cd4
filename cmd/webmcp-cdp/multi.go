package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/fleet"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/multi"
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

// namedEndpoint is one --browser.
type namedEndpoint struct {
	name string
	ep   cdp.Endpoint
}

// named checks --browser and --browser-header and returns the browsers, in
// the order given; none without --browser.
func (f *endpointFlags) named() ([]namedEndpoint, error) {
	if len(f.browsers) == 0 {
		if len(f.browserHeaders) > 0 {
			return nil, cli.Usage(errors.New("--browser-header needs --browser NAME=URL"))
		}
		return nil, nil
	}
	out := make([]namedEndpoint, 0, len(f.browsers))
	index := map[string]int{}
	for _, v := range f.browsers {
		name, raw, ok := strings.Cut(v, "=")
		if !ok || strings.ContainsAny(name, ":/@?") { // a URL without a name
			return nil, cli.Usage(fmt.Errorf("--browser %q: give NAME=URL, such as --browser local=http://127.0.0.1:9222", cdp.RedactURL(v)))
		}
		if err := multi.CheckName(name); err != nil {
			return nil, cli.Usage(fmt.Errorf("--browser: %w", err))
		}
		if _, dup := index[name]; dup {
			return nil, cli.Usage(fmt.Errorf("--browser: the name %q is given twice; give each browser its own name", name))
		}
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return nil, cli.Usage(fmt.Errorf("--browser %s: the URL does not parse; give http(s)://host:port or ws(s)://...", name))
		}
		ne := namedEndpoint{name: name}
		switch u.Scheme {
		case "http", "https":
			ne.ep.BrowserURL = raw
		case "ws", "wss":
			ne.ep.WSEndpoint = raw
		default:
			return nil, cli.Usage(fmt.Errorf("--browser %s: the URL must start with http://, https://, ws:// or wss://", name))
		}
		index[name] = len(out)
		out = append(out, ne)
	}
	lines := map[string][]string{}
	for _, v := range f.browserHeaders {
		name, line, ok := strings.Cut(v, "=")
		if _, known := index[name]; !ok || !known {
			return nil, cli.Usage(fmt.Errorf("--browser-header: give NAME='Header: value' with NAME one of the --browser names (%s)", strings.Join(namesOf(out), ", ")))
		}
		lines[name] = append(lines[name], line)
	}
	for name, ls := range lines {
		h, err := cdp.ParseHeaders(ls)
		if err != nil {
			return nil, cli.Usage(fmt.Errorf("--browser-header %s: %w", name, err))
		}
		out[index[name]].ep.Header = h
	}
	if f.caFile != "" {
		tc, err := cdp.TLSConfigWithCA(f.caFile)
		if err != nil {
			return nil, cli.Usage(err)
		}
		for i := range out {
			out[i].ep.TLS = tc
		}
	}
	return out, nil
}

func namesOf(eps []namedEndpoint) []string {
	out := make([]string, len(eps))
	for i, e := range eps {
		out[i] = e.name
	}
	return out
}

// endpointsSupplied are --browser's browsers, each followed again after a
// drop.
func endpointsSupplied(eps []namedEndpoint) []serve.Supplied {
	out := make([]serve.Supplied, 0, len(eps))
	for _, ne := range eps {
		src := &browsers.Endpoint{Endpoint: ne.ep, Logger: slog.Default().With("browser", ne.name)}
		out = append(out, serve.Supplied{Browser: fleet.Browser{Name: ne.name, Source: src, Restart: true}})
	}
	return out
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
