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

// manySnapshots is fakeSnapshots that also reads several at once, as
// evidence.Store.ReadWritten does.
type manySnapshots struct{ *fakeSnapshots }

func (m manySnapshots) ReadWritten(_ context.Context, ids []string) (map[string]*evidence.SnapshotRecord, error) {
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

// A total's snapshots are read in one round trip when the store can, one
// by one when it cannot, and refused the same way either way: a missing
// snapshot, another tool's, another workflow's
// (docs/performance.md#the-writes-evidence-from-memory-or-in-one-read).
func TestSealedReadsOneRoundTrip(t *testing.T) {
	ctx := context.Background()
	good := EvidenceRefs{PricingSnapshotID: "ev_p", OriginsSnapshotID: "ev_o", ComplianceSnapshotID: "ev_c"}
	for _, many := range []bool{true, false} {
		f := sealedSnapshots()
		var snaps SnapshotReader = f
		if many {
			snaps = manySnapshots{f}
		}
		src, err := (&tools{snaps: snaps}).readSources(ctx, good, "wf-1")
		if err != nil || src.pricing.id != "ev_p" || src.origins.id != "ev_o" || src.compliance.id != "ev_c" || src.approval != nil {
			t.Fatalf("many=%v: %+v, %v", many, src, err)
		}
		if many && (f.many != 1 || f.gets != 0) {
			t.Errorf("a store that reads several at once: %d ReadWritten and %d Get, want 1 and 0", f.many, f.gets)
		}
		if !many && f.gets != 3 {
			t.Errorf("a store that reads one at a time: %d Get, want 3", f.gets)
		}
		for _, c := range []struct {
			name   string
			edit   func(*EvidenceRefs)
			reason string
		}{
			{"none named", func(r *EvidenceRefs) { r.PricingSnapshotID = "" }, "evidence_missing"},
			{"not stored", func(r *EvidenceRefs) { r.ApprovalSnapshotID = "ev_gone" }, "evidence_missing"},
			{"another tool's", func(r *EvidenceRefs) { r.ComplianceSnapshotID = "ev_p" }, "evidence_missing"},
			{"another workflow's", func(r *EvidenceRefs) { r.ComplianceSnapshotID = "ev_x" }, "evidence_foreign"},
		} {
			refs := good
			c.edit(&refs)
			_, err := (&tools{snaps: snaps}).readSources(ctx, refs, "wf-1")
			if te := toolkit.AsError(err); te == nil || te.Code != toolkit.Forbidden || te.Details["reason"] != c.reason {
				t.Errorf("many=%v: %s: %v, want FORBIDDEN %s", many, c.name, err, c.reason)
			}
		}
	}
}
