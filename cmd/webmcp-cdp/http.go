package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/serve"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// httpFlags choose the MCP transport: stdio by default, streamable HTTP
// with --http.
type httpFlags struct {
	addr         string
	token        string
	allowedHosts []string
	maxBody      int64
	readTimeout  time.Duration
	maxConnsIP   int
	oauth        oauthFlags
	metrics      string // --metrics: the metrics' own address (telemetry.go)
}

func (f *httpFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.addr, "http", "", "serve MCP over streamable HTTP at http://ADDR/mcp instead of stdio (ADDR: host:port, :port or port; the host defaults to 127.0.0.1)")
	fs.StringVar(&f.token, "token", "", "bearer token HTTP clients must send (default $WEBMCP_CDP_TOKEN); required when --http is not loopback")
	fs.StringSliceVar(&f.allowedHosts, "allowed-host", nil, "further host names accepted in Host and Origin headers (for a server reached by name), repeatable: NAME (this server's port or the default port), NAME:PORT, or an origin such as https://NAME:8443")
	fs.Int64Var(&f.maxBody, "max-body-bytes", 4<<20, "largest HTTP request body")
	fs.IntVar(&f.maxConnsIP, "http-max-conns-per-ip", mcpserver.DefaultMaxConnsPerIP, "most HTTP connections one client address may hold open at once; more get 503")
	f.oauth.register(fs)
	fs.StringVar(&f.metrics, "metrics", "", "also serve Prometheus metrics at http://ADDR/metrics, without the --http guard (ADDR as --http's; for a scraper on a private network); with --http they are at /metrics there too, behind --token or OAuth's read scope")
	fs.DurationVar(&f.readTimeout, "http-read-timeout", mcpserver.DefaultReadTimeout, "longest time an HTTP client may take to send a request's headers, and again its body; a slower one is cut off (responses and event streams are not bounded)")
}

// check refuses bad --http values before anything starts.
func (f *httpFlags) check() error {
	if f.metrics != "" {
		if _, err := metricsAddr(f.metrics); err != nil {
			return err
		}
	}
	if f.addr == "" {
		return f.oauth.check("", false, "")
	}
	addr, loopback, err := mcpserver.ListenAddr(f.addr)
	if err != nil {
		return err
	}
	if err := f.oauth.check(addr, loopback, f.options().Token); err != nil {
		return err
	}
	if !loopback && f.options().Token == "" && !f.oauth.enabled() {
		return fmt.Errorf("--http %s is not a loopback address: set --token (or WEBMCP_CDP_TOKEN) so that only your clients can call the browser's tools", addr)
	}
	if err := mcpserver.CheckAllowedHosts(f.allowedHosts); err != nil {
		return err
	}
	if f.readTimeout < 100*time.Millisecond {
		return fmt.Errorf("--http-read-timeout %s: must be at least 100ms", f.readTimeout)
	}
	if f.maxConnsIP < 4 {
		return fmt.Errorf("--http-max-conns-per-ip %d: must be at least 4 (a client holds an event stream and a request or two)", f.maxConnsIP)
	}
	if f.maxBody < 1024 {
		return fmt.Errorf("--max-body-bytes %d: must be at least 1024", f.maxBody)
	}
	return nil
}

func (f *httpFlags) options() mcpserver.HTTPOptions {
	token := f.token
	if token == "" {
		token = os.Getenv("WEBMCP_CDP_TOKEN")
	}
	hosts := f.allowedHosts
	if o := f.oauth.allowedOrigin(); o != "" {
		hosts = append(hosts[:len(hosts):len(hosts)], o)
	}
	return mcpserver.HTTPOptions{Addr: f.addr, Token: token, MaxBodyBytes: f.maxBody, AllowedHosts: hosts, ReadTimeout: f.readTimeout, MaxConnsPerIP: f.maxConnsIP}
}

// serveOptions are options() with OAuth mode's, whose issuers are read
// now: a server that starts can check tokens.
func (f *httpFlags) serveOptions(ctx context.Context) (mcpserver.HTTPOptions, error) {
	opts := f.options()
	a, err := f.oauth.auth(ctx)
	if err != nil {
		return opts, &cli.ExitError{Code: 2, Err: err}
	}
	opts.Auth = a
	return opts, nil
}

// browserFlags are the flags of every command that serves a browser: what
// to serve, and where (stdio, --http, or --relay where it applies).
type browserFlags struct {
	serve serveFlags
	http  httpFlags
	relay *relayFlags // nil where the relay does not apply
}

func (f *browserFlags) register(fs *pflag.FlagSet) {
	f.serve.register(fs)
	f.http.register(fs)
	if f.relay != nil {
		f.relay.register(fs)
	}
}

// check refuses bad flags before anything starts, and returns the backend.
func (f *browserFlags) check(ctx context.Context) (polyfill.Backend, error) {
	backend, err := f.serve.check(ctx)
	if err != nil {
		return "", err
	}
	if err := f.http.check(); err != nil {
		return "", err
	}
	if f.relay != nil {
		if err := f.relay.check(); err != nil {
			return "", err
		}
	}
	if err := f.makeTelemetry(); err != nil {
		return "", err
	}
	return backend, nil
}

// serving is where the flags say to serve MCP: stdio, --http or --relay.
func (f *browserFlags) serving(ctx context.Context) (serve.Serving, error) {
	var sv serve.Serving
	if f.http.metrics != "" {
		addr, err := metricsAddr(f.http.metrics)
		if err != nil {
			return sv, err
		}
		sv.MetricsAddr = addr
	}
	if f.relay != nil && f.relay.enabled() {
		r := f.relay
		sv.Relay = &serve.RelayOptions{URL: r.url, Token: r.token, Name: r.name, AllowRawCDP: r.allowRawCDP, Insecure: r.insecure}
		return sv, nil
	}
	if f.http.addr != "" {
		opts, err := f.http.serveOptions(ctx)
		if err != nil {
			return sv, err
		}
		opts.StatusLink = serve.PrintStatusLink
		sv.HTTP = &opts
	}
	return sv, nil
}

// run serves s where the flags say until it ends.
func (f *browserFlags) run(ctx context.Context, s *serve.Session) error {
	sv, err := f.serving(ctx)
	if err != nil {
		return err
	}
	return s.Run(ctx, sv)
}
