package floor

import (
	"errors"
	"time"

	"go.temporal.io/sdk/workflow"
)

// Floor6LocalConfirm is Floor6Local with the draft order's protocol
// (docs/performance.md#draft-orders-against-floor6local): the user sees the
// total before the write, so the run is started by Update-with-Start whose
// update (UpdateQuote) answers with the total after the first five steps,
// and the write waits for a second update (UpdateConfirm) that answers
// with the run's result. Two workflow tasks and two updates, as a draft
// order has, and no work at all: what the server charges for the protocol.
const Floor6LocalConfirm = "Floor6LocalConfirm"

// The protocol variant's updates.
const (
	// UpdateQuote answers with the total (the fifth step's result).
	UpdateQuote = "quote"
	// UpdateConfirm takes the total's Ref and answers with the write's
	// result once it ran.
	UpdateConfirm = "confirm"
)

// confirmRun is one Floor6LocalConfirm run's state.
type confirmRun struct {
	total, done *Result
	confirmed   bool
}

func runConfirm(ctx workflow.Context, o Order) (Result, error) {
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: 30 * time.Second, RetryPolicy: retry})
	r := &confirmRun{}
	if err := r.handle(ctx); err != nil {
		return Result{}, err
	}
	total, err := steps(ctx, o, workflow.ExecuteLocalActivity, 5, nil)
	if err != nil {
		return Result{}, err
	}
	r.total = &total
	if err := workflow.Await(ctx, func() bool { return r.confirmed }); err != nil {
		return Result{}, err
	}
	done, err := steps(ctx, o, workflow.ExecuteLocalActivity, 6, &total)
	if err != nil {
		return Result{}, err
	}
	r.done = &done
	// The confirm update answers in this task, before the run completes.
	err = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	return done, err
}

// handle registers the two updates: the quote waits for the total; the
// confirm is refused unless it names the total shown, then waits for the
// write.
func (r *confirmRun) handle(ctx workflow.Context) error {
	err := workflow.SetUpdateHandler(ctx, UpdateQuote, func(ctx workflow.Context) (Result, error) {
		err := workflow.Await(ctx, func() bool { return r.total != nil })
		return *r.total, err
	})
	if err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateConfirm, func(ctx workflow.Context, ref string) (Result, error) {
		r.confirmed = true
		err := workflow.Await(ctx, func() bool { return r.done != nil })
		return *r.done, err
	}, workflow.UpdateHandlerOptions{Validator: func(ref string) error {
		if r.total == nil || ref != r.total.Ref {
			return errors.New("confirm names a total this run has not shown")
		}
		return nil
	}})
}
