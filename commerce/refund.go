package commerce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/stripetools"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// ToolRefundPayment refunds a paid draft order, whole or some lines
// (docs/payments.md#refunds).
const ToolRefundPayment = "checkout.refund_payment"

// RefundIDPrefix starts a refund run's workflow id:
// draft-order-refund/{user}/{key}/{refund key} (RefundWorkflowID).
const RefundIDPrefix = "draft-order-refund/"

// RefundWorkflowID is the id of the refund run refundKey of the draft
// order written by workflow draftWorkflowID ("" for an id that is not a
// draft order's).
func RefundWorkflowID(draftWorkflowID, refundKey string) string {
	rest, ok := strings.CutPrefix(draftWorkflowID, DraftOrderIDPrefix)
	if !ok || rest == "" || refundKey == "" {
		return ""
	}
	return RefundIDPrefix + rest + "/" + refundKey
}

// RefundArgs is the input of checkout.refund_payment: the draft order and
// the lines to refund (none: the whole order, what is left of it). The
// amount is never an input: it comes from the stored total.
type RefundArgs struct {
	DraftOrderID string     `json:"draft_order_id"`
	Lines        []LineItem `json:"lines,omitempty"`
	// ApprovalSnapshotID names the support.record_approval snapshot of the
	// calling run's staff approval: required for a refund above the
	// worker's threshold (docs/payments.md#refunds).
	ApprovalSnapshotID string `json:"approval_snapshot_id,omitempty"`
}

// RefundResult is checkout.refund_payment's answer; on a dry run (the
// amount a refund would have, for the staff threshold) nothing moved.
type RefundResult struct {
	DraftOrderID string     `json:"draft_order_id"`
	RefundID     string     `json:"refund_id,omitempty"`
	Status       string     `json:"status"`
	Amount       Money      `json:"amount"`
	Lines        []LineItem `json:"lines"`
	// Remaining is what can still be refunded after this refund.
	Remaining Money `json:"remaining"`
	DryRun    bool  `json:"dry_run"`
	Replayed  bool  `json:"replayed"`
}

// Refunds is the Stripe side of refunds (*stripetools.Client).
type Refunds interface {
	CreateRefund(ctx context.Context, intentID string, amount int64, idempotencyKey string) (stripetools.Refund, error)
}

func refundSpec() toolkit.Spec {
	s := paymentSpec(ToolRefundPayment, "1.1.0", "Refund a paid draft order, whole or some lines, to the customer's card "+
		"(the transfer to the merchant is reversed and the platform fee refunded in proportion). Only the order's own "+
		"refund run may call it; above the worker's configured amount only with that run's staff approval "+
		"(approval_snapshot_id). The amount comes from the stored total, never from the caller. dry_run answers the "+
		"amount without refunding. Success: the Stripe refund's id, amount, the lines it covers and what is left. Common "+
		"failures: INVALID_ARGUMENT (not paid, refunded in full, more units than are left, a line not in the order: "+
		"details.reason), FORBIDDEN (another run; approval_missing), UPSTREAM_ERROR (Stripe; retry).", false, true)
	return s
}

