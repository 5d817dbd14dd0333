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
// UPSTREAM_ERROR for an unreachable server, CONFLICT for a signal the
// workflow refused or a workflow that already ended, and so on.
//
//	opts, err := client.OptionsFromEnv()
//	if err != nil { … }
//	c, err := client.New(ctx, opts)
//	if err != nil { … }
//	defer c.Close()
//	h, err := c.StartDraftOrder(ctx, in)          // same key, same order → same run (h.Attached)
//	st, err := c.WaitForAction(ctx, h.WorkflowID, time.Now().Add(30*time.Second))
//	err = c.Confirm(ctx, h.WorkflowID, st.Confirmation.QuoteHash)
//	res, err := c.WaitResult(ctx, h.WorkflowID, time.Now().Add(time.Minute))
package client
