package client

// Every SDK client of the project reports through OpenTelemetry: the SDK's
// own metrics (workflow task latency, schedule-to-start, pollers, sticky
// cache …) through the contrib metrics handler, and a span for every start,
// signal, workflow run and activity through the contrib tracing
// interceptor, whose context travels in Temporal headers (headers only:
// the command sequence, and so replay, is unchanged).

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	sdkclient "go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// Instrument attaches the SDK's metrics handler (meters from mp) and the
// tracing interceptor (tracers from tp) to so. Processes pass their own
// telemetry's providers; SDKOptions passes the global ones, which are
// no-ops until a process installs its telemetry.
func Instrument(so *sdkclient.Options, mp metric.MeterProvider, tp trace.TracerProvider) error {
	tracing, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{
		Tracer: tp.Tracer("temporal-sdk-go"),
		// Status queries poll (the UI, the gateway's waits): a span each
		// would bury the request's own.
		DisableQueryTracing: true,
		TextMapPropagator:   propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	})
	if err != nil {
		return fmt.Errorf("temporal tracing interceptor: %w", err)
	}
	so.Interceptors = append([]interceptor.ClientInterceptor{tracingInterceptor{tracing}}, withoutTracing(so.Interceptors)...)
	so.MetricsHandler = temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{
		Meter:                mp.Meter("temporal-sdk-go"),
		UseMonotonicCounters: true,
		// A meter error must not panic a worker: the metric is dropped.
		OnError: func(error) {},
	})
	return nil
}

// instrumentGlobal is Instrument with the process's global providers.
func instrumentGlobal(so *sdkclient.Options) error {
	return Instrument(so, otel.GetMeterProvider(), otel.GetTracerProvider())
}

// withoutTracing drops a tracing interceptor Instrument attached before,
// so options instrumented twice trace once.
func withoutTracing(in []interceptor.ClientInterceptor) []interceptor.ClientInterceptor {
	out := make([]interceptor.ClientInterceptor, 0, len(in))
	for _, i := range in {
		if _, ok := i.(tracingInterceptor); !ok {
			out = append(out, i)
		}
	}
	return out
}

// tracingInterceptor is the SDK's tracing interceptor, under a type of ours
// so withoutTracing recognises it (it is both a client and a worker
// interceptor, as the SDK requires to trace workers).
type tracingInterceptor struct{ interceptor.Interceptor }

// withTrace makes the caller's span, named by the envelope's W3C
// traceparent, the parent of what ctx starts; a context that already
// carries a span (an in-process caller) keeps it.
func withTrace(ctx context.Context, t toolkit.Trace) context.Context {
	if t.Traceparent == "" || trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": t.Traceparent})
}
