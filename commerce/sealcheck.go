package commerce

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// SnapshotReader reads one evidence snapshot's clear columns
// (*evidence.Store implements it); NOT_FOUND when there is none.
type SnapshotReader interface {
	Get(ctx context.Context, snapshotID string) (*evidence.SnapshotRecord, error)
}

// snapshotsReader is a SnapshotReader that also reads several snapshots
// in one round trip (*evidence.Store): the write's check reads every
// snapshot a seal names at once
// (docs/performance.md#the-writes-evidence-in-one-read). An id that names
// no row is absent from the map.
type snapshotsReader interface {
	GetMany(ctx context.Context, ids []string) (map[string]*evidence.SnapshotRecord, error)
}

// sealedReads are the snapshots a total's seal names, read ahead in one
// round trip when the reader can (got), else read one by one as each
// check needs it.
type sealedReads struct {
	snaps SnapshotReader
	// asked are the ids read ahead, got those of them that exist.
	asked []string
	got   map[string]*evidence.SnapshotRecord
}

// readSealed reads ahead the snapshots e names, when the reader reads
// several at once; the checks then run in the same order, with the same
// refusals, on what it read.
func (t *tools) readSealed(ctx context.Context, e *TotalEvidence) (*sealedReads, error) {
	r := &sealedReads{snaps: t.snaps}
	many, ok := t.snaps.(snapshotsReader)
	if !ok {
		return r, nil
	}
	var ids []string
	for _, id := range []string{e.PricingSnapshotID, e.OriginsSnapshotID, e.ComplianceSnapshotID, e.ApprovalSnapshotID} {
		if id != "" {
			ids = append(ids, id)
		}
	}
	got, err := many.GetMany(ctx, ids)
	if err != nil {
		return nil, toolkit.Errorf(toolkit.UpstreamError, "read evidence %v: %v", ids, err)
	}
	r.asked, r.got = ids, got
	return r, nil
}

// get is the snapshot id, as read ahead or read now; NOT_FOUND
// (evidence.ErrNotFound) when there is none.
func (r *sealedReads) get(ctx context.Context, id string) (*evidence.SnapshotRecord, error) {
	if !slices.Contains(r.asked, id) {
		return r.snaps.Get(ctx, id)
	}
	if rec, ok := r.got[id]; ok {
		return rec, nil
	}
	return nil, toolkit.Errorf(toolkit.NotFound, "evidence snapshot %s does not exist", id).WithCause(evidence.ErrNotFound)
}

// sealRefusal is a FORBIDDEN naming why a total is not backed
// (docs/quote-seals.md#what-the-write-checks).
func sealRefusal(reason, format string, args ...any) *toolkit.Error {
	return toolkit.Errorf(toolkit.Forbidden, format, args...).WithDetail("reason", reason).
		WithRecovery("start a draft order (draft_order.start): only its workflow prices, totals and creates an order")
}

// checkSeal verifies the total's seal for the write's own workflow. It
// needs no I/O, so it runs before anything else the write does.
func (t *tools) checkSeal(ctx context.Context, total Total) error {
	if t.seals == nil {
		return nil // Unsealed: an in-memory test stack
	}
	if total.Evidence == nil || total.Evidence.Seal == "" {
		return sealRefusal("quote_not_sealed", "the total is not sealed by this service: it was not computed by a draft order's workflow")
	}
	wf := toolkit.CallFrom(ctx).WorkflowID
	if err := t.seals.Verify(wf, total); err != nil {
		return sealRefusal("seal_invalid", "the total's seal does not verify: the total or the evidence it names was changed, "+
			"or it was sealed for another workflow")
	}
	return nil
}

