package draftorder

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// The part of the start check only the worker can answer
// (docs/tools.md#exchange-rates) is the order's currency against the
// exchange rates the tools price with now (a feed's stored day, not the
// shipped table), with the same check the Go client and the starter run
// before a start (commerce.RatesInUse.CheckCurrency). The run's first
// quote makes it before any tool call, in the same local activity
// (activities.QuoteInput.CheckRates): after the updates are declared, so
// the update of an Update-with-Start finds its handler, and before
// anything is quoted. Rates that cannot be read now refuse nothing: the
// quote waits for them and says so.

// refuseRates ends a run whose currency the rates in use do not price as
// refuseStart ends one its input check refused: the waiting updates get
// the refusal (INVALID_ARGUMENT naming currency), the run ends canceled
// with it as details, nothing is left failed and the key stays free.
func (d *draftOrder) refuseRates(ctx workflow.Context, refusal *toolkit.Error) error {
	d.over, d.failed = true, activities.ApplicationError(refusal)
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	return temporal.NewCanceledError(*refusal)
}
