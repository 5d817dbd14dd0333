// Package telemetry builds what a process exports about itself: the
// Prometheus /metrics endpoint (OpenTelemetry metrics through the Prometheus
// exporter, on a registry of the process's own), the tracer provider (OTLP
// when the standard OTEL_* environment asks for it, otherwise none), the
// tool pipeline's observer (toolkit.Observer: the tool metrics and a span
// per call and phase) and the product's instruments. It imports no
// Temporal package: the SDK's metrics handler and tracing interceptor are
// attached in package client from the providers built here.
// docs/operators.md#observability lists every metric.
package telemetry
