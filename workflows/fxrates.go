package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
)

// FetchFXRatesWorkflowName is the registered type of FetchFXRates.
const FetchFXRatesWorkflowName = "FetchFXRates"

// FetchFXRatesInput is empty: the feed's URL is the worker's
// configuration (CARTWRIGHT_FX_FEED_URL), never a workflow argument.
type FetchFXRatesInput struct{}

// FetchFXRates is the scheduled read of the ECB reference rates
// (docs/operators.md#exchange-rates): one activity fetches, checks and
// stores the feed. An unreachable feed is retried for a few minutes; a
// refused one fails the run at once (the next pass reads it again), so a
// broken feed shows as failed runs of this type.
func FetchFXRates(ctx workflow.Context, _ FetchFXRatesInput) (activities.FetchFXRatesResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: 5 * time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 5,
		},
		Summary: "read the ECB reference rates",
	})
	var a *activities.FXRates
	var out activities.FetchFXRatesResult
	err := workflow.ExecuteActivity(ctx, a.FetchFXRates).Get(ctx, &out)
	return out, err
}
