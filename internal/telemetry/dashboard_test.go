package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
)

const dashboardPath = "../../deploy/grafana/dashboards/cartwright.json"

func TestExprMetrics(t *testing.T) {
	got := exprMetrics(`histogram_quantile(0.95, sum by (tool, le) (rate(tool_latency_seconds_bucket{phase!="total"}[5m]))) / max(approvals_waiting) and on (x) foo_total`)
	want := []string{"tool_latency_seconds_bucket", "approvals_waiting", "foo_total"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("exprMetrics = %v, want %v", got, want)
	}
}

// TestDashboardNamesCartwrightMetrics: every cartwright metric the
// dashboard queries is one this package exports once each instrument has
// been used, or one the workflows count (the Temporal SDK's own are
// checked against a real worker's scrape in workflows/draftordertest).
func TestDashboardNamesCartwrightMetrics(t *testing.T) {
	f, err := os.Open(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names, err := DashboardMetrics(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 10 {
		t.Fatalf("the dashboard queries only %v", names)
	}
	fams := scrape(t, exercised(t))
	workflowSide := map[string]bool{
		workflows.MetricDraftOrdersFinished + "_total": true, workflows.MetricReconcileViolations + "_total": true,
	}
	for _, n := range names {
		if strings.HasPrefix(n, "temporal_") || workflowSide[n] {
			continue
		}
		if Family(fams, n) == "" {
			t.Errorf("the dashboard queries %s, which is not exported", n)
		}
	}
}

// exercised is a telemetry whose every instrument has recorded once.
func exercised(t *testing.T) *Telemetry {
	t.Helper()
	tel, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, done := tel.Tools.Call(context.Background(), "quote_tax")
	_, phase := tel.Tools.Phase(ctx, "quote_tax", toolkit.PhasePreflight)
	phase(nil)
	done(toolkit.Outcome{Tool: "quote_tax", Status: toolkit.StatusError, Code: toolkit.Forbidden, Denied: true, BytesIn: 10, BytesOut: 10})
	if _, err := tel.Product.Evidence(toolkit.DiscardEvidence{}).RecordStep(context.Background(), toolkit.Snapshot{}); err != nil {
		t.Fatal(err)
	}
	tel.Product.Audit("success")
	tel.Product.Webhook(http.NotFoundHandler(), "/webhooks/stripe").ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/webhooks/stripe", nil))
	if err := tel.Product.ObserveWaiting(func(context.Context) (Waiting, error) { return Waiting{}, nil }, 0); err != nil {
		t.Fatal(err)
	}
	return tel
}
