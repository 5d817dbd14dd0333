// Package client is the typed Go client backend services use to start and
// drive cartwright's workflows: draft orders (start idempotently, confirm,
// cancel, approve or reject, status, wait for the result) and merchant
// onboarding (start, signal, status).
//
// New takes explicit Options and reads no environment; OptionsFromEnv
// reads them from the Temporal SDK's standard environment configuration
// (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TLS_*, TEMPORAL_API_KEY,
// TEMPORAL_PROFILE …), the task queue and the workflow windows from
// cartwright's (CARTWRIGHT_TASK_QUEUE, CARTWRIGHT_CONFIRM_WINDOW …).
// Every error a method returns is a *toolkit.Error carrying a code of the
// closed set (toolkit.CodeOf(err)): NOT_FOUND for an unknown workflow,
// UPSTREAM_ERROR for an unreachable server, CONFLICT for a request the
// workflow refused or a workflow that already ended, and so on.
//
// Nothing polls: the draft order answers each caller through Workflow
// Updates. StartDraftOrder is one Update-with-Start call that returns the
// first answer (the total to confirm, the staff wait, or the end);
// Confirm, Approve and Reject get the workflow's own answer to that call
// (accepted, refused with the reason, or already done); WaitForAction
// returns when the workflow reaches its next step. The signals stay for
// the Web UI and the temporal CLI, and do the same thing.
//
//	opts, err := client.OptionsFromEnv()
//	if err != nil { … }
//	c, err := client.New(ctx, opts)
//	if err != nil { … }
//	defer c.Close()
//	h, err := c.StartDraftOrder(ctx, in)          // same key, same order → same run (h.Attached)
//	err = c.Confirm(ctx, h.WorkflowID, h.Status.Confirmation.QuoteHash) // nil: the draft order exists
//	res, err := c.WaitResult(ctx, h.WorkflowID, time.Now().Add(time.Minute))
package client
