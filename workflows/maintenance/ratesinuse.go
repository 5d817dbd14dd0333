package maintenance

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
)

// RatesInUseWorkflowName is the registered type of RatesInUse.
const RatesInUseWorkflowName = "FXRatesInUse"

// RatesInUseInput asks a worker which exchange rates prices use; it has
// no fields.
type RatesInUseInput struct{}

// RatesInUseResult is the worker's answer: the rates' source and date,
// the currencies they price, or why there are none now.
type RatesInUseResult struct {
	activities.RatesInUseResult
}

// RatesInUse asks a worker of the task queue which exchange rates its
// tools price with now (docs/tools.md#exchange-rates): the Go client
// checks a draft order's currency against them before it starts one, so
// a currency those rates lack starts nothing. One local activity, the
// same the draft order's start runs.
func RatesInUse(ctx workflow.Context, _ RatesInUseInput) (RatesInUseResult, error) {
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 5 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
		Summary:             "the exchange rates in use",
	})
	var tools *activities.Tools
	var out RatesInUseResult
	err := workflow.ExecuteLocalActivity(ctx, tools.RatesInUse, activities.RatesInUseInput{}).Get(ctx, &out.RatesInUseResult)
	return out, err
}
