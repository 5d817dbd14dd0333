package draftorder

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// A refund of a paid draft order (docs/payments.md#refunds): its own run,
// draft-order-refund/{user}/{key}/{refund key}, so each refund is decided,
// evidenced and audited on its own. Above the configured amount it waits
// for a sealed decision of staff with role refunds or admin, exactly as
// approvals do; then Stripe refunds it with the run's own idempotency key.
const (
	RefundWorkflowName = "DraftOrderRefund"

	StateRefundPending  = "AWAITING_APPROVAL"
	StateRefunded       = "REFUNDED"
	StateRefundRefused  = "REFUND_REFUSED"
	StateRefundRejected = "REFUND_REJECTED"
	StateRefundExpired  = "REFUND_EXPIRED"
	// StateAwaitingReturn: refunded; the run waits for the operator's
	// returned signal to put the goods back on hand (docs/stock.md#returns).
	StateAwaitingReturn = "AWAITING_RETURN"
)

// How a refund restocks (config CARTWRIGHT_REFUND_RESTOCK, copied into
// RefundInput.Restock by the starter): on the returned signal, or never.
// Empty is never.
const (
	RestockOnReturn = "on_return"
	RestockNever    = "never"
	// DefaultReturnWindow mirrors config CARTWRIGHT_RETURN_WINDOW.
	DefaultReturnWindow = 30 * 24 * time.Hour
)

// RefundInput starts a refund run.
type RefundInput struct {
	// Request is the envelope of the refund's caller; its idempotency key
	// names the run (with the draft order's user and key).
	Request toolkit.Request `json:"request"`
	// DraftOrderID is the paid draft order.
	DraftOrderID string `json:"draft_order_id"`
	// Lines to refund; none refunds the whole order (what is left).
	Lines []commerce.LineItem `json:"lines,omitempty"`
	// Reason is shown to the staff who decide.
	Reason string `json:"reason,omitempty"`
	// ApproveAbove: a refund of more than this (minor units of the order's
	// currency) needs a staff decision (config CARTWRIGHT_REFUND_APPROVAL_ABOVE).
	ApproveAbove int64 `json:"approve_above"`
	// ApprovalWindow bounds the wait for staff (default 24 h).
	ApprovalWindow time.Duration `json:"approval_window,omitempty"`
	// Restock is on_return (a refunded run waits for the returned signal
	// and puts those units back on hand) or never ("" is never).
	Restock string `json:"restock,omitempty"`
	// ReturnWindow bounds the wait for the returned signal (default 30
	// days); after it the units stay where they are.
	ReturnWindow time.Duration `json:"return_window,omitempty"`
}

// RefundResult is how a refund ended.
type RefundResult struct {
	State    string                  `json:"state"`
	Code     toolkit.Code            `json:"code,omitempty"`
	Message  string                  `json:"message,omitempty"`
	Refund   *commerce.RefundResult  `json:"refund,omitempty"`
	Approval *approval.Outcome       `json:"approval,omitempty"`
	Evidence []workflows.EvidenceRef `json:"evidence"`
	// Return is the goods' return, once the refund restocks on one.
	Return *ReturnView `json:"return,omitempty"`
}

// RefundStatus answers the refund run's status query and its refund
// update: where the refund stands (the amount, the staff decision it
// waits for with the facts staff see, its result) and the return.
type RefundStatus struct {
	State     string          `json:"state"`
	Amount    *commerce.Money `json:"amount,omitempty"`
	Approvals approval.Status `json:"approvals"`
	Result    *RefundResult   `json:"result,omitempty"`
	// Restock is how this refund restocks: on_return or never.
	Restock string      `json:"restock"`
	Return  *ReturnView `json:"return,omitempty"`
}

// Refund (registered as RefundWorkflowName) refunds a paid draft order
// once. Its first step checks the input and asks the tool for the amount
// (a dry run that checks the order is paid and the lines are its own and
// not refunded yet); a refusal there is answered through the refund
// update and ends the run canceled, nothing failed and the key free
// (refund_update.go). A refunded run that restocks on return then waits
// for the returned signal (refund_return.go).
func (b Flow) Refund(ctx workflow.Context, in RefundInput) (RefundResult, error) {
	r := &refund{in: in, specs: b.Specs, state: "PRICING", evidence: []workflows.EvidenceRef{}}
	signals := workflows.NewListener(ctx)
	r.approvals = approval.New(ctx, approval.Config{Flow: workflows.FlowOrderSettle, Window: in.ApprovalWindow,
		Request: in.Request, Log: &r.log, Specs: b.Specs, Signals: signals})
	if err := workflow.SetQueryHandler(ctx, workflows.QueryStatus, func() (RefundStatus, error) {
		return r.status(), nil
	}); err != nil {
		return RefundResult{}, err
	}
	if err := r.approvals.SetUpdate(ctx, workflow.GetInfo(ctx).WorkflowExecution.ID, func() bool { return r.result != nil }); err != nil {
		return RefundResult{}, err
	}
	if err := r.setUpdate(ctx); err != nil {
		return RefundResult{}, err
	}
	r.listenReturns(ctx, signals)
	signals.Listen(ctx)
	res, err := r.run(ctx)
	if err == nil && r.refusal == nil && res.State == StateRefunded && r.restocks() {
		res = r.awaitReturn(ctx)
	}
	if r.refusal != nil {
		// An update that came with the start runs its validator first
		// (draftorder_startrefusal.go).
		yield(ctx)
	}
	if aerr := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); aerr != nil && err == nil {
		err = aerr
	}
	if err == nil && r.refusal != nil {
		return RefundResult{}, temporal.NewCanceledError(*r.refusal)
	}
	return res, err
}

