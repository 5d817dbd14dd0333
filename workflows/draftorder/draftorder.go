package draftorder

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// Names of the draft order's workflow type and signals.
const (
	WorkflowName = "DraftOrder"

	SignalConfirm = "confirm"
	SignalCancel  = "cancel"
)

// Defaults used when neither the input nor the starter's configuration set
// a value (they mirror internal/config's defaults). The workflow never
// reads configuration itself: the starter copies it into the input, so a
// replay sees the same values as the original run.
const (
	DefaultConfirmWindow      = 30 * time.Minute
	DefaultApprovalConfidence = 0.80
	DefaultShippingService    = commerce.ServiceStandard
)

// Draft order states (CartwrightState and Status.State).
const (
	StateQuoting          = "QUOTING"
	StateAwaitingApproval = "AWAITING_APPROVAL"
	StatePricing          = "PRICING"
	StateNeedsConfirm     = "NEEDS_USER_CONFIRMATION"
	StatePriceChanged     = "PRICE_CHANGED"
	StateRequoting        = "REQUOTING"
	StateCreating         = "CREATING"
	// Final states.
	StateDraftCreated = "DRAFT_CREATED"
	// StateDryRunValidated: a dry run (request.dry_run) validated the
	// draft order and wrote nothing.
	StateDryRunValidated   = "VALIDATED"
	StateComplianceBlocked = "COMPLIANCE_BLOCKED"
	StateApprovalRejected  = "APPROVAL_REJECTED"
	StateApprovalExpired   = "APPROVAL_EXPIRED"
	StateOutOfStock        = "OUT_OF_STOCK"
	StateAddressInvalid    = "ADDRESS_INVALID"
	StateCancelled         = "CANCELLED"
	StateExpired           = "EXPIRED"
)

// Input starts a draft order. The workflow id must be
// DraftOrderID(Request.UserID, Request.IdempotencyKey).
type Input struct {
	// Request is the caller's envelope (docs/envelope.md#request-envelope):
	// user_id, actor, idempotency_key (required: it names the workflow and
	// scopes the draft order's write), locale, currency, dry_run, trace … Every
	// tool call of the run carries it, with its own correlation id.
	Request toolkit.Request `json:"request"`
	// Order is what is ordered: items, ship_to, currency (empty means
	// Request.Currency), shipping_service, incoterm.
	commerce.Order
	// ConfirmWindow bounds each wait for the user's confirmation (default 30 min).
	ConfirmWindow time.Duration `json:"confirm_window,omitempty"`
	// ApprovalWindow bounds the wait for support staff (default 24 h).
	ApprovalWindow time.Duration `json:"approval_window,omitempty"`
	// ApprovalConfidence: a compliance confidence below it needs support
	// staff (default 0.80, docs/approvals.md#confidence-threshold).
	ApprovalConfidence float64 `json:"approval_confidence,omitempty"`
	// MerchantID is the merchant (the tenant's merchant row) the order
	// belongs to: once written, its total is charged to the merchant's
	// connected account (docs/payments.md). Empty: the written draft
	// only holds its stock (docs/stock.md).
	MerchantID string `json:"merchant_id,omitempty"`
	// PaymentPollEvery: how often the run asks Stripe about the charge
	// when no webhook came (default 10 min).
	PaymentPollEvery time.Duration `json:"payment_poll_every,omitempty"`
}

// StartDefaults are the windows and threshold a starter fills in when an
// input leaves them empty (zero fields here: the workflows' own defaults).
// The starter, not the workflow, applies them, so the values are in the
// run's history.
type StartDefaults struct {
	ConfirmWindow      time.Duration
	ApprovalWindow     time.Duration
	ApprovalConfidence float64
	OnboardingDeadline time.Duration
	PaymentPollEvery   time.Duration
	// RefundApprovalAbove goes into every refund the starter starts.
	RefundApprovalAbove int64
	// RefundRestock (on_return or never) and ReturnWindow go into every
	// refund too (docs/stock.md#returns).
	RefundRestock string
	ReturnWindow  time.Duration
}

// ApplyDefaults fills the windows and threshold the caller left empty
// (zero) from d. Negative values stay, for Check to refuse.
func (in *Input) ApplyDefaults(d StartDefaults) {
	if in.ConfirmWindow == 0 {
		in.ConfirmWindow = d.ConfirmWindow
	}
	if in.ApprovalWindow == 0 {
		in.ApprovalWindow = d.ApprovalWindow
	}
	if in.ApprovalConfidence == 0 {
		in.ApprovalConfidence = d.ApprovalConfidence
	}
	if in.PaymentPollEvery == 0 {
		in.PaymentPollEvery = d.PaymentPollEvery
	}
}

