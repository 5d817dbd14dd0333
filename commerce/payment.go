package commerce

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/merchant"
	"github.com/cartwright-dev/cartwright/stripetools"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// The payment tools (docs/payments.md): the draft order's run charges the
// written draft order's confirmed total to the customer with a
// destination charge to the merchant's connected account, reads the
// charge when a webhook is late, and cancels it when the order ends
// unpaid. Amounts, the fee and the destination come from the stored
// draft, the configuration and the merchant row, never from the caller.
const (
	ToolCreatePayment = "checkout.create_payment"
	ToolGetPayment    = "checkout.get_payment"
	ToolCancelPayment = "checkout.cancel_payment"
)

// Payments is the Stripe side of the payment tools (*stripetools.Client).
type Payments interface {
	CreateIntent(ctx context.Context, r stripetools.IntentRequest) (stripetools.Intent, error)
	GetIntent(ctx context.Context, id string) (stripetools.Intent, error)
	CancelIntent(ctx context.Context, id, idempotencyKey string) (stripetools.Intent, error)
}

// Merchants finds a merchant row (*merchant.Store).
type Merchants interface {
	ByID(ctx context.Context, tenant, merchantID string) (merchant.Row, bool, error)
}

// PaymentArgs is the input of the payment tools
// (schemas/checkout.*_payment.input.json): the draft order, and for the
// create the merchant it belongs to.
type PaymentArgs struct {
	DraftOrderID string `json:"draft_order_id"`
	MerchantID   string `json:"merchant_id,omitempty"`
}

// Payment is what the payment tools answer.
type Payment struct {
	DraftOrderID    string `json:"draft_order_id"`
	PaymentIntentID string `json:"payment_intent_id"`
	// Status is Stripe's PaymentIntent status (succeeded, canceled,
	// requires_payment_method, processing …).
	Status         string `json:"status"`
	Amount         Money  `json:"amount"`
	ApplicationFee Money  `json:"application_fee"`
	// Destination is the merchant's connected account.
	Destination string `json:"destination_account"`
	// Secret is the client secret the customer's browser confirms the
	// payment with (create only). The sanitiser masks this key: the
	// envelope, history and logs hold "***"; the evidence store keeps
	// it encrypted and RevealClientSecret reads it, logged.
	Secret       string `json:"secret,omitempty"`
	SecretSHA256 string `json:"secret_sha256,omitempty"`
}

// idemKey is the Stripe idempotency key of one step of one draft order's hold:
// the same step of the same run always sends the same key, so a retry
// (the activity's, or a worker killed between charge and answer) gets
// the same PaymentIntent, never a second charge.
func idemKey(workflowID, step string) string {
	sum := sha256.Sum256([]byte(workflowID + "/" + step))
	return "cw-" + hex.EncodeToString(sum[:16])
}

func paymentSpec(name, version, desc string, readOnly, internal bool) toolkit.Spec {
	return toolkit.Spec{
		Name: name, Version: version, Description: desc,
		InputSchema: name + ".input.json", OutputSchema: name + ".output.json",
		Annotations: toolkit.Annotations{ReadOnly: readOnly, Idempotent: true, OpenWorld: true},
		Timeout:     8 * time.Second,
		// Stripe outages are waited out by the draft order run's retries; each
		// attempt sends the same idempotency key.
		// A CONFLICT (a draft no longer open, a hold ended) is final: no
		// retry changes it (docs/errors.md#retryable-codes).
		Retry: toolkit.RetryPolicy{InitialInterval: time.Second, MaxInterval: time.Minute, MaxAttempts: 0,
			FinalCodes: []toolkit.Code{toolkit.Conflict}},
		EvidenceRequired: true,
		Provider:         "stripe",
		Internal:         internal,
	}
}

