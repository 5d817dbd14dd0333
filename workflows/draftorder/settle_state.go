package draftorder

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// settle is the state of a draft order's hold, in the draft order's run
// (draftorder_hold.go). Handlers only record what arrived; the main
// coroutine decides, in arrival order.
type settle struct {
	in    holdInput
	specs flow.ToolSpecs
	state string
	// log is the run's signal log (the draft order's).
	log *workflows.SignalLog
	// begun: the draft is written and the hold is on; before, a cancel is
	// the draft order's and cancel_order has nothing to cancel.
	begun bool

	// cancelled: a cancel arrived while the order could still be cancelled.
	cancelled bool
	// deciding is set once the main coroutine chose how the hold ends: a
	// cancel after it is refused.
	deciding bool
	over     bool
	// the charge (settle_payment.go): the payment, events not yet taken,
	// event ids seen, the outcome so far and the polls made.
	payment    *PaymentView
	events     []PaymentSignal
	seenEvents map[string]bool
	paid       bool
	payFailed  bool
	polls      int
	stock      *commerce.StockSettlement
	evidence   []workflows.EvidenceRef
	result     *SettleResult
}

// newSettle is the hold of a run not yet written; listen declares its
// signal and update at the run's start, before anything blocks.
func newSettle(specs flow.ToolSpecs, log *workflows.SignalLog) *settle {
	return &settle{specs: specs, log: log, evidence: []workflows.EvidenceRef{}, seenEvents: map[string]bool{}}
}

// listen declares the payment signal and the cancel_order update (the
// cancel signal is the draft order's, which hands it on once the hold is
// on: draftOrder.onCancel). A payment event that arrives early waits in
// the inbox for the hold.
func (s *settle) listen(ctx workflow.Context, signals *workflows.Listener) error {
	s.listenPayments(ctx, signals)
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateCancelOrder, s.cancelOrder, workflow.UpdateHandlerOptions{
		Validator: func(ctx workflow.Context, _ CancelOrderInput) error {
			if !s.begun {
				return activities.ApplicationError(toolkit.Errorf(toolkit.NotFound, "%s has no written draft order yet: cancel it with the cancel signal",
					workflow.GetInfo(ctx).WorkflowExecution.ID).WithDetail("reason", workflows.RejectNotWaiting))
			}
			if s.result != nil && s.result.State == StateCancelled {
				return nil // already cancelled: the caller gets the result
			}
			if s.deciding || s.paid || s.result != nil {
				return activities.ApplicationError(toolkit.Errorf(toolkit.Conflict, "%s can no longer be cancelled (%s)",
					s.in.DraftOrder.DraftOrderID, s.state).WithDetail("state", s.state).WithDetail("reason", workflows.RejectNotWaiting))
			}
			return nil
		},
		Description: `Cancel the written draft order before it is paid and wait until its stock is back: {"reason": "…"} (optional).`,
	})
}

// begin puts the written draft on hold: HOLDING, until the draft's
// expires_at at the latest.
func (s *settle) begin(ctx workflow.Context, in holdInput) error {
	s.in, s.begun = in, true
	workflow.SetCurrentDetails(ctx, fmt.Sprintf("**Holding stock** of draft order %s (%s) until %s",
		in.DraftOrder.DraftOrderID, in.DraftOrder.GrandTotal.Display(), in.DraftOrder.ExpiresAt.UTC().Format(time.RFC3339)))
	return s.setState(ctx, StateHolding)
}

// onCancel records a (well-formed) cancel signal of the hold; one after
// the run decided is refused.
func (s *settle) onCancel(ctx workflow.Context) {
	if s.deciding || s.paid || s.result != nil {
		s.log.Reject(ctx, workflows.RejectedSignal{Signal: SignalCancel, Reason: workflows.RejectNotWaiting,
			Detail: "the draft order is being settled or has ended (" + s.state + ")"})
		return
	}
	s.cancelled = true
}

// cancelOrder records the cancel and waits for the run's end.
func (s *settle) cancelOrder(ctx workflow.Context, _ CancelOrderInput) (SettleStatus, error) {
	if !s.deciding && !s.paid && s.result == nil {
		s.cancelled = true
	}
	if err := workflow.Await(ctx, func() bool { return s.result != nil || s.over }); err != nil {
		return SettleStatus{}, err
	}
	st, _ := s.status()
	if s.result == nil || s.result.State != StateCancelled {
		state := s.state
		return st, activities.ApplicationError(toolkit.Errorf(toolkit.Conflict, "%s was not cancelled: it ended %s",
			s.in.DraftOrder.DraftOrderID, state).WithDetail("state", state))
	}
	return st, nil
}

// status answers the status query.
func (s *settle) status() (SettleStatus, error) {
	return SettleStatus{
		State: s.state, DraftOrderID: s.in.DraftOrder.DraftOrderID, GrandTotal: s.in.DraftOrder.GrandTotal.Display(),
		HoldUntil: s.in.DraftOrder.ExpiresAt, Cancellable: !s.deciding && !s.paid && s.result == nil, Stock: s.stock,
		Payment:  s.paymentCopy(),
		Rejected: s.log.Snapshot(), Evidence: append([]workflows.EvidenceRef{}, s.evidence...), Result: s.result,
	}, nil
}

// setState moves to state and keeps CartwrightState current.
func (s *settle) setState(ctx workflow.Context, state string) error {
	s.state = state
	return workflows.UpsertFlowState(ctx, workflows.FlowDraftOrder, state)
}
