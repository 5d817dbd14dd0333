package telemetry

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// BenchmarkToolObserver is what the observer adds to one tool call: a call
// span with five phase spans (to a discarding exporter), five phase
// latencies, the total, two payload sizes and the invocation counter.
func BenchmarkToolObserver(b *testing.B) {
	for _, tracing := range []bool{false, true} {
		name := "metrics"
		opts := Options{}
		if tracing {
			name, opts.SpanExporter = "metrics+tracing", tracetest.NewNoopExporter()
		}
		b.Run(name, func(b *testing.B) {
			tel, err := New(context.Background(), opts)
			if err != nil {
				b.Fatal(err)
			}
			phases := []toolkit.Phase{toolkit.PhasePreflight, toolkit.PhaseExec, toolkit.PhaseValidate, toolkit.PhaseSanitize, toolkit.PhaseEvidence}
			b.ReportAllocs()
			for b.Loop() {
				ctx, done := tel.Tools.Call(context.Background(), "quote_tax")
				for _, p := range phases {
					_, end := tel.Tools.Phase(ctx, "quote_tax", p)
					end(nil)
				}
				_ = tel.Tools.TraceID(ctx)
				done(toolkit.Outcome{Tool: "quote_tax", Status: toolkit.StatusOK, Origin: toolkit.ActorAgent, BytesIn: 200, BytesOut: 900})
			}
		})
	}
}
