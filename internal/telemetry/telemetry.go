package telemetry

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Options say what New builds.
type Options struct {
	// Service is service.name on spans and target_info ("cartwright-worker").
	Service string
	// SpanExporter, when set, receives every span synchronously (tests
	// pass an in-memory exporter); otherwise OTLP is used when the
	// environment configures it (TracesFromEnv), else nothing is traced.
	SpanExporter sdktrace.SpanExporter
	// TracesFromEnv turns on the OTLP exporter when OTEL_* asks for it.
	TracesFromEnv bool
}

// Telemetry is one process's metrics and tracing.
type Telemetry struct {
	// Registry holds every metric /metrics serves.
	Registry *prometheus.Registry
	// Meters provides the OpenTelemetry meters (the Temporal SDK's handler
	// and ours); Tracers the tracers (a no-op one when not tracing).
	Meters  *sdkmetric.MeterProvider
	Tracers trace.TracerProvider
	// Tools observes the tool pipeline; Product counts what the product
	// does.
	Tools   *Tools
	Product *Product
	// Tracing is true when spans are exported somewhere.
	Tracing bool

	shutdown []func(context.Context) error
}

// New builds a process's telemetry. It sets no globals (Install does).
func New(ctx context.Context, opts Options) (*Telemetry, error) {
	if opts.Service == "" {
		opts.Service = "cartwright"
	}
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override the service
	// name (resource.New: later detectors win).
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName(opts.Service)),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo())
	if err != nil {
		return nil, err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithResource(res),
		sdkmetric.WithView(secondsView, bytesView))
	t := &Telemetry{Registry: reg, Meters: mp, Tracers: noop.NewTracerProvider(), shutdown: []func(context.Context) error{mp.Shutdown}}

	var spans sdktrace.SpanExporter
	sync := false
	switch {
	case opts.SpanExporter != nil:
		spans, sync = opts.SpanExporter, true
	case opts.TracesFromEnv && tracesConfigured(os.Getenv):
		if spans, err = otlpExporter(ctx); err != nil {
			return nil, err
		}
	}
	if spans != nil {
		exportOpt := sdktrace.WithBatcher(spans)
		if sync {
			exportOpt = sdktrace.WithSyncer(spans)
		}
		tp := sdktrace.NewTracerProvider(exportOpt, sdktrace.WithResource(res))
		t.Tracers, t.Tracing = tp, true
		t.shutdown = append(t.shutdown, tp.Shutdown)
	}
	meter := mp.Meter("cartwright")
	if t.Tools, err = newTools(meter, t.Tracers.Tracer("cartwright/toolkit")); err != nil {
		return nil, err
	}
	if t.Product, err = newProduct(meter); err != nil {
		return nil, err
	}
	return t, nil
}

// Install makes t the process's global providers and W3C trace context
// (with baggage) its propagator, so libraries that use the globals
// (HTTP clients, the Temporal SDK's defaults) report through t.
func (t *Telemetry) Install() {
	otel.SetMeterProvider(t.Meters)
	otel.SetTracerProvider(t.Tracers)
	otel.SetTextMapPropagator(Propagator)
}

// Propagator is the W3C trace context and baggage propagator every process
// uses.
var Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Handler serves the Prometheus text of every metric.
func (t *Telemetry) Handler() http.Handler {
	return promhttp.HandlerFor(t.Registry, promhttp.HandlerOpts{ErrorLog: nil})
}

// Shutdown flushes pending spans and stops the providers.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	var errs []error
	for _, f := range t.shutdown {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}

// tracesConfigured reads the standard OTEL_* variables: tracing is on when
// an OTLP endpoint is named or OTEL_TRACES_EXPORTER=otlp, and off when
// OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
func tracesConfigured(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	switch strings.ToLower(getenv("OTEL_TRACES_EXPORTER")) {
	case "none":
		return false
	case "otlp":
		return true
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// secondsView gives every histogram in seconds (ours and the Temporal
// SDK's timers) buckets from a millisecond to a minute: the SDK's default
// buckets are for milliseconds.
var secondsView = sdkmetric.NewView(
	sdkmetric.Instrument{Kind: sdkmetric.InstrumentKindHistogram, Unit: "s"},
	sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{
		Boundaries: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
	}},
)

// bytesView gives payload sizes buckets from 64 B to 4 MiB.
var bytesView = sdkmetric.NewView(
	sdkmetric.Instrument{Kind: sdkmetric.InstrumentKindHistogram, Unit: "By"},
	sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{
		Boundaries: []float64{64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304},
	}},
)