// status is the query's and the update's answer.
func (r *refund) status() RefundStatus {
	restock := r.in.Restock
	if restock == "" {
		restock = RestockNever
	}
	return RefundStatus{State: r.state, Amount: r.amount, Approvals: r.approvals.Status(), Result: r.result,
		Restock: restock, Return: r.ret}
}

type refund struct {
	in        RefundInput
	specs     flow.ToolSpecs
	state     string
	log       workflows.SignalLog
	approvals *approval.Gate
	amount    *commerce.Money
	evidence  []workflows.EvidenceRef
	result    *RefundResult
	// refusal is the first step's: the input, or the order, refused; the
	// refund update answers it and the run ends canceled.
	refusal *toolkit.Error
	// ret is the goods' return; returns the returned signals not yet
	// taken (refund_return.go).
	ret     *ReturnView
	returns []ReturnedSignal
	// approval is the snapshot of the staff approval the Stripe step
	// names (empty below the threshold).
	approval string
}

func (r *refund) run(ctx workflow.Context) (RefundResult, error) {
	if err := r.in.check(workflow.GetInfo(ctx).WorkflowExecution.ID); err != nil {
		return r.refuse(err), nil
	}
	// The amount from the stored total (a dry run), for the threshold; the
	// tool checks the order is paid and the lines are its own and left.
	quote, err := r.call(ctx, "refund/amount", true)
	if err != nil {
		if toolkit.CodeOf(err) == "" {
			return RefundResult{}, err
		}
		return r.refuse(err), nil
	}
	r.amount = &quote.Amount
	var decided *approval.Outcome
	if quote.Amount.Amount > r.in.ApproveAbove {
		r.state = StateRefundPending
		out, err := r.approvals.Request(ctx, approval.Request{
			Subject:  "refund of a paid draft order",
			Question: "Approve to refund this amount to the customer's card (the merchant's transfer is reversed); reject to refuse it.",
			Facts: []string{"draft order " + r.in.DraftOrderID, "amount " + quote.Amount.Display(),
				"left after it " + quote.Remaining.Display(), fmt.Sprintf("lines %v (none: the whole order)", quote.Lines),
				"reason given: " + r.in.Reason},
			AllowedRoles: []string{support.RoleRefunds, support.RoleAdmin},
			Window:       r.in.ApprovalWindow,
		})
		if err != nil {
			return RefundResult{}, err
		}
		decided = &out
		switch {
		case out.Decision == approval.Expired:
			res := r.end(StateRefundExpired, toolkit.Errorf(toolkit.Timeout, "no staff decision within the approval window"))
			res.Approval = decided
			return res, nil
		case !out.Approved():
			res := r.end(StateRefundRejected, toolkit.Errorf(toolkit.Forbidden, "rejected by %s: %s", out.Approver, out.Reason))
			res.Approval = decided
			return res, nil
		}
	}
	r.state = "REFUNDING"
	if decided != nil && decided.Evidence != nil {
		// The tool refunds above the worker's own threshold only with
		// this run's staff approval.
		r.approval = decided.Evidence.SnapshotID
	}
	got, err := r.call(ctx, "refund/stripe", false)
	if err != nil {
		if toolkit.CodeOf(err) == "" {
			return RefundResult{}, err
		}
		res := r.end(StateRefundRefused, err)
		res.Approval = decided
		return res, nil
	}
	r.state = StateRefunded
	r.result = &RefundResult{State: StateRefunded, Message: "refunded " + got.Amount.Display(), Refund: &got, Approval: decided,
		Evidence: append([]workflows.EvidenceRef{}, r.evidence...)}
	return *r.result, nil
}

// call runs checkout.refund_payment (a dry run for the amount).
func (r *refund) call(ctx workflow.Context, step string, dry bool) (commerce.RefundResult, error) {
	req := flow.Envelope(ctx, r.in.Request, step)
	req.DryRun = dry
	got, env, err := flow.CallTool[commerce.RefundResult](ctx, r.specs, flow.Call{
		Tool: commerce.ToolRefundPayment, Req: req, Summary: commerce.ToolRefundPayment + ": " + r.in.DraftOrderID,
		Args: commerce.RefundArgs{DraftOrderID: r.in.DraftOrderID, Lines: r.in.Lines, ApprovalSnapshotID: r.approval},
	}).Get(ctx)
	if err == nil || env.SnapshotID() != "" {
		r.evidence = append(r.evidence, workflows.EvidenceRefOf(step, env))
	}
	return got, err
}

// end is a refund that did not happen, with its code.
func (r *refund) end(state string, err error) RefundResult {
	r.state = state
	res := RefundResult{State: state, Code: toolkit.CodeOf(err), Message: err.Error(), Evidence: append([]workflows.EvidenceRef{}, r.evidence...)}
	r.result = &res
	return res
}
