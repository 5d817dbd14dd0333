package draftordertest

import (
	"context"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/draftorder/drafttest"
)

// BenchmarkDraftOrder runs b.N draft orders end to end on the dev server
// with the real tools, PostgreSQL and evidence store: start, quote (three
// tools in parallel), duties, total, the confirm signal sent as soon as the
// status query shows the total, then the draft-order write. It reports
// orders/s and the p50/p99 latency from start to result. Concurrency is
// CARTWRIGHT_BENCH_CONCURRENCY (default 16); CARTWRIGHT_BENCH_CODEC=off
// runs it without the payload codec, to measure its cost;
// CARTWRIGHT_BENCH_TELEMETRY=on with the worker's metrics and tracing on
// (spans to a discarding exporter), to measure theirs. Run it with a
// fixed count:
//
//	go test -run '^$' -bench DraftOrder -benchtime 300x ./workflows/draftordertest/
func BenchmarkDraftOrder(b *testing.B) {
	conc := 16
	if v, err := strconv.Atoi(os.Getenv("CARTWRIGHT_BENCH_CONCURRENCY")); err == nil && v > 0 {
		conc = v
	}
	wopts := worker.Options{MaxConcurrentWorkflowTaskPollers: 4, MaxConcurrentActivityTaskPollers: 8}
	var s *stack
	switch {
	case os.Getenv("CARTWRIGHT_BENCH_CODEC") == "off":
		// Only to measure what the payload codec costs: every process of
		// the project encrypts its payloads.
		s = newStackWith(b, wiringtest.Options{Worker: wopts, MaxConns: 24, Temporal: plainClient(b)})
	case os.Getenv("CARTWRIGHT_BENCH_TELEMETRY") == "on":
		s = newObservedWith(b, tracetest.NewNoopExporter(), wopts).stack
	default:
		s = newStack(b, wopts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	// One order first, so the database, caches and sticky workers are warm.
	if _, _, err := s.oneOrder(ctx, uniqueKey("bench-warm")); err != nil {
		b.Fatal(err)
	}

	lat := make([]time.Duration, b.N)
	toTotal := make([]time.Duration, b.N)
	jobs := make(chan int)
	var wg sync.WaitGroup
	var failMu sync.Mutex
	var failure error
	b.ResetTimer()
	began := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				d, dt, err := s.oneOrder(ctx, uniqueKey("bench"))
				if err != nil {
					failMu.Lock()
					failure = err
					failMu.Unlock()
					continue
				}
				lat[i], toTotal[i] = d, dt
			}
		}()
	}
	for i := 0; i < b.N; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	wall := time.Since(began)
	b.StopTimer()
	if failure != nil {
		b.Fatal(failure)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(b.N)/wall.Seconds(), "orders/s")
	b.ReportMetric(ms(lat[len(lat)/2]), "p50_ms")
	b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*99/100)]), "p99_ms")
	// Time to the published total, the part before the user's confirmation.
	sort.Slice(toTotal, func(i, j int) bool { return toTotal[i] < toTotal[j] })
	b.ReportMetric(ms(toTotal[len(toTotal)/2]), "total_p50_ms")
	b.ReportMetric(float64(conc), "concurrency")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// oneOrder drives one draft order to DRAFT_CREATED and returns its latency
// and the time until its total was published.
func (s *stack) oneOrder(ctx context.Context, key string) (time.Duration, time.Duration, error) {
	start := time.Now()
	run, err := s.startE(ctx, input(key, tshirt))
	if err != nil {
		return 0, 0, err
	}
	// Wait for the total cheaply: DescribeWorkflowExecution is answered by
	// the history service from the run's state (search attributes
	// included), while every status query is a task the worker must poll
	// for, competing with real workflow tasks. Query once it is published.
	var hash string
	wait := 20 * time.Millisecond
	for hash == "" {
		d, err := s.tc.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
		if err != nil {
			return 0, 0, err
		}
		info := d.GetWorkflowExecutionInfo()
		if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return 0, 0, errorf("%s closed (%s) before confirmation", run.GetID(), info.GetStatus())
		}
		var state string
		if p := info.GetSearchAttributes().GetIndexedFields()[workflows.SearchState.GetName()]; p != nil {
			_ = converter.GetDefaultDataConverter().FromPayload(p, &state)
		}
		if state == draftorder.StateNeedsConfirm {
			st, err := s.status(ctx, run.GetID())
			if err != nil {
				return 0, 0, err
			}
			hash = st.Confirmation.QuoteHash
			break
		}
		time.Sleep(wait)
		wait = min(2*wait, 160*time.Millisecond)
	}
	published := time.Since(start)
	if err := s.tc.SignalWorkflow(ctx, run.GetID(), "", draftorder.SignalConfirm, draftorder.ConfirmSignal{QuoteHash: hash}); err != nil {
		return 0, 0, err
	}
	res, err := drafttest.Result(ctx, s.tc, run.GetID())
	if err != nil {
		return 0, 0, err
	}
	if res.State != draftorder.StateDraftCreated {
		return 0, 0, errorf("%s ended in %s: %s", run.GetID(), res.State, res.Message)
	}
	return time.Since(start), published, nil
}

// plainClient dials the test server without the payload codec.
func plainClient(b *testing.B) client.Client {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: testenv.TemporalAddress(), Namespace: "default"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c
}
