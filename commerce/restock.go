package commerce

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// ToolRestockReturned puts the units of a refund back on hand once the
// goods came back (docs/stock.md#returns).
const ToolRestockReturned = "checkout.restock_returned"

// RestockArgs is the input of checkout.restock_returned
// (schemas/checkout.restock_returned.input.json): the paid draft order and
// the lines that came back, each at most what the calling refund run
// refunded.
type RestockArgs struct {
	DraftOrderID string     `json:"draft_order_id"`
	Lines        []LineItem `json:"lines"`
}

// Restock is what checkout.restock_returned answers: the units put back on
// hand, per warehouse they had been committed from.
type Restock struct {
	DraftOrderID string        `json:"draft_order_id"`
	Lines        []Reservation `json:"lines"`
	// Replayed is true when this refund's return had been recorded
	// already: nothing moved again.
	Replayed bool `json:"replayed"`
}

func restockSpec() toolkit.Spec {
	return toolkit.Spec{
		Name:    ToolRestockReturned,
		Version: "1.0.0",
		Description: "Put the units of a refunded paid draft order back on hand once the goods came back (the operator's " +
			"returned signal on the refund run). Only the refund run that refunded them may call it, once: a repeat with " +
			"the same lines answers replayed=true and moves nothing. Each line at most what that refund covered and what " +
			"the order committed less earlier returns. Common failures: INVALID_ARGUMENT (details.reason not_refunded, " +
			"more_than_committed or not_paid), CONFLICT (this refund returned other lines already), FORBIDDEN (another " +
			"run), NOT_FOUND (no refund by this run), UPSTREAM_ERROR (database unavailable; nothing moved, retry).",
		InputSchema:  ToolRestockReturned + ".input.json",
		OutputSchema: ToolRestockReturned + ".output.json",
		// A write, idempotent by the refund run: one restock per run.
		Annotations: toolkit.Annotations{ReadOnly: false, Idempotent: true},
		Timeout:     10 * time.Second,
		// CONFLICT (other lines returned already) is final.
		Retry:            ledgerRetry,
		EvidenceRequired: true,
		Provider:         "orders-postgres",
		Internal:         true,
	}
}

// restockReturned checks the caller is a refund run of the order that
// refunded the lines, then moves them under the two-phase audit with
// stock_restock (migration 00270).
func (t *tools) restockReturned(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
	var in RestockArgs
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	if t.stock == nil || t.pool == nil {
		return nil, toolkit.Errorf(toolkit.UpstreamError, "no stock ledger is configured")
	}
	owner, found, err := t.stock.HoldOwner(ctx, in.DraftOrderID)
	if err != nil {
		return nil, toolkit.Errorf(toolkit.UpstreamError, "stock ledger unavailable, retry").WithDetail("upstream_code", "db_error").WithCause(err)
	}
	caller := toolkit.CallFrom(ctx).WorkflowID
	if want := RefundWorkflowID(owner, "x"); !found || want == "" || !strings.HasPrefix(caller, strings.TrimSuffix(want, "x")) {
		return nil, toolkit.Errorf(toolkit.Forbidden, "draft order %s is restocked through its own refund runs only", in.DraftOrderID)
	}
	var stored []byte
	err = t.pool.QueryRow(ctx, `SELECT lines FROM refunds WHERE refund_run = $1 AND draft_order_id = $2`, caller, in.DraftOrderID).Scan(&stored)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, toolkit.Errorf(toolkit.NotFound, "%s refunded nothing of draft order %s", caller, in.DraftOrderID)
	}
	if err != nil {
		return nil, toolkit.Errorf(toolkit.UpstreamError, "orders database unavailable, retry").WithCause(err)
	}
	if err := withinRefund(in.Lines, refundedUnits([][]byte{stored})); err != nil {
		return nil, err
	}
	req := call.Request
	payload, _ := json.Marshal(in)
	entry := allowEntry(ctx, req, ToolRestockReturned, "returned goods back on hand", payload,
		map[string]any{"draft_order_id": in.DraftOrderID, "lines": in.Lines})
	if _, err := t.audit.WritePending(ctx, entry); err != nil {
		return nil, auditError(err)
	}
	lines, _ := json.Marshal(in.Lines)
	var outcome string
	var moved, short []byte
	if err := t.pool.QueryRow(ctx, `SELECT r_outcome, r_lines, r_short FROM stock_restock($1, $2, $3, $4)`,
		in.DraftOrderID, caller, lines, req.CorrelationID).Scan(&outcome, &moved, &short); err != nil {
		return nil, toolkit.Errorf(toolkit.UpstreamError, "stock ledger unavailable, retry").WithDetail("upstream_code", "db_error").WithCause(err)
	}
	fail := func(e *toolkit.Error) (*toolkit.Output, error) {
		_, _ = t.audit.Finalize(ctx, req.CorrelationID, evidence.AuditFailed, map[string]any{"error_type": string(e.Code)})
		return nil, e
	}
	out := Restock{DraftOrderID: in.DraftOrderID, Lines: []Reservation{}}
	if err := json.Unmarshal(moved, &out.Lines); err != nil {
		return nil, toolkit.Errorf(toolkit.UpstreamError, "stock ledger answered lines %s", moved)
	}
	switch outcome {
	case "restocked", "already":
		out.Replayed = outcome == "already"
		if _, err := t.audit.Finalize(ctx, req.CorrelationID, evidence.AuditSuccess,
			map[string]any{"lines": out.Lines, "replayed": out.Replayed}); err != nil && !errors.Is(err, evidence.ErrAuditNotFound) {
			return nil, auditError(err)
		}
		return &toolkit.Output{Data: out}, nil
	case "conflict":
		return fail(toolkit.Errorf(toolkit.Conflict, "this refund returned other lines already: %s", moved).WithDetail("returned", out.Lines))
	case "too_many":
		var s []map[string]any
		_ = json.Unmarshal(short, &s)
		return fail(toolkit.Errorf(toolkit.InvalidArgument, "more units than the order committed and has not had back: %s", short).
			WithDetail("reason", "more_than_committed").WithDetail("fields", []string{"lines"}).WithDetail("short", s))
	case "not_committed":
		return fail(toolkit.Errorf(toolkit.InvalidArgument, "draft order %s is not paid: nothing was committed", in.DraftOrderID).
			WithDetail("reason", "not_paid"))
	case "not_found":
		return fail(toolkit.Errorf(toolkit.NotFound, "draft order %s holds no stock", in.DraftOrderID))
	}
	return nil, toolkit.Errorf(toolkit.UpstreamError, "stock ledger answered %q", outcome)
}

// withinRefund refuses lines that were not refunded by the run: a return
// gives back at most what its refund covered.
func withinRefund(lines []LineItem, refunded map[string]int) error {
	asked := map[string]int{}
	for _, l := range lines {
		asked[l.SKU] += l.Quantity
	}
	for sku, n := range asked {
		if n > refunded[sku] {
			return toolkit.Errorf(toolkit.InvalidArgument, "%s: %d returned, this refund covered %d", sku, n, refunded[sku]).
				WithDetail("reason", "not_refunded").WithDetail("fields", []string{"lines"})
		}
	}
	return nil
}
