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
		var err error
		if name == "written" {
			err = s.driveOne(ctx, in)
		} else {
			_, err = s.startOne(ctx, in)
		}
		if err != nil {
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
	// The written draft's run rests holding its stock (or has closed).
	waitVisible(t, &stack{c: s.c}, fmt.Sprintf(`%s AND (CartwrightState = %q OR ExecutionStatus != "Running")`, query, draftorder.StateHolding), 1)
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

// TestAuditManyReadsWhatAnOpenRunWroteSince: AuditMany reads a batch's
// evidence before the runs' histories (docs/performance.md#audit-rate), and
// a run still open may write more in between. Here the batch is read while
// the draft order waits for its confirmation; then the user confirms, and
// the run writes its draft, the evidence of the write, and goes on holding
// the stock. Audited from that batch, the run must still be checked against
// what it wrote since — the report Audit gives it, CLEAN, the new chain rows
// and the draft row included.
func TestAuditManyReadsWhatAnOpenRunWroteSince(t *testing.T) {
	s := newRealStack(t)
	ctx := ctxT(t)
	in := orderInput(uniqueKey("since"), tees, berlin, "EUR")
	st, err := s.startOne(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
	desc, err := s.c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	target := audit.ByID(id, desc.GetWorkflowExecutionInfo().GetExecution().GetRunId())
	var before int
	confirm := func() {
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM evidence_snapshots WHERE workflow_id = $1`, id).Scan(&before); err != nil {
			t.Fatal(err)
		}
		h, err := s.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: draftorder.UpdateConfirm,
			Args: []any{draftorder.ConfirmInput{QuoteHash: st.Confirmation.QuoteHash}}, WaitForStage: client.WorkflowUpdateStageCompleted})
		var ans draftorder.ConfirmAnswer
		if err == nil {
			err = h.Get(ctx, &ans)
		}
		if err != nil {
			t.Fatalf("confirm: %v", err)
		}
		waitVisible(t, &stack{c: s.c}, fmt.Sprintf(`WorkflowId = %q AND CartwrightState = %q`, id, draftorder.StateHolding), 1)
	}
	many, err := audit.AuditReadingFirst(ctx, s.deps, target, confirm)
	if err != nil {
		t.Fatal(err)
	}
	one, err := audit.Audit(ctx, s.deps, target)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := reportJSON(t, many), reportJSON(t, one); a != b {
		t.Errorf("audited from the batch read before the confirmation\n%s\nAudit after it\n%s", a, b)
	}
	written := false
	for _, c := range many.Activities {
		written = written || c.Tool == commerce.ToolCreateDraftOrder
	}
	if !many.Clean || !written || many.Chain.Rows <= before {
		logReport(t, many)
		t.Errorf("clean %v, the write checked %v, %d chain rows checked (%d before the confirmation)", many.Clean, written, many.Chain.Rows, before)
	}
}

// startOne is a user who sees the total and does not confirm (yet): the
// run stays open, waiting for the confirmation, whose status it returns.
func (s *realStack) startOne(ctx context.Context, in draftorder.Input) (draftorder.Status, error) {
	var st draftorder.Status
	opts, err := draftorder.StartOptions(s.tq, in)
	if err != nil {
		return st, err
	}
	uh, err := s.c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: s.c.NewWithStartWorkflowOperation(opts, draftorder.WorkflowName, in),
		UpdateOptions: client.UpdateWorkflowOptions{UpdateName: draftorder.UpdateNextAction,
			Args: []any{draftorder.NextActionInput{}}, WaitForStage: client.WorkflowUpdateStageCompleted},
	})
	if err != nil {
		return st, fmt.Errorf("update-with-start: %w", err)
	}
	if err := uh.Get(ctx, &st); err != nil {
		return st, err
	}
	if st.Confirmation == nil {
		return st, fmt.Errorf("%s waits in %s, not for a confirmation", opts.ID, st.State)
	}
	return st, nil
}
