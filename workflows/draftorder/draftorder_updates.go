package draftorder

import (
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
)

// Workflow Updates of the draft order: how the Go client gets its answers
// without polling. Each mirrors a signal (the Web UI, the temporal CLI and
// the starter keep the signals, which do the same thing) but answers its
// own caller. A validator refuses what it can see is wrong before
// anything is written: a refused update leaves no trace in history.
const (
	// UpdateNextAction returns the status once the draft order needs
	// someone (a total to confirm, a staff decision) or has ended, and
	// that differs from what the caller last saw. Update-with-Start sends
	// it with the start, so the caller gets the total in one round trip.
	UpdateNextAction = "next_action"
	// UpdateConfirm confirms the published total (the confirm signal's
	// rule) and returns once the draft order was created for that hash.
	UpdateConfirm = "confirm_total"
)

// maxSeenKey bounds NextActionInput.Seen (an ActionKey is short).
const maxSeenKey = 256

// NextActionInput is the input of the next_action update.
type NextActionInput struct {
	// Seen is the ActionKey of the status the caller last saw ("" for
	// none): the update answers once the draft order's action differs.
	Seen string `json:"seen,omitempty"`
	// UntilEnd waits for the result, past any confirmation or approval.
	UntilEnd bool `json:"until_end,omitempty"`
	// Order is the input the caller started (or would start) the draft
	// order with: sent with an Update-with-Start, the run compares it with
	// its own and refuses another order under the same key with CONFLICT,
	// whatever client sent it (docs/backend.md#other-languages).
	Order *Input `json:"order,omitempty"`
}

// ConfirmInput is the input of the confirm_total update: the quote_hash of
// the total the user agrees to pay.
type ConfirmInput struct {
	QuoteHash string `json:"quote_hash"`
}

// ConfirmAnswer is the confirm_total update's answer: the draft order was
// created for the confirmed hash.
type ConfirmAnswer struct {
	// AlreadyDone is true when this hash had been confirmed before (by a
	// retry, another caller or a signal): the same result, no second write.
	AlreadyDone bool `json:"already_done"`
	// Result is the run's result (DRAFT_CREATED, or VALIDATED for a dry run).
	Result Result `json:"result"`
}

// ActionKey names what a status asks for: "end/STATE" once the draft order
// ended, "confirm/HASH" while a total waits for the user, "approval/ID"
// while staff must decide, "" while it is working.
func ActionKey(st Status) string {
	switch {
	case st.Result != nil:
		return "end/" + st.Result.State
	case st.Confirmation != nil:
		return "confirm/" + st.Confirmation.QuoteHash
	case st.Approvals.Pending != nil:
		return "approval/" + st.Approvals.Pending.ApprovalID
	}
	return ""
}

// actionKey is ActionKey of the current status, without copying it.
func (d *draftOrder) actionKey() string {
	switch {
	case d.result != nil:
		return "end/" + d.result.State
	case d.awaitingConfirm && d.confirmation != nil:
		return "confirm/" + d.confirmation.QuoteHash
	case d.approvals.Pending():
		return "approval/" + d.approvals.Status().Pending.ApprovalID
	}
	return ""
}

// setUpdates declares the updates; called in setup, before anything blocks,
// so the update of an Update-with-Start finds its handler.
func (d *draftOrder) setUpdates(ctx workflow.Context) error {
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateNextAction, d.nextAction, workflow.UpdateHandlerOptions{
		Validator: d.validateNextAction,
		Description: `Wait until the draft order needs someone or ends: {"seen": "<action key last seen>", "until_end": false, ` +
			`"order": <the DraftOrder input, with a start: another order under this key is CONFLICT>}.`,
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateConfirm, d.confirmTotal, workflow.UpdateHandlerOptions{
		Validator:   d.validateConfirm,
		Description: `Confirm the published total and wait for the draft order: {"quote_hash": "sha256:…"} (as the confirm signal).`,
	}); err != nil {
		return err
	}
	return d.approvals.SetUpdate(ctx, d.id(ctx), func() bool { return d.over })
}

// id is the run's workflow id, for messages.
func (d *draftOrder) id(ctx workflow.Context) string {
	return workflow.GetInfo(ctx).WorkflowExecution.ID
}

// nextAction answers once the action differs from in.Seen (and, with
// UntilEnd, the run ended), or the run is over: a run that failed (an
// input its start check refused) answers with its error, not with the
// state it failed in, so the caller of Update-with-Start gets the code.
func (d *draftOrder) nextAction(ctx workflow.Context, in NextActionInput) (Status, error) {
	err := workflow.Await(ctx, func() bool {
		if d.over || d.result != nil {
			return true
		}
		if in.UntilEnd {
			return false
		}
		k := d.actionKey()
		return k != "" && k != in.Seen
	})
	st, _ := d.status()
	if err == nil && d.result == nil && d.failed != nil {
		err = d.failed
	}
	return st, err
}

