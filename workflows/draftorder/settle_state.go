package draftorder

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// settle is the state of one settle run. Handlers only record what
// arrived; the main coroutine decides, in arrival order.
type settle struct {
	in    SettleInput
	specs flow.ToolSpecs
	state string
	log   workflows.SignalLog

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

// setup checks the input and declares the query, the cancel signal and
// the cancel_order update before anything blocks.
func (s *settle) setup(ctx workflow.Context, in SettleInput) error {
	if in.DraftOrder.DraftOrderID == "" || in.DraftOrder.ExpiresAt.IsZero() {
		return flow.InvalidInput("settle: the input names no written draft order")
	}
	s.in, s.state, s.evidence, s.seenEvents = in, StateHolding, []workflows.EvidenceRef{}, map[string]bool{}
	if err := workflow.SetQueryHandlerWithOptions(ctx, workflows.QueryStatus, s.status, workflow.QueryHandlerOptions{
		Description: "State of the written draft order: holding its stock, paid, cancelled, payment failed or expired; the stock movement and evidence.",
	}); err != nil {
		return err
	}
	cancelCh := workflow.GetSignalChannelWithOptions(ctx, SignalCancel, workflow.SignalChannelOptions{
		Description: `The user abandons the written draft order before it is paid: {"reason": "…"} (optional). Its stock goes back.`,
	})
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			s.onCancel(ctx, workflows.ReceiveRaw(ctx, cancelCh))
		}
	})
	s.listenPayments(ctx)
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateCancelOrder, s.cancelOrder, workflow.UpdateHandlerOptions{
		Validator: func(ctx workflow.Context, _ CancelOrderInput) error {
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
	}); err != nil {
		return err
	}
	workflow.SetCurrentDetails(ctx, fmt.Sprintf("**Holding stock** of draft order %s (%s) until %s",
		in.DraftOrder.DraftOrderID, in.DraftOrder.GrandTotal.Display(), in.DraftOrder.ExpiresAt.UTC().Format(time.RFC3339)))
	return workflows.UpsertFlowState(ctx, workflows.FlowOrderSettle, StateHolding)
}

// onCancel records a cancel; one after the run decided is refused.
func (s *settle) onCancel(ctx workflow.Context, raw converter.RawValue) {
	var sig CancelSignal
	if err := workflows.DecodeSignal(raw, &sig); err != nil && err != workflows.ErrEmptySignal {
		s.log.Reject(ctx, workflows.RejectedSignal{Signal: SignalCancel, Reason: workflows.RejectMalformed, Detail: err.Error()})
		return
	}
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
	return workflows.UpsertFlowState(ctx, workflows.FlowOrderSettle, state)
}
