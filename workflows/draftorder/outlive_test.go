package draftorder

import (
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// A database outage longer than the tools' own retries: the calls fail with
// UPSTREAM_ERROR many times over, and the order still completes, with one
// draft order.
func TestOrderOutlivesAnOutage(t *testing.T) {
	f := newFixture(t)
	down := toolkit.Errorf(toolkit.UpstreamError, "evidence store unavailable").WithDetail("upstream_code", "db_error")
	// 40 failures is far beyond any tool's retry policy: only re-running
	// the call after the retries ran out gets through.
	f.Fail("GetQuote", down, 40)
	f.Fail("CreateDraftOrder", down, 40)
	f.At(20*time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateDraftCreated || f.Count("CreateDraftOrder") != 41 {
		t.Fatalf("result = %+v after %d create calls", res, f.Count("CreateDraftOrder"))
	}
}

// An outage that outlasts the order's window ends the order as the
// business result UNAVAILABLE (UPSTREAM_ERROR naming what failed), not as a
// failed workflow.
func TestOutageLongerThanTheWindowIsAResult(t *testing.T) {
	f := newFixture(t)
	f.Failures["ComputeTotal"] = toolkit.Errorf(toolkit.Timeout, "database did not answer")
	res := f.run()
	// The message names the code that outlived the window. (ComputeTotal
	// is a local activity: the test environment's skipped clock can time
	// an attempt out before the fake's own TIMEOUT comes back, so the
	// message may carry the SDK's deadline instead of the fake's text.)
	if res.State != StateUnavailable || res.Code != toolkit.UpstreamError || !strings.Contains(res.Message, "TIMEOUT") {
		t.Fatalf("result = %+v", res)
	}
	t.Logf("%d compute-total calls", f.Count("ComputeTotal"))
	// The window is bounded: a handful of re-runs per the backoff, no more.
	if n := f.Count("ComputeTotal"); n < 10 || n > 500 {
		t.Fatalf("%d compute-total calls within one window", n)
	}
}

// Business codes are answers: never re-run.
func TestBusinessCodesAreNotRerun(t *testing.T) {
	f := newFixture(t)
	f.Failures["GetQuote"] = toolkit.Errorf(toolkit.OutOfStock, "none left")
	res := f.run()
	if res.State != StateOutOfStock || f.Count("GetQuote") != 1 {
		t.Fatalf("result = %+v after %d quote calls", res, f.Count("GetQuote"))
	}
}
