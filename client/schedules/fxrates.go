package schedules

import (
	"cmp"
	"context"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/workflows/maintenance"
)

// FXRatesScheduleID is the one exchange-rate schedule of a namespace.
const FXRatesScheduleID = "cartwright-fx-rates"

// FXRatesSchedule describes the exchange-rate schedule a worker ensures
// when a feed is configured (docs/operators.md#exchange-rates).
type FXRatesSchedule struct {
	ID        string        // default FXRatesScheduleID
	TaskQueue string        // where FetchFXRates runs
	Every     time.Duration // interval between reads, at least a minute
}

// pass is the schedule: reads never overlap and a missed one is not caught
// up (the next read gets the same feed). The ECB publishes once a working
// day around 16:00 CET; reading every hour stores a new day within the
// hour, and a day already stored is a no-op.
func (s FXRatesSchedule) pass() everyPass {
	return everyPass{id: cmp.Or(s.ID, FXRatesScheduleID), workflow: maintenance.FetchFXRatesWorkflowName, taskQueue: s.TaskQueue,
		input: maintenance.FetchFXRatesInput{}, every: s.Every, timeout: 10 * time.Minute,
		note: "cartwright exchange rates: reads the ECB reference-rate feed into PostgreSQL (created by the worker)"}
}

// EnsureFXRatesSchedule creates the schedule or brings an existing one in
// line with this configuration. Safe to call from every worker at every
// start.
func EnsureFXRatesSchedule(ctx context.Context, c client.Client, s FXRatesSchedule) error {
	return ensureEvery(ctx, c, "exchange-rate", s.pass())
}
