package draftorder

import (
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// With stale exchange rates the pricing call fails UPSTREAM_ERROR
// (fx_rates_stale) over and over and the order waits in QUOTING. The
// status says what it waits for and why (the call, the code, the
// upstream's reason, the next try), and a cancel sent meanwhile wins
// within seconds: the order ends CANCELLED, not once the rates return
// and not UNAVAILABLE at the end of its window.
func TestCancelWinsWhileWaitingOutStaleRates(t *testing.T) {
	f := newFixture(t)
	f.Failures["GetQuote"] = toolkit.Errorf(toolkit.UpstreamError, "the latest exchange rates are of 2026-11-20, older than the 72h0m0s allowed").
		WithDetail("upstream_code", "fx_rates_stale")
	var during Status
	// The first wait's reason: later calls may time out on the test
	// environment's skipped clock instead of answering the fake's error
	// (see TestOutageLongerThanTheWindowIsAResult).
	for at := time.Second; at < 3*time.Minute; at += time.Second {
		f.At(at, func() {
			if during.Waiting == nil {
				during = f.status()
			}
		})
	}
	const cancelAt = 4 * time.Minute
	var start time.Time
	f.At(0, func() { start = f.Env.Now() })
	f.At(cancelAt, func() { f.Env.SignalWorkflow(SignalCancel, CancelSignal{Reason: "rates are stale"}) })
	res := f.run()
	w := during.Waiting
	if during.State != StateQuoting || w == nil || w.Call != "quote" || w.Message == "" || w.Tries < 1 ||
		!w.NextTryAt.After(w.Since) {
		t.Fatalf("status while waiting: state %s, waiting %+v", during.State, w)
	}
	// The test environment's skipped clock may time the local call out
	// before the fake's answer is read; when the answer is read, the
	// reason is the upstream's.
	switch w.Code {
	case toolkit.UpstreamError:
		if w.UpstreamCode != "fx_rates_stale" || !strings.Contains(w.Message, "exchange rates") {
			t.Fatalf("reason %+v", w)
		}
	case toolkit.Timeout:
	default:
		t.Fatalf("reason %+v", w)
	}
	if res.State != StateCancelled {
		t.Fatalf("a cancel during the wait ended the order %s: %s", res.State, res.Message)
	}
	if took := f.Env.Now().Sub(start); took > cancelAt+30*time.Second {
		t.Fatalf("the cancel took %s to win (sent at %s)", took-cancelAt, cancelAt)
	}
}
