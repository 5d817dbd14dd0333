package scaletest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// TestProfileDrafts is the profiling harness behind docs/performance.md's
// per-change figures: `BENCH_TEST=TestProfileDrafts CARTWRIGHT_BENCH_PROFILE=600 make bench`
// runs batches of CARTWRIGHT_BENCH_PROFILE draft orders at
// CARTWRIGHT_BENCH_PROFILE_INFLIGHT (16) in flight, without the floor,
// against the bench's dev server, and logs per batch the orders/s and the
// dev server's, the worker's and this process's (the client's) CPU per
// order, read from /proc. The worker's pid is written to
// CARTWRIGHT_BENCH_PROFILE_PIDFILE (when set) so `perf record -p` can
// attach while the batches run (CARTWRIGHT_BENCH_PROFILE_BATCHES, 3).
func TestProfileDrafts(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CARTWRIGHT_BENCH_PROFILE"))
	if n <= 0 || os.Getenv("CARTWRIGHT_BENCH") != "1" {
		t.Skip("BENCH_TEST=TestProfileDrafts CARTWRIGHT_BENCH_PROFILE=N make bench")
	}
	testenv.Integration(t)
	c, batches := 16, 3
	if v, err := strconv.Atoi(os.Getenv("CARTWRIGHT_BENCH_PROFILE_INFLIGHT")); err == nil && v > 0 {
		c = v
	}
	if v, err := strconv.Atoi(os.Getenv("CARTWRIGHT_BENCH_PROFILE_BATCHES")); err == nil && v > 0 {
		batches = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	b := startBenchStack(ctx, t)
	if f := os.Getenv("CARTWRIGHT_BENCH_PROFILE_PIDFILE"); f != "" {
		if err := os.WriteFile(f, []byte(fmt.Sprintf("%d %s\n", b.worker.cmd.Process.Pid, os.Getenv("CARTWRIGHT_BENCH_SERVER_PID"))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := runDrafts(ctx, b.cl, floorWarmup(n), c, oneLine); err != nil {
		t.Fatal(err)
	}
	var out string
	for i := 0; i < batches; i++ {
		settle()
		server, worker, self := serverCPU(), procCPU(b.worker.cmd.Process.Pid), procCPU(os.Getpid())
		d, err := runDrafts(ctx, b.cl, n, c, oneLine)
		if err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf("batch %d: %d orders at %d in flight: %.1f orders/s; CPU per order: dev server %.1f ms, worker %.1f ms, client %.1f ms; start → total p50 %.0f ms (load %s)\n",
			i+1, n, c, d.perSecond(), perOrder(serverCPU()-server, n), perOrder(procCPU(b.worker.cmd.Process.Pid)-worker, n),
			perOrder(procCPU(os.Getpid())-self, n), pct(d.toTotal, 50), loadAverage())
		t.Log(line)
		out += line
	}
	if f := os.Getenv("CARTWRIGHT_BENCH_OUT"); f != "" {
		if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
