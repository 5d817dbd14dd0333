package draftorder

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// ratesCheckTimeout bounds the start check's one read of the rates in
// use: a cached read in the worker, milliseconds. One attempt: when the
// rates cannot be read (PostgreSQL down) the check refuses nothing and
// the quote waits out the outage, where a cancel wins at once
// (docs/errors.md#outages).
const ratesCheckTimeout = 3 * time.Second

// checkRates is the part of the start check only the worker can answer
// (docs/tools.md#exchange-rates): the order's currency against the
// exchange rates the tools price with now (a feed's stored day, not the
// shipped table), with the same check the Go client and the starter run
// before a start (commerce.RatesInUse.CheckCurrency). It runs after the
// updates are declared, so the update of an Update-with-Start finds its
// handler, and before anything is quoted. Rates that cannot be read now
// refuse nothing: the quote waits for them and says so.
func (d *draftOrder) checkRates(ctx workflow.Context) *toolkit.Error {
	var tools *activities.Tools
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: ratesCheckTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		Summary:             "start check: the currency against the exchange rates in use",
	})
	var r activities.RatesInUseResult
	if err := workflow.ExecuteLocalActivity(lctx, tools.RatesInUse, activities.RatesInUseInput{}).Get(ctx, &r); err != nil || r.Unavailable != nil {
		return nil
	}
	return toolkit.AsError(r.CheckCurrency(d.in.Currency))
}

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
