package scaletest

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/client/clienttest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/worker/scaletest/floor"
)

// floorFigures is one variant's batch on the bench's server.
type floorFigures struct {
	OK  int
	WPS float64 // workflows per second over the batch's wall time
	// P50 and P99 are start → result of one workflow, in ms.
	P50, P99 float64
	// Events is the history length of one workflow of the batch.
	Events int64
	// WorkerCPU and ServerCPU are the floor worker's and the dev server's
	// CPU per workflow (ms) while the batch ran, from /proc, measured the
	// way the draft orders' are.
	WorkerCPU, ServerCPU float64
	// Services is ServerCPU by process of a cluster (benchServices).
	Services map[string]float64
}

// floorBench is the floor's side of a bench run: its worker process (the
// floor/floorworker command, built from this repository) on a task queue
// of its own, and a plain SDK client on the same server.
type floorBench struct {
	worker *proc
	client sdkclient.Client
	queue  string
}

// startFloor builds floor/floorworker, starts it on the bench's server
// with the pollers our worker has, and waits until it polls.
func startFloor(ctx context.Context, t *testing.T) *floorBench {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "floorworker")
	build := exec.Command("go", "build", "-o", bin, "github.com/cartwright-dev/cartwright/worker/scaletest/floor/floorworker")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build floorworker: %v\n%s", err, out)
	}
	queue := "floor-" + randomHex(6)
	p := &proc{name: "floor", roles: "Floor6, Floor6Local, Floor6LocalConfirm"}
	p.start(t, exec.Command(bin, "-addr", testenv.TemporalAddress(), "-task-queue", queue,
		"-workflow-pollers", "4", "-activity-pollers", "4"), temporalTLSEnv())
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(p.tail(4096), "READY") {
		if p.exited() || time.Now().After(deadline) {
			t.Fatalf("the floor worker did not start polling:\n%s", p.tail(4096))
		}
		time.Sleep(20 * time.Millisecond)
	}
	tlsCfg, err := clienttest.TLSFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	c, err := sdkclient.DialContext(ctx, sdkclient.Options{HostPort: testenv.TemporalAddress(),
		ConnectionOptions: sdkclient.ConnectionOptions{TLS: tlsCfg}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &floorBench{worker: p, client: c, queue: queue}
}

// runFloor runs Floor6, Floor6Local and Floor6LocalConfirm, one after the other, n each at c
// in flight, each after an unmeasured warm-up at the same concurrency,
// and returns their figures by variant.
func runFloor(ctx context.Context, t *testing.T, fb *floorBench, c, n int) map[string]floorFigures {
	t.Helper()
	got := map[string]floorFigures{}
	for _, v := range []string{floor.Floor6, floor.Floor6Local, floor.Floor6LocalConfirm} {
		if _, _, err := fb.batch(ctx, v, floorWarmup(n), c); err != nil {
			t.Fatalf("floor %s warm-up at %d in flight: %v", v, c, err)
		}
		by, worker := serverCPUBy(), procCPU(fb.worker.cmd.Process.Pid)
		lat, wall, err := fb.batch(ctx, v, n, c)
		if err != nil {
			t.Fatalf("floor %s at %d in flight: %v", v, c, err)
		}
		services := perOrderBy(by, serverCPUBy(), n)
		f := floorFigures{OK: n, WPS: float64(n) / wall.Seconds(), P50: pct(lat, 50), P99: pct(lat, 99),
			ServerCPU: sumOf(services), Services: services, WorkerCPU: perOrder(procCPU(fb.worker.cmd.Process.Pid)-worker, n)}
		f.Events = fb.events(ctx, t, v)
		got[v] = f
	}
	return got
}

func floorWarmup(n int) int { return min(50, max(10, n/4)) }

// batch runs n workflows of variant, c at a time, each started and waited
// for as a backend would; it returns their latencies (sorted) and the
// batch's wall time. A wrong result is an error: the floor must do its
// six steps, in order, to be a floor.
func (fb *floorBench) batch(ctx context.Context, variant string, n, c int) ([]time.Duration, time.Duration, error) {
	lat := make([]time.Duration, n)
	wall, err := inFlight(n, c, func(i int) (err error) {
		lat[i], err = fb.one(ctx, variant)
		return err
	})
	sortDurations(lat)
	return lat, wall, err
}

// one starts one workflow of variant and waits for its result; the
// protocol variant as a draft order is driven (confirmFloor).
func (fb *floorBench) one(ctx context.Context, variant string) (time.Duration, error) {
	return fb.oneAs(ctx, variant, "floor/"+variant+"/"+randomHex(8))
}

// oneAs is one under the workflow id id.
func (fb *floorBench) oneAs(ctx context.Context, variant, id string) (time.Duration, error) {
	began := time.Now()
	var res floor.Result
	var err error
	if variant == floor.Floor6LocalConfirm {
		res, err = fb.confirmFloor(ctx, id)
	} else {
		var run sdkclient.WorkflowRun
		if run, err = fb.client.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: id, TaskQueue: fb.queue}, variant, floor.NewOrder(id)); err == nil {
			err = run.Get(ctx, &res)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", id, err)
	}
	took := time.Since(began)
	if res.Step != floor.LastStep || res.After != "total" || res.OrderID != id {
		return 0, fmt.Errorf("%s answered %+v, not the last step of its own order", id, res)
	}
	return took, nil
}

