package telemetry

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// scrape serves /metrics and parses the text as Prometheus does.
func scrape(t *testing.T, tel *Telemetry) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	tel.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	fams, err := Parse(rec.Body)
	if err != nil {
		t.Fatalf("the /metrics text does not parse: %v\n%s", err, rec.Body.String())
	}
	return fams
}

func TestToolMetricsAndSpans(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tel, err := New(context.Background(), Options{Service: "test", SpanExporter: spans})
	if err != nil {
		t.Fatal(err)
	}
	ctx, done := tel.Tools.Call(context.Background(), "quote_tax")
	_, phase := tel.Tools.Phase(ctx, "quote_tax", toolkit.PhaseExec)
	phase(nil)
	done(toolkit.Outcome{Tool: "quote_tax", Status: toolkit.StatusOK, Origin: toolkit.ActorAgent, BytesIn: 100, BytesOut: 300})
	_, done = tel.Tools.Call(context.Background(), "no_such_tool")
	done(toolkit.Outcome{Tool: toolkit.UnregisteredTool, Status: toolkit.StatusError, Code: toolkit.NotFound, Denied: true, Origin: "robot"})

	fams := scrape(t, tel)
	if got := Sum(fams, "tool_invocations_total", map[string]string{"tool": "quote_tax", "status": "ok", "code": "", "origin": "agent"}); got != 1 {
		t.Errorf("tool_invocations_total for quote_tax = %v, want 1", got)
	}
	if got := Sum(fams, "tool_denied_total", map[string]string{"tool": "unregistered", "code": "NOT_FOUND"}); got != 1 {
		t.Errorf("tool_denied_total = %v, want 1", got)
	}
	if got := Sum(fams, "tool_invocations_total", map[string]string{"origin": "other"}); got != 1 {
		t.Errorf("an unknown actor type is not bounded to origin=other: %v", got)
	}
	if got := Sum(fams, "tool_errors_total", map[string]string{"code": "NOT_FOUND"}); got != 1 {
		t.Errorf("tool_errors_total = %v, want 1", got)
	}
	if got := Count(fams, "tool_latency_seconds", map[string]string{"tool": "quote_tax", "phase": "exec"}); got != 1 {
		t.Errorf("tool_latency_seconds{phase=exec} count = %v, want 1", got)
	}
	if got := Sum(fams, "tool_payload_bytes", map[string]string{"tool": "quote_tax", "dir": "out"}); got != 300 {
		t.Errorf("tool_payload_bytes{dir=out} sum = %v, want 300", got)
	}
	got := spans.GetSpans()
	if len(got) != 3 {
		t.Fatalf("want 3 spans (two calls, one phase), got %d", len(got))
	}
	if got[0].Name != "tool.exec" || got[0].Parent.SpanID() != got[1].SpanContext.SpanID() {
		t.Errorf("the phase span is not the call span's child: %+v", got[0])
	}
	if got[1].Name != "tool quote_tax" || got[2].Name != "tool unregistered" {
		t.Errorf("call spans are named %q and %q", got[1].Name, got[2].Name)
	}
	if id := tel.Tools.TraceID(ctx); id != got[1].SpanContext.TraceID().String() || len(id) != 32 {
		t.Errorf("TraceID = %q", id)
	}
}

func TestTracesConfigured(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, false},
	}
	for _, c := range cases {
		if got := tracesConfigured(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: tracing %v, want %v", c.env, got, c.want)
		}
	}
}

func TestWebhookOutcomes(t *testing.T) {
	tel, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []int{200, 400, 400, 503} {
		h := tel.Product.Webhook(httpStatus(code), "/webhooks/stripe")
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/webhooks/stripe", nil))
	}
	// Requests to other paths are no deliveries: a 404 for /wp-login.php
	// or a health check is not a refused delivery.
	for _, path := range []string{"/", "/wp-login.php", "/webhooks/stripe/x", "/healthz"} {
		tel.Product.Webhook(httpStatus(404), "/webhooks/stripe").ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", path, nil))
	}
	fams := scrape(t, tel)
	for outcome, want := range map[string]float64{"handled": 1, "refused": 2, "unavailable": 1} {
		if got := Sum(fams, "webhook_events_total", map[string]string{"outcome": outcome}); got != want {
			t.Errorf("webhook_events_total{outcome=%s} = %v, want %v", outcome, got, want)
		}
	}
}

