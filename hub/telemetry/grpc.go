package telemetry

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// newGRPCExporter makes the OTLP/gRPC exporter (OTEL_EXPORTER_OTLP_PROTOCOL=grpc).
func newGRPCExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	exp, err := otlptracegrpc.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("the OTLP/gRPC trace exporter (OTEL_EXPORTER_OTLP_*): %w", err)
	}
	return exp, nil
}
