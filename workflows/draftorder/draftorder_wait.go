package draftorder

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// WaitReason is what a draft order is waiting for while it waits out an
// outage (docs/errors.md#outages): the call, its last error, and when it
// runs again. The status shows it (`starter draft-order status`), and the
// Web UI's Current Details say it in words.
type WaitReason struct {
	// Call is the tool the order waits on, e.g. pricing.get_realtime_quote.
	Call string `json:"call"`
	// Code, UpstreamCode and Message are the last call's error
	// (fx_rates_stale: the exchange rates are older than allowed).
	Code         toolkit.Code `json:"code"`
	UpstreamCode string       `json:"upstream_code,omitempty"`
	Message      string       `json:"message"`
	// Since is when the order started waiting; Tries the calls made;
	// NextTryAt when the next one starts.
	Since     time.Time `json:"since"`
	Tries     int       `json:"tries"`
	NextTryAt time.Time `json:"next_try_at"`
}

// cancelWins reports whether a cancel arrived that still stops the order:
// an outage's wait ends at once for it.
func (d *draftOrder) cancelWins() bool { return d.cancelled && !d.pastCancel }

// waitingOn keeps the reason of an outage's wait (flow.Outlive's waiting
// callback): shown in the status and the Web UI while it lasts, cleared
// when the call stops waiting.
func (d *draftOrder) waitingOn(ctx workflow.Context, w flow.Wait) {
	if w.Done {
		if d.waiting != nil && d.waiting.Call == w.Call {
			d.waiting = nil
			workflow.SetCurrentDetails(ctx, "")
		}
		return
	}
	if w.Tries == 1 {
		d.showStateWhileWaiting(ctx)
	}
	te := toolkit.AsError(w.Err)
	r := &WaitReason{Call: w.Call, Code: te.Code, Message: te.Message, Since: workflow.Now(ctx), Tries: w.Tries, NextTryAt: w.NextTryAt}
	if up, ok := te.Details["upstream_code"].(string); ok {
		r.UpstreamCode = up
	}
	if d.waiting != nil && d.waiting.Call == w.Call {
		r.Since = d.waiting.Since
	}
	d.waiting = r
	workflow.SetCurrentDetails(ctx, fmt.Sprintf("**Waiting** in %s for %s: %s (%s). Call %d failed; the next runs at %s UTC. A cancel stops the order at once.",
		d.state, r.Call, r.Message, r.Code, r.Tries, r.NextTryAt.UTC().Format("15:04:05")))
}