// refundPayment computes the refund from the stored total and, unless a
// dry run, refunds it once per refund run (idempotency key of the run),
// under the two-phase audit, with the payment row locked so refunds of one
// payment never add up to more than was charged.
func (t *tools) refundPayment(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
	var in RefundArgs
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	if err := t.paymentsReady(); err != nil {
		return nil, err
	}
	if t.refunds == nil {
		return nil, toolkit.Errorf(toolkit.UpstreamError, "refunds are not configured on this worker")
	}
	owner, found, err := t.stock.HoldOwner(ctx, in.DraftOrderID)
	if err != nil {
		return nil, toolkit.Errorf(toolkit.UpstreamError, "orders database unavailable, retry").WithCause(err)
	}
	caller := toolkit.CallFrom(ctx).WorkflowID
	if want := RefundWorkflowID(owner, "x"); !found || want == "" || !strings.HasPrefix(caller, strings.TrimSuffix(want, "x")) {
		return nil, toolkit.Errorf(toolkit.Forbidden, "draft order %s is refunded through its own refund runs only", in.DraftOrderID)
	}
	req := call.Request
	var out RefundResult
	err = pgx.BeginTxFunc(ctx, t.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var intent, currency, state string
		var paid int64
		var total []byte
		if err := tx.QueryRow(ctx, `SELECT p.payment_intent_id, p.amount_minor, p.currency, h.state, d.total
			FROM payments p JOIN stock_holds h USING (draft_order_id) JOIN draft_orders d USING (draft_order_id)
			WHERE p.draft_order_id = $1 FOR UPDATE OF p`, in.DraftOrderID).Scan(&intent, &paid, &currency, &state, &total); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return toolkit.Errorf(toolkit.NotFound, "draft order %s has no payment", in.DraftOrderID)
			}
			return err
		}
		if state != "committed" {
			// Final for this request (CONFLICT would be retried): the
			// caller asks again once the order is paid.
			return toolkit.Errorf(toolkit.InvalidArgument, "draft order %s is not paid (%s): nothing to refund", in.DraftOrderID, state).
				WithDetail("reason", "not_paid")
		}
		// This run's refund, made before: the same answer.
		var done RefundResult
		var lines []byte
		err := tx.QueryRow(ctx, `SELECT stripe_refund_id, status, amount_minor, lines FROM refunds WHERE refund_run = $1`, caller).
			Scan(&done.RefundID, &done.Status, &done.Amount.Amount, &lines)
		if err == nil {
			var refunded int64
			if err := tx.QueryRow(ctx, `SELECT coalesce(sum(amount_minor), 0) FROM refunds WHERE draft_order_id = $1`, in.DraftOrderID).Scan(&refunded); err != nil {
				return err
			}
			done.Lines = []LineItem{}
			_ = json.Unmarshal(lines, &done.Lines)
			done.Remaining = Money{Amount: paid - refunded, Currency: currency}
			done.DraftOrderID, done.Amount.Currency, done.Replayed, done.DryRun = in.DraftOrderID, currency, true, req.DryRun
			out = done
			return nil
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		var refunded int64
		var before [][]byte
		if err := tx.QueryRow(ctx, `SELECT coalesce(sum(amount_minor), 0), coalesce(array_agg(lines), '{}') FROM refunds WHERE draft_order_id = $1`,
			in.DraftOrderID).Scan(&refunded, &before); err != nil {
			return err
		}
		amount, covered, err := refundAmount(total, in.Lines, refundedUnits(before), paid-refunded)
		if err != nil {
			return err
		}
		out = RefundResult{DraftOrderID: in.DraftOrderID, Status: "pending", Amount: Money{Amount: amount, Currency: currency},
			Lines: covered, Remaining: Money{Amount: paid - refunded - amount, Currency: currency}, DryRun: req.DryRun}
		if req.DryRun {
			return nil
		}
		if amount > t.refundAbove {
			if err := t.approvedRefund(ctx, in.ApprovalSnapshotID, caller); err != nil {
				return err
			}
		}
		entry := allowEntry(ctx, req, ToolRefundPayment, "refund a paid draft order",
			fmt.Appendf(nil, "%s/%s/%d", in.DraftOrderID, caller, amount), map[string]any{"draft_order_id": in.DraftOrderID, "amount": out.Amount})
		if _, err := t.audit.WritePending(ctx, entry); err != nil {
			return auditError(err)
		}
		r, err := t.refunds.CreateRefund(ctx, intent, amount, idemKey(caller, "refund"))
		if err != nil {
			return err
		}
		lj, _ := json.Marshal(out.Lines)
		if _, err := tx.Exec(ctx, `INSERT INTO refunds (refund_run, draft_order_id, stripe_refund_id, amount_minor, currency, lines, status)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, caller, in.DraftOrderID, r.ID, amount, currency, lj, r.Status); err != nil {
			return err
		}
		out.RefundID, out.Status = r.ID, r.Status
		return nil
	})
	if err != nil {
		var te *toolkit.Error
		if errors.As(err, &te) {
			return nil, te
		}
		return nil, toolkit.Errorf(toolkit.UpstreamError, "orders database unavailable, retry").WithCause(err)
	}
	if !out.DryRun && !out.Replayed {
		if _, err := t.audit.Finalize(ctx, req.CorrelationID, evidence.AuditSuccess,
			map[string]any{"refund_id": out.RefundID}); err != nil && !errors.Is(err, evidence.ErrAuditNotFound) {
			return nil, auditError(err)
		}
	}
	return &toolkit.Output{Data: out}, nil
}

// approvedRefund checks that snapshot id is a staff approval of the
// calling run (support.record_approval, approve, by a verified member with
// role refunds or admin): a refund above the worker's threshold needs one,
// whatever threshold the run was started with.
func (t *tools) approvedRefund(ctx context.Context, id, caller string) error {
	refuse := func(format string, args ...any) error {
		return toolkit.Errorf(toolkit.Forbidden, format, args...).WithDetail("reason", "approval_missing").
			WithRecovery("refunds above the configured amount are approved by staff with role refunds or admin in the refund run")
	}
	if id == "" {
		return refuse("a refund above %d needs a staff approval of this run", t.refundAbove)
	}
	got, err := t.readStored(ctx, []string{id})
	if err != nil {
		return err
	}
	rec, ok := got[id]
	if !ok || rec.Tool != support.RecordApprovalTool || rec.WorkflowID != caller || rec.Status == string(toolkit.StatusError) {
		return refuse("evidence snapshot %s is no staff decision of this run", id)
	}
	var a support.ApprovalRecord
	if err := json.Unmarshal(rec.Output, &a); err != nil || a.Decision != support.DecisionApprove || !a.StaffVerified ||
		(a.ApproverRole != support.RoleRefunds && a.ApproverRole != support.RoleAdmin) {
		return refuse("evidence snapshot %s approves no refund (decision %q by role %q)", id, a.Decision, a.ApproverRole)
	}
	return nil
}

// refundedUnits adds up the units of each SKU earlier refunds covered
// (their stored lines).
func refundedUnits(stored [][]byte) map[string]int {
	out := map[string]int{}
	for _, raw := range stored {
		var ls []LineItem
		_ = json.Unmarshal(raw, &ls)
		for _, l := range ls {
			out[l.SKU] += l.Quantity
		}
	}
	return out
}

// refundAmount is what lines are worth in the stored total (unit price ×
// quantity; none: everything left, money and units), at most left, and
// the lines it covers: each SKU's quantity at most what the order has
// less what earlier refunds covered (done).
func refundAmount(totalJSON []byte, lines []LineItem, done map[string]int, left int64) (int64, []LineItem, error) {
	if left <= 0 {
		return 0, nil, toolkit.Errorf(toolkit.InvalidArgument, "the order is refunded in full already").WithDetail("reason", "refunded")
	}
	var tot Total
	if err := json.Unmarshal(totalJSON, &tot); err != nil {
		return 0, nil, fmt.Errorf("decode the stored total: %w", err)
	}
	ordered, price := map[string]int{}, map[string]int64{}
	var order []string
	for _, tl := range tot.Lines {
		if _, ok := ordered[tl.SKU]; !ok {
			order = append(order, tl.SKU)
		}
		ordered[tl.SKU] += tl.Quantity
		price[tl.SKU] = tl.UnitPrice.Amount
	}
	if len(lines) == 0 {
		// The whole order: the money left and every unit not refunded yet.
		rest := []LineItem{}
		for _, sku := range order {
			if n := ordered[sku] - done[sku]; n > 0 {
				rest = append(rest, LineItem{SKU: sku, Quantity: n})
			}
		}
		return left, rest, nil
	}
	asked := map[string]int{}
	var skus []string
	for _, l := range lines {
		if _, ok := ordered[l.SKU]; !ok {
			return 0, nil, toolkit.Errorf(toolkit.InvalidArgument, "%s is not in the order", l.SKU).WithDetail("fields", []string{"lines"}).
				WithDetail("reason", "not_in_order")
		}
		if l.Quantity < 1 {
			return 0, nil, toolkit.Errorf(toolkit.InvalidArgument, "%s: quantity %d", l.SKU, l.Quantity).WithDetail("fields", []string{"lines"})
		}
		if asked[l.SKU] == 0 {
			skus = append(skus, l.SKU)
		}
		asked[l.SKU] += l.Quantity
	}
	var amount int64
	out := make([]LineItem, 0, len(skus))
	for _, sku := range skus {
		if n, can := asked[sku], ordered[sku]-done[sku]; n > can {
			return 0, nil, toolkit.Errorf(toolkit.InvalidArgument, "%s: the order has %d, %d refunded already; %d cannot be refunded",
				sku, ordered[sku], done[sku], n).WithDetail("fields", []string{"lines"}).WithDetail("reason", "more_than_left")
		}
		amount += price[sku] * int64(asked[sku])
		out = append(out, LineItem{SKU: sku, Quantity: asked[sku]})
	}
	if amount > left {
		return 0, nil, toolkit.Errorf(toolkit.InvalidArgument, "the lines are worth %d, only %d is left to refund", amount, left).
			WithDetail("reason", "more_than_left")
	}
	return amount, out, nil
}
