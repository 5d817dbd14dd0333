package audit_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/draftorder/drafttest"
)

// runByUpdates drives a draft order the way the Go client does: the start
// carries the next_action update (Update-with-Start), a stale confirm is
// refused by the validator (no trace in history), staff decide and the
// user confirms by update. It returns the run id and the result.
func (s *realStack) runByUpdates(t *testing.T, tq string, in draftorder.Input, d driver) (string, draftorder.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(3*time.Minute))
	defer cancel()
	opts, err := draftorder.StartOptions(tq, in)
	if err != nil {
		t.Fatal(err)
	}
	op := s.c.NewWithStartWorkflowOperation(opts, draftorder.WorkflowName, in)
	uh, err := s.c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{UpdateName: draftorder.UpdateNextAction,
			Args: []any{draftorder.NextActionInput{}}, WaitForStage: client.WorkflowUpdateStageCompleted},
	})
	if err != nil {
		t.Fatalf("update-with-start: %v", err)
	}
	var st draftorder.Status
	if err := uh.Get(ctx, &st); err != nil {
		t.Fatal(err)
	}
	update := func(name string, arg, out any) error {
		h, err := s.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: opts.ID, UpdateName: name,
			Args: []any{arg}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err != nil {
			return err
		}
		return h.Get(ctx, out)
	}
	if p := st.Approvals.Pending; p != nil && d.decision != "" {
		var ans approval.Answer
		if err := update(approval.UpdateApproval, sealedBy(t, d.approver, p.ApprovalID, d.decision, d.reason), &ans); err != nil {
			t.Fatalf("decide by update: %v", err)
		}
		if err := update(draftorder.UpdateNextAction, draftorder.NextActionInput{Seen: draftorder.ActionKey(st)}, &st); err != nil {
			t.Fatal(err)
		}
	}
	if c := st.Confirmation; c != nil {
		var ans draftorder.ConfirmAnswer
		if err := update(draftorder.UpdateConfirm, draftorder.ConfirmInput{QuoteHash: "sha256:stale"}, &ans); err == nil {
			t.Fatal("a stale confirm was accepted")
		}
		if err := update(draftorder.UpdateConfirm, draftorder.ConfirmInput{QuoteHash: c.QuoteHash}, &ans); err != nil {
			t.Fatalf("confirm by update: %v", err)
		}
	}
	run, err := op.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := drafttest.Result(ctx, s.c, run.GetID())
	if err != nil {
		t.Fatal(err)
	}
	return run.GetRunID(), res
}