// checkEvidence verifies what the seal names against the evidence store:
// each snapshot exists, is the right tool's and belongs to the write's own
// workflow; the pricing snapshot is within its TTL and priced exactly the
// total's lines; compliance allowed the basket when the total was sealed,
// or support staff approved it (docs/quote-seals.md#what-the-write-checks).
func (t *tools) checkEvidence(ctx context.Context, total Total, now time.Time) error {
	if t.seals == nil {
		return nil
	}
	e, wf := total.Evidence, toolkit.CallFrom(ctx).WorkflowID
	reads, err := t.readSealed(ctx, e)
	if err != nil {
		return err
	}
	pricing, err := reads.snapshot(ctx, e.PricingSnapshotID, ToolGetQuote, wf)
	if err != nil {
		return err
	}
	if !now.Before(pricing.CreatedAt.Add(time.Duration(pricing.TTLSeconds) * time.Second)) {
		return sealRefusal("evidence_expired", "the pricing snapshot %s is past its TTL", pricing.SnapshotID)
	}
	var quote Quote
	if err := json.Unmarshal(pricing.Output, &quote); err != nil || !sameLines(quote, total) {
		return sealRefusal("price_not_quoted", "the total's lines are not what pricing snapshot %s quoted", pricing.SnapshotID)
	}
	if e.OriginsSnapshotID != "" {
		if err := reads.checkOrigins(ctx, e.OriginsSnapshotID, wf, total, quote, now); err != nil {
			return err
		}
	}
	comp, err := reads.snapshot(ctx, e.ComplianceSnapshotID, ToolCheckCompliance, wf)
	if err != nil {
		return err
	}
	var verdict ComplianceVerdict
	if err := json.Unmarshal(comp.Output, &verdict); err != nil {
		return sealRefusal("compliance_not_cleared", "compliance snapshot %s holds no verdict", comp.SnapshotID)
	}
	if verdict.Verdict == VerdictBlock {
		return toolkit.Errorf(toolkit.ComplianceBlocked, "compliance blocked this basket (snapshot %s)", comp.SnapshotID).
			WithDetail("reason", "compliance_blocked")
	}
	if e.ApprovalSnapshotID != "" {
		return reads.checkApproval(ctx, e.ApprovalSnapshotID, wf, comp)
	}
	if verdict.Verdict != VerdictAllow {
		return sealRefusal("compliance_not_cleared", "compliance answered %s (snapshot %s) and no support-staff approval is named",
			verdict.Verdict, comp.SnapshotID)
	}
	if ttl := time.Duration(comp.TTLSeconds) * time.Second; ttl > 0 && e.IssuedAt.After(comp.CreatedAt.Add(ttl)) {
		return sealRefusal("evidence_expired", "compliance snapshot %s was past its TTL when the total was sealed", comp.SnapshotID)
	}
	return nil
}

// checkApproval requires an approve decision of support staff recorded in
// the same workflow after the compliance answer it clears.
func (r *sealedReads) checkApproval(ctx context.Context, id, wf string, comp *evidence.SnapshotRecord) error {
	ap, err := r.snapshot(ctx, id, support.RecordApprovalTool, wf)
	if err != nil {
		return err
	}
	var rec support.ApprovalRecord
	if json.Unmarshal(ap.Output, &rec) != nil || rec.Decision != support.DecisionApprove || !rec.StaffVerified {
		return sealRefusal("compliance_not_cleared", "approval snapshot %s is not an approval", id)
	}
	if ap.CreatedAt.Before(comp.CreatedAt) {
		return sealRefusal("compliance_not_cleared", "approval snapshot %s predates the compliance answer %s", id, comp.SnapshotID)
	}
	return nil
}

// snapshot reads snapshot id and checks it is tool's, in workflow wf.
func (r *sealedReads) snapshot(ctx context.Context, id, tool, wf string) (*evidence.SnapshotRecord, error) {
	if id == "" {
		return nil, sealRefusal("evidence_missing", "the total names no %s snapshot", tool)
	}
	rec, err := r.get(ctx, id)
	if errors.Is(err, evidence.ErrNotFound) {
		return nil, sealRefusal("evidence_missing", "evidence snapshot %s does not exist", id)
	}
	if err != nil {
		return nil, toolkit.Errorf(toolkit.UpstreamError, "read evidence %s: %v", id, err)
	}
	if rec.Tool != tool {
		return nil, sealRefusal("evidence_missing", "evidence snapshot %s is not a %s answer", id, tool)
	}
	if rec.WorkflowID != wf {
		return nil, sealRefusal("evidence_foreign", "evidence snapshot %s belongs to another workflow", id)
	}
	return rec, nil
}

// sameLines reports whether the total's lines are exactly the quote's:
// SKU, quantity and unit price, in the quote's currency.
func sameLines(q Quote, t Total) bool {
	if q.Currency != t.Currency || len(q.Lines) != len(t.Lines) {
		return false
	}
	for i, l := range q.Lines {
		got := t.Lines[i]
		if got.SKU != l.SKU || got.Quantity != l.Quantity || got.UnitPrice != l.UnitPrice || got.LineTotal != l.LineTotal {
			return false
		}
	}
	return q.Subtotal == t.Subtotal
}
