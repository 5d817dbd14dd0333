package draftorder

import (
	"time"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
)

// The hold: what happens to a draft order after it is written
// (docs/stock.md). The draft order's own run goes on (draftorder_hold.go):
// its result is DRAFT_CREATED the moment the draft is written (the
// confirmation's answer), then it holds the draft's stock until the draft
// is paid (commit) or cancelled, its payment fails or the hold ends
// (release), exactly once. One run per order: a second workflow per order
// cost the server as much as the draft order itself (docs/performance.md#one-run-per-order).
const (
	// UpdateCancelOrder cancels a written draft order and answers once
	// its stock is back (the cancel signal does the same, unanswered).
	UpdateCancelOrder = "cancel_order"
)

// Hold states (SettleStatus.State, and the run's CartwrightState once the
// draft is written): holding while nobody has decided, then one final state.
const (
	StateHolding       = "HOLDING"
	StateSettling      = "SETTLING"
	StatePaid          = "PAID"
	StatePaymentFailed = "PAYMENT_FAILED"
	// StateCancelled and StateExpired are shared with the draft order.
)

// holdInput is what the hold of a written draft order works from.
type holdInput struct {
	// Request is the draft order's envelope (user, actor, idempotency
	// key); each call gets its own correlation id.
	Request toolkit.Request `json:"request"`
	// DraftOrder is the written draft; its ExpiresAt ends the hold.
	DraftOrder commerce.DraftOrder `json:"draft_order"`
	// MerchantID is the merchant the order belongs to: the run charges
	// the total to its connected account (settle_payment.go). Empty: no
	// charge, the run only holds the stock until a cancel or the hold's end.
	MerchantID string `json:"merchant_id,omitempty"`
	// PollEvery: how often to ask Stripe when no webhook came (default
	// 10 min; the starter copies config CARTWRIGHT_PAYMENT_POLL_EVERY).
	PollEvery time.Duration `json:"poll_every,omitempty"`
}

// SettleResult is how a written draft order's hold ended (Result.Settled).
type SettleResult struct {
	// State is PAID, PAYMENT_FAILED, CANCELLED or EXPIRED.
	State string `json:"state"`
	// Message explains the state.
	Message string `json:"message,omitempty"`
	// DraftOrderID is the settled draft order.
	DraftOrderID string `json:"draft_order_id"`
	// Stock is how its hold ended (checkout.settle_stock's answer).
	Stock *commerce.StockSettlement `json:"stock,omitempty"`
	// Payment is the charge, when the order has a merchant.
	Payment *PaymentView `json:"payment,omitempty"`
	// Evidence lists the snapshot of every tool call of the run.
	Evidence []workflows.EvidenceRef `json:"evidence"`
}

// SettleStatus is the hold of a written draft order (Status.Order).
type SettleStatus struct {
	State        string    `json:"state"`
	DraftOrderID string    `json:"draft_order_id"`
	GrandTotal   string    `json:"grand_total"`
	HoldUntil    time.Time `json:"hold_until"`
	// Cancellable is true while a cancel still returns the stock.
	Cancellable bool                      `json:"cancellable"`
	Stock       *commerce.StockSettlement `json:"stock,omitempty"`
	Payment     *PaymentView              `json:"payment,omitempty"`
	Rejected    workflows.SignalLog       `json:"rejected_signals"`
	Evidence    []workflows.EvidenceRef   `json:"evidence"`
	Result      *SettleResult             `json:"result,omitempty"`
}

// CancelOrderInput is the input of the cancel_order update.
type CancelOrderInput struct {
	// Reason is free text for the record; it is not shown in queries.
	Reason string `json:"reason,omitempty"`
}
