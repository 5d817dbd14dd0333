package draftorder

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// The goods' return (docs/stock.md#returns). The refund run, not the paid
// order's run, takes the returned signal: the order's run has ended
// once paid, and each refund knows the lines it refunded, so a return is
// bounded by its refund and evidenced and audited in that refund's own
// history. Configuration decides whether a refund waits for it at all.
const (
	// SignalReturned tells a refunded run that goods came back: the
	// operator's choice, from the Web UI, the temporal CLI or
	// `starter returned`.
	SignalReturned = "returned"

	ReturnAwaiting    = "awaiting"
	ReturnRestocked   = "restocked"
	ReturnWindowEnded = "window_ended"
)

// ReturnedSignal is the returned signal's payload.
type ReturnedSignal struct {
	// Lines that came back; none: every line the refund covered.
	Lines []commerce.LineItem `json:"lines,omitempty"`
	// Note is kept in history, for the people who look.
	Note string `json:"note,omitempty"`
}

// ReturnView is the return as the status query shows it.
type ReturnView struct {
	// State is awaiting, restocked or window_ended.
	State string `json:"state"`
	// Until is when the run stops waiting for the goods.
	Until time.Time `json:"until"`
	// Lines are the units put back on hand, per warehouse (restocked).
	Lines []commerce.Reservation `json:"lines,omitempty"`
	// LastRefusal is the tool's answer to the last returned signal it
	// refused (more than was committed, lines not refunded): the run
	// still waits for a correct one.
	LastRefusal *toolkit.Error `json:"last_refusal,omitempty"`
	// Tries counts the returned signals the run tried.
	Tries    int                    `json:"tries"`
	Evidence *workflows.EvidenceRef `json:"evidence,omitempty"`
}

// restocks reports whether this refund waits for the returned signal.
func (r *refund) restocks() bool { return r.in.Restock == RestockOnReturn }

// listenReturns takes every returned signal as it arrives: queued while
// the run may still restock, refused into the signal log otherwise
// (never restocks, or restocked already: a unit comes back once).
func (r *refund) listenReturns(ctx workflow.Context, signals *workflows.Listener) {
	signals.On(ctx, SignalReturned, workflow.SignalChannelOptions{
		Description: `The goods of this refund came back: {"lines": [{"sku": "…", "quantity": 1}] (none: every line ` +
			`refunded), "note": "…"}. Puts the units back on hand once; only when the refund restocks on return.`,
	}, r.onReturned)
}

func (r *refund) onReturned(ctx workflow.Context, raw converter.RawValue) {
	var sig ReturnedSignal
	reject := func(reason, detail string) {
		r.log.Reject(ctx, workflows.RejectedSignal{Signal: SignalReturned, Reason: reason, Detail: detail})
	}
	switch err := workflows.DecodeSignal(raw, &sig); {
	case err != nil:
		reject(workflows.RejectMalformed, err.Error())
	case !r.restocks():
		reject(workflows.RejectNotWaiting, "this refund never restocks (CARTWRIGHT_REFUND_RESTOCK=never)")
	case r.ret != nil && r.ret.State != ReturnAwaiting:
		reject(workflows.RejectNotWaiting, "the return is "+r.ret.State+" already: a unit comes back once")
	default:
		r.returns = append(r.returns, sig)
	}
}

// awaitReturn waits, once refunded, for the returned signal or the end of
// the return window, and puts the returned units back on hand with
// checkout.restock_returned. A refused return (more than was committed,
// lines this refund did not cover) is shown and the run waits on.
func (r *refund) awaitReturn(ctx workflow.Context) RefundResult {
	window := r.in.ReturnWindow
	if window <= 0 {
		window = DefaultReturnWindow
	}
	until := workflow.Now(ctx).Add(window)
	r.ret = &ReturnView{State: ReturnAwaiting, Until: until}
	r.state = StateAwaitingReturn
	workflow.SetCurrentDetails(ctx, fmt.Sprintf("**Refunded**; waiting until %s for the goods to come back (the returned signal puts them back on hand)",
		workflows.FmtTime(until)))
	for r.ret.State == ReturnAwaiting {
		left := until.Sub(workflow.Now(ctx))
		if left <= 0 {
			r.ret.State = ReturnWindowEnded
			break
		}
		got, err := workflow.AwaitWithTimeout(ctx, left, func() bool { return len(r.returns) > 0 })
		if err != nil || !got {
			r.ret.State = ReturnWindowEnded
			break
		}
		sig := r.returns[0]
		r.returns = r.returns[1:]
		r.restock(ctx, sig)
	}
	for _, late := range r.returns {
		r.log.Reject(ctx, workflows.RejectedSignal{Signal: SignalReturned, Reason: workflows.RejectNotWaiting,
			Detail: fmt.Sprintf("the return is %s already: a unit comes back once (%d lines asked)", r.ret.State, len(late.Lines))})
	}
	r.returns = nil
	r.state = StateRefunded
	r.result.Return = r.ret
	return *r.result
}

// restock runs checkout.restock_returned for one returned signal.
func (r *refund) restock(ctx workflow.Context, sig ReturnedSignal) {
	lines := sig.Lines
	if len(lines) == 0 && r.result != nil && r.result.Refund != nil {
		lines = r.result.Refund.Lines
	}
	// Each try its own step (and correlation id): a refused try's audit
	// row is final, the next signal is a new call.
	try := r.ret.Tries + 1
	step := fmt.Sprintf("return/%d", try)
	got, env, err := flow.CallTool[commerce.Restock](ctx, r.specs, flow.Call{
		Tool: commerce.ToolRestockReturned, Req: flow.Envelope(ctx, r.in.Request, step),
		Summary: commerce.ToolRestockReturned + ": " + r.in.DraftOrderID,
		Args:    commerce.RestockArgs{DraftOrderID: r.in.DraftOrderID, Lines: lines},
	}).Get(ctx)
	// Counted once answered: a caller waiting for this try's answer
	// (client.ReturnGoods) sees the count and the answer together.
	r.ret.Tries = try
	if env.SnapshotID() != "" {
		ref := workflows.EvidenceRefOf(step, env)
		r.evidence = append(r.evidence, ref)
		r.ret.Evidence = &ref
	}
	if err != nil {
		te := toolkit.AsError(err)
		r.ret.LastRefusal = te
		r.log.Reject(ctx, workflows.RejectedSignal{Signal: SignalReturned, Reason: workflows.RejectNotWaiting, Detail: te.Error()})
		return
	}
	r.ret.State, r.ret.Lines, r.ret.LastRefusal = ReturnRestocked, got.Lines, nil
	r.result.Evidence = append([]workflows.EvidenceRef{}, r.evidence...)
}
