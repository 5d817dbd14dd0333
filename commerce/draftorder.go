package commerce

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// DraftOrderTTL is how long a draft order stays open. The idempotency
// record is the draft row itself, kept at least this long plus the
// reconcile buffer (docs/envelope.md#idempotency).
const DraftOrderTTL = 24 * time.Hour

// AuditLog is the part of the evidence store's two-phase audit the draft
// order uses (*evidence.Store implements it).
type AuditLog interface {
	// WriteAtomic is the create's happy path: the audit row closed in the
	// draft's own transaction (docs/evidence.md#one-transaction).
	WriteAtomic(ctx context.Context, e evidence.AuditEntry, write evidence.AtomicWrite) error
	// WritePending and Finalize record a refused insert as failed, and
	// close what an earlier attempt left pending when the total expired.
	WritePending(ctx context.Context, e evidence.AuditEntry) (int64, error)
	Finalize(ctx context.Context, correlationID string, status evidence.AuditStatus, patch map[string]any) (bool, error)
}

// AddressSealer encrypts a shipping address for storage (evidence.AESGCM
// implements it).
type AddressSealer interface {
	KeyID() string
	Seal(plaintext, aad []byte) (nonce, ciphertext []byte, err error)
}

func draftSpec() toolkit.Spec {
	return toolkit.Spec{
		Name:    ToolCreateDraftOrder,
		Version: "1.1.0",
		Description: "Create the draft order for a total the user has confirmed. Use it only after the user confirmed the " +
			"exact total: pass the total from checkout.compute_total, the confirmed quote_hash and the shipping address; " +
			"the request needs an idempotency_key (one draft per user and key, a repeat returns the same draft) and may " +
			"set dry_run to validate without writing. Success: draft_order_id and expires_at (24 h), status open " +
			"(validated on a dry run), replayed=true for a repeat. Common failures: NEEDS_USER_CONFIRMATION (hash not " +
			"the one confirmed, or the total expired: re-quote and confirm again), CONFLICT (key already used for a " +
			"different total), ADDRESS_INVALID (fields named), INVALID_ARGUMENT (total does not add up), UPSTREAM_ERROR " +
			"(audit or database unavailable; nothing was written, retry).",
		InputSchema:  ToolCreateDraftOrder + ".input.json",
		OutputSchema: ToolCreateDraftOrder + ".output.json",
		// A write, but idempotent by its scope; not destructive (a draft
		// commits nobody to pay), so no consent step beyond confirmation.
		Annotations:       toolkit.Annotations{ReadOnly: false, Idempotent: true},
		TTL:               0,
		Timeout:           10 * time.Second,
		Retry:             toolkit.RetryPolicy{InitialInterval: 500 * time.Millisecond, MaxInterval: 10 * time.Second, MaxAttempts: 8},
		EvidenceRequired:  true,
		NeedsConfirmation: true,
		Provider:          "orders-postgres",
		// Only the draft-order workflow writes drafts, after its user
		// confirmed (docs/quote-seals.md#internal-tools).
		Internal: true,
	}
}

func (t *tools) createDraftOrder(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
	var warnings []string
	out, err := t.createDraft(ctx, call, &warnings)
	if out != nil {
		// The address validator's warnings reach the envelope on every
		// path (dry run, replay, insert).
		out.Warnings = append(out.Warnings, warnings...)
	}
	return out, err
}