func createPaymentSpec() toolkit.Spec {
	return paymentSpec(ToolCreatePayment, "1.0.0", "Charge a written draft order: a Stripe PaymentIntent for its confirmed "+
		"total, a destination charge to its merchant's connected account minus the platform fee. Only the draft order's "+
		"own run may call it; amount, fee and destination come from the stored draft, the configuration and the "+
		"merchant row. Success: the intent's id and status; its client secret is masked and revealed to the backend only. "+
		"A repeat returns the same intent (idempotency key of the run and step). Common failures: FORBIDDEN (another "+
		"run's draft), NOT_FOUND (no such draft or merchant), CONFLICT (draft no longer open), INVALID_ARGUMENT "+
		"(merchant without a connected account), UPSTREAM_ERROR / RATE_LIMITED / TIMEOUT (Stripe; retry).", false, true)
}

func getPaymentSpec() toolkit.Spec {
	s := paymentSpec(ToolGetPayment, "1.1.0", "Read the payment of one of the caller's own written draft orders from Stripe: status "+
		"(succeeded, processing, requires_payment_method, canceled …), amount and fee. Read-only; never charges. "+
		"Common failures: NOT_FOUND (no payment for that draft order, or the order is not the caller's user's or "+
		"tenant's), UPSTREAM_ERROR / RATE_LIMITED / TIMEOUT (Stripe).", true, false)
	s.Retry.MaxAttempts = 5
	return s
}

func cancelPaymentSpec() toolkit.Spec {
	return paymentSpec(ToolCancelPayment, "1.0.0", "Cancel a written draft order's PaymentIntent so it can no longer "+
		"succeed (the order was cancelled, its payment failed or its hold ended). Only the draft order's own run may "+
		"call it. Success: the intent's status — canceled, or succeeded when the customer paid first (then the order "+
		"is paid). Common failures: FORBIDDEN, NOT_FOUND, UPSTREAM_ERROR (Stripe; retry).", false, true)
}

// ownRun refuses a call from any run but the draft's own (the run that
// wrote it holds it and takes its payment).
func (t *tools) ownRun(ctx context.Context, draftID string) error {
	if t.stock == nil {
		return toolkit.Errorf(toolkit.UpstreamError, "no stock ledger is configured")
	}
	owner, found, err := t.stock.HoldOwner(ctx, draftID)
	if err != nil {
		return toolkit.Errorf(toolkit.UpstreamError, "orders database unavailable, retry").WithDetail("upstream_code", "db_error").WithCause(err)
	}
	if !found {
		return toolkit.Errorf(toolkit.NotFound, "no written draft order %s", draftID)
	}
	if !isOwnRun(owner, toolkit.CallFrom(ctx).WorkflowID) {
		return toolkit.Errorf(toolkit.Forbidden, "draft order %s is paid through its own run only", draftID)
	}
	return nil
}

func (t *tools) paymentsReady() error {
	if t.payments == nil || t.pool == nil {
		return toolkit.Errorf(toolkit.UpstreamError, "payments are not configured on this worker")
	}
	return nil
}

