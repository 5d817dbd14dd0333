package telemetry

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// otlpExporter is the OTLP/HTTP span exporter, configured entirely by the
// standard variables (OTEL_EXPORTER_OTLP_ENDPOINT, _TRACES_ENDPOINT,
// _HEADERS, _TIMEOUT, _CERTIFICATE …); a collector's port 4318.
func otlpExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP trace exporter: %w", err)
	}
	return exp, nil
}