func (t *tools) createDraft(ctx context.Context, call *toolkit.Call, warnings *[]string) (*toolkit.Output, error) {
	var in CreateDraftOrderArgs
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	req := call.Request
	if err := verifyTotal(in.Total); err != nil {
		return nil, err
	}
	if in.ConfirmedQuoteHash != in.Total.QuoteHash {
		return nil, toolkit.Errorf(toolkit.NeedsUserConfirmation, "the user confirmed a different total").
			WithDetail("quote_hash", in.Total.QuoteHash).
			WithRecovery("show this total and its quote_hash to the user and wait for their confirmation")
	}
	if err := t.checkSeal(ctx, in.Total); err != nil {
		return nil, err
	}
	shipTo, warns, err := t.checkAddress("ship_to", in.ShipTo)
	if err != nil {
		return nil, err
	}
	*warnings = warns
	in.ShipTo = shipTo
	if in.ShipTo.Country != in.Total.ShipToCountry || (in.Total.ShipToRegion != "" && in.ShipTo.Region != in.Total.ShipToRegion) {
		return nil, toolkit.Errorf(toolkit.AddressInvalid, "ship_to is not the destination the total was computed for").
			WithDetail("fields", []string{"ship_to.country", "ship_to.region"}).
			WithRecovery("re-estimate shipping, duties and the total for this address", ToolQuoteShipping, ToolDutiesAndTaxes, ToolComputeTotal)
	}
	now := t.now()
	scope := DraftScope{UserIDHash: evidence.HashUserID(req.UserID), Tool: ToolCreateDraftOrder, IdempotencyKey: req.IdempotencyKey}

	if req.DryRun {
		// Validate only: no row, no audit (docs/envelope.md#dry-run).
		if err := t.checkNotExpired(in.Total, now); err != nil {
			return nil, err
		}
		if err := t.checkEvidence(ctx, in.Total, now); err != nil {
			return nil, err
		}
		return t.draftOutput(DraftOrder{Status: DraftStatusValidated, ExpiresAt: now.Add(t.hold).Truncate(time.Second),
			QuoteHash: in.Total.QuoteHash, GrandTotal: in.Total.GrandTotal}), nil
	}
	if err := t.checkNotExpired(in.Total, now); err != nil {
		// A repeat answers from the stored draft, even after the total
		// expired: the side effect already happened once.
		if got, ferr := t.drafts.Find(ctx, scope); ferr != nil {
			return nil, ferr
		} else if got != nil {
			return t.replay(ctx, req, *got, in.Total.QuoteHash)
		}
		// An earlier attempt of this call may have left its audit pending
		// (an older build committed that phase on its own, and so does a
		// refused insert whose close failed); this outcome is final, so
		// close it.
		_, _ = t.audit.Finalize(ctx, req.CorrelationID, evidence.AuditFailed,
			map[string]any{"error_type": string(toolkit.NeedsUserConfirmation)})
		return nil, err
	}
	// Not expired: the evidence the seal names must back the total
	// (docs/quote-seals.md#what-the-write-checks). No lookup first: the
	// create's conflict path answers a repeat from the stored draft in the
	// same round trip.
	if err := t.checkEvidence(ctx, in.Total, now); err != nil {
		return nil, err
	}
	return t.insertDraft(ctx, req, scope, in, now)
}

