package draftorder

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// refuseStart ends a run whose input its start check refused
// (docs/backend.md#other-languages): whatever client started it — the Go
// client never does, a TypeScript backend or the temporal CLI may — the
// caller's next_action and confirm_total updates (an Update-with-Start's
// included) are refused with the check's own error, INVALID_ARGUMENT
// naming the field, and the run ends canceled, with that error as its
// details: nothing is left failed, and the key stays free for the
// corrected order (a canceled run does not hold it, as a failed one does
// not; draftorder.StartOptions).
//
// Update handlers are declared before the run yields, so an update that
// came with the start finds them; one yield lets such an update run its
// validator before the run closes.
func refuseStart(ctx workflow.Context, refusal error) error {
	te := toolkit.AsError(refusal)
	refused := func(workflow.Context) error { return activities.ApplicationError(te) }
	for _, name := range []string{UpdateNextAction, UpdateConfirm} {
		var err error
		switch name {
		case UpdateNextAction:
			err = workflow.SetUpdateHandlerWithOptions(ctx, name,
				func(ctx workflow.Context, _ NextActionInput) (Status, error) {
					return Status{}, refused(ctx)
				},
				workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, _ NextActionInput) error { return refused(ctx) }})
		case UpdateConfirm:
			err = workflow.SetUpdateHandlerWithOptions(ctx, name,
				func(ctx workflow.Context, _ ConfirmInput) (ConfirmAnswer, error) {
					return ConfirmAnswer{}, refused(ctx)
				},
				workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, _ ConfirmInput) error { return refused(ctx) }})
		}
		if err != nil {
			return err
		}
	}
	yield(ctx)
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	return temporal.NewCanceledError(*te)
}

// yield lets every other coroutine of the run (an update that came with
// the start) run once, without a command or a timer.
func yield(ctx workflow.Context) {
	ch := workflow.NewChannel(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) { ch.Send(ctx, struct{}{}) })
	ch.Receive(ctx, nil)
}
