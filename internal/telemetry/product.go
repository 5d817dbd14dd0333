package telemetry

import (
	"context"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// Product holds the instruments of what the product does, beside the tool
// pipeline's: evidence writes, two-phase audit results, webhook
// deliveries, and the waiting gauges (approvals, confirmations) a
// Waiting source feeds. Draft orders by final state and reconcile
// violations are counted by the workflows themselves through the Temporal
// SDK's replay-safe metrics handler (package workflows).
type Product struct {
	meter          metric.Meter
	evidenceWrites metric.Int64Counter
	evidenceTime   metric.Float64Histogram
	audits         metric.Int64Counter
	webhooks       metric.Int64Counter
}

func newProduct(m metric.Meter) (*Product, error) {
	p := &Product{meter: m}
	var err error
	if p.evidenceWrites, err = m.Int64Counter("evidence_writes",
		metric.WithDescription("Evidence snapshot writes by outcome (ok, error).")); err != nil {
		return nil, err
	}
	if p.evidenceTime, err = m.Float64Histogram("evidence_write", metric.WithUnit("s"),
		metric.WithDescription("Evidence snapshot write latency.")); err != nil {
		return nil, err
	}
	if p.audits, err = m.Int64Counter("audit_results",
		metric.WithDescription("Two-phase audit rows closed, by outcome (success, failed, rejected).")); err != nil {
		return nil, err
	}
	if p.webhooks, err = m.Int64Counter("webhook_events",
		metric.WithDescription("Stripe webhook deliveries by outcome (handled, refused, unavailable).")); err != nil {
		return nil, err
	}
	return p, nil
}

// Evidence wraps an evidence sink so every write is counted and timed:
// a recorded step as one write, a committed batch as one write per
// snapshot, timed once. Staging is passed through (no I/O, nothing to
// count).
func (p *Product) Evidence(sink toolkit.EvidenceSink) toolkit.EvidenceSink {
	return evidenceSink{sink: sink, p: p}
}

type evidenceSink struct {
	sink toolkit.EvidenceSink
	p    *Product
}

func (e evidenceSink) RecordStep(ctx context.Context, s toolkit.Snapshot) (toolkit.Recorded, error) {
	start := time.Now()
	rec, err := e.sink.RecordStep(ctx, s)
	e.observe(ctx, 1, start, err)
	return rec, err
}

func (e evidenceSink) StageStep(s toolkit.Snapshot) (toolkit.Staged, error) {
	return e.sink.StageStep(s)
}

func (e evidenceSink) CommitSteps(ctx context.Context, steps []toolkit.Staged) error {
	start := time.Now()
	err := e.sink.CommitSteps(ctx, steps)
	e.observe(ctx, len(steps), start, err)
	return err
}

// observe counts n snapshots written (or not, err) and times the write.
func (e evidenceSink) observe(ctx context.Context, n int, start time.Time, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	ctx = context.WithoutCancel(ctx)
	e.p.evidenceWrites.Add(ctx, int64(n), metric.WithAttributes(attribute.String("outcome", outcome)))
	e.p.evidenceTime.Record(ctx, time.Since(start).Seconds())
}

// Audit counts one closed audit row; outcome is success, failed or
// rejected (the evidence store calls it).
func (p *Product) Audit(outcome string) {
	p.audits.Add(context.Background(), 1, metric.WithAttributes(attribute.String("outcome", outcome)))
}

// Webhook wraps the webhook receiver: every delivery (a request to path,
// the receiver's one endpoint) is counted by the class of its answer (2xx
// handled, 4xx refused, 5xx unavailable: Stripe retries those). A request
// to any other path (a scanner, a health check, a misconfigured sender) is
// no delivery and is not counted as a refused one.
func (p *Product) Webhook(h http.Handler, path string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			h.ServeHTTP(w, r)
			return
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		outcome := "handled"
		switch {
		case sw.status >= 500:
			outcome = "unavailable"
		case sw.status >= 400:
			outcome = "refused"
		}
		p.webhooks.Add(context.WithoutCancel(r.Context()), 1, metric.WithAttributes(attribute.String("outcome", outcome)))
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// Waiting is what waits on people now, across every worker: read from
// Temporal visibility, so it survives restarts and is not per process.
type Waiting struct {
	// Approvals is the number of running draft orders awaiting a staff
	// decision; OldestApproval the age of the longest waiting (0: none).
	Approvals      int64
	OldestApproval time.Duration
	// Confirmations is the number awaiting the user's confirmation.
	Confirmations int64
}

// WaitingSource reads Waiting (package client counts in visibility).
type WaitingSource func(ctx context.Context) (Waiting, error)

// ObserveWaiting registers the waiting gauges, read from src at most every
// maxAge (a scrape does not hit visibility more often). Call it once, in
// one process per deployment (the worker with the schedules role), so the
// gauges are not summed over replicas.
func (p *Product) ObserveWaiting(src WaitingSource, maxAge time.Duration) error {
	c := &waitingCache{src: src, maxAge: maxAge}
	approvals, err := p.meter.Int64ObservableGauge("approvals_waiting",
		metric.WithDescription("Draft orders awaiting a staff approval now."))
	if err != nil {
		return err
	}
	oldest, err := p.meter.Float64ObservableGauge("approvals_waiting_oldest_age", metric.WithUnit("s"),
		metric.WithDescription("Age of the longest-waiting approval now (0: none)."))
	if err != nil {
		return err
	}
	confirms, err := p.meter.Int64ObservableGauge("confirmations_waiting",
		metric.WithDescription("Draft orders awaiting the user's confirmation now."))
	if err != nil {
		return err
	}
	_, err = p.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		w, ok := c.get(ctx)
		if !ok {
			return nil // no figure rather than a wrong one
		}
		o.ObserveInt64(approvals, w.Approvals)
		o.ObserveFloat64(oldest, w.OldestApproval.Seconds())
		o.ObserveInt64(confirms, w.Confirmations)
		return nil
	}, approvals, oldest, confirms)
	return err
}

type waitingCache struct {
	src    WaitingSource
	maxAge time.Duration
	mu     sync.Mutex
	at     time.Time
	last   Waiting
	ok     bool
}

func (c *waitingCache) get(ctx context.Context) (Waiting, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ok && time.Since(c.at) < c.maxAge {
		return c.last, true
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	w, err := c.src(ctx)
	if err != nil {
		return c.last, c.ok && time.Since(c.at) < 10*c.maxAge
	}
	c.last, c.at, c.ok = w, time.Now(), true
	return w, true
}