func (t *tools) createPayment(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
	var in PaymentArgs
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	if err := t.paymentsReady(); err != nil {
		return nil, err
	}
	if err := t.ownRun(ctx, in.DraftOrderID); err != nil {
		return nil, err
	}
	var status, currency string
	var amount int64
	err := t.pool.QueryRow(ctx, `SELECT status, grand_total_minor, currency FROM draft_orders WHERE draft_order_id = $1`,
		in.DraftOrderID).Scan(&status, &amount, &currency)
	if err != nil {
		return nil, toolkit.Errorf(toolkit.UpstreamError, "orders database unavailable, retry").WithCause(err)
	}
	// A tenant's call reaches only its own merchants (docs/mcp.md#tenants);
	// a backend without a tenant has platform-wide reach.
	tenant := call.Request.Tenant
	if tenant == "" {
		tenant = merchant.AllTenants
	}
	m, found, err := t.merchants.ByID(ctx, tenant, in.MerchantID)
	if errors.Is(err, merchant.ErrOtherTenant) {
		return nil, toolkit.Errorf(toolkit.Forbidden, "merchant %s is not one of this tenant's", in.MerchantID)
	}
	if err != nil {
		return nil, toolkit.Errorf(toolkit.UpstreamError, "merchant store unavailable, retry").WithCause(err)
	}
	if !found {
		return nil, toolkit.Errorf(toolkit.NotFound, "no merchant %s", in.MerchantID)
	}
	if m.StripeAccountID == "" {
		return nil, toolkit.Errorf(toolkit.InvalidArgument, "merchant %s has no connected Stripe account", in.MerchantID).
			WithRecovery("onboard the merchant first", "stripe.create_relink_url")
	}
	caller := toolkit.CallFrom(ctx).WorkflowID
	// A repeat after the charge answers from the intent already made.
	if p, ok, err := t.storedPayment(ctx, in.DraftOrderID); err != nil {
		return nil, err
	} else if !ok && status != "open" {
		return nil, toolkit.Errorf(toolkit.Conflict, "draft order %s is %s: nothing to charge", in.DraftOrderID, status)
	} else if ok && p.Destination != m.StripeAccountID {
		return nil, toolkit.Errorf(toolkit.Conflict, "draft order %s is already charged to another account", in.DraftOrderID)
	}
	fee := amount * int64(t.feeBPS) / 10000
	req := call.Request
	entry := allowEntry(ctx, req, ToolCreatePayment, "charge a written draft order",
		fmt.Appendf(nil, "%s/%d/%s/%d/%s", in.DraftOrderID, amount, currency, fee, m.StripeAccountID),
		map[string]any{"draft_order_id": in.DraftOrderID, "merchant_id": in.MerchantID,
			"amount": Money{Amount: amount, Currency: currency}, "application_fee": Money{Amount: fee, Currency: currency}})
	// Audit first (docs/evidence.md#two-phase-audit): no row, no charge.
	if _, err := t.audit.WritePending(ctx, entry); err != nil {
		return nil, auditError(err)
	}
	intent, err := t.payments.CreateIntent(ctx, stripetools.IntentRequest{
		Amount: amount, Currency: currency, Fee: fee, Destination: m.StripeAccountID,
		IdempotencyKey: idemKey(caller, "payment/create"),
		Metadata:       map[string]string{"draft_order_id": in.DraftOrderID, "cartwright_run": caller},
	})
	if err != nil {
		// Left pending: the retry sends the same key (and reconcile
		// closes a row nobody retries).
		return nil, err
	}
	if _, err := t.pool.Exec(ctx, `INSERT INTO payments (draft_order_id, payment_intent_id, workflow_id, merchant_id,
			destination_account, amount_minor, currency, fee_minor, status)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (draft_order_id) DO UPDATE SET status = EXCLUDED.status, updated_at = now()
		WHERE payments.payment_intent_id = EXCLUDED.payment_intent_id`,
		in.DraftOrderID, intent.ID, caller, in.MerchantID, m.StripeAccountID, amount, currency, fee, intent.Status); err != nil {
		return nil, toolkit.Errorf(toolkit.UpstreamError, "orders database unavailable, retry").WithCause(err)
	}
	if _, err := t.audit.Finalize(ctx, req.CorrelationID, evidence.AuditSuccess,
		map[string]any{"payment_intent_id": intent.ID}); err != nil && !errors.Is(err, evidence.ErrAuditNotFound) {
		return nil, auditError(err)
	}
	out := paymentOf(in.DraftOrderID, intent, currency)
	out.Secret = intent.ClientSecret
	out.SecretSHA256 = stripetools.URLHash(intent.ClientSecret)
	return &toolkit.Output{Data: out}, nil
}

func (t *tools) getPayment(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
	var in PaymentArgs
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	if err := t.paymentsReady(); err != nil {
		return nil, err
	}
	// Only the order's own user (an agent's tenant, a backend's user) reads
	// its payment; anyone else gets the answer of an order that does not
	// exist, so draft order ids cannot be probed (docs/payments.md#webhooks).
	owner := evidence.HashUserID(call.Request.UserID)
	if owner == "" {
		owner = "-" // no user: nobody's order
	}
	p, ok, err := t.storedPaymentOf(ctx, in.DraftOrderID, owner)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, toolkit.Errorf(toolkit.NotFound, "draft order %s has no payment", in.DraftOrderID)
	}
	intent, err := t.payments.GetIntent(ctx, p.PaymentIntentID)
	if err != nil {
		return nil, err
	}
	return &toolkit.Output{Data: paymentOf(in.DraftOrderID, intent, p.Amount.Currency)}, nil
}

