package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/hub/telemetry"
)

// makeTelemetry turns on what --metrics, --http and the OTEL_* environment
// ask for: metrics when they are served (at /metrics of --http, or on
// --metrics's own address), traces when OTEL_* names an exporter or an
// endpoint. Nil when neither is on.
func (f *browserFlags) makeTelemetry() error {
	var m *telemetry.Metrics
	if f.http.metrics != "" || f.http.addr != "" {
		m = telemetry.NewMetrics(telemetry.DefaultMaxSites)
	}
	t, err := telemetry.NewTraces(context.Background(), os.Getenv, version)
	if err != nil {
		return err
	}
	f.serve.tel = telemetry.New(m, t)
	return nil
}

// watchTelemetry points the gauges at the hub and the server; browsers
// reports the browsers' states (nil: one browser, up while served).
func watchTelemetry(tel *telemetry.Telemetry, h *hub.Hub, srv *mcpserver.Server, browsers func() map[string]int) {
	if tel == nil || tel.Metrics == nil {
		return
	}
	if browsers == nil {
		browsers = func() map[string]int { return map[string]int{"up": 1} }
	}
	tel.Metrics.SetGauges(telemetry.Gauges{Counts: h.Counts, Browsers: browsers, Sessions: srv.Sessions})
}

// servedMetrics are what --http serves at /metrics (nil with metrics off).
func (f *serveFlags) servedMetrics() *telemetry.Metrics {
	if f.tel == nil {
		return nil
	}
	return f.tel.Metrics
}

// startTelemetry starts the --metrics listener when set, and returns what
// ends it and exports the last spans.
func (f *browserFlags) startTelemetry() (func(), error) {
	tel := f.serve.tel
	if tel == nil {
		return func() {}, nil
	}
	var l *telemetry.Listener
	if f.http.metrics != "" && tel.Metrics != nil {
		addr, err := metricsAddr(f.http.metrics)
		if err != nil {
			return nil, err
		}
		if l, err = telemetry.Serve(addr, tel.Metrics.Handler(), slog.Default()); err != nil {
			return nil, &exitError{code: 2, err: err}
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

// metricsAddr normalises a --metrics value as --http's: host:port, :port or
// port, the host 127.0.0.1 when missing.
func metricsAddr(v string) (string, error) {
	if !strings.Contains(v, ":") {
		v = ":" + v
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil || port == "" {
		return "", fmt.Errorf("--metrics %q: give an address such as 127.0.0.1:9464, :9464 or 9464", v)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}