// insertDraft writes the draft and closes its two-phase audit in one
// statement and one transaction (docs/evidence.md#one-transaction): one
// round trip, and no failure leaves one row without the other.
func (t *tools) insertDraft(ctx context.Context, req toolkit.Request, scope DraftScope, in CreateDraftOrderArgs, now time.Time) (*toolkit.Output, error) {
	id, err := newID("do_", now)
	if err != nil {
		return nil, err
	}
	sealed, err := t.sealAddress(id, in.ShipTo)
	if err != nil {
		return nil, err
	}
	call := toolkit.CallFrom(ctx)
	payload, _ := json.Marshal(map[string]any{"scope": scope, "quote_hash": in.Total.QuoteHash})
	entry := allowEntry(ctx, req, ToolCreateDraftOrder, "create draft order for a confirmed total", payload,
		map[string]any{"quote_hash": in.Total.QuoteHash, "quote_id": in.Total.QuoteID,
			"grand_total": in.Total.GrandTotal, "idempotency_key": req.IdempotencyKey})
	draft := NewDraft{
		Scope: scope, DraftOrderID: id, Total: in.Total, ShipTo: sealed, CorrelationID: req.CorrelationID,
		WorkflowID: call.WorkflowID, RunID: call.RunID, WorkflowType: call.WorkflowType, CreatedAt: now,
		ExpiresAt: now.Add(t.hold).Truncate(time.Second),
	}
	var got Created
	var storeErr error
	err = t.audit.WriteAtomic(ctx, entry, func(ctx context.Context, row evidence.TwoPhaseRow) (evidence.AtomicResult, error) {
		got, storeErr = t.drafts.Create(ctx, draft, row)
		return got.Audit, storeErr
	})
	if storeErr != nil {
		return nil, t.storeFailed(ctx, entry, storeErr)
	}
	if err != nil {
		// Audit first: an audit row closed as failed or another tool's
		// (CONFLICT), or no audit at all: nothing was written.
		return nil, auditError(err)
	}
	switch got.Outcome {
	case CreateInserted:
		return t.draftOutput(draftFrom(got.Draft, false)), nil
	case CreateReplayed:
		// A repeat, or a concurrent call with the same key that won.
		return t.draftOutput(draftFrom(got.Draft, true)), nil
	case CreateConflict:
		return nil, keyConflict(req, got.Draft)
	case CreateOutOfStock:
		// Stock taken since the quote (another order, or a person): final,
		// recorded as a failed audit like any refused write.
		return nil, t.outOfStock(ctx, entry, got.Short)
	case CreateRefused:
		// The audit log turns a refusal into CONFLICT; one that did not is
		// still one.
		return nil, toolkit.Errorf(toolkit.Conflict, "audit %d for %s refused the write", got.Audit.AuditID, req.CorrelationID)
	}
	return nil, toolkit.Errorf(toolkit.UpstreamError, "draft order store answered %q", got.Outcome)
}

// outOfStock answers a write that found a line short of stock
// (docs/quote-seals.md#stock-at-the-write): nothing was written; the
// refusal is recorded as a failed audit, best effort.
func (t *tools) outOfStock(ctx context.Context, e evidence.AuditEntry, short []ShortLine) error {
	if _, werr := t.audit.WritePending(ctx, e); werr == nil {
		_, _ = t.audit.Finalize(ctx, e.CorrelationID, evidence.AuditFailed,
			map[string]any{"error_type": string(toolkit.OutOfStock), "short": short})
	}
	return toolkit.Errorf(toolkit.OutOfStock, "not enough stock left for %d line(s): taken since the quote", len(short)).
		WithDetail("lines", short).
		WithRecovery("quote again: another warehouse may hold it, or lower the quantity", ToolGetQuote)
}

// storeFailed answers a Create that failed. It wrote nothing: the audit
// row and the draft commit together.
func (t *tools) storeFailed(ctx context.Context, e evidence.AuditEntry, err error) error {
	var perm *PermanentError
	if !errors.As(err, &perm) {
		// Transient: the activity's retry (same correlation id) starts
		// clean; a pending row an older build left stays pending for that
		// retry, or for reconcile.
		return toolkit.Errorf(toolkit.UpstreamError, "draft order store unavailable, retry").
			WithDetail("upstream_code", "db_error").WithCause(err)
	}
	// Final: the refusal is recorded as a failed audit (pending, then
	// failed: two more round trips on a path that should not happen).
	// Best effort: a row left pending is reconcile's, and the insert error
	// is what the caller needs.
	if _, werr := t.audit.WritePending(ctx, e); werr == nil {
		_, _ = t.audit.Finalize(ctx, e.CorrelationID, evidence.AuditFailed,
			map[string]any{"error_type": string(toolkit.InvalidArgument)})
	}
	return toolkit.Errorf(toolkit.InvalidArgument, "draft order refused by the store: %v", perm.Err)
}