func (t *tools) cancelPayment(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
	var in PaymentArgs
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	if err := t.paymentsReady(); err != nil {
		return nil, err
	}
	if err := t.ownRun(ctx, in.DraftOrderID); err != nil {
		return nil, err
	}
	p, ok, err := t.storedPayment(ctx, in.DraftOrderID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, toolkit.Errorf(toolkit.NotFound, "draft order %s has no payment", in.DraftOrderID)
	}
	intent, err := t.payments.CancelIntent(ctx, p.PaymentIntentID, idemKey(toolkit.CallFrom(ctx).WorkflowID, "payment/cancel"))
	if err != nil {
		return nil, err
	}
	_, _ = t.pool.Exec(ctx, `UPDATE payments SET status = $2, updated_at = now() WHERE draft_order_id = $1`, in.DraftOrderID, intent.Status)
	return &toolkit.Output{Data: paymentOf(in.DraftOrderID, intent, p.Amount.Currency)}, nil
}

// storedPayment is the payments row of a draft order.
func (t *tools) storedPayment(ctx context.Context, draftID string) (Payment, bool, error) {
	return t.storedPaymentOf(ctx, draftID, "")
}

// storedPaymentOf is the payments row of a draft order of the user whose
// hash is userHash ("": of any user); another user's is not found.
func (t *tools) storedPaymentOf(ctx context.Context, draftID, userHash string) (Payment, bool, error) {
	var p Payment
	err := t.pool.QueryRow(ctx, `SELECT p.payment_intent_id, p.status, p.amount_minor, p.currency, p.fee_minor, p.destination_account
		FROM payments p JOIN draft_orders d USING (draft_order_id)
		WHERE p.draft_order_id = $1 AND ($2 = '' OR d.user_id_hash = $2)`, draftID, userHash).
		Scan(&p.PaymentIntentID, &p.Status, &p.Amount.Amount, &p.Amount.Currency, &p.ApplicationFee.Amount, &p.Destination)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, false, nil
	}
	if err != nil {
		return p, false, toolkit.Errorf(toolkit.UpstreamError, "orders database unavailable, retry").WithCause(err)
	}
	p.DraftOrderID, p.ApplicationFee.Currency = draftID, p.Amount.Currency
	return p, true, nil
}

func paymentOf(draftID string, in stripetools.Intent, currency string) Payment {
	if in.Currency != "" {
		currency = in.Currency
	}
	return Payment{DraftOrderID: draftID, PaymentIntentID: in.ID, Status: in.Status,
		Amount: Money{Amount: in.Amount, Currency: currency}, ApplicationFee: Money{Amount: in.Fee, Currency: currency},
		Destination: in.Destination}
}

// RevealClientSecret returns the client secret a create_payment call
// stored in evidence snapshot snapshotID (an access-logged read), checked
// against the hash kept in clear: what the backend hands the customer's
// browser to confirm the payment.
func RevealClientSecret(ctx context.Context, ev stripetools.RawReader, snapshotID, wantHash, reader string) (string, error) {
	raw, err := ev.ReadRaw(ctx, snapshotID, reader, "reveal a payment's client secret to the backend")
	if err != nil {
		return "", err
	}
	var p Payment
	if err := json.Unmarshal(raw, &p); err != nil {
		return "", fmt.Errorf("snapshot %s does not hold a payment: %w", snapshotID, err)
	}
	if p.Secret == "" || stripetools.URLHash(p.Secret) != p.SecretSHA256 || (wantHash != "" && wantHash != p.SecretSHA256) {
		return "", fmt.Errorf("snapshot %s does not hold the expected client secret", snapshotID)
	}
	return p.Secret, nil
}
