package commerce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// ToolSettleStock ends a draft order's stock hold (docs/stock.md).
const ToolSettleStock = "checkout.settle_stock"

// Stock actions and the reasons a hold ends (docs/stock.md#a-hold-ends).
const (
	StockCommit  = "commit"
	StockRelease = "release"

	ReasonPaid          = "paid"
	ReasonCancelled     = "cancelled"
	ReasonPaymentFailed = "payment_failed"
	ReasonHoldExpired   = "hold_expired"
)

// DraftOrderIDPrefix starts the workflow id of a draft order
// (workflows.DraftOrderID; commerce sits below workflows).
const DraftOrderIDPrefix = "draft-order/"

// isOwnRun reports whether caller is the run that wrote the draft order
// (owner, the draft's workflow id), which also settles it.
func isOwnRun(owner, caller string) bool {
	return strings.HasPrefix(owner, DraftOrderIDPrefix) && caller == owner
}

// SettleStockArgs is the input of checkout.settle_stock
// (schemas/checkout.settle_stock.input.json).
type SettleStockArgs struct {
	DraftOrderID string `json:"draft_order_id"`
	// Action is commit (paid) or release.
	Action string `json:"action"`
	// Reason is paid for a commit; cancelled, payment_failed or
	// hold_expired for a release.
	Reason string `json:"reason"`
}

// StockSettlement is what checkout.settle_stock answers: how the hold
// ended and the lines it moved.
type StockSettlement struct {
	DraftOrderID string `json:"draft_order_id"`
	// State is committed or released.
	State     string        `json:"state"`
	Reason    string        `json:"reason"`
	Lines     []Reservation `json:"lines"`
	SettledAt time.Time     `json:"settled_at"`
	// Replayed is true when the hold had already ended this way: nothing
	// moved again.
	Replayed bool `json:"replayed"`
}

// StockStore ends holds (PGStock: the ledger of migration 00260).
type StockStore interface {
	// HoldOwner is the workflow that wrote the hold's draft ("", false
	// when there is no hold).
	HoldOwner(ctx context.Context, draftOrderID string) (string, bool, error)
	// Settle commits or releases the hold once (stock_settle).
	Settle(ctx context.Context, draftOrderID, action, reason, correlationID string) (SettleOutcome, error)
}

// SettleOutcome is what StockStore.Settle did: settled now, already
// settled the same way, the other way (conflict), or no hold (not_found).
type SettleOutcome struct {
	Outcome   string
	State     string
	Reason    string
	Lines     []Reservation
	SettledAt time.Time
}

// PGStock is the StockStore over the ledger.
type PGStock struct{ Pool *pgxpool.Pool }

// HoldOwner implements StockStore.
func (s PGStock) HoldOwner(ctx context.Context, draftOrderID string) (string, bool, error) {
	var wf string
	err := s.Pool.QueryRow(ctx, `SELECT workflow_id FROM stock_holds WHERE draft_order_id = $1`, draftOrderID).Scan(&wf)
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("stock holds: owner: %w", err)
	}
	return wf, true, nil
}

// Settle implements StockStore with stock_settle (migration 00260).
func (s PGStock) Settle(ctx context.Context, draftOrderID, action, reason, correlationID string) (SettleOutcome, error) {
	var o SettleOutcome
	var state, why *string
	var lines []byte
	var at *time.Time
	err := s.Pool.QueryRow(ctx, `SELECT r_outcome, r_state, r_reason, r_lines, r_settled_at FROM stock_settle($1, $2, $3, $4)`,
		draftOrderID, action, reason, correlationID).Scan(&o.Outcome, &state, &why, &lines, &at)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && (strings.HasPrefix(pgErr.Code, "22") || strings.HasPrefix(pgErr.Code, "23")) {
			return o, &PermanentError{Err: fmt.Errorf("stock: settle: %w", err)}
		}
		return o, fmt.Errorf("stock: settle: %w", err)
	}
	if state != nil {
		o.State = *state
	}
	if why != nil {
		o.Reason = *why
	}
	if at != nil {
		o.SettledAt = at.UTC()
	}
	o.Lines = []Reservation{}
	if len(lines) > 0 {
		if err := json.Unmarshal(lines, &o.Lines); err != nil {
			return o, fmt.Errorf("stock: decode lines: %w", err)
		}
	}
	return o, nil
}

// ledgerRetry is the retry policy of the stock ledger's writes
// (settle_stock, restock_returned): retried until done while the database
// is away, but CONFLICT — the ledger already moved otherwise — is final,
// as for every settle and refund step (docs/errors.md#retryable-codes).
var ledgerRetry = toolkit.RetryPolicy{InitialInterval: 500 * time.Millisecond, MaxInterval: 30 * time.Second, MaxAttempts: 0,
	FinalCodes: []toolkit.Code{toolkit.Conflict}}

