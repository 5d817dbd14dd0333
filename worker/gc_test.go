package main

import (
	"runtime/debug"
	"testing"
)

// The worker collects at 3× its live heap unless GOGC says otherwise
// (docs/performance.md#garbage-collection-and-compression).
func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	if got := tuneGC(); got != workerGCPercent {
		t.Fatalf("GOGC unset: tuneGC = %d, want %d", got, workerGCPercent)
	}
	if pct := debug.SetGCPercent(100); pct != workerGCPercent {
		t.Fatalf("GOGC unset: the runtime collects at %d, want %d", pct, workerGCPercent)
	}
	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150) // as the runtime would have read it at start
	if got := tuneGC(); got != 150 {
		t.Fatalf("GOGC=150: tuneGC = %d, want 150 kept", got)
	}
	if pct := debug.SetGCPercent(100); pct != 150 {
		t.Fatalf("GOGC=150: the runtime collects at %d, want 150", pct)
	}
}