// replay answers a repeat of an idempotency key after the total expired
// (before, Create answers it). The same key with a different total is a
// CONFLICT, never a second draft. A pending audit of this correlation id
// (an earlier attempt that crashed after inserting) is finalised here.
func (t *tools) replay(ctx context.Context, req toolkit.Request, got StoredDraft, quoteHash string) (*toolkit.Output, error) {
	if got.QuoteHash != quoteHash {
		return nil, keyConflict(req, got)
	}
	_, err := t.audit.Finalize(ctx, req.CorrelationID, evidence.AuditSuccess,
		map[string]any{"draft_order_id": got.DraftOrderID, "replayed": true})
	if err != nil && !errors.Is(err, evidence.ErrAuditNotFound) {
		return nil, auditError(err)
	}
	return t.draftOutput(draftFrom(got, true)), nil
}

// keyConflict is the answer to a key already used for another total.
func keyConflict(req toolkit.Request, got StoredDraft) error {
	return toolkit.Errorf(toolkit.Conflict, "idempotency key %s already created a draft order for a different total", req.IdempotencyKey).
		WithDetail("draft_order_id", got.DraftOrderID).
		WithRecovery("use a new idempotency key for a new order")
}

func (t *tools) checkNotExpired(total Total, now time.Time) error {
	if !now.Before(total.ExpiresAt) {
		return toolkit.Errorf(toolkit.NeedsUserConfirmation, "the total expired at %s", total.ExpiresAt.UTC().Format(time.RFC3339)).
			WithDetail("expires_at", total.ExpiresAt).
			WithRecovery("re-quote, recompute the total and ask the user to confirm it", ToolGetQuote, ToolComputeTotal)
	}
	return nil
}

// sealAddress encrypts the full address bound to the draft id. Why not a
// hash: the draft must be fulfilled to this address later, and an address
// is low-entropy, so a plain hash could be reversed by guessing.
func (t *tools) sealAddress(draftID string, a Address) (SealedAddress, error) {
	plain, err := json.Marshal(a)
	if err != nil {
		return SealedAddress{}, err
	}
	nonce, ct, err := t.sealer.Seal(plain, []byte("cartwright/draft-order/ship-to/v1\x00"+draftID))
	if err != nil {
		return SealedAddress{}, toolkit.Errorf(toolkit.UpstreamError, "seal shipping address: %v", err)
	}
	return SealedAddress{Country: a.Country, Region: a.Region, PostalCode: a.PostalCode,
		Ciphertext: ct, Nonce: nonce, KeyID: t.sealer.KeyID()}, nil
}

func (t *tools) draftOutput(d DraftOrder) *toolkit.Output {
	return &toolkit.Output{Data: d}
}

func draftFrom(s StoredDraft, replayed bool) DraftOrder {
	return DraftOrder{DraftOrderID: s.DraftOrderID, ExpiresAt: s.ExpiresAt, Status: s.Status,
		QuoteHash: s.QuoteHash, GrandTotal: s.GrandTotal, Replayed: replayed}
}

// allowEntry is the audit row of a side effect the call goes on with
// (docs/evidence.md#two-phase-audit), its payload named by its SHA-256.
func allowEntry(ctx context.Context, req toolkit.Request, tool, reason string, payload []byte, refs map[string]any) evidence.AuditEntry {
	sum := sha256.Sum256(payload)
	return evidence.AuditEntry{CorrelationID: req.CorrelationID, Tool: tool, UserID: req.UserID, ActorType: req.Actor.Type,
		Action: evidence.ActionAllow, Reason: reason, PayloadSHA: hex.EncodeToString(sum[:]), Call: toolkit.CallFrom(ctx), Refs: refs}
}

// auditError keeps a toolkit error (CONFLICT for an audit closed as
// failed, UPSTREAM_ERROR for a database outage) and reports anything else
// as a retryable UPSTREAM_ERROR: without its audit the write cannot go on.
func auditError(err error) error {
	var te *toolkit.Error
	if errors.As(err, &te) {
		return te
	}
	return toolkit.Errorf(toolkit.UpstreamError, "audit unavailable: %v", err).WithCause(err)
}