// confirmFloor drives Floor6LocalConfirm as the client drives a draft
// order: Update-with-Start answered with the total, then the confirm
// update naming it, answered with the result.
func (fb *floorBench) confirmFloor(ctx context.Context, id string) (floor.Result, error) {
	var total, res floor.Result
	start := fb.client.NewWithStartWorkflowOperation(sdkclient.StartWorkflowOptions{ID: id, TaskQueue: fb.queue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL}, floor.Floor6LocalConfirm, floor.NewOrder(id))
	quote, err := fb.client.UpdateWithStartWorkflow(ctx, sdkclient.UpdateWithStartWorkflowOptions{StartWorkflowOperation: start,
		UpdateOptions: sdkclient.UpdateWorkflowOptions{UpdateName: floor.UpdateQuote, WaitForStage: sdkclient.WorkflowUpdateStageCompleted}})
	if err == nil {
		err = quote.Get(ctx, &total)
	}
	if err != nil {
		return res, fmt.Errorf("quote: %w", err)
	}
	confirm, err := fb.client.UpdateWorkflow(ctx, sdkclient.UpdateWorkflowOptions{WorkflowID: id, UpdateName: floor.UpdateConfirm,
		Args: []any{total.Ref}, WaitForStage: sdkclient.WorkflowUpdateStageCompleted})
	if err == nil {
		err = confirm.Get(ctx, &res)
	}
	if err != nil {
		return res, fmt.Errorf("confirm: %w", err)
	}
	return res, nil
}

// events is the history length of one more workflow of variant, run alone.
func (fb *floorBench) events(ctx context.Context, t *testing.T, variant string) int64 {
	t.Helper()
	id := "floor/" + variant + "/events-" + randomHex(6)
	if _, err := fb.oneAs(ctx, variant, id); err != nil {
		t.Fatalf("floor %s: %v", variant, err)
	}
	d, err := fb.client.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	return d.GetWorkflowExecutionInfo().GetHistoryLength()
}

// serverCPU is the CPU time the bench's server has used so far, all its
// processes (benchServices, set by scripts/test.sh bench); 0 when unknown.
func serverCPU() time.Duration {
	var total time.Duration
	for _, d := range serverCPUBy() {
		total += d
	}
	return total
}

// settle waits until the bench's dev server is idle (under a tenth of a
// core for half a second, at most 15 s), so a batch does not pay for the
// previous one's trailing work (visibility and timer tasks the server
// finishes after the last workflow closed), whichever side ran before.
func settle() {
	const window = 500 * time.Millisecond
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		before := serverCPU()
		time.Sleep(window)
		if serverCPU()-before < window/10 {
			return
		}
	}
}

// perOrder is d spread over n workflows, in ms.
func perOrder(d time.Duration, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(d.Microseconds()) / 1000 / float64(n)
}
