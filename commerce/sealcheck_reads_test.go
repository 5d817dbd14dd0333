package commerce

import (
	"context"
	"testing"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// fakeSnapshots is a snapshot reader over a map, counting its reads.
type fakeSnapshots struct {
	recs       map[string]*evidence.SnapshotRecord
	gets, many int
}

func (f *fakeSnapshots) Get(_ context.Context, id string) (*evidence.SnapshotRecord, error) {
	f.gets++
	if r, ok := f.recs[id]; ok {
		return r, nil
	}
	return nil, toolkit.Errorf(toolkit.NotFound, "no %s", id).WithCause(evidence.ErrNotFound)
}

// manySnapshots is fakeSnapshots that also reads several at once.
type manySnapshots struct{ *fakeSnapshots }

func (m manySnapshots) GetMany(_ context.Context, ids []string) (map[string]*evidence.SnapshotRecord, error) {
	m.many++
	got := map[string]*evidence.SnapshotRecord{}
	for _, id := range ids {
		if r, ok := m.recs[id]; ok {
			got[id] = r
		}
	}
	return got, nil
}

func sealedSnapshots() *fakeSnapshots {
	return &fakeSnapshots{recs: map[string]*evidence.SnapshotRecord{
		"ev_p": {SnapshotID: "ev_p", Tool: ToolGetQuote, WorkflowID: "wf-1"},
		"ev_o": {SnapshotID: "ev_o", Tool: ToolChooseOrigins, WorkflowID: "wf-1"},
		"ev_c": {SnapshotID: "ev_c", Tool: ToolCheckCompliance, WorkflowID: "wf-1"},
		"ev_x": {SnapshotID: "ev_x", Tool: ToolCheckCompliance, WorkflowID: "wf-2"},
	}}
}

// The write reads the snapshots a seal names in one round trip when the
// store can, and refuses exactly as one read per snapshot did: a missing
// snapshot, another tool's, another workflow's
// (docs/performance.md#the-writes-evidence-in-one-read).
func TestSealedReadsOneRoundTrip(t *testing.T) {
	ctx := context.Background()
	refs := &TotalEvidence{}
	refs.PricingSnapshotID, refs.OriginsSnapshotID, refs.ComplianceSnapshotID = "ev_p", "ev_o", "ev_c"
	refs.ApprovalSnapshotID = "ev_missing" // named by the seal, not in the store
	for _, many := range []bool{true, false} {
		f := sealedSnapshots()
		var snaps SnapshotReader = f
		if many {
			snaps = manySnapshots{f}
		}
		reads, err := (&tools{snaps: snaps}).readSealed(ctx, refs)
		if err != nil {
			t.Fatal(err)
		}
		for id, tool := range map[string]string{"ev_p": ToolGetQuote, "ev_o": ToolChooseOrigins, "ev_c": ToolCheckCompliance} {
			if rec, err := reads.snapshot(ctx, id, tool, "wf-1"); err != nil || rec.SnapshotID != id {
				t.Fatalf("many=%v: snapshot %s: %v, %v", many, id, rec, err)
			}
		}
		for _, c := range []struct{ id, tool, reason string }{
			{"", ToolGetQuote, "evidence_missing"},
			{"ev_gone", ToolGetQuote, "evidence_missing"},
			{"ev_missing", ToolGetQuote, "evidence_missing"},
			{"ev_p", ToolCheckCompliance, "evidence_missing"},
			{"ev_x", ToolCheckCompliance, "evidence_foreign"},
		} {
			_, err := reads.snapshot(ctx, c.id, c.tool, "wf-1")
			te := toolkit.AsError(err)
			if te == nil || te.Code != toolkit.Forbidden || te.Details["reason"] != c.reason {
				t.Errorf("many=%v: snapshot %q as %s: %v, want FORBIDDEN %s", many, c.id, c.tool, err, c.reason)
			}
		}
		// ev_gone and ev_x, which the seal does not name, are read on
		// their own.
		if many && (f.many != 1 || f.gets != 2) {
			t.Errorf("a store that reads several at once: %d GetMany and %d Get, want 1 and 2", f.many, f.gets)
		}
		if !many && f.gets != 7 {
			t.Errorf("a store that reads one at a time: %d Get, want 7", f.gets)
		}
	}
}
