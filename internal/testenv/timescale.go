package testenv

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// TimeScaleEnv names the one setting that stretches every test deadline: a
// multiplier (default 1) for machines slower or busier than a developer's
// quiet laptop. `make test-stress` sets it while it keeps the CPUs busy
// (docs/testing.md#deadlines).
const TimeScaleEnv = "CARTWRIGHT_TEST_TIME_SCALE"

// TimeScale is CARTWRIGHT_TEST_TIME_SCALE, or 1 when unset. A value that is
// not a number of at least 1 is a mistake in the caller's environment and
// panics rather than silently shortening deadlines.
func TimeScale() float64 {
	v := os.Getenv(TimeScaleEnv)
	if v == "" {
		return 1
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 1 {
		panic(TimeScaleEnv + "=" + strconv.Quote(v) + ": want a number of at least 1")
	}
	return f
}

// Deadline is how long a test waits for an outcome that takes d on a quiet
// machine: d times TimeScale. Deadlines bound waits on conditions; tests
// assert the outcome, never how fast it came.
func Deadline(d time.Duration) time.Duration {
	return time.Duration(float64(d) * TimeScale())
}

// WaitFor polls cond until it holds and fails t, naming what it waited
// for, when Deadline(d) passes first. cond's last error (if any) is shown.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	limit := Deadline(d)
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			if err != nil {
				t.Fatalf("%s: not within %s (last error: %v)", what, limit, err)
			}
			t.Fatalf("%s: not within %s", what, limit)
		}
		<-tick.C
	}
}
