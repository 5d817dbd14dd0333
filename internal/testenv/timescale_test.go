package testenv

import (
	"testing"
	"time"
)

func TestDeadlineScalesWithTheOneSetting(t *testing.T) {
	t.Setenv(TimeScaleEnv, "")
	if got := Deadline(10 * time.Second); got != 10*time.Second {
		t.Fatalf("unset: %s, want 10s", got)
	}
	t.Setenv(TimeScaleEnv, "2.5")
	if got := Deadline(10 * time.Second); got != 25*time.Second {
		t.Fatalf("2.5: %s, want 25s", got)
	}
	for _, bad := range []string{"0.5", "fast", "-1"} {
		t.Setenv(TimeScaleEnv, bad)
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s=%q was accepted: a deadline must never shrink silently", TimeScaleEnv, bad)
				}
			}()
			Deadline(time.Second)
		}()
	}
}

func TestWaitForReturnsOnceTheConditionHolds(t *testing.T) {
	n := 0
	WaitFor(t, time.Second, "the third poll", func() (bool, error) { n++; return n == 3, nil })
	if n != 3 {
		t.Fatalf("polled %d times, want 3", n)
	}
}
