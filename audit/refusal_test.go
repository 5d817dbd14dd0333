package audit_test

import (
	"encoding/json"
	"testing"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// A standalone lithium-ion power bank (UN3480): forbidden by air, a
// reviewed dangerous-goods shipment by road.
var (
	powerBank = []commerce.LineItem{{SKU: "VC-PB20K-BLK", Quantity: 1}}
	newYork   = commerce.Address{Name: "John Smith", Line1: "350 Fifth Avenue", City: "New York", Region: "NY", PostalCode: "10118", Country: "US"}
)

// TestBlockedDraftOrderIsEvidencedAndAudited on the real stack: a power bank to the US by express (air) is
// COMPLIANCE_BLOCKED; the compliance decision is a snapshot of the
// evidence store, named by the run's result and by the history's envelope,
// and the audit is CLEAN. Deleting that snapshot makes the audit report it.
func TestBlockedDraftOrderIsEvidencedAndAudited(t *testing.T) {
	s := newRealStack(t)
	in := blockedOrder(uniqueKey("audit-blocked"))
	_, res := s.runDraftOrder(t, s.tq, in, driver{})
	requireState(t, res, draftorder.StateComplianceBlocked)
	var ref workflows.EvidenceRef
	for _, r := range res.Evidence {
		if r.Tool == commerce.ToolCheckCompliance {
			ref = r
		}
	}
	if ref.SnapshotID == "" {
		t.Fatalf("the blocking compliance decision is not in the result's evidence: %+v", res.Evidence)
	}
	snap, err := s.store.Get(ctxT(t), ref.SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	var refusal toolkit.Error
	if err := json.Unmarshal(snap.Output, &refusal); err != nil || refusal.Code != toolkit.ComplianceBlocked ||
		snap.Status != string(toolkit.StatusError) || snap.Tool != commerce.ToolCheckCompliance {
		t.Fatalf("snapshot %s: status %s, output %s (%v)", ref.SnapshotID, snap.Status, snap.Output, err)
	}

	id, _ := workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
	rep, err := audit.Audit(ctxT(t), s.deps, audit.ByID(id, ""))
	logReport(t, rep)
	if audit.ExitCode(rep, err) != audit.ExitClean {
		t.Fatalf("blocked draft order: exit %d (%v), findings %v", audit.ExitCode(rep, err), err, rep.Findings)
	}
	var checked *audit.ActivityCheck
	for i, a := range rep.Activities {
		if a.SnapshotID == ref.SnapshotID {
			checked = &rep.Activities[i]
		}
	}
	if checked == nil || !checked.OK || !checked.Refusal || checked.Code != string(toolkit.ComplianceBlocked) {
		t.Fatalf("the audit did not verify the refusal: %+v", rep.Activities)
	}

	testenv.SuperExec(t, s.pool, `DELETE FROM evidence_snapshots WHERE snapshot_id = $1`, ref.SnapshotID)
	rep, err = audit.Audit(ctxT(t), s.deps, audit.ByID(id, ""))
	logReport(t, rep)
	if audit.ExitCode(rep, err) != audit.ExitFindings {
		t.Fatalf("deleted refusal snapshot: exit %d (%v)", audit.ExitCode(rep, err), err)
	}
	found := false
	for _, f := range rep.Findings {
		if f.Kind == audit.KindMissingSnapshot && f.SnapshotID == ref.SnapshotID {
			found = true
		}
	}
	if !found {
		t.Fatalf("no missing_snapshot finding for %s: %v", ref.SnapshotID, rep.Findings)
	}
}

// blockedOrder is a power bank to the US by express (air): blocked.
func blockedOrder(key string) draftorder.Input {
	in := orderInput(key, powerBank, newYork, "USD")
	in.ShippingService = commerce.ServiceExpress
	return in
}

// TestPowerBankByRoadIsNotBlocked on the real stack: the same power bank on the standard service, which ships to DE by
// ground, is not COMPLIANCE_BLOCKED "cannot ship by air": a 74 Wh Li-ion
// battery travels by road under ADR special provision 188 with the battery
// mark, so no one needs to review it and the draft order is created.
func TestPowerBankByRoadIsNotBlocked(t *testing.T) {
	s := newRealStack(t)
	in := orderInput(uniqueKey("audit-ground"), powerBank, berlin, "EUR")
	_, res := s.runDraftOrder(t, s.tq, in, driver{})
	requireState(t, res, draftorder.StateDraftCreated)
	if res.Approval != nil {
		t.Fatalf("a battery SP188 lets travel by road went to review: %+v", res.Approval)
	}
	id, _ := workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
	rep, err := audit.Audit(ctxT(t), s.deps, audit.ByID(id, ""))
	logReport(t, rep)
	if audit.ExitCode(rep, err) != audit.ExitClean {
		t.Fatalf("exit %d (%v), findings %v", audit.ExitCode(rep, err), err, rep.Findings)
	}
}
