package main

import (
	"os"
	"runtime/debug"
)

// workerGCPercent is the worker's GOGC unless the environment sets one.
// Its garbage is short-lived task data (payloads, envelopes, the tool
// pipeline's trees) over a small live heap: a collection every 2.5× the
// live heap instead of 2× takes CPU off each draft order; 3× took a little
// more (≈ 0.5 ms) for ≈ 11 MiB more at its peak, past the worker's 100 MiB
// budget once written drafts' runs stay cached (docs/performance.md#garbage-collection-and-compression).
const workerGCPercent = 150

// tuneGC applies workerGCPercent unless GOGC is set, and reports the
// GOGC in force.
func tuneGC() int {
	if v := os.Getenv("GOGC"); v != "" {
		// The runtime read it at start; SetGCPercent(-1) would turn the
		// collector off, so read it back without changing it.
		pct := debug.SetGCPercent(-1)
		debug.SetGCPercent(pct)
		return pct
	}
	debug.SetGCPercent(workerGCPercent)
	return workerGCPercent
}
