// Package telemetry turns what the hub reports through its hooks (hub.Hooks)
// into Prometheus metrics (prometheus/client_golang, on a registry of its own)
// and OpenTelemetry traces (the OTel Go SDK, configured by the standard
// OTEL_* environment, exported over OTLP). Either part may be off; with both
// off nothing is made and the hub runs without hooks.
//
// The hub and the browser layer know nothing of either library: the hub
// hands over plain records with the times of each step after the fact
// (hub.CallTrace, hub.Registration), and the spans are made from those
// times. See docs/observability.md for the metrics, the span tree and the
// environment.
package telemetry
