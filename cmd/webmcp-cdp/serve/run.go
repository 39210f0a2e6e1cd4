package serve

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/chromedp/cdproto/browser"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/multi"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/hub/relay"
	"github.com/webmcp-cdp/webmcp-cdp/hub/telemetry"
)

// Serving says where MCP is served: stdio, streamable HTTP, or the relay.
type Serving struct {
	// HTTP serves MCP over streamable HTTP (nil: stdio). Its Auth, Browser
	// and Titles are filled in by the caller or here.
	HTTP *mcpserver.HTTPOptions
	// Relay serves the browser through a relay instead (nil: not).
	Relay *RelayOptions
	// MetricsAddr also serves the metrics (Options.Telemetry's) on their
	// own address, host:port, without the HTTP guard ("": not).
	MetricsAddr string
}

// RelayOptions make a browser the browser side of a relay.
type RelayOptions struct {
	URL, Token, Name string
	AllowRawCDP      bool
	Insecure         bool
}

// Run serves the session where serving says until the client goes away
// (stdio), the browser goes away (exit status 2), or ctx ends.
func (s *Session) Run(ctx context.Context, serving Serving) error {
	stop, err := startTelemetry(s.tel, serving.MetricsAddr)
	if err != nil {
		return err
	}
	defer stop()
	if serving.Relay != nil {
		return s.serveRelay(ctx, serving.Relay)
	}
	defer closeHub(s.Hub)
	if serving.HTTP == nil {
		return s.serveStdio(ctx)
	}
	errc := make(chan error, 1)
	opts := *serving.HTTP
	if v, err := cdp.Version(ctx, s.Conn); err == nil {
		opts.Browser = v.Product
	}
	if m := metricsOf(s.tel); m != nil {
		opts.Metrics = m.Handler()
	}
	opts.Userscripts = userscriptStatus(s.scripts, s.runs)
	h, err := s.Server.ServeHTTP(opts, errc)
	if err != nil {
		return &cli.ExitError{Code: 2, Err: err}
	}
	defer h.Close()
	return s.until(ctx, errc, 2)
}

// relayLeaveGrace bounds the wait for the relay link to close when the
// browser side stops.
const relayLeaveGrace = 3 * time.Second

// serveRelay serves the browser through the relay until the browser goes
// away (exit status 2) or ctx ends. stdio is not used.
func (s *Session) serveRelay(ctx context.Context, f *RelayOptions) error {
	name := f.Name
	if name == "" {
		name = defaultBrowserName(ctx, s.Conn)
	}
	bs, err := relay.NewBrowserSide(relay.BrowserSideOptions{
		URL:         f.URL,
		Token:       f.Token,
		Name:        name,
		Hub:         s.Hub,
		Actions:     s.Browser,
		AllowRawCDP: f.AllowRawCDP,
		CallTimeout: s.Server.CallTimeout(),
		Dial:        relay.DialOptions{Insecure: f.Insecure},
		Logger:      slog.Default(),
	})
	if err != nil {
		return err
	}
	if f.AllowRawCDP {
		slog.Warn("--allow-raw-cdp: relay clients of this user may send any CDP command to this browser's tabs")
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- bs.Run(rctx) }()
	// stop ends the relay link and waits for it to close, up to
	// relayLeaveGrace: a grace period for saying goodbye to the relay, not
	// a poll.
	stop := func() {
		cancel()
		grace := time.NewTimer(relayLeaveGrace)
		defer grace.Stop()
		select {
		case <-done:
		case <-grace.C:
		}
	}
	select {
	case err := <-done:
		return err
	case <-s.Gone():
		stop()
		if s.lost(ctx) {
			return &cli.ExitError{Code: 2, Err: s.Err()}
		}
		slog.Info("interrupted; leaving the relay")
		return nil
	case <-ctx.Done():
		slog.Info("interrupted; leaving the relay")
		stop()
		return nil
	}
}

// defaultBrowserName is "HOST · PRODUCT", e.g. "build-7 · HeadlessChrome/156.0.8078.79".
func defaultBrowserName(ctx context.Context, conn *cdp.Conn) string {
	host, _ := os.Hostname()
	if host == "" {
		host = "webmcp-cdp"
	}
	if v, err := cdp.Version(ctx, conn); err == nil && v.Product != "" {
		return host + " · " + v.Product
	}
	return host
}

// watchTelemetry points the gauges at the hub, the server and the states
// of the set's browsers.
func watchTelemetry(tel *telemetry.Telemetry, h *hub.Hub, srv *mcpserver.Server, set *multi.Set) {
	if tel == nil || tel.Metrics == nil {
		return
	}
	tel.Metrics.SetGauges(telemetry.Gauges{Counts: h.Counts, Sessions: srv.Sessions, Browsers: func() map[string]int {
		n := map[string]int{}
		for _, st := range set.Statuses() {
			n[st.State]++
		}
		return n
	}})
}

// startTelemetry starts the metrics' own listener at addr when set, and
// returns what ends it and exports the last spans.
func startTelemetry(tel *telemetry.Telemetry, addr string) (func(), error) {
	if tel == nil {
		return func() {}, nil
	}
	var l *telemetry.Listener
	if addr != "" && tel.Metrics != nil {
		var err error
		if l, err = telemetry.Serve(addr, tel.Metrics.Handler(), slog.Default()); err != nil {
			return nil, &cli.ExitError{Code: 2, Err: err}
		}
	}
	return func() {
		if l != nil {
			l.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tel.Shutdown(ctx); err != nil {
			slog.Warn("exporting the last traces failed", "err", err)
		}
	}, nil
}

// metricsOf are the metrics --http serves at /metrics (nil with metrics
// off).
func metricsOf(tel *telemetry.Telemetry) *telemetry.Metrics {
	if tel == nil {
		return nil
	}
	return tel.Metrics
}

// PrintStatusLink prints the status page's address on stderr, whatever the
// log level: with --token it is a one-time link, the only way in.
func PrintStatusLink(link string) {
	if strings.Contains(link, "?once=") {
		fmt.Fprintf(os.Stderr, "webmcp-cdp: status page (one-time link, good once within 10 minutes): %s\n", link)
		return
	}
	fmt.Fprintf(os.Stderr, "webmcp-cdp: status page: %s\n", link)
}

// BrowserVersion asks the browser at the debugging address browserURL for
// its version.
func BrowserVersion(ctx context.Context, browserURL string) (*browser.GetVersionResult, error) {
	conn, err := cdp.Attach(ctx, cdp.Endpoint{BrowserURL: browserURL}, nil)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return cdp.Version(ctx, conn)
}
