package maintenance

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
)

// FetchFXRatesWorkflowName is the registered type of FetchFXRates.
const FetchFXRatesWorkflowName = "FetchFXRates"

// The CartwrightState of a FetchFXRates run (its CartwrightFlow is
// workflows.FlowFXRates) is its outcome.
const (
	FXRatesStored  = "STORED"
	FXRatesRefused = "REFUSED"
)

// FetchFXRatesInput is empty: the feed's URL is the worker's
// configuration (CARTWRIGHT_FX_FEED_URL), never a workflow argument.
type FetchFXRatesInput struct{}

// FetchFXRatesResult is the outcome of one read.
type FetchFXRatesResult struct {
	// Outcome is FXRatesStored or FXRatesRefused.
	Outcome string                        `json:"outcome"`
	Stored  activities.FetchFXRatesResult `json:"stored"`
	// Error is why nothing was stored: the feed refused (UPSTREAM_ERROR
	// fx_feed_refused), unreachable after the retries (fx_feed_unavailable),
	// or rewriting a stored day (CONFLICT).
	Error *toolkit.Error `json:"error,omitempty"`
}

// FetchFXRates is the scheduled read of the ECB reference rates
// (docs/operators.md#exchange-rates): one activity fetches, checks and
// stores the feed. An unreachable feed is retried for about a minute; a
// refused one is not retried (the next pass reads it again). Either way
// the run completes with the outcome in its result and in
// CartwrightState, so a bad feed is found with
// `CartwrightFlow='fx_rates' AND CartwrightState='REFUSED'` and never
// leaves a failed run.
func FetchFXRates(ctx workflow.Context, _ FetchFXRatesInput) (FetchFXRatesResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: 5 * time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 4,
		},
		Summary: "read the ECB reference rates",
	})
	var a *activities.FXRates
	out := FetchFXRatesResult{Outcome: FXRatesStored}
	if err := workflow.ExecuteActivity(ctx, a.FetchFXRates).Get(ctx, &out.Stored); err != nil {
		out.Outcome, out.Error = FXRatesRefused, toolkit.AsError(err)
	}
	return out, workflows.UpsertFlowState(ctx, workflows.FlowFXRates, out.Outcome)
}
