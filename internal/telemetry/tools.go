package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// Tools is the tool pipeline's observer (toolkit.Observer): the tool
// metrics of docs/operators.md#observability with a small label set — tool (a registered name), status, code
// (the closed set), origin (the actor type), phase, dir — and a span per
// call with a child per phase. Nothing a caller chooses freely (ids, user
// data, an unregistered tool's name) becomes a label.
type Tools struct {
	tracer      trace.Tracer
	invocations metric.Int64Counter
	denied      metric.Int64Counter
	errors      metric.Int64Counter
	latency     metric.Float64Histogram
	payload     metric.Int64Histogram
}

var _ toolkit.Observer = (*Tools)(nil)

func newTools(m metric.Meter, tracer trace.Tracer) (*Tools, error) {
	t := &Tools{tracer: tracer}
	var err error
	if t.invocations, err = m.Int64Counter("tool_invocations",
		metric.WithDescription("Tool calls by tool, status, error code (\"\" on success) and caller origin.")); err != nil {
		return nil, err
	}
	if t.denied, err = m.Int64Counter("tool_denied",
		metric.WithDescription("Tool calls refused before the tool ran, by tool and code.")); err != nil {
		return nil, err
	}
	if t.errors, err = m.Int64Counter("tool_errors",
		metric.WithDescription("Failed tool calls by error code.")); err != nil {
		return nil, err
	}
	if t.latency, err = m.Float64Histogram("tool_latency", metric.WithUnit("s"),
		metric.WithDescription("Tool call latency by tool and phase (preflight, exec, validate, sanitize, evidence; total: the whole call).")); err != nil {
		return nil, err
	}
	if t.payload, err = m.Int64Histogram("tool_payload", metric.WithUnit("By"),
		metric.WithDescription("Tool input (dir=in) and output (dir=out) sizes as JSON.")); err != nil {
		return nil, err
	}
	return t, nil
}

// Call implements toolkit.Observer.
func (t *Tools) Call(ctx context.Context, tool string) (context.Context, func(toolkit.Outcome)) {
	start := time.Now()
	// Named once the outcome says whether the tool is registered: a
	// caller's free text never names a span.
	ctx, span := t.tracer.Start(ctx, "tool", trace.WithSpanKind(trace.SpanKindInternal))
	return ctx, func(o toolkit.Outcome) {
		ctx := context.WithoutCancel(ctx)
		toolAttr := attribute.String("tool", o.Tool)
		t.invocations.Add(ctx, 1, metric.WithAttributes(toolAttr, attribute.String("status", string(o.Status)),
			attribute.String("code", string(o.Code)), attribute.String("origin", origin(o.Origin))))
		t.latency.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(toolAttr, attribute.String("phase", "total")))
		if o.BytesIn > 0 {
			t.payload.Record(ctx, int64(o.BytesIn), metric.WithAttributes(toolAttr, attribute.String("dir", "in")))
		}
		if o.BytesOut > 0 {
			t.payload.Record(ctx, int64(o.BytesOut), metric.WithAttributes(toolAttr, attribute.String("dir", "out")))
		}
		span.SetName("tool " + o.Tool)
		span.SetAttributes(toolAttr, attribute.String("tool.status", string(o.Status)))
		if o.Code != "" {
			code := attribute.String("code", string(o.Code))
			t.errors.Add(ctx, 1, metric.WithAttributes(code))
			if o.Denied {
				t.denied.Add(ctx, 1, metric.WithAttributes(toolAttr, code))
			}
			span.SetAttributes(attribute.String("tool.error_code", string(o.Code)), attribute.Bool("tool.denied", o.Denied))
			span.SetStatus(codes.Error, string(o.Code))
		}
		span.End()
	}
}

// Phase implements toolkit.Observer.
func (t *Tools) Phase(ctx context.Context, tool string, p toolkit.Phase) (context.Context, func(error)) {
	start := time.Now()
	ctx, span := t.tracer.Start(ctx, "tool."+string(p))
	return ctx, func(err error) {
		t.latency.Record(context.WithoutCancel(ctx), time.Since(start).Seconds(),
			metric.WithAttributes(attribute.String("tool", tool), attribute.String("phase", string(p))))
		if err != nil {
			span.SetStatus(codes.Error, string(toolkit.AsError(err).Code))
		}
		span.End()
	}
}

// TraceID implements toolkit.Observer.
func (t *Tools) TraceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.HasTraceID() {
		return ""
	}
	return sc.TraceID().String()
}

// origin bounds the actor type to the three the envelope knows.
func origin(a toolkit.ActorType) string {
	switch a {
	case toolkit.ActorUser, toolkit.ActorAgent, toolkit.ActorSystem:
		return string(a)
	}
	return "other"
}
