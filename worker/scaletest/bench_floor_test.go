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

// runFloor runs Floor6 and Floor6Local once, n each at c in flight, on the
// bench's dev server, with the pollers our worker has (4 and 4), and
// returns the harness's median lines by variant.
func runFloor(ctx context.Context, t *testing.T, bin string, c, n int) map[string]floorFigures {
	t.Helper()
	warm := min(50, max(10, n/4))
	cmd := exec.CommandContext(ctx, bin, "-addr", testenv.TemporalAddress(), "-variants", "Floor6,Floor6Local",
		"-n", strconv.Itoa(n), "-c", strconv.Itoa(c), "-runs", "1", "-warmup", strconv.Itoa(warm),
		"-wf-pollers", "4", "-act-pollers", "4", "-logdir", t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("floor at %d in flight: %v\n%s", c, err, tail(stderr.Bytes(), 4096))
	}
	got := map[string]floorFigures{}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var f floorFigures
		if json.Unmarshal(sc.Bytes(), &f) == nil && f.Kind == "median" && f.Variant != "" {
			got[f.Variant] = f
		}
	}
	for _, v := range []string{"Floor6", "Floor6Local"} {
		if f, ok := got[v]; !ok || f.Errors > 0 || f.OK == 0 {
			t.Fatalf("floor at %d in flight: %s missing or failed (%+v)\n%s", c, v, f, tail(stderr.Bytes(), 4096))
		}
	}
	return got
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
