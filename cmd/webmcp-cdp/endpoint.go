package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
)

// endpointFlags are attach's flags for a browser reached over the network:
// where it is, and the headers and certificate authority to reach it with.
type endpointFlags struct {
	browserURL string
	wsEndpoint string
	headers    []string
	caFile     string
	// Several browsers (multi.go): --browser NAME=URL, --browser-header
	// NAME='Name: value'.
	browsers       []string
	browserHeaders []string
}

func (f *endpointFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.browserURL, "browser-url", "", "the browser's debugging address, e.g. http://127.0.0.1:9222; a path and a query (https://host/chrome?token=T) are kept, and the query goes on the WebSocket URL too")
	fs.StringVar(&f.wsEndpoint, "ws-endpoint", "", "the browser's WebSocket debugging URL (ws:// or wss://, e.g. a browser service's wss://host/?token=T), instead of --browser-url")
	fs.StringArrayVar(&f.headers, "header", nil, "an HTTP header 'Name: value' sent to the endpoint (/json/version and the WebSocket upgrade), repeatable; from the environment one per line in WEBMCP_CDP_HEADER, so tokens stay out of the command line; values are never logged")
	fs.StringVar(&f.caFile, "ca-file", "", "a PEM file of certificate authorities to trust for https:// and wss:// endpoints, besides the system's")
	cmd.MarkFlagsMutuallyExclusive("browser-url", "ws-endpoint")
	f.registerMulti(cmd, false)
}

// given reports whether an endpoint was given.
func (f *endpointFlags) given() bool { return f.browserURL != "" || f.wsEndpoint != "" }

// endpoint checks the flags and returns the endpoint to attach to.
func (f *endpointFlags) endpoint() (cdp.Endpoint, error) {
	if !f.given() {
		if len(f.headers) > 0 || f.caFile != "" {
			return cdp.Endpoint{}, cli.Usage(errors.New("--header and --ca-file need --browser-url or --ws-endpoint"))
		}
		return cdp.Endpoint{}, nil
	}
	h, err := cdp.ParseHeaders(f.headers)
	if err != nil {
		return cdp.Endpoint{}, cli.Usage(err)
	}
	ep := cdp.Endpoint{BrowserURL: f.browserURL, WSEndpoint: f.wsEndpoint, Header: h}
	if f.caFile != "" {
		if ep.TLS, err = cdp.TLSConfigWithCA(f.caFile); err != nil {
			return cdp.Endpoint{}, cli.Usage(err)
		}
	}
	return ep, nil
}
