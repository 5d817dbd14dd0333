package audit_test

import (
	"testing"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// The audit's checks (docs/audit.md#what-is-checked) on the real DraftOrder.

func TestDraftOrderAuditsCleanThenNamesEditedSnapshot(t *testing.T) {
	s := newRealStack(t)
	in := orderInput(uniqueKey("audit-do"), tees, berlin, "EUR")
	runID, res := s.runDraftOrder(t, s.tq, in, driver{})
	requireState(t, res, draftorder.StateDraftCreated)
	id, _ := workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)

	rep, err := audit.Audit(ctxT(t), s.deps, audit.ByID(id, ""))
	logReport(t, rep)
	if code := audit.ExitCode(rep, err); code != audit.ExitClean || rep.RunID != runID || len(rep.Activities) < 5 {
		t.Fatalf("fresh draft order: exit %d (%v), %d activities, findings %v", code, err, len(rep.Activities), rep.Findings)
	}

	// The read-only tools ran as local activities (in the quote step), and
	// the write's first attempt too (docs/performance.md#local-first-write):
	// the audit found their markers and checked each against its snapshot.
	var victim audit.ActivityCheck
	local := map[string]bool{}
	for _, a := range rep.Activities {
		if a.Tool == commerce.ToolComputeTotal {
			victim = a
		}
		if a.Local {
			local[a.Tool] = true
		} else {
			t.Errorf("%s ran as a regular activity", a.Tool)
		}
	}
	for _, tool := range []string{commerce.ToolChooseOrigins, commerce.ToolGetQuote, commerce.ToolCheckCompliance,
		commerce.ToolComputeTotal, commerce.ToolCreateDraftOrder} {
		if !local[tool] {
			t.Errorf("the audit checked no local activity of %s (%v)", tool, local)
		}
	}
	if !victim.Local {
		t.Fatalf("compute_total local=%v", victim.Local)
	}

	// Edit the compute_total snapshot (a local activity's) as a superuser would.
	testenv.SuperExec(t, s.pool, `UPDATE evidence_snapshots SET output = jsonb_set(output, '{grand_total,amount}', '1')
		WHERE snapshot_id = $1`, victim.SnapshotID)
	rep, err = audit.Audit(ctxT(t), s.deps, audit.ByID(id, ""))
	logReport(t, rep)
	if audit.ExitCode(rep, err) != audit.ExitFindings {
		t.Fatalf("edited snapshot: exit %d (%v)", audit.ExitCode(rep, err), err)
	}
	for _, f := range rep.Findings {
		if f.Kind == audit.KindRowUnbacked {
			// The draft row rested on the edited total: no snapshot of
			// the workflow backs it any more (docs/quote-seals.md#audit-and-reconcile).
			continue
		}
		if f.ActivityID != victim.ActivityID || f.SnapshotID != victim.SnapshotID {
			t.Fatalf("finding %+v does not name activity %s (%s)", f, victim.ActivityID, victim.SnapshotID)
		}
	}
}
