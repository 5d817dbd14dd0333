package draftordertest

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	cwclient "github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/telemetry"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/support/sealtest"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/draftorder/drafttest"
)

// observed is a stack whose worker reports to telemetry of the test's own
// (metrics on a registry of its own, spans into memory), as the worker
// binary reports to its /metrics and OTLP.
type observed struct {
	*stack
	tel   *telemetry.Telemetry
	spans *tracetest.InMemoryExporter
	deps  *wiringtest.Stack
	so    sdkclient.Options
}

func newObserved(t *testing.T) *observed {
	t.Helper()
	spans := tracetest.NewInMemoryExporter()
	o := newObservedWith(t, spans, worker.Options{})
	o.spans = spans
	return o
}

// newObservedWith is an observed stack exporting its spans to spans, with
// the worker's options wopts.
func newObservedWith(t testing.TB, spans sdktrace.SpanExporter, wopts worker.Options) *observed {
	t.Helper()
	testenv.Integration(t)
	tel, err := telemetry.New(context.Background(), telemetry.Options{Service: "test", SpanExporter: spans})
	if err != nil {
		t.Fatal(err)
	}
	so := sdkclient.Options{HostPort: testenv.TemporalAddress(), Namespace: "default"}
	codec.Apply(&so, codectest.Codec())
	if err := cwclient.Instrument(&so, tel.Meters, tel.Tracers); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(20*time.Second))
	defer cancel()
	tc, err := sdkclient.DialContext(ctx, so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	ws := wiringtest.StartWith(t, wiringtest.Options{Worker: wopts, MaxConns: 24, Temporal: tc, Telemetry: tel})
	s := &stack{t: t, pool: ws.Pool, store: ws.Store, tc: ws.Temporal, queue: ws.TaskQueue, specs: ws.Deps.Registry.Specs()}
	return &observed{stack: s, tel: tel, deps: ws, so: so}
}

