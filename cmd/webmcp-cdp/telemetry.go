package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"

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
