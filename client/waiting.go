package client

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/internal/telemetry"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// maxWaitingPages bounds the listing that finds the oldest waiting
// approval (pages of 1000): a backlog beyond it is counted, its age is a
// lower bound.
const maxWaitingPages = 5

// CountWaiting reads from Temporal visibility what waits on people now on
// taskQueue: draft orders awaiting a staff approval (AwaitingApproval),
// the age of the longest waiting (since its run started: the approval is
// asked for within seconds of the start), and draft orders awaiting the
// user's confirmation (CartwrightState). Visibility is shared by every
// worker and survives restarts, so the figures are right whichever worker
// reports them.
func CountWaiting(ctx context.Context, tc sdkclient.Client, taskQueue string) (telemetry.Waiting, error) {
	base := fmt.Sprintf("CartwrightFlow = '%s' AND ExecutionStatus = 'Running' AND TaskQueue = '%s'",
		workflows.FlowDraftOrder, taskQueue)
	approvalsQ := base + " AND AwaitingApproval = true"
	var w telemetry.Waiting
	n, err := tc.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: approvalsQ})
	if err != nil {
		return w, fmt.Errorf("count waiting approvals: %w", err)
	}
	w.Approvals = n.GetCount()
	c, err := tc.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{
		Query: base + fmt.Sprintf(" AND CartwrightState = '%s'", draftorder.StateNeedsConfirm)})
	if err != nil {
		return w, fmt.Errorf("count waiting confirmations: %w", err)
	}
	w.Confirmations = c.GetCount()
	if w.Approvals == 0 {
		return w, nil
	}
	now := time.Now()
	var token []byte
	for page := 0; page < maxWaitingPages; page++ {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: approvalsQ, PageSize: 1000, NextPageToken: token})
		if err != nil {
			return w, fmt.Errorf("list waiting approvals: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			if age := now.Sub(e.GetStartTime().AsTime()); age > w.OldestApproval {
				w.OldestApproval = age
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	return w, nil
}
