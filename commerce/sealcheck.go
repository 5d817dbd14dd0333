package commerce

import (
	"context"
	"encoding/json"
	"errors"
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

// snapshot is one evidence snapshot a total rests on, staged by the same
// batch or read from the store.
type snapshot struct {
	id, tool, workflowID, status string
	output                       json.RawMessage
	ttl                          time.Duration
	createdAt                    time.Time
}

func (s *snapshot) expires() time.Time { return s.createdAt.Add(s.ttl) }

// decode reads the snapshot's answer into out.
func (s *snapshot) decode(out any) error {
	if s.status == string(toolkit.StatusError) || json.Unmarshal(s.output, out) != nil {
		return sealRefusal("evidence_missing", "evidence snapshot %s holds no %s answer", s.id, s.tool)
	}
	return nil
}

// readSources reads the snapshots refs names for workflow wf: each from
// the running call's own staged batch when it is there
// (toolkit.StagedSnapshot), the rest from the store in one round trip;
// each must be the right tool's answer in this very workflow.
func (t *tools) readSources(ctx context.Context, refs EvidenceRefs, wf string) (totalSources, error) {
	s := totalSources{refs: refs}
	want := []wanted{{refs.OriginsSnapshotID, ToolChooseOrigins, &s.origins}, {refs.PricingSnapshotID, ToolGetQuote, &s.pricing},
		{refs.ComplianceSnapshotID, ToolCheckCompliance, &s.compliance}}
	if refs.ApprovalSnapshotID != "" {
		want = append(want, wanted{refs.ApprovalSnapshotID, support.RecordApprovalTool, &s.approval})
	}
	var stored []string
	for _, w := range want {
		if w.id == "" {
			return s, sealRefusal("evidence_missing", "the total names no %s snapshot", w.tool)
		}
		if st, ok := toolkit.StagedSnapshot(ctx, w.id); ok {
			*w.into = &snapshot{id: w.id, tool: st.Tool, workflowID: st.Call.WorkflowID, status: string(st.Status),
				output: st.Output, ttl: st.TTL, createdAt: st.CreatedAt}
		} else {
			stored = append(stored, w.id)
		}
	}
	got, err := t.readStored(ctx, stored)
	if err != nil {
		return s, err
	}
	for _, w := range want {
		if *w.into == nil {
			rec, ok := got[w.id]
			if !ok {
				return s, sealRefusal("evidence_missing", "evidence snapshot %s does not exist", w.id)
			}
			*w.into = &snapshot{id: w.id, tool: rec.Tool, workflowID: rec.WorkflowID, status: rec.Status, output: rec.Output,
				ttl: time.Duration(rec.TTLSeconds) * time.Second, createdAt: rec.CreatedAt}
		}
		sn := *w.into
		if sn.tool != w.tool {
			return s, sealRefusal("evidence_missing", "evidence snapshot %s is not a %s answer", w.id, w.tool)
		}
		if sn.workflowID != wf {
			return s, sealRefusal("evidence_foreign", "evidence snapshot %s belongs to another workflow", w.id)
		}
	}
	return s, nil
}

// wanted is one snapshot readSources reads: its id, the tool it must be
// an answer of, and where it goes.
type wanted struct {
	id, tool string
	into     **snapshot
}

// writtenReader reads the snapshots a cartwright worker wrote, in one
// round trip at most (*evidence.Store): the runtime login can append rows
// of its own, and a total derived from them would carry amounts nobody
// computed, so a row no worker's key vouches for is an
// *evidence.ForgedRowError (docs/quote-seals.md#what-the-write-checks).
type writtenReader interface {
	ReadWritten(ctx context.Context, ids []string) (map[string]*evidence.SnapshotRecord, error)
}

// readStored reads ids from the store, in one round trip when it can.
func (t *tools) readStored(ctx context.Context, ids []string) (map[string]*evidence.SnapshotRecord, error) {
	out := map[string]*evidence.SnapshotRecord{}
	if len(ids) == 0 {
		return out, nil
	}
	if t.snaps == nil {
		return out, nil // an unsealed in-memory stack stores nothing to read
	}
	if w, ok := t.snaps.(writtenReader); ok {
		got, err := w.ReadWritten(ctx, ids)
		var forged *evidence.ForgedRowError
		if errors.As(err, &forged) {
			return nil, sealRefusal("evidence_forged", "%v", forged)
		}
		if err != nil {
			return nil, toolkit.Errorf(toolkit.UpstreamError, "read evidence %v: %v", ids, err)
		}
		return got, nil
	}
	for _, id := range ids {
		rec, err := t.snaps.Get(ctx, id)
		if errors.Is(err, evidence.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, toolkit.Errorf(toolkit.UpstreamError, "read evidence %s: %v", id, err)
		}
		out[id] = rec
	}
	return out, nil
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

// checkEvidence derives the total again from the snapshots its seal
// names, with the function checkout.compute_total used, and refuses a
// total that is not exactly that (docs/quote-seals.md#what-the-write-checks).
func (t *tools) checkEvidence(ctx context.Context, total Total, now time.Time) error {
	if t.seals == nil {
		return nil
	}
	e := total.Evidence
	src, err := t.readSources(ctx, e.EvidenceRefs, toolkit.CallFrom(ctx).WorkflowID)
	if err != nil {
		return err
	}
	want, err := deriveTotal(src, e.IssuedAt, now)
	if err != nil {
		return err
	}
	got := total
	got.Evidence = nil
	a, err1 := toolkit.CanonicalHash(want)
	b, err2 := toolkit.CanonicalHash(got)
	if err1 != nil || err2 != nil || a != b {
		return sealRefusal("total_not_derived", "the total is not the one its snapshots add up to (%s)", want.QuoteHash)
	}
	return nil
}
