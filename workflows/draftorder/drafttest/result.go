// Package drafttest helps tests that drive draft orders on a real server.
package drafttest

import (
	"context"
	"errors"

	"go.temporal.io/api/serviceerror"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// Result waits for the draft order's result: DRAFT_CREATED once the draft
// is written (its run then goes on holding the stock, docs/stock.md), or
// why not. A run that closed answers from its history, with its error if
// it failed. It asks as client.WaitResult does (the next_action update
// until_end), for tests that hold only a Temporal client.
func Result(ctx context.Context, tc sdkclient.Client, workflowID string) (draftorder.Result, error) {
	var res draftorder.Result
	h, err := tc.UpdateWorkflow(ctx, sdkclient.UpdateWorkflowOptions{WorkflowID: workflowID, UpdateName: draftorder.UpdateNextAction,
		Args: []any{draftorder.NextActionInput{UntilEnd: true}}, WaitForStage: sdkclient.WorkflowUpdateStageCompleted})
	var st draftorder.Status
	if err == nil {
		err = h.Get(ctx, &st)
	}
	var notFound *serviceerror.NotFound
	switch {
	case err == nil && st.Result != nil:
		return *st.Result, nil
	case err == nil:
		return res, errors.New(workflowID + " answered without a result in state " + st.State)
	case errors.As(err, &notFound):
		// The run closed before the update reached it.
		err = tc.GetWorkflow(ctx, workflowID, "").Get(ctx, &res)
		return res, err
	}
	return res, err
}
