package draftorder

import (
	"regexp"
	"sort"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// UpdateRefund is how a refund is asked for (docs/payments.md#refunds):
// an Update-with-Start of the refund run whose answer is where the refund
// stands — REFUNDED with Stripe's refund id, AWAITING_APPROVAL with the
// approval staff decide and the facts they see, or refused with its code.
// The run's first step checks the refund and refuses it through this
// update (INVALID_ARGUMENT, FORBIDDEN, NOT_FOUND), whatever client started
// the run, and then ends canceled: nothing failed, the key stays free for
// a corrected refund. The same key with other lines is CONFLICT.
const UpdateRefund = "refund"

// RefundAsk is the refund update's input.
type RefundAsk struct {
	// Refund is the input the caller started (or would start) the run
	// with: sent with an Update-with-Start, the run compares it with its
	// own and refuses another refund under the same key with CONFLICT.
	Refund *RefundInput `json:"refund,omitempty"`
	// UntilEnd waits past a staff decision for the refund's end.
	UntilEnd bool `json:"until_end,omitempty"`
}

// RefundFingerprint is what binds a refund key to its refund: the draft
// order and the lines, merged per SKU (the reason, the windows and the
// caller's envelope do not count).
func RefundFingerprint(in RefundInput) (string, error) {
	sorted := append([]commerce.LineItem(nil), in.Lines...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].SKU < sorted[j].SKU })
	lines := make([]commerce.LineItem, 0, len(sorted))
	for _, l := range sorted {
		if n := len(lines); n > 0 && lines[n-1].SKU == l.SKU {
			lines[n-1].Quantity += l.Quantity
			continue
		}
		lines = append(lines, commerce.LineItem{SKU: l.SKU, Quantity: l.Quantity})
	}
	return toolkit.CanonicalHash(struct {
		DraftOrderID string              `json:"draft_order_id"`
		Lines        []commerce.LineItem `json:"lines"`
	}{in.DraftOrderID, lines})
}

// setUpdate declares the refund update before the run blocks, so the
// update of an Update-with-Start finds it.
func (r *refund) setUpdate(ctx workflow.Context) error {
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateRefund, r.answer, workflow.UpdateHandlerOptions{
		Validator: r.validate,
		Description: `Ask for this refund and wait for where it stands: {"refund": <the DraftOrderRefund input; another ` +
			`refund under this key is CONFLICT>, "until_end": false (true: wait past a staff decision)}.`,
	})
}

// validate refuses, before anything is recorded, a refund other than this
// run's (CONFLICT), and once the first step refused, that refusal.
func (r *refund) validate(ctx workflow.Context, in RefundAsk) error {
	if r.refusal != nil {
		return activities.ApplicationError(r.refusal)
	}
	if in.Refund == nil {
		return nil
	}
	// The canonical hash encodes JSON: deterministic for the same
	// input, though workflowcheck sees the encoder's reflection.
	//workflowcheck:ignore
	want, err := RefundFingerprint(r.in)
	if err != nil {
		return activities.ApplicationError(toolkit.Errorf(toolkit.UpstreamError, "fingerprint of the refund: %v", err))
	}
	//workflowcheck:ignore
	got, err := RefundFingerprint(*in.Refund)
	if err != nil || got != want {
		key := r.in.Request.IdempotencyKey
		return activities.ApplicationError(toolkit.Errorf(toolkit.Conflict,
			"refund key %s was already used for another refund (other lines or another order); use a new key for a new refund", key).
			WithDetail("reason", "arguments differ").WithDetail("idempotency_key", key).
			WithDetail("workflow_id", workflow.GetInfo(ctx).WorkflowExecution.ID).WithDetail("fields", []string{"key"}).
			WithRecovery("repeat the original refund unchanged, or ask for the new one under a new key"))
	}
	return nil
}

// answer waits until the refund stands somewhere worth answering: refused,
// ended, or (unless UntilEnd) waiting for staff.
func (r *refund) answer(ctx workflow.Context, in RefundAsk) (RefundStatus, error) {
	if err := workflow.Await(ctx, func() bool {
		return r.refusal != nil || r.result != nil || (!in.UntilEnd && r.approvals.Pending())
	}); err != nil {
		return RefundStatus{}, err
	}
	if r.refusal != nil {
		return RefundStatus{}, activities.ApplicationError(r.refusal)
	}
	return r.status(), nil
}

// refuse records the first step's refusal; the run ends canceled with it.
func (r *refund) refuse(err error) RefundResult {
	r.refusal = toolkit.AsError(err)
	r.state = StateRefundRefused
	return RefundResult{State: StateRefundRefused, Code: r.refusal.Code, Message: r.refusal.Message, Evidence: r.evidence}
}

// draftOrderIDPattern is a draft order's id (schemas/checkout.refund_payment.input.json).
var draftOrderIDPattern = regexp.MustCompile(`^do_[0-9A-HJKMNP-TV-Z]{26}$`)

// check refuses what the input alone shows is wrong, naming the field: a
// run whose id is not this refund key's, a draft order id that is none, a
// line without a SKU or units, a negative threshold, an unknown restock.
func (in RefundInput) check(workflowID string) error {
	bad := func(field, format string, args ...any) error {
		return toolkit.Errorf(toolkit.InvalidArgument, format, args...).WithDetail("fields", []string{field})
	}
	if in.Request.IdempotencyKey == "" || !strings.HasPrefix(workflowID, commerce.RefundIDPrefix) ||
		!strings.HasSuffix(workflowID, "/"+in.Request.IdempotencyKey) {
		return bad("request.idempotency_key", "the refund key must be the last part of the run's id %s", workflowID)
	}
	if !draftOrderIDPattern.MatchString(in.DraftOrderID) {
		return bad("draft_order_id", "draft_order_id %q is not a draft order's id", in.DraftOrderID)
	}
	if len(in.Lines) > 100 {
		return bad("lines", "%d lines: at most 100", len(in.Lines))
	}
	for _, l := range in.Lines {
		if l.SKU == "" || l.Quantity < 1 {
			return bad("lines", "line %q × %d: a SKU and at least one unit", l.SKU, l.Quantity)
		}
	}
	if in.ApproveAbove < 0 {
		return bad("approve_above", "approve_above %d is negative", in.ApproveAbove)
	}
	switch in.Restock {
	case "", RestockNever, RestockOnReturn:
	default:
		return bad("restock", "restock %q: on_return or never", in.Restock)
	}
	if in.ReturnWindow < 0 || in.ApprovalWindow < 0 {
		return bad("return_window", "windows cannot be negative")
	}
	return nil
}
