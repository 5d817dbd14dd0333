package scaletest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// floorFigures is one variant's median line of the floor harness.
type floorFigures struct {
	Kind    string  `json:"kind"`
	Variant string  `json:"variant"`
	OK      int     `json:"ok"`
	Errors  int     `json:"errors"`
	WPS     float64 `json:"throughput_wps"`
	P50     float64 `json:"p50_ms"`
	P99     float64 `json:"p99_ms"`
	Events  float64 `json:"history_events"`
	// WorkerCPU is the floor worker's CPU per workflow (ms).
	WorkerCPU float64 `json:"worker_cpu_ms_per_wf"`
	// ServerCPU is the bench's dev server's CPU per workflow (ms) while
	// this variant alone ran: measured here, from /proc (the harness
	// cannot, with -addr).
	ServerCPU float64 `json:"-"`
}

// buildFloor builds the floor harness (../shared/bench/floor, its own
// module) once, so no compilation runs inside a measurement.
func buildFloor(t *testing.T, dir string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("the floor harness is not at %s (set CARTWRIGHT_FLOOR_DIR): %v", dir, err)
	}
	bin := filepath.Join(t.TempDir(), "floor")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the floor harness in %s: %v\n%s", dir, err, out)
	}
	return bin
}

// runFloor runs Floor6 and Floor6Local, one after the other, n each at c
// in flight, on the bench's dev server, with the pollers our worker has (4
// and 4), and returns the harness's median lines by variant, each with the
// server's CPU per workflow while it ran.
func runFloor(ctx context.Context, t *testing.T, bin string, c, n int) map[string]floorFigures {
	t.Helper()
	got := map[string]floorFigures{}
	for _, v := range []string{"Floor6", "Floor6Local"} {
		before := serverCPU()
		f := runFloorVariant(ctx, t, bin, v, c, n)
		f.ServerCPU = perOrder(serverCPU()-before, n+floorWarmup(n))
		got[v] = f
	}
	return got
}

func floorWarmup(n int) int { return min(50, max(10, n/4)) }

func runFloorVariant(ctx context.Context, t *testing.T, bin, variant string, c, n int) floorFigures {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, "-addr", testenv.TemporalAddress(), "-variants", variant,
		"-n", strconv.Itoa(n), "-c", strconv.Itoa(c), "-runs", "1", "-warmup", strconv.Itoa(floorWarmup(n)),
		"-wf-pollers", "4", "-act-pollers", "4", "-logdir", t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("floor %s at %d in flight: %v\n%s", variant, c, err, tail(stderr.Bytes(), 4096))
	}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var f floorFigures
		if json.Unmarshal(sc.Bytes(), &f) == nil && f.Kind == "median" && f.Variant == variant {
			if f.Errors > 0 || f.OK == 0 {
				t.Fatalf("floor %s at %d in flight failed: %+v\n%s", variant, c, f, tail(stderr.Bytes(), 4096))
			}
			return f
		}
	}
	t.Fatalf("floor %s at %d in flight printed no median line\n%s", variant, c, tail(stderr.Bytes(), 4096))
	return floorFigures{}
}

// serverCPU is the CPU time the bench's dev server has used so far
// (CARTWRIGHT_BENCH_SERVER_PID, set by scripts/test.sh bench); 0 when
// unknown.
func serverCPU() time.Duration {
	pid, err := strconv.Atoi(os.Getenv("CARTWRIGHT_BENCH_SERVER_PID"))
	if err != nil {
		return 0
	}
	return procCPU(pid)
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

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