// Result is how a draft order ended. Business outcomes (blocked,
// out of stock, an unknown SKU, cancelled, expired …) are results, not
// workflow failures (draftorder_refusal.go); an input its start check
// refuses ends the run canceled (draftorder_startrefusal.go). An outage that outlives the order's window
// is the result UNAVAILABLE (draftorder_outlive.go).
type Result struct {
	// State is a final state: DRAFT_CREATED or why not.
	State string `json:"state"`
	// Code is the closed-set error code of a state that is not
	// DRAFT_CREATED (COMPLIANCE_BLOCKED, OUT_OF_STOCK, ADDRESS_INVALID,
	// NEEDS_USER_CONFIRMATION for an expired confirmation, TIMEOUT for an
	// expired approval); empty on success and on cancel.
	Code toolkit.Code `json:"code,omitempty"`
	// Message explains the state.
	Message string `json:"message,omitempty"`
	// Error is the whole error object of a state with a Code
	// (docs/errors.md#error-object): a tool's refusal exactly as its
	// evidence holds it (details naming the SKU, field or rule,
	// recovery_suggestion, next_steps, can_retry), or the one the
	// workflow made for its own outcomes (docs/errors.md#draft-order-outcomes).
	Error *toolkit.Error `json:"error,omitempty"`
	// DraftOrder is the created draft order.
	DraftOrder *commerce.DraftOrder `json:"draft_order,omitempty"`
	// Total is the last total computed (the confirmed one on success).
	Total *commerce.Total `json:"total,omitempty"`
	// Origins is where the order ships from and why (nil when it ended
	// before the choice).
	Origins *OriginsSummary `json:"origins,omitempty"`
	// Approval is the support-staff decision, when one was needed.
	Approval *approval.Outcome `json:"approval,omitempty"`
	// Evidence lists the snapshot of every tool call of the run up to the
	// draft's write (the hold's are in Settled).
	Evidence []workflows.EvidenceRef `json:"evidence"`
	// Settled is how a written draft's hold ended (paid, payment failed,
	// cancelled or expired): set in the run's final result only, never in
	// the confirmation's answer, which comes when the draft is written.
	Settled *SettleResult `json:"settled,omitempty"`
}

// PendingConfirmation is what the user is asked to confirm.
type PendingConfirmation struct {
	// QuoteHash must be echoed in the confirm signal.
	QuoteHash  string         `json:"quote_hash"`
	GrandTotal commerce.Money `json:"grand_total"`
	// DueOnDelivery is duty and tax the buyer pays on delivery (DAP).
	DueOnDelivery commerce.Money `json:"due_on_delivery"`
	// QuoteExpiresAt: a confirmation after it re-quotes first.
	QuoteExpiresAt time.Time `json:"quote_expires_at"`
	// ConfirmBy ends the wait; the draft order then expires.
	ConfirmBy time.Time `json:"confirm_by"`
	// PriceChanged is true when this total replaced one the user confirmed.
	PriceChanged bool `json:"price_changed"`
	// PreviousQuoteHash is the hash the user confirmed before the change.
	PreviousQuoteHash string `json:"previous_quote_hash,omitempty"`
	// ShipsFrom are the warehouses the total ships from, one per parcel
	// (an order that chose its origin; Status.Origins says why).
	ShipsFrom []string `json:"ships_from,omitempty"`
	// Example is a ready-to-send confirm payload.
	Example string `json:"example"`
}

// ComplianceSummary is the compliance answer without personal data.
type ComplianceSummary struct {
	Verdict    string   `json:"verdict"`
	Confidence float64  `json:"confidence"`
	Reasons    []string `json:"reasons"`
	Ruleset    string   `json:"ruleset_version"`
	// NeedsApproval is true when support staff must decide
	// (docs/approvals.md#when-a-human-decides).
	NeedsApproval bool `json:"needs_approval"`
}

// Status answers the status query.
type Status struct {
	State string `json:"state"`
	// Destination is the country only: the address is PII.
	Destination  string               `json:"destination"`
	Currency     string               `json:"currency"`
	Confirmation *PendingConfirmation `json:"confirmation,omitempty"`
	Approvals    approval.Status      `json:"approvals"`
	Rejected     workflows.SignalLog  `json:"rejected_signals"`
	Compliance   *ComplianceSummary   `json:"compliance,omitempty"`
	Total        *commerce.Total      `json:"total,omitempty"`
	// Origins is where the order ships from and why
	// (docs/tools.md#origin-choice); nil until the first choice.
	Origins    *OriginsSummary         `json:"origins,omitempty"`
	DraftOrder *commerce.DraftOrder    `json:"draft_order,omitempty"`
	Requotes   int                     `json:"requotes"`
	Evidence   []workflows.EvidenceRef `json:"evidence"`
	Result     *Result                 `json:"result,omitempty"`
	// Waiting is the outage the order waits out now, and why: the call,
	// its error, the next try (nil when it waits on none).
	Waiting *WaitReason `json:"waiting,omitempty"`
	// Order is the written draft's hold: holding or awaiting payment,
	// then paid, cancelled, payment failed or expired, with the payment
	// and the stock movement (nil until the draft is written).
	Order *SettleStatus `json:"order,omitempty"`
}

// Flow is the draft order bound to the specs of the tools it
// calls (its activity options come from the specs).
type Flow struct{ Specs flow.ToolSpecs }

// Run (registered as WorkflowName) prices a basket (pricing, shipping and compliance in parallel,
// then duties and taxes, then the total), asks support staff when compliance
// is uncertain, waits for the user to confirm the exact total (re-quoting a
// stale quote) and creates the draft order exactly once for the user's
// idempotency key (docs/envelope.md#idempotency).
func (b Flow) Run(ctx workflow.Context, in Input) (Result, error) {
	d := &draftOrder{specs: b.Specs}
	if err := d.setup(ctx, in); err != nil {
		return Result{}, err
	}
	res, err := d.run(ctx)
	// Update handlers still waiting (for the end, or for their turn)
	// answer before the run closes; the wait adds no command, and a run
	// without updates does not wait at all.
	d.over, d.failed, d.settle.over = true, err, true
	if aerr := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); aerr != nil && err == nil {
		err = aerr
	}
	return res, err
}
