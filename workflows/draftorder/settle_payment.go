package draftorder

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/stripetools"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// The payment of a written draft order (docs/payments.md): the order's run
// charges the confirmed total once (checkout.create_payment), learns the
// outcome from Stripe's signed webhook (the payment signal, sent by the
// receiver) or, when none came, by asking Stripe every PollEvery
// (checkout.get_payment), and cancels the charge before it gives the stock
// back (checkout.cancel_payment): a charge that succeeded first wins.
const (
	// SignalPayment carries a payment_intent.* event from the webhook
	// receiver.
	SignalPayment = "payment"
	// StateAwaitingPayment: the charge is made; the customer pays.
	StateAwaitingPayment = "AWAITING_PAYMENT"
	// DefaultPaymentPollEvery mirrors config CARTWRIGHT_PAYMENT_POLL_EVERY.
	DefaultPaymentPollEvery = 10 * time.Minute
)

// Payment events the run acts on (Stripe's event types).
const (
	EventPaymentSucceeded = "payment_intent.succeeded"
	EventPaymentFailed    = "payment_intent.payment_failed"
)

// PaymentSignal is the payment signal's payload: one verified Stripe
// event about the run's PaymentIntent.
type PaymentSignal struct {
	EventID         string `json:"event_id"`
	Type            string `json:"type"`
	PaymentIntentID string `json:"payment_intent_id"`
	Amount          int64  `json:"amount"`
	Currency        string `json:"currency"`
}

// PaymentView is the payment as the status query shows it: no secret,
// only where the backend reads it (RevealClientSecret of SecretSnapshot).
type PaymentView struct {
	PaymentIntentID string         `json:"payment_intent_id"`
	Status          string         `json:"status"`
	Amount          commerce.Money `json:"amount"`
	ApplicationFee  commerce.Money `json:"application_fee"`
	Destination     string         `json:"destination_account"`
	// SecretSnapshot and SecretSHA256 locate the client secret: the
	// evidence snapshot of the create call, read with an access log.
	SecretSnapshot string `json:"secret_snapshot_id"`
	SecretSHA256   string `json:"secret_sha256"`
	// Events are the ids of the Stripe events the run took, in order.
	Events []string `json:"events"`
}

// paymentInbox receives payment signals; the main coroutine reads them.
func (s *settle) listenPayments(ctx workflow.Context, signals *workflows.Listener) {
	signals.On(ctx, SignalPayment, workflow.SignalChannelOptions{
		Description: "A verified Stripe payment_intent.succeeded or payment_intent.payment_failed event (sent by the webhook receiver).",
	}, s.onPayment)
}

// onPayment queues an event once by its id; a duplicate or one for
// another intent is refused into the signal log.
func (s *settle) onPayment(ctx workflow.Context, raw converter.RawValue) {
	var sig PaymentSignal
	if err := workflows.DecodeSignal(raw, &sig); err != nil {
		s.log.Reject(ctx, workflows.RejectedSignal{Signal: SignalPayment, Reason: workflows.RejectMalformed, Detail: err.Error()})
		return
	}
	if s.seenEvents[sig.EventID] {
		return // a redelivery: harmless
	}
	s.seenEvents[sig.EventID] = true
	s.events = append(s.events, sig)
}

// createPayment makes the charge; a refusal (no connected account …) is
// returned as the run's outcome, an outage is retried by the activity.
func (s *settle) createPayment(ctx workflow.Context) error {
	got, env, err := flow.CallTool[commerce.Payment](ctx, s.specs, flow.Call{
		Tool:    commerce.ToolCreatePayment,
		Req:     flow.Envelope(ctx, s.in.Request, "payment/create"),
		Args:    commerce.PaymentArgs{DraftOrderID: s.in.DraftOrder.DraftOrderID, MerchantID: s.in.MerchantID},
		Summary: fmt.Sprintf("%s: %s", commerce.ToolCreatePayment, s.in.DraftOrder.GrandTotal.Display()),
	}).Get(ctx)
	if err != nil {
		return err
	}
	s.evidence = append(s.evidence, workflows.EvidenceRefOf("payment/create", env))
	s.payment = &PaymentView{PaymentIntentID: got.PaymentIntentID, Status: got.Status, Amount: got.Amount,
		ApplicationFee: got.ApplicationFee, Destination: got.Destination, SecretSnapshot: env.SnapshotID(),
		SecretSHA256: got.SecretSHA256, Events: []string{}}
	// What the Web UI shows for the run (docs/payments.md#the-charge).
	workflow.SetCurrentDetails(ctx, fmt.Sprintf("**Awaiting payment** of %s for draft order %s: PaymentIntent %s, platform fee %s, "+
		"to %s; the stock is held until %s (a cancel before payment gives it back)", got.Amount.Display(), s.in.DraftOrder.DraftOrderID,
		got.PaymentIntentID, got.ApplicationFee.Display(), got.Destination, s.in.DraftOrder.ExpiresAt.UTC().Format(time.RFC3339)))
	return s.setState(ctx, StateAwaitingPayment)
}

// paymentCall runs get_payment or cancel_payment and records its status.
func (s *settle) paymentCall(ctx workflow.Context, tool, step string) (string, error) {
	got, env, err := flow.CallTool[commerce.Payment](ctx, s.specs, flow.Call{
		Tool:    tool,
		Req:     flow.Envelope(ctx, s.in.Request, step),
		Args:    commerce.PaymentArgs{DraftOrderID: s.in.DraftOrder.DraftOrderID},
		Summary: fmt.Sprintf("%s: %s", tool, s.payment.PaymentIntentID),
	}).Get(ctx)
	if err != nil {
		return "", err
	}
	s.evidence = append(s.evidence, workflows.EvidenceRefOf(step, env))
	if got.PaymentIntentID == s.payment.PaymentIntentID {
		s.payment.Status = got.Status
	}
	return got.Status, nil
}

// takeEvents applies the queued events: the first that decides wins
// (reordering is harmless: a failure after a success is ignored, and a
// failure is checked against Stripe by the cancel that follows it).
func (s *settle) takeEvents(ctx workflow.Context) {
	for len(s.events) > 0 {
		ev := s.events[0]
		s.events = s.events[1:]
		p := s.payment
		if p == nil || ev.PaymentIntentID != p.PaymentIntentID || ev.Amount != p.Amount.Amount ||
			ev.Currency != p.Amount.Currency || (ev.Type != EventPaymentSucceeded && ev.Type != EventPaymentFailed) {
			s.log.Reject(ctx, workflows.RejectedSignal{Signal: SignalPayment, Reason: workflows.RejectMalformed,
				Detail: "the event is not about this order's payment (intent, amount, currency or type)"})
			continue
		}
		p.Events = append(p.Events, ev.EventID)
		switch {
		case s.paid || s.payFailed:
		case ev.Type == EventPaymentSucceeded:
			s.paid, p.Status = true, stripetools.IntentSucceeded
		default:
			s.payFailed = true
		}
	}
}

// pollNext is how long to wait before asking Stripe again.
func (s *settle) pollNext() time.Duration {
	if s.in.PollEvery > 0 {
		return s.in.PollEvery
	}
	return DefaultPaymentPollEvery
}

// errorCode is the closed-set code of a tool failure ("" for none).
func errorCode(err error) toolkit.Code { return toolkit.CodeOf(err) }
