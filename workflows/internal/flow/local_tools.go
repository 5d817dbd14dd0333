package flow

import (
	"errors"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// A draft order runs its read-only tools (pricing, shipping, compliance,
// duties and taxes, total) as local activities: they compute in the worker
// from rule data and PostgreSQL, so a round trip through the task queue per
// call costs more than the call (docs/performance.md#local-activities).
// Each still runs Tools.CallTool, through the invoker, with its evidence
// snapshot; the history holds a marker with the same envelope instead of
// three activity events. Its write makes its first attempt in the worker
// too (localFirst). A draft order says so on each call (Call.InWorker);
// other flows run every tool as a regular activity.

// localTools are the tools that run as local activities: read-only,
// in-process (no open world), and short. The write tool, Stripe and every
// call with side effects stay regular activities, whose retries and
// timeouts the server owns. A fixed list, not the annotations alone: which
// calls are local is part of the command sequence, so it must not change
// when a spec does.
var localTools = map[string]bool{
	commerce.ToolGetQuote:        true,
	commerce.ToolQuoteShipping:   true,
	commerce.ToolCheckCompliance: true,
	commerce.ToolDutiesAndTaxes:  true,
	commerce.ToolComputeTotal:    true,
	commerce.ToolChooseOrigins:   true,
}

// localFirstTools make their first attempt as a local activity. The draft
// order's write is idempotent (keyed by the user's idempotency key) and
// goes to the same PostgreSQL the read-only tools read; run in the worker,
// it saves the confirmation its activity task and a workflow task. Its
// retries stay the server's: any failure of that attempt a retry could fix
// hands the call to the regular activity.
var localFirstTools = map[string]bool{
	commerce.ToolCreateDraftOrder: true,
}

// runsLocal reports whether this call runs as a local activity: a draft
// order's call (Call.InWorker) of a tool of the list, whose spec still says
// read-only and in-process.
func runsLocal(c Call, spec toolkit.Spec) bool {
	return c.InWorker && localTools[spec.Name] && spec.Annotations.ReadOnly && !spec.Annotations.OpenWorld
}

// runsLocalFirst reports whether this call makes its first attempt as a
// local activity.
func runsLocalFirst(c Call, spec toolkit.Spec) bool {
	return c.InWorker && localFirstTools[spec.Name] && !spec.Annotations.OpenWorld
}

// localToolOptions are toolOptions for a local activity: the same attempt
// timeout (the tool's own plus the evidence margin) and retry policy. The
// SDK retries a local activity in the worker while the backoff is short and
// through a timer beyond that; the schedule-to-close bound is the same as
// the regular activity's, so the call's contract does not change.
func localToolOptions(ctx workflow.Context, spec toolkit.Spec, summary string) workflow.Context {
	attempt := spec.Timeout + EvidenceMargin
	//workflowcheck:ignore
	retry := retryPolicy(spec)
	opts := workflow.LocalActivityOptions{StartToCloseTimeout: attempt, RetryPolicy: retry, Summary: summary}
	if n := spec.Retry.MaxAttempts; n > 0 {
		opts.ScheduleToCloseTimeout = time.Duration(n)*attempt + time.Duration(n-1)*retry.MaximumInterval
	}
	return workflow.WithLocalActivityOptions(ctx, opts)
}

// localFirst makes one attempt of a call as a local activity and, when it
// fails in a way a retry could fix, makes the call again as the regular
// activity with the tool's whole retry policy (the server's retries,
// timeouts and backoff, and outlive around it). Its answer, or a refusal
// no retry changes, is the call's. The regular activity repeats the same
// step: the tool is idempotent and the invoker finds the step's evidence
// (docs/performance.md#local-first-write).
func localFirst(ctx workflow.Context, spec toolkit.Spec, c Call, in activities.CallToolInput) workflow.Future {
	var tools *activities.Tools
	once := workflow.LocalActivityOptions{
		StartToCloseTimeout: spec.Timeout + EvidenceMargin,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		Summary:             c.Summary,
	}
	attempt := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, once), tools.CallTool, in)
	done, settle := workflow.NewFuture(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		err := attempt.Get(ctx, nil)
		if err == nil || !Retryable(err) {
			settle.Chain(attempt)
			return
		}
		if c.Handover != nil {
			if herr := c.Handover(ctx); herr != nil {
				settle.SetError(herr)
				return
			}
		}
		settle.Chain(workflow.ExecuteActivity(ToolOptions(ctx, spec, c.Summary), tools.CallTool, in))
	})
	return done
}

// Retryable reports whether the tool's retry policy (retryPolicy) would
// try a failed attempt again: anything but a cancellation, a
// non-retryable application error or one of toolkit.NonRetryableCodes.
func Retryable(err error) bool {
	if temporal.IsCanceledError(err) {
		return false
	}
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		return true // a timeout or a panic
	}
	// NonRetryableCodes reads the code table through a map and sorts the
	// result: deterministic, though workflowcheck sees a map range.
	//workflowcheck:ignore
	codes := toolkit.NonRetryableCodes()
	return !app.NonRetryable() && !slices.Contains(codes, app.Type())
}
