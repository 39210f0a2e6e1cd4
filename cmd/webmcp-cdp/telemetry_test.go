package main

import (
	"strings"
	"testing"
)

func TestMetricsAddr(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{in: "9464", want: "127.0.0.1:9464"},
		{in: ":9464", want: "127.0.0.1:9464"},
		{in: "0.0.0.0:9464", want: "0.0.0.0:9464"},
		{in: "[::1]:9464", want: "[::1]:9464"},
		{in: "host:", err: "give an address"},
		{in: "a:b:c", err: "give an address"},
	}
	for _, tt := range tests {
		got, err := metricsAddr(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("metricsAddr(%q) = %q, %v; want an error with %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("metricsAddr(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// TestTelemetryIsOffUnlessAsked: no --metrics, no --http and no OTEL_*
// leave the hub without hooks and the edge without TraceContext.
func TestTelemetryIsOffUnlessAsked(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER"} {
		t.Setenv(k, "")
	}
	var off browserFlags
	if err := off.makeTelemetry(); err != nil {
		t.Fatal(err)
	}
	if off.serve.tel != nil || off.serve.hubOptions(nil).Hooks.Calls.Trace != nil || off.serve.serverOptions(nil).TraceContext != nil || off.serve.cdpOptions("", false, nil).PageTimes {
		t.Errorf("telemetry is on with nothing asked: %+v", off.serve.tel)
	}
	on := browserFlags{http: httpFlags{metrics: "127.0.0.1:0"}}
	if err := on.makeTelemetry(); err != nil {
		t.Fatal(err)
	}
	if on.serve.tel == nil || on.serve.tel.Metrics == nil || on.serve.tel.Traces != nil || on.serve.hubOptions(nil).Hooks.Calls.Trace == nil {
		t.Errorf("--metrics: telemetry %+v, want metrics only", on.serve.tel)
	}
}