// scrape reads /metrics as Prometheus would, through expfmt.
func (o *observed) scrape() map[string]*dto.MetricFamily {
	o.t.Helper()
	rec := httptest.NewRecorder()
	o.tel.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	fams, err := telemetry.Parse(rec.Body)
	if err != nil {
		o.t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// TestOneDraftOrderOneTrace: a draft order started with the caller's W3C
// traceparent in its envelope is one trace, from the caller's span through
// the start, the workflow, every activity and every tool phase, and every
// evidence row of the run holds that trace id.
func TestOneDraftOrderOneTrace(t *testing.T) {
	o := newObserved(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	c, err := cwclient.New(ctx, cwclient.Options{Temporal: o.so, TaskQueue: o.queue})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	rctx, root := o.tel.Tracers.Tracer("agent").Start(ctx, "agent request")
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(rctx, carrier)
	traceID := root.SpanContext().TraceID()

	in := input(uniqueKey("e2e-trace"), tshirt)
	in.Request.Trace.Traceparent = carrier["traceparent"]
	// The start is given a bare context: the trace travels in the envelope.
	h, err := c.StartDraftOrder(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	st := o.awaitState(ctx, h.WorkflowID, draftorder.StateNeedsConfirm)
	// The user's confirmation belongs to the same request flow.
	if err := c.Confirm(rctx, h.WorkflowID, st.Confirmation.QuoteHash); err != nil {
		t.Fatal(err)
	}
	// (asked within the request's trace: the ask is the request's too)
	if res, err := drafttest.Result(rctx, o.tc, h.WorkflowID); err != nil || res.State != draftorder.StateDraftCreated {
		t.Fatalf("result %+v, %v", res, err)
	}
	// The run's span lasts as long as the run, which holds the written
	// draft: the user's cancel, in the same request flow, ends both.
	if _, err := c.CancelOrder(rctx, h.WorkflowID, "trace test over"); err != nil {
		t.Fatal(err)
	}
	if err := o.tc.GetWorkflow(ctx, h.WorkflowID, "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	root.End()

	got := o.spans.GetSpans()
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	names := map[string]int{}
	for _, s := range got.Snapshots() {
		if s.SpanContext().TraceID() != traceID {
			t.Errorf("span %q is in trace %s, not the request's %s", s.Name(), s.SpanContext().TraceID(), traceID)
		}
		byID[s.SpanContext().SpanID()] = s
		names[prefix(s.Name())]++
	}
	// The client starts with Update-with-Start and confirms with an
	// update: both are in the trace, with the workflow's side.
	for _, want := range []string{"UpdateWithStartWorkflow", "RunWorkflow", "StartActivity", "RunActivity",
		"UpdateWorkflow", "HandleUpdate",
		"tool", "tool.preflight", "tool.exec", "tool.validate", "tool.sanitize", "tool.evidence"} {
		if names[want] == 0 {
			t.Errorf("no %s span (spans: %v)", want, names)
		}
	}
	// Every span but the caller's has its parent in the trace: nothing
	// hangs loose.
	for _, s := range got.Snapshots() {
		if s.SpanContext().SpanID() == root.SpanContext().SpanID() {
			continue
		}
		parent, ok := byID[s.Parent().SpanID()]
		if !ok {
			t.Errorf("span %q has a parent outside the trace", s.Name())
			continue
		}
		switch prefix(s.Name()) {
		case "tool":
			// A read-only tool may run as a local activity.
			if p := prefix(parent.Name()); p != "RunActivity" && p != "RunLocalActivity" {
				t.Errorf("span %q is under %q, want the activity that ran it", s.Name(), parent.Name())
			}
		case "tool.exec", "tool.evidence":
			if prefix(parent.Name()) != "tool" {
				t.Errorf("span %q is under %q, want its tool call", s.Name(), parent.Name())
			}
		}
	}
	// The origin choice, pricing, compliance, the total, the write and
	// the cancel's release of the stock.
	if names["tool"] != 6 {
		t.Errorf("%d tool spans, want the 6 calls of the order", names["tool"])
	}

	rows, err := o.store.SnapshotsForWorkflow(ctx, h.WorkflowID)
	if err != nil || len(rows) != 6 {
		t.Fatalf("%d evidence rows, %v", len(rows), err)
	}
	for _, r := range rows {
		if r.TraceID != traceID.String() {
			t.Errorf("snapshot %s (%s) holds trace %q, want %s", r.SnapshotID, r.Tool, r.TraceID, traceID)
		}
	}
	back, err := o.store.SnapshotsForTrace(ctx, traceID.String())
	if err != nil || len(back) != len(rows) {
		t.Fatalf("from the trace back to its evidence: %d rows, %v", len(back), err)
	}
	o.replay(ctx, h.WorkflowID, h.RunID)
}

// prefix is a span name up to its first ':' or ' ' ("RunActivity:…",
// "tool quote_tax").
func prefix(name string) string {
	if i := strings.IndexAny(name, ": "); i >= 0 {
		return name[:i]
	}
	return name
}

// TestMetricsCountWhatRan runs three draft orders on the real stack — one
// created, one refused by compliance, one through a staff approval with a
// refused approver first — and checks /metrics moved by exactly what ran:
// each tool's invocations by status and code against the evidence rows,
// phases against invocations, evidence writes and audit results against
// the database, draft orders by final state, the waiting gauges while the
// approval and the confirmation wait; and that no label holds a user id,
// a name, an address or an id.
func TestMetricsCountWhatRan(t *testing.T) {
	o := newObserved(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(3*time.Minute))
	defer cancel()
	if err := o.deps.Deps.ObserveWaiting(0); err != nil {
		t.Fatal(err)
	}

	created := input(uniqueKey("e2e-metrics"), tshirt)
	run := o.start(ctx, created)
	st := o.awaitState(ctx, run.GetID(), draftorder.StateNeedsConfirm)
	o.awaitGauge(ctx, "confirmations_waiting", 1)
	o.confirm(ctx, run.GetID(), st.Confirmation.QuoteHash)
	o.result(ctx, run, draftorder.StateDraftCreated)

	blocked := input(uniqueKey("e2e-metrics-blocked"), tshirt)
	blocked.ShipTo = commerce.Address{Name: "A. Person", Line1: "1 Street", City: "Tehran", Country: "IR"}
	blockedRun := o.start(ctx, blocked)
	o.result(ctx, blockedRun, draftorder.StateComplianceBlocked)

	approved := input(uniqueKey("e2e-metrics-approval"), perfume)
	approved.ShipTo = commerce.Address{Name: "Jean Dupont", Line1: "12 Rue de Rivoli", City: "Paris", PostalCode: "75001", Country: "FR"}
	approved.ShippingService = commerce.ServiceExpress
	approvalRun := o.start(ctx, approved)
	st = o.awaitState(ctx, approvalRun.GetID(), draftorder.StateAwaitingApproval)
	o.awaitGauge(ctx, "approvals_waiting", 1)
	if age := telemetry.Sum(o.scrape(), "approvals_waiting_oldest_age_seconds", nil); age <= 0 {
		t.Errorf("the waiting approval has age %v", age)
	}
	for _, approver := range []string{"dave.former", "bob.compliance"} {
		sig := approval.SignalOf(sealtest.Seal(t, approver, support.Decision{ApprovalID: st.Approvals.Pending.ApprovalID, Decision: "approve", Reason: "limited quantity"}))
		if err := o.tc.SignalWorkflow(ctx, approvalRun.GetID(), "", approval.SignalApproval, sig); err != nil {
			t.Fatal(err)
		}
	}
	st = o.awaitState(ctx, approvalRun.GetID(), draftorder.StateNeedsConfirm)
	o.awaitGauge(ctx, "approvals_waiting", 0)
	o.confirm(ctx, approvalRun.GetID(), st.Confirmation.QuoteHash)
	o.result(ctx, approvalRun, draftorder.StateDraftCreated)
	o.awaitGauge(ctx, "confirmations_waiting", 0)

	fams := o.scrape()
	ids := []string{run.GetID(), blockedRun.GetID(), approvalRun.GetID()}
	o.checkToolCounts(ctx, fams, ids)
	o.checkAudits(ctx, fams, ids)
	for state, want := range map[string]float64{draftorder.StateDraftCreated: 2, draftorder.StateComplianceBlocked: 1} {
		if got := telemetry.Sum(fams, "draft_orders_finished_total", map[string]string{"state": state}); got != want {
			t.Errorf("draft_orders_finished_total{state=%s} = %v, want %v", state, got, want)
		}
	}
	// The Temporal SDK's own metrics come through the same endpoint.
	for _, name := range []string{"temporal_workflow_task_schedule_to_start_latency_seconds",
		"temporal_activity_schedule_to_start_latency_seconds", "temporal_workflow_task_execution_latency_seconds"} {
		if telemetry.Count(fams, name, nil) == 0 {
			t.Errorf("no %s observations", name)
		}
	}
	// The blocked order completed; the two written drafts' runs hold them.
	if got := telemetry.Sum(fams, "temporal_workflow_completed_total", map[string]string{"task_queue": o.queue}); got != 1 {
		t.Errorf("temporal_workflow_completed_total = %v, want 1", got)
	}
	checkDashboard(t, fams)
	checkNoPII(t, fams, []string{"u_e2e", "Erika", "Mustermann", "Invalidenstrasse", "10115", "Berlin", "Jean", "Dupont",
		"Rivoli", "Tehran", "req-", "e2e-metrics", "corr-", "ev_"}, ids)
}

func (o *observed) confirm(ctx context.Context, id, hash string) {
	o.t.Helper()
	if err := o.tc.SignalWorkflow(ctx, id, "", draftorder.SignalConfirm, draftorder.ConfirmSignal{QuoteHash: hash}); err != nil {
		o.t.Fatal(err)
	}
}

func (o *observed) result(ctx context.Context, run sdkclient.WorkflowRun, state string) {
	o.t.Helper()
	if res, err := drafttest.Result(ctx, o.tc, run.GetID()); err != nil || res.State != state {
		o.t.Fatalf("%s: %+v, %v; want %s", run.GetID(), res, err, state)
	}
}

// awaitGauge scrapes until gauge name reads want (visibility catches up
// with the run's search attributes shortly after they change).
func (o *observed) awaitGauge(ctx context.Context, name string, want float64) {
	o.t.Helper()
	for {
		got := telemetry.Sum(o.scrape(), name, nil)
		if got == want {
			return
		}
		select {
		case <-ctx.Done():
			o.t.Fatalf("%s stayed %v, want %v", name, got, want)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// checkToolCounts: tool_invocations_total per tool, status and code is
// exactly the evidence rows of the runs (every call, refusals included,
// has one), each call that ran has one exec phase and each that did not
// is counted denied, and evidence writes match the rows.
func (o *observed) checkToolCounts(ctx context.Context, fams map[string]*dto.MetricFamily, ids []string) {
	o.t.Helper()
	type key struct{ tool, status, code string }
	want := map[key]float64{}
	rows := 0
	for _, id := range ids {
		snaps, err := o.store.SnapshotsForWorkflow(ctx, id)
		if err != nil {
			o.t.Fatal(err)
		}
		for _, s := range snaps {
			k := key{tool: s.Tool, status: s.Status}
			if s.Status == string(toolkit.StatusError) {
				var e toolkit.Error
				if err := json.Unmarshal(s.Output, &e); err != nil {
					o.t.Fatal(err)
				}
				k.code = string(e.Code)
			}
			want[k]++
			rows++
		}
	}
	var calls, ran, denied float64
	for k, n := range want {
		got := telemetry.Sum(fams, "tool_invocations_total", map[string]string{"tool": k.tool, "status": k.status, "code": k.code, "origin": "user"})
		if got != n {
			o.t.Errorf("tool_invocations_total{tool=%s,status=%s,code=%s} = %v, want %v (evidence rows)", k.tool, k.status, k.code, got, n)
		}
	}
	for _, m := range telemetry.Select(fams, "tool_invocations_total", nil) {
		calls += m.GetCounter().GetValue()
	}
	if calls != float64(rows) {
		o.t.Errorf("tool_invocations_total sums to %v, the runs have %d evidence rows", calls, rows)
	}
	ran = float64(telemetry.Count(fams, "tool_latency_seconds", map[string]string{"phase": "exec"}))
	denied = telemetry.Sum(fams, "tool_denied_total", nil)
	if ran+denied != calls || ran == 0 {
		o.t.Errorf("%v calls ran (exec phase) and %v were denied, of %v calls", ran, denied, calls)
	}
	if n := telemetry.Count(fams, "tool_latency_seconds", map[string]string{"phase": "total"}); float64(n) != calls {
		o.t.Errorf("tool_latency_seconds{phase=total} observed %d calls, want %v", n, calls)
	}
	if got := telemetry.Sum(fams, "evidence_writes_total", map[string]string{"outcome": "ok"}); got != float64(rows) {
		o.t.Errorf("evidence_writes_total{outcome=ok} = %v, want %d rows", got, rows)
	}
	if got := telemetry.Sum(fams, "tool_errors_total", nil); got != calls-telemetry.Sum(fams, "tool_invocations_total", map[string]string{"code": ""}) {
		o.t.Errorf("tool_errors_total = %v does not count the failed calls", got)
	}
}

// checkAudits: audit_results_total by outcome is what the runs closed in
// audit_events.
func (o *observed) checkAudits(ctx context.Context, fams map[string]*dto.MetricFamily, ids []string) {
	o.t.Helper()
	rows, err := o.pool.Query(ctx, `SELECT CASE WHEN action = 'reject' THEN 'rejected' ELSE status END, count(*)
		FROM audit_events WHERE workflow_id = ANY($1) AND status <> 'pending' GROUP BY 1`, ids)
	if err != nil {
		o.t.Fatal(err)
	}
	defer rows.Close()
	total := 0
	for rows.Next() {
		var outcome string
		var n int
		if err := rows.Scan(&outcome, &n); err != nil {
			o.t.Fatal(err)
		}
		total += n
		if got := telemetry.Sum(fams, "audit_results_total", map[string]string{"outcome": outcome}); got != float64(n) {
			o.t.Errorf("audit_results_total{outcome=%s} = %v, want %d", outcome, got, n)
		}
	}
	if total == 0 || telemetry.Sum(fams, "audit_results_total", nil) != float64(total) {
		o.t.Errorf("audit_results_total sums to %v, audit_events has %d closed rows", telemetry.Sum(fams, "audit_results_total", nil), total)
	}
}

// checkDashboard: every Temporal SDK metric the dashboard queries is in a
// real worker's scrape (cartwright's own are checked in internal/telemetry).
func checkDashboard(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	f, err := os.Open("../../deploy/grafana/dashboards/cartwright.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names, err := telemetry.DashboardMetrics(f)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range names {
		if !strings.HasPrefix(name, "temporal_") {
			continue
		}
		n++
		if telemetry.Family(fams, name) == "" {
			t.Errorf("the dashboard queries %s, which the worker does not export", name)
		}
	}
	if n == 0 {
		t.Error("the dashboard queries no Temporal SDK metric")
	}
}

// checkNoPII: no label value of any metric holds personal data or an id.
func checkNoPII(t *testing.T, fams map[string]*dto.MetricFamily, needles, ids []string) {
	t.Helper()
	needles = append(needles, ids...)
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				for _, n := range needles {
					if strings.Contains(l.GetValue(), n) {
						t.Errorf("%s{%s=%q} holds %q", name, l.GetName(), l.GetValue(), n)
					}
				}
			}
		}
	}
}
