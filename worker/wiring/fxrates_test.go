package wiring_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/client/schedules"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows/maintenance"
)

// The exchange-rate feed end to end (docs/operators.md#exchange-rates): a
// local server serves the recorded ECB feed, the worker's schedule runs
// FetchFXRates, which stores the day; prices then cite its date in their
// answer and evidence, and refuse it once it is older than the allowed
// age. A hostile feed served next is refused: the run completes with that
// outcome (no failed run) and stores nothing.
func TestFXFeedScheduleStoresAndPricesCiteTheDate(t *testing.T) {
	recorded, err := os.ReadFile("../../commerce/fxrates/testdata/eurofxref-daily-2024-12-31.xml")
	if err != nil {
		t.Fatal(err)
	}
	var body atomic.Value
	body.Store(string(recorded))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/xml")
		_, _ = w.Write([]byte(body.Load().(string)))
	}))
	defer srv.Close()
	fresh := time.Date(2025, 1, 2, 10, 0, 0, 0, time.UTC)
	feedURL := func(c *config.Config) { c.FXFeedURL = srv.URL + "/stats/eurofxref/eurofxref-daily.xml" }
	s := wiringtest.StartWith(t, wiringtest.Options{Clock: func() time.Time { return fresh }, Configure: feedURL})
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()

	// Before the first read prices are refused, never taken from the
	// shipped table.
	var calls atomic.Int64
	quote := func(inv *toolkit.Invoker) (commerce.Quote, *toolkit.Response, error) {
		n := calls.Add(1)
		req := toolkit.Request{RequestID: fmt.Sprintf("req-fx-%d", n), Actor: toolkit.Actor{Type: toolkit.ActorSystem, ID: "fx-test"},
			UserID: "u_fx", CorrelationID: fmt.Sprintf("corr-%016x", 0xf000000000000000+uint64(n))}
		resp, err := inv.Invoke(ctx, commerce.ToolGetQuote, req, commerce.GetQuoteArgs{
			Items: []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}, Currency: "EUR"})
		var q commerce.Quote
		if err == nil {
			err = resp.Decode(&q)
		}
		return q, resp, err
	}
	if _, _, err := quote(s.Deps.Invoker); toolkit.AsError(err).Code != toolkit.UpstreamError {
		t.Fatalf("before the first read: %v", err)
	}

	id := "test-fx-" + s.TaskQueue
	t.Cleanup(func() {
		_ = s.Temporal.ScheduleClient().GetHandle(context.Background(), id).Delete(context.Background())
	})
	if err := schedules.EnsureFXRatesSchedule(ctx, s.Temporal, schedules.FXRatesSchedule{ID: id, TaskQueue: s.TaskQueue, Every: time.Hour}); err != nil {
		t.Fatal(err)
	}
	h := s.Temporal.ScheduleClient().GetHandle(ctx, id)
	run := func(n int) client.WorkflowRun {
		t.Helper()
		if err := h.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
			t.Fatal(err)
		}
		for {
			desc, err := h.Describe(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if acts := desc.Info.RecentActions; len(acts) >= n {
				a := acts[len(acts)-1].StartWorkflowResult
				return s.Temporal.GetWorkflow(ctx, a.WorkflowID, a.FirstExecutionRunID)
			}
			select {
			case <-ctx.Done():
				t.Fatalf("the schedule started no run #%d", n)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	var res maintenance.FetchFXRatesResult
	if err := run(1).Get(ctx, &res); err != nil || res.Outcome != maintenance.FXRatesStored || res.Stored.Latest != "2024-12-31" {
		t.Fatalf("fetch run: %v %+v", err, res)
	}

	q, resp, err := quote(s.Deps.Invoker)
	if err != nil {
		t.Fatal(err)
	}
	if q.FXRates == nil || q.FXRates.Source != commerce.FXSourceFeed || q.FXRates.Date != "2024-12-31" {
		t.Fatalf("quote rates %+v", q.FXRates)
	}
	snap, err := s.Store.Get(ctx, resp.SnapshotID())
	if err != nil {
		t.Fatal(err)
	}
	var kept commerce.Quote
	if err := json.Unmarshal(snap.Output, &kept); err != nil || kept.FXRates == nil || *kept.FXRates != *q.FXRates ||
		!strings.HasPrefix(snap.RulesetVersion, "fx-ecb-2024-12-31+") {
		t.Errorf("evidence %s %s", snap.RulesetVersion, snap.Output)
	}

	// A caller who may start workflows cannot point the fetch elsewhere:
	// the URL is configuration, an input naming another is ignored.
	var evilHits atomic.Int64
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { evilHits.Add(1) }))
	defer evil.Close()
	forged, err := s.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "test-fx-forged-" + s.TaskQueue, TaskQueue: s.TaskQueue},
		maintenance.FetchFXRatesWorkflowName, map[string]any{"url": evil.URL, "feed_url": evil.URL, "URL": evil.URL})
	if err != nil {
		t.Fatal(err)
	}
	if err := forged.Get(ctx, &res); err != nil || res.Outcome != maintenance.FXRatesStored || res.Stored.Source != strings.TrimSuffix(srv.URL, "/")+"/stats/eurofxref/eurofxref-daily.xml" {
		t.Fatalf("forged input: %v %+v", err, res)
	}
	if evilHits.Load() != 0 {
		t.Fatalf("the worker fetched the URL an input named (%d requests)", evilHits.Load())
	}

	// Ten days on, with no newer day: UPSTREAM_ERROR naming the date.
	_, stale := s.AddWorker(t, wiringtest.Options{Clock: func() time.Time { return fresh.AddDate(0, 0, 8) }, Configure: feedURL})
	_, _, err = quote(stale.Invoker)
	if te := toolkit.AsError(err); te.Code != toolkit.UpstreamError || te.Details["rate_date"] != "2024-12-31" || !strings.Contains(te.Message, "2024-12-31") {
		t.Fatalf("stale: %+v", te)
	}

	// A hostile feed (a new day with a negative rate): the run fails and
	// nothing is stored.
	body.Store(strings.Replace(strings.Replace(string(recorded), "time='2024-12-31'", "time='2025-01-02'", 1), "rate='1.0389'", "rate='-1.0389'", 1))
	if err := run(2).Get(ctx, &res); err != nil || res.Outcome != maintenance.FXRatesRefused || res.Error == nil ||
		res.Error.Code != toolkit.UpstreamError || res.Error.Details["upstream_code"] != "fx_feed_refused" {
		t.Fatalf("hostile run: %v %+v", err, res)
	}
	var days int
	if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM fx_rate_days`).Scan(&days); err != nil || days != 1 {
		t.Fatalf("days %d (%v)", days, err)
	}
}
