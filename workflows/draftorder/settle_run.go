package draftorder

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/stripetools"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// ending is how the hold ends: the stock movement, its reason, the final
// state and its explanation.
type ending struct{ action, reason, state, msg string }

var (
	endPaid      = ending{commerce.StockCommit, commerce.ReasonPaid, StatePaid, "paid"}
	endFailed    = ending{commerce.StockRelease, commerce.ReasonPaymentFailed, StatePaymentFailed, "the payment failed"}
	endCancelled = ending{commerce.StockRelease, commerce.ReasonCancelled, StateCancelled, "cancelled by the user before payment"}
	endExpired   = ending{commerce.StockRelease, commerce.ReasonHoldExpired, StateExpired, "not paid before the hold ended"}
)

// run charges the order (when it has a merchant), waits until the hold
// ends, then moves the stock once.
func (s *settle) run(ctx workflow.Context) (SettleResult, error) {
	var end ending
	var err error
	if s.in.MerchantID != "" {
		if perr := s.createPayment(ctx); perr != nil {
			if errorCode(perr) == "" {
				return SettleResult{}, perr
			}
			// Refused for good (the merchant cannot take the charge …):
			// nothing was charged, the stock goes back.
			end = endFailed
			end.msg = "the charge was refused: " + perr.Error()
		}
	}
	if end.action == "" {
		if end, err = s.decide(ctx); err != nil {
			return SettleResult{}, err
		}
	}
	s.deciding = true
	if err := s.setState(ctx, StateSettling); err != nil {
		return SettleResult{}, err
	}
	if err := s.settleStock(ctx, end.action, end.reason); err != nil {
		return SettleResult{}, err
	}
	return s.finish(ctx, end.state, end.msg)
}

// decide waits for what ends the hold: the payment's outcome (webhook or
// poll), a cancel, or the hold's end (the draft's expires_at, from the
// hold window of the write).
func (s *settle) decide(ctx workflow.Context) (ending, error) {
	deadline := s.in.DraftOrder.ExpiresAt
	for {
		s.takeEvents(ctx)
		switch {
		case s.paid:
			return endPaid, nil
		case s.payFailed:
			return s.closePayment(ctx, endFailed)
		case s.cancelled:
			return s.closePayment(ctx, endCancelled)
		}
		left := deadline.Sub(workflow.Now(ctx))
		if left <= 0 {
			return s.closePayment(ctx, endExpired)
		}
		wait, polling := left, false
		if s.payment != nil && s.pollNext() < wait {
			wait, polling = s.pollNext(), true
		}
		ok, err := workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{
			Timeout: wait, TimerOptions: workflow.TimerOptions{Summary: "stock hold"},
		}, func() bool { return s.cancelled || len(s.events) > 0 })
		if err != nil {
			return ending{}, err
		}
		if !ok && polling {
			if err := s.poll(ctx); err != nil {
				return ending{}, err
			}
		}
	}
}

// poll asks Stripe for the payment when no webhook came.
func (s *settle) poll(ctx workflow.Context) error {
	s.polls++
	st, err := s.paymentCall(ctx, commerce.ToolGetPayment, fmt.Sprintf("payment/poll/%d", s.polls))
	if err != nil {
		if errorCode(err) != "" {
			return nil // a refusal of a read: the next poll or a webhook tells
		}
		return err
	}
	switch st {
	case stripetools.IntentSucceeded:
		s.paid = true
	case stripetools.IntentCanceled:
		s.payFailed = true
	}
	return nil
}

// closePayment ends an unpaid order: the charge is cancelled first, so it
// can never succeed after the stock went back. When Stripe says the
// customer paid first, the order is paid; while a payment is still being
// processed, the run waits for its outcome (never releasing a unit a
// payment may still take).
func (s *settle) closePayment(ctx workflow.Context, end ending) (ending, error) {
	s.deciding = true
	if s.payment == nil {
		return end, nil
	}
	for n := 1; ; n++ {
		st, err := s.paymentCall(ctx, commerce.ToolCancelPayment, fmt.Sprintf("payment/cancel/%d", n))
		if err != nil && errorCode(err) == "" {
			return ending{}, err
		}
		switch {
		case err == nil && st == stripetools.IntentSucceeded:
			paid := endPaid
			paid.msg = "paid before the order could be closed (" + end.reason + ")"
			return paid, nil
		case err == nil && st == stripetools.IntentCanceled:
			return end, nil
		}
		// Still processing (or Stripe refused the cancel): wait for an
		// event or the next poll, then try again.
		if _, err := workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{
			Timeout: s.pollNext(), TimerOptions: workflow.TimerOptions{Summary: "payment in flight"},
		}, func() bool { return len(s.events) > 0 }); err != nil {
			return ending{}, err
		}
		s.takeEvents(ctx)
		if s.paid {
			return endPaid, nil
		}
	}
}

// settleStock commits or releases the draft's stock
// (checkout.settle_stock, retried until the ledger answers: the stock
// must move, docs/stock.md#a-hold-ends).
func (s *settle) settleStock(ctx workflow.Context, action, reason string) error {
	step := "stock/" + action
	got, env, err := flow.CallTool[commerce.StockSettlement](ctx, s.specs, flow.Call{
		Tool:    commerce.ToolSettleStock,
		Req:     flow.Envelope(ctx, s.in.Request, step),
		Args:    commerce.SettleStockArgs{DraftOrderID: s.in.DraftOrder.DraftOrderID, Action: action, Reason: reason},
		Summary: fmt.Sprintf("%s: %s (%s)", commerce.ToolSettleStock, action, reason),
	}).Get(ctx)
	if err != nil {
		return err
	}
	s.evidence = append(s.evidence, workflows.EvidenceRefOf(step, env))
	s.stock = &got
	return nil
}

// finish records the result and publishes the final state.
func (s *settle) finish(ctx workflow.Context, state, msg string) (SettleResult, error) {
	res := &SettleResult{State: state, Message: msg, DraftOrderID: s.in.DraftOrder.DraftOrderID, Stock: s.stock,
		Payment: s.paymentCopy(), Evidence: append([]workflows.EvidenceRef{}, s.evidence...)}
	s.result = res
	if err := s.setState(ctx, state); err != nil {
		return *res, err
	}
	workflow.SetCurrentDetails(ctx, fmt.Sprintf("**Draft order %s %s**: %s", s.in.DraftOrder.DraftOrderID, state, msg))
	return *res, nil
}

// paymentCopy is a copy of the payment view (nil without a charge).
func (s *settle) paymentCopy() *PaymentView {
	if s.payment == nil {
		return nil
	}
	p := *s.payment
	p.Events = append([]string{}, p.Events...)
	return &p
}
