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

// A tool runs inside a workflow one of two ways, and retries one way
// (docs/tools.md#how-a-tool-runs-in-a-workflow):
//
//  1. in the worker, as a local activity: a draft order's quote and price
//     steps (Steps: activities.Tools.Quote and Price, several read-only
//     tools in one activity, their evidence in one batch), and the first
//     attempt of its write (LocalFirst);
//  2. on the task queue, as the regular activity Tools.CallTool (CallTool):
//     every other call, and the write when its first attempt failed.
//
// Retries: an attempt that fails with a retryable code is retried under
// the retry policy of the tools' specs (retryPolicy) — by the server for a
// regular activity, by the SDK in the worker for a local one. When a call
// still fails on infrastructure after its retries, a draft order runs it
// again after a backoff for as long as its window allows (Outlive). A
// business code is an answer, never retried.

// localFirstTools make their first attempt as a local activity. The draft
// order's write is idempotent (keyed by the user's idempotency key) and
// goes to the same PostgreSQL the quote reads; run in the worker, it
// saves the confirmation its activity task and a workflow task. Its
// retries stay the server's: any failure of that attempt a retry could fix
// hands the call to the regular activity. A fixed list, not the
// annotations alone: which calls are local is part of the command
// sequence, so it must not change when a spec does.
var localFirstTools = map[string]bool{
	commerce.ToolCreateDraftOrder: true,
}

// runsLocalFirst reports whether this call makes its first attempt as a
// local activity.
func runsLocalFirst(c Call, spec toolkit.Spec) bool {
	return c.InWorker && localFirstTools[spec.Name] && !spec.Annotations.OpenWorld
}

// Steps runs activity (activities.Tools.Quote or Price) with in as one
// local activity making the calls of tools: an attempt may take their
// timeouts together plus the evidence margin, and is retried under the
// tools' retry policies merged (the most attempts, the longest interval).
// wrap, if set, runs its start (a draft order outlives an outage).
func Steps(ctx workflow.Context, specs ToolSpecs, tools []string, summary string, wrap Wrap, activity, in any) workflow.Future {
	var attempt time.Duration
	merged := toolkit.Spec{}
	for _, name := range tools {
		spec, err := specs.Get(name)
		if err != nil {
			f, set := workflow.NewFuture(ctx)
			set.SetError(activities.ApplicationError(err))
			return f
		}
		attempt += spec.Timeout
		r := &merged.Retry
		r.MaxAttempts = max(r.MaxAttempts, spec.Retry.MaxAttempts)
		r.MaxInterval = max(r.MaxInterval, spec.Retry.MaxInterval)
		if r.InitialInterval == 0 || spec.Retry.InitialInterval < r.InitialInterval {
			r.InitialInterval = spec.Retry.InitialInterval
		}
	}
	merged.Timeout = attempt
	start := func(ctx workflow.Context) workflow.Future {
		return workflow.ExecuteLocalActivity(localOptions(ctx, merged, summary), activity, in)
	}
	if wrap == nil {
		return start(ctx)
	}
	return wrap(ctx, start)
}

// localOptions are the options of a local activity for spec: the same
// attempt timeout (the tool's own plus the evidence margin) and retry
// policy as the regular activity's. The SDK retries a local activity in
// the worker while the backoff is short and through a timer beyond that;
// the schedule-to-close bound is the regular activity's.
func localOptions(ctx workflow.Context, spec toolkit.Spec, summary string) workflow.Context {
	attempt := spec.Timeout + EvidenceMargin
	//workflowcheck:ignore
	retry := retryPolicy(spec)
	opts := workflow.LocalActivityOptions{StartToCloseTimeout: attempt, RetryPolicy: retry, Summary: summary}
	if n := spec.Retry.MaxAttempts; n > 0 {
		opts.ScheduleToCloseTimeout = time.Duration(n)*attempt + time.Duration(n-1)*retry.MaximumInterval
	}
	return workflow.WithLocalActivityOptions(ctx, opts)
}

// LocalFirst makes one attempt of a call as a local activity and, when it
// fails in a way a retry could fix, makes the call again as the regular
// activity with the tool's whole retry policy (the server's retries,
// timeouts and backoff, and outlive around it). Its answer, or a refusal
// no retry changes, is the call's. The regular activity repeats the same
// step: the tool is idempotent and the invoker finds the step's evidence
// (docs/performance.md#local-first-write). The draft order's write and
// every tool call the Go client starts use it
// (docs/performance.md#local-first-write).
func LocalFirst(ctx workflow.Context, spec toolkit.Spec, c Call, in activities.CallToolInput) workflow.Future {
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