// validateConfirm refuses, before anything is recorded, a confirmation
// that cannot be taken: a malformed hash, one that is not the published
// total (PRICE_CHANGED when it is the total the price changed from), a
// confirmation nobody waits for, or a run that ended otherwise. A hash
// already accepted, or whose draft order exists, passes: its caller gets
// "already done".
func (d *draftOrder) validateConfirm(ctx workflow.Context, in ConfirmInput) error {
	id := d.id(ctx)
	if in.QuoteHash == "" || len(in.QuoteHash) > maxSeenKey {
		return workflows.UpdateRefusal(id, UpdateConfirm, workflows.RejectMalformed, "quote_hash is required (the status query's confirmation.quote_hash)")
	}
	if d.result != nil {
		if d.createdFor(in.QuoteHash) {
			return nil
		}
		return activities.ApplicationError(toolkit.Errorf(toolkit.Conflict, "%s already ended (%s): %s", id, d.result.State, d.result.Message).
			WithDetail("state", d.result.State).WithDetail("reason", workflows.RejectNotWaiting))
	}
	if d.confirmedHash != "" && d.confirmedHash == in.QuoteHash {
		return nil
	}
	if reason, detail := d.confirmRefusal(in.QuoteHash); reason != "" {
		if p := d.priceChangedFrom(in.QuoteHash); p != nil {
			return p
		}
		return workflows.UpdateRefusal(id, UpdateConfirm, reason, detail)
	}
	return nil
}

// confirmTotal queues the confirmation behind any before it, waits for the
// main coroutine's answer, then for the draft order (or a changed price).
func (d *draftOrder) confirmTotal(ctx workflow.Context, in ConfirmInput) (ConfirmAnswer, error) {
	id := d.id(ctx)
	ask := &confirmAsk{hash: in.QuoteHash}
	if d.result != nil || d.confirmedHash == in.QuoteHash {
		ask.answered, ask.taken = true, true
	} else {
		d.confirms = append(d.confirms, confirmMsg{ask: ask})
	}
	if err := workflow.Await(ctx, func() bool { return ask.answered || d.over }); err != nil {
		return ConfirmAnswer{}, err
	}
	if ask.refusal != nil {
		if p := d.priceChangedFrom(in.QuoteHash); p != nil {
			return ConfirmAnswer{}, p
		}
		return ConfirmAnswer{}, activities.ApplicationError(workflows.RejectionError(id, *ask.refusal))
	}
	if err := workflow.Await(ctx, func() bool {
		return d.over || d.result != nil || d.priceChangedFrom(in.QuoteHash) != nil
	}); err != nil {
		return ConfirmAnswer{}, err
	}
	switch {
	case d.result == nil && !d.over:
		return ConfirmAnswer{}, d.priceChangedFrom(in.QuoteHash)
	case d.result == nil:
		return ConfirmAnswer{}, activities.ApplicationError(toolkit.Errorf(toolkit.UpstreamError, "%s ended without a result", id))
	case !d.createdFor(in.QuoteHash):
		return ConfirmAnswer{}, activities.ApplicationError(toolkit.Errorf(toolkit.Conflict, "%s ended (%s): %s", id, d.result.State, d.result.Message).
			WithDetail("state", d.result.State).WithDetail("result_error", d.result.Error))
	}
	return ConfirmAnswer{AlreadyDone: !ask.first, Result: *d.result}, nil
}

// createdFor reports whether the run ended with a draft order (or a dry
// run's validation) for hash.
func (d *draftOrder) createdFor(hash string) bool {
	return d.result != nil && d.result.DraftOrder != nil && d.result.DraftOrder.QuoteHash == hash
}

// priceChangedFrom is PRICE_CHANGED when the run re-quoted after hash was
// confirmed and now waits for a confirmation of another total; nil
// otherwise.
func (d *draftOrder) priceChangedFrom(hash string) error {
	p := d.confirmation
	if !d.awaitingConfirm || p == nil || !p.PriceChanged || p.PreviousQuoteHash != hash || p.QuoteHash == hash {
		return nil
	}
	return activities.ApplicationError(toolkit.Errorf(toolkit.PriceChanged,
		"the price changed on re-quote; the new total is %s, confirm quote_hash %s", p.GrandTotal.Display(), p.QuoteHash).
		WithDetail("quote_hash", p.QuoteHash).WithDetail("grand_total", p.GrandTotal).WithDetail("reason", workflows.RejectStaleQuoteHash))
}