func settleStockSpec() toolkit.Spec {
	return toolkit.Spec{
		Name:    ToolSettleStock,
		Version: "1.0.0",
		Description: "End a draft order's stock hold: commit its units when it is paid, or release them when it is " +
			"cancelled, its payment failed or its hold ended. Only the run that settles that draft order may call it. " +
			"Success: state committed or released with the lines moved; replayed=true when the hold had already ended " +
			"this way (nothing moves twice). Common failures: NOT_FOUND (no hold for that draft order), CONFLICT (the " +
			"hold already ended the other way), FORBIDDEN (another run's draft order), UPSTREAM_ERROR (database " +
			"unavailable; nothing moved, retry).",
		InputSchema:  ToolSettleStock + ".input.json",
		OutputSchema: ToolSettleStock + ".output.json",
		// A write, idempotent by the draft order: the ledger's unique
		// movement per line and kind.
		Annotations: toolkit.Annotations{ReadOnly: false, Idempotent: true},
		Timeout:     10 * time.Second,
		// CONFLICT (the hold ended the other way) is final.
		Retry:            ledgerRetry,
		EvidenceRequired: true,
		Provider:         "orders-postgres",
		Internal:         true,
	}
}

// settleStock commits or releases a hold under the two-phase audit
// (docs/evidence.md#two-phase-audit): pending first, then stock_settle,
// then success. A retry finds its own pending row and the hold already
// ended: the same answer, replayed.
func (t *tools) settleStock(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
	var in SettleStockArgs
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	if (in.Action == StockCommit) != (in.Reason == ReasonPaid) {
		return nil, toolkit.Errorf(toolkit.InvalidArgument, "action %s does not go with reason %s", in.Action, in.Reason).
			WithDetail("fields", []string{"action", "reason"})
	}
	if t.stock == nil {
		return nil, toolkit.Errorf(toolkit.UpstreamError, "no stock ledger is configured")
	}
	owner, found, err := t.stock.HoldOwner(ctx, in.DraftOrderID)
	if err != nil {
		return nil, toolkit.Errorf(toolkit.UpstreamError, "stock ledger unavailable, retry").WithDetail("upstream_code", "db_error").WithCause(err)
	}
	if !found {
		return nil, toolkit.Errorf(toolkit.NotFound, "draft order %s holds no stock", in.DraftOrderID)
	}
	caller := toolkit.CallFrom(ctx).WorkflowID
	if !isOwnRun(owner, caller) {
		// Only the draft order's own run moves its stock: not another
		// order's, not a hand-started tool call.
		return nil, toolkit.Errorf(toolkit.Forbidden, "draft order %s is settled by its own run only", in.DraftOrderID)
	}
	req := call.Request
	payload, _ := json.Marshal(in)
	entry := allowEntry(ctx, req, ToolSettleStock, in.Action+" stock: "+in.Reason, payload,
		map[string]any{"draft_order_id": in.DraftOrderID, "action": in.Action, "reason": in.Reason})
	if _, err := t.audit.WritePending(ctx, entry); err != nil {
		return nil, auditError(err)
	}
	got, err := t.stock.Settle(ctx, in.DraftOrderID, in.Action, in.Reason, req.CorrelationID)
	if err != nil {
		var perm *PermanentError
		if errors.As(err, &perm) {
			_, _ = t.audit.Finalize(ctx, req.CorrelationID, evidence.AuditFailed, map[string]any{"error_type": string(toolkit.InvalidArgument)})
			return nil, toolkit.Errorf(toolkit.InvalidArgument, "stock settle refused by the store: %v", perm.Err)
		}
		return nil, toolkit.Errorf(toolkit.UpstreamError, "stock ledger unavailable, retry").WithDetail("upstream_code", "db_error").WithCause(err)
	}
	switch got.Outcome {
	case "settled", "already":
		if _, err := t.audit.Finalize(ctx, req.CorrelationID, evidence.AuditSuccess,
			map[string]any{"state": got.State, "lines": got.Lines, "replayed": got.Outcome == "already"}); err != nil &&
			!errors.Is(err, evidence.ErrAuditNotFound) {
			return nil, auditError(err)
		}
		return &toolkit.Output{Data: StockSettlement{DraftOrderID: in.DraftOrderID, State: got.State, Reason: got.Reason,
			Lines: got.Lines, SettledAt: got.SettledAt, Replayed: got.Outcome == "already"}}, nil
	case "conflict":
		_, _ = t.audit.Finalize(ctx, req.CorrelationID, evidence.AuditFailed, map[string]any{"error_type": string(toolkit.Conflict)})
		return nil, toolkit.Errorf(toolkit.Conflict, "the hold of %s already ended %s (%s)", in.DraftOrderID, got.State, got.Reason).
			WithDetail("state", got.State).WithDetail("reason", got.Reason)
	case "not_found":
		_, _ = t.audit.Finalize(ctx, req.CorrelationID, evidence.AuditFailed, map[string]any{"error_type": string(toolkit.NotFound)})
		return nil, toolkit.Errorf(toolkit.NotFound, "draft order %s holds no stock", in.DraftOrderID)
	}
	return nil, toolkit.Errorf(toolkit.UpstreamError, "stock ledger answered %q", got.Outcome)
}
