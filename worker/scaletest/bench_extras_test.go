package scaletest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	enumspb "go.temporal.io/api/enums/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/worker/scaletest/floor"
)

// TestExperimentExtras prices, on the bench's dev server, what a draft
// order adds to its protocol's floor (docs/performance.md#what-a-draft-order-adds-to-its-protocol):
// `BENCH_TEST=TestExperimentExtras make bench` runs, in rounds, one batch
// of each variant of CARTWRIGHT_EXP_VARIANTS (comma-separated; each a
// "+"-joined set of extras: sa, memo, policy, summary, timer, marker,
// answers, upsert, or "base" for none, or "draft" for real draft orders),
// CARTWRIGHT_EXP_N (200) workflows each at CARTWRIGHT_EXP_INFLIGHT (16),
// the variants' order rotated each round (CARTWRIGHT_EXP_ROUNDS, 3), and
// logs the dev server's and the worker's CPU per workflow of each batch
// and their medians by variant.
func TestExperimentExtras(t *testing.T) {
	spec := os.Getenv("CARTWRIGHT_EXP_VARIANTS")
	if spec == "" || os.Getenv("CARTWRIGHT_BENCH") != "1" {
		t.Skip("BENCH_TEST=TestExperimentExtras CARTWRIGHT_EXP_VARIANTS=base,sa,draft make bench")
	}
	testenv.Integration(t)
	n, c, rounds := envInt("CARTWRIGHT_EXP_N", 200), envInt("CARTWRIGHT_EXP_INFLIGHT", 16), envInt("CARTWRIGHT_EXP_ROUNDS", 3)
	variants := strings.Split(spec, ",")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	var b, other *benchStack
	if slices.Contains(variants, "draft") {
		b = startBenchStack(ctx, t)
	}
	// "draft-other": the same draft orders served by another build's
	// worker (CARTWRIGHT_EXP_OTHER_WORKER, a binary; this build's when
	// unset) or another environment (CARTWRIGHT_EXP_OTHER_ENV, NAME=value
	// separated by spaces), for a change's before and after in one run.
	if slices.Contains(variants, "draft-other") {
		bin := os.Getenv("CARTWRIGHT_EXP_OTHER_WORKER")
		if bin == "" {
			var err error
			if bin, err = workerBinary(); err != nil {
				t.Fatal(err)
			}
		}
		other = startBenchStackBinary(ctx, t, bin, strings.Fields(os.Getenv("CARTWRIGHT_EXP_OTHER_ENV"))...)
	}
	defer func() { // the workers' peak RSS, for a change that trades memory
		for name, s := range map[string]*benchStack{"draft": b, "draft-other": other} {
			if s == nil {
				continue
			}
			if u, err := s.worker.usage(); err == nil {
				t.Logf("%s worker peak RSS %.0f MiB", name, u.PeakRSSMiB)
			}
		}
	}()
	fb := startFloor(ctx, t)
	if f := os.Getenv("CARTWRIGHT_EXP_PIDFILE"); f != "" { // for perf record -p
		pids := fmt.Sprintf("server=%s floor=%d", os.Getenv("CARTWRIGHT_BENCH_SERVER_PID"), fb.worker.cmd.Process.Pid)
		if b != nil {
			pids += fmt.Sprintf(" worker=%d", b.worker.cmd.Process.Pid)
		}
		if err := os.WriteFile(f, []byte(pids+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pgMS := map[string][]float64{}
	run := func(v string, n int) (float64, float64, float64, error) {
		if v == "draft" || v == "draft-other" {
			s := b
			if v == "draft-other" {
				s = other
			}
			by, worker, pg := serverCPU(), procCPU(s.worker.cmd.Process.Pid), pgCPU(ctx, s.pool)
			d, err := runDrafts(ctx, s.cl, n, c, oneLine)
			pgMS[v] = append(pgMS[v], perOrder(pgCPU(ctx, s.pool)-pg, n))
			return d.perSecond(), perOrder(serverCPU()-by, n), perOrder(procCPU(s.worker.cmd.Process.Pid)-worker, n), err
		}
		if strings.Contains(v, "burn") {
			// A neighbour as busy as a draft order's worker and database
			// (about half a core): what sharing the cores costs the server.
			stop := burn(0.5)
			defer stop()
		}
		by, worker := serverCPU(), procCPU(fb.worker.cmd.Process.Pid)
		wall, err := inFlight(n, c, func(int) error { return fb.extras(ctx, v) })
		return float64(n) / wall.Seconds(), perOrder(serverCPU()-by, n), perOrder(procCPU(fb.worker.cmd.Process.Pid)-worker, n), err
	}
	for _, v := range variants {
		if _, _, _, err := run(v, floorWarmup(n)); err != nil {
			t.Fatalf("%s warm-up: %v", v, err)
		}
	}
	server, worker, wps := map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
	for r := 0; r < rounds; r++ {
		for i := range variants {
			v := variants[(i+r)%len(variants)]
			settle()
			began := time.Now()
			s, sc, wc, err := run(v, n)
			if err != nil {
				t.Fatalf("%s: %v", v, err)
			}
			wps[v], server[v], worker[v] = append(wps[v], s), append(server[v], sc), append(worker[v], wc)
			pg := 0.0
			if l := pgMS[v]; len(l) > 0 {
				pg = l[len(l)-1]
			}
			t.Logf("round %d %-40s %6.1f wf/s  server %5.1f ms  worker %5.1f ms  pg %5.1f ms  (load %s) [%d %d]", r+1, v, s, sc, wc, pg, loadAverage(),
				began.UnixMicro(), time.Now().UnixMicro())
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "| variant (median of %d batches of %d at %d in flight) | wf/s | dev server CPU/wf | worker CPU/wf | PostgreSQL CPU/wf |\n|---|---|---|---|---|\n", rounds, n, c)
	for _, v := range variants {
		fmt.Fprintf(&out, "| %s | %.1f | %.1f ms | %.1f ms | %.1f ms |\n", v, median(wps[v]), median(server[v]), median(worker[v]), median(measured(pgMS[v])))
	}
	t.Log("\n" + out.String())
	if f := os.Getenv("CARTWRIGHT_BENCH_OUT"); f != "" {
		if err := os.WriteFile(f, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// pgCPU is the CPU time of the PostgreSQL backends connected to pool's
// database (the worker's, the test's), from /proc: what a draft order
// costs the database.
func pgCPU(ctx context.Context, pool *pgxpool.Pool) time.Duration {
	rows, err := pool.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
	if err != nil {
		return 0
	}
	defer rows.Close()
	var total time.Duration
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) == nil {
			total += procCPU(pid)
		}
	}
	return total
}

// burn keeps share of a core busy (spinning share of every millisecond)
// until the returned func is called.
func burn(share float64) func() {
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			until := time.Now().Add(time.Duration(share * float64(time.Millisecond)))
			for time.Now().Before(until) {
			}
			time.Sleep(time.Duration((1 - share) * float64(time.Millisecond)))
		}
	}()
	return func() { close(done) }
}

// measured drops the warm-up's figure (the first) from a variant's.
func measured(xs []float64) []float64 {
	if len(xs) == 0 {
		return nil
	}
	return xs[1:]
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// extras runs one Floor6LocalConfirmExtras workflow with the extras that
// variant names, driven as confirmFloor drives Floor6LocalConfirm.
func (fb *floorBench) extras(ctx context.Context, variant string) error {
	id := "floor/extras/" + randomHex(8)
	opts := sdkclient.StartWorkflowOptions{ID: id, TaskQueue: fb.queue, WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL}
	var x floor.Extras
	for _, f := range strings.Split(variant, "+") {
		switch f {
		case "base", "burn":
		case "sa":
			opts.TypedSearchAttributes = temporal.NewSearchAttributes(
				temporal.NewSearchAttributeKeyKeyword("CartwrightFlow").ValueSet("draft_order"),
				temporal.NewSearchAttributeKeyKeyword("CartwrightState").ValueSet("NEEDS_USER_CONFIRMATION"),
				temporal.NewSearchAttributeKeyBool("AwaitingApproval").ValueSet(false))
		case "memo":
			opts.Memo = map[string]any{"input_fingerprint": "sha256:" + strings.Repeat("ab", 32)}
		case "policy":
			opts.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
			opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY
		case "summary":
			opts.StaticSummary = "draft order"
			x.Summaries = true
		case "timer":
			x.Timer = true
		case "marker":
			x.MarkerPad = 15000
		case "answers":
			x.AnswerPad = 6500
		case "upsert":
			x.Upsert = true
		default:
			return fmt.Errorf("unknown extra %q", f)
		}
	}
	var total, res floor.Result
	start := fb.client.NewWithStartWorkflowOperation(opts, floor.Floor6LocalConfirmExtras, floor.ExtrasInput{Order: floor.NewOrder(id), Extras: x})
	quote, err := fb.client.UpdateWithStartWorkflow(ctx, sdkclient.UpdateWithStartWorkflowOptions{StartWorkflowOperation: start,
		UpdateOptions: sdkclient.UpdateWorkflowOptions{UpdateName: floor.UpdateQuote, WaitForStage: sdkclient.WorkflowUpdateStageCompleted}})
	if err == nil {
		err = quote.Get(ctx, &total)
	}
	if err != nil {
		return fmt.Errorf("quote %s: %w", id, err)
	}
	confirm, err := fb.client.UpdateWorkflow(ctx, sdkclient.UpdateWorkflowOptions{WorkflowID: id, UpdateName: floor.UpdateConfirm,
		Args: []any{total.Ref}, WaitForStage: sdkclient.WorkflowUpdateStageCompleted})
	if err == nil {
		err = confirm.Get(ctx, &res)
	}
	if err != nil {
		return fmt.Errorf("confirm %s: %w", id, err)
	}
	if res.Step != floor.LastStep || res.OrderID != id {
		return fmt.Errorf("%s answered %+v", id, res)
	}
	return nil
}