func TestWaitingGaugesKeepLastGoodFigure(t *testing.T) {
	tel, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	fail := false
	calls := 0
	err = tel.Product.ObserveWaiting(func(context.Context) (Waiting, error) {
		calls++
		if fail {
			return Waiting{}, errors.New("visibility down")
		}
		return Waiting{Approvals: 2, Confirmations: 3, OldestApproval: 90e9}, nil
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, tel)
	if Sum(fams, "approvals_waiting", nil) != 2 || Sum(fams, "confirmations_waiting", nil) != 3 ||
		Sum(fams, "approvals_waiting_oldest_age_seconds", nil) != 90 {
		t.Errorf("waiting gauges wrong: %v %v %v", Sum(fams, "approvals_waiting", nil),
			Sum(fams, "confirmations_waiting", nil), Sum(fams, "approvals_waiting_oldest_age_seconds", nil))
	}
	fail = true
	fams = scrape(t, tel)
	if _, ok := fams["approvals_waiting"]; ok {
		t.Error("a figure is reported although visibility failed and the last one is stale")
	}
	if calls != 2 {
		t.Errorf("source read %d times, want 2", calls)
	}
}

type httpStatus int

func (s httpStatus) ServeHTTP(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(int(s)) }

// stepSink keeps the first answer of each step, like the evidence store.
type stepSink struct {
	toolkit.Unstaged
	first map[string]toolkit.Recorded
}

func (s *stepSink) RecordStep(_ context.Context, snap toolkit.Snapshot) (toolkit.Recorded, error) {
	key := snap.Call.WorkflowID + "/" + snap.Call.ActivityID
	if rec, ok := s.first[key]; ok {
		rec.Reused = true
		return rec, nil
	}
	rec := toolkit.Recorded{SnapshotID: "ev_" + key, Output: snap.Output, OutputHash: snap.OutputHash, Status: snap.Status}
	s.first[key] = rec
	return rec, nil
}

// The evidence wrapper must not hide the store's steps: a step recorded
// again answers with its stored answer (the SIGKILL bench found a re-run
// local activity whose history disagreed with its evidence when it did).
func TestEvidenceWrapperKeepsSteps(t *testing.T) {
	tel, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	sr := tel.Product.Evidence(&stepSink{first: map[string]toolkit.Recorded{}})
	call := toolkit.Snapshot{Tool: "t", ToolVersion: "1", Status: toolkit.StatusOK}
	call.Call.WorkflowID, call.Call.ActivityID = "wf", "1"
	first, second := call, call
	first.Output, second.Output = []byte(`{"at":1}`), []byte(`{"at":2}`)
	if _, err := sr.RecordStep(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	rec, err := sr.RecordStep(context.Background(), second)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Reused || string(rec.Output) != `{"at":1}` {
		t.Errorf("second record of the step = %+v, want the first answer, reused", rec)
	}
	if got := Sum(scrape(t, tel), "evidence_writes_total", map[string]string{"outcome": "ok"}); got != 2 {
		t.Errorf("evidence_writes_total{outcome=ok} = %v, want 2", got)
	}
}

// stageSink is a stepSink that stages too: a commit keeps the staged steps.
type stageSink struct {
	stepSink
	committed []toolkit.Snapshot
}

type stagedStep struct{ snap toolkit.Snapshot }

func (s stagedStep) SnapshotID() string { return "ev_staged_" + s.snap.Call.ActivityID }

func (s *stageSink) StageStep(snap toolkit.Snapshot) (toolkit.Staged, error) {
	return stagedStep{snap}, nil
}

func (s *stageSink) CommitSteps(_ context.Context, steps []toolkit.Staged) error {
	for _, st := range steps {
		s.committed = append(s.committed, st.(stagedStep).snap)
	}
	return nil
}

// The evidence wrapper must not hide staging either (docs/evidence.md#staged-batches),
// and the wrapper of a sink that cannot stage must say so.
func TestEvidenceWrapperKeepsStaging(t *testing.T) {
	tel, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	inner := &stageSink{stepSink: stepSink{first: map[string]toolkit.Recorded{}}}
	st := tel.Product.Evidence(inner)
	snap := toolkit.Snapshot{Tool: "t", ToolVersion: "1", Status: toolkit.StatusOK}
	var steps []toolkit.Staged
	for _, id := range []string{"1", "2", "3"} {
		snap.Call.WorkflowID, snap.Call.ActivityID = "wf", id
		s, err := st.StageStep(snap)
		if err != nil || s.SnapshotID() != "ev_staged_"+id {
			t.Fatalf("stage %s: %v %v", id, s, err)
		}
		steps = append(steps, s)
	}
	if err := st.CommitSteps(context.Background(), steps); err != nil || len(inner.committed) != 3 {
		t.Fatalf("commit: %v, %d committed", err, len(inner.committed))
	}
	if got := Sum(scrape(t, tel), "evidence_writes_total", map[string]string{"outcome": "ok"}); got != 3 {
		t.Errorf("evidence_writes_total{outcome=ok} = %v, want 3", got)
	}
	if _, err := tel.Product.Evidence(&stepSink{first: map[string]toolkit.Recorded{}}).StageStep(snap); !errors.Is(err, toolkit.ErrNotStaged) {
		t.Errorf("the wrapper of a sink that cannot stage claims it can (%v)", err)
	}
}
