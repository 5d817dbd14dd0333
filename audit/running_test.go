package audit_test

import (
	"context"
	"fmt"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/activities/history"
	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// TestAuditManyRunningDraftOrders: AuditMany audits runs still open as it
// audits closed ones (docs/performance.md#audit-rate). A draft order
// waiting for its confirmation has a partial history — its quote and price
// steps answered, no close event — and is checked all the same: CLEAN when
// untouched, with findings when its evidence is edited, and in both cases
// with the report Audit gives it alone. A written draft order is audited
// beside them, open or closed.
func TestAuditManyRunningDraftOrders(t *testing.T) {
	s := newRealStack(t)
	ctx := ctxT(t)
	names := []string{"waiting", "edited", "written"}
	ids := map[string]string{}
	for _, name := range names {
		in := orderInput(uniqueKey("running-"+name), tees, berlin, "EUR")
		drive := s.startOne
		if name == "written" {
			drive = s.driveOne
		}
		if err := drive(ctx, in); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ids[name], _ = workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
	}
	var total string
	if err := s.pool.QueryRow(ctx, `SELECT snapshot_id FROM evidence_snapshots WHERE workflow_id = $1 AND tool = $2`,
		ids["edited"], commerce.ToolComputeTotal).Scan(&total); err != nil {
		t.Fatal(err)
	}
	testenv.SuperExec(t, s.pool, `UPDATE evidence_snapshots SET output = jsonb_set(output, '{grand_total,amount}', '1') WHERE snapshot_id = $1`, total)

	query := fmt.Sprintf(`WorkflowType = %q AND TaskQueue = %q`, draftorder.WorkflowName, s.tq)
	waitVisible(t, &stack{c: s.c}, query+` AND ExecutionStatus = "Running"`, 2)
	waitVisible(t, &stack{c: s.c}, query, len(names))
	m, err := audit.AuditMany(ctx, s.deps, query)
	if err != nil || m.Audited != len(names) || m.Failed != 0 {
		t.Fatalf("AuditMany: %v, %d audited of %d, errors %v", err, m.Audited, len(names), m.Errors)
	}
	for _, many := range m.Reports {
		name := ""
		for n, id := range ids {
			if id == many.WorkflowID {
				name = n
			}
		}
		one, err := audit.Audit(ctx, s.deps, audit.ByID(many.WorkflowID, many.RunID))
		if err != nil {
			t.Fatalf("Audit of %s: %v", name, err)
		}
		if a, b := reportJSON(t, many), reportJSON(t, one); a != b {
			t.Errorf("%s: AuditMany reported\n%s\nAudit alone\n%s", name, a, b)
		}
		if name != "written" && many.Status != history.StatusRunning {
			t.Errorf("%s: status %s, want a run still open", name, many.Status)
		}
		if !many.Replay.OK || len(many.Activities) == 0 {
			logReport(t, many)
			t.Errorf("%s: replay %+v, %d activities checked", name, many.Replay, len(many.Activities))
		}
		switch name {
		case "edited":
			if len(findings(many, audit.KindHashMismatch)) == 0 || len(findings(many, audit.KindChainBroken)) == 0 {
				logReport(t, many)
				t.Errorf("edited: the edited total of an open run was not found")
			}
		default:
			if !many.Clean {
				logReport(t, many)
				t.Errorf("%s: not clean", name)
			}
		}
	}
}

// startOne is a user who sees the total and does not confirm (yet): the
// run stays open, waiting for the confirmation.
func (s *realStack) startOne(ctx context.Context, in draftorder.Input) error {
	opts, err := draftorder.StartOptions(s.tq, in)
	if err != nil {
		return err
	}
	uh, err := s.c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: s.c.NewWithStartWorkflowOperation(opts, draftorder.WorkflowName, in),
		UpdateOptions: client.UpdateWorkflowOptions{UpdateName: draftorder.UpdateNextAction,
			Args: []any{draftorder.NextActionInput{}}, WaitForStage: client.WorkflowUpdateStageCompleted},
	})
	if err != nil {
		return fmt.Errorf("update-with-start: %w", err)
	}
	var st draftorder.Status
	if err := uh.Get(ctx, &st); err != nil {
		return err
	}
	if st.Confirmation == nil {
		return fmt.Errorf("%s waits in %s, not for a confirmation", opts.ID, st.State)
	}
	return nil
}
