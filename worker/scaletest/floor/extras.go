package floor

import (
	"context"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Floor6LocalConfirmExtras is Floor6LocalConfirm with a draft order's
// extras added one by one (Extras), for the experiments that price each
// of them on the server (docs/performance.md#what-a-draft-order-adds-to-its-protocol):
// not part of `make bench`'s table.
const Floor6LocalConfirmExtras = "Floor6LocalConfirmExtras"

// Extras says which of a draft order's extras a Floor6LocalConfirmExtras
// run carries, beyond what its start options carry (search attributes,
// memo, policies: the client's side).
type Extras struct {
	// Timer waits for the confirmation under a timer, as the draft
	// order's confirm window does.
	Timer bool `json:"timer,omitempty"`
	// MarkerPad is the padding (bytes) of the fifth step's result: its
	// marker as large as the draft order's quote round's.
	MarkerPad int `json:"marker_pad,omitempty"`
	// AnswerPad is the padding of the quote update's answer, the confirm
	// update's answer and the run's result (a draft order's status and
	// result are several KiB).
	AnswerPad int `json:"answer_pad,omitempty"`
	// Upsert sets CartwrightState before the run completes, as a draft
	// order's final state.
	Upsert bool `json:"upsert,omitempty"`
	// Summaries gives each local activity and the timer a summary (user
	// metadata on their events).
	Summaries bool `json:"summaries,omitempty"`
}

// ExtrasInput is a Floor6LocalConfirmExtras run's input.
type ExtrasInput struct {
	Order  Order  `json:"order"`
	Extras Extras `json:"extras"`
}

// padStep is the padded fifth step's input.
type padStep struct {
	Step Step `json:"step"`
	Pad  int  `json:"pad"`
}

// padded is the fifth step ("total") answering with Pad bytes of padding.
func padded(ctx context.Context, in padStep) (Result, error) {
	r, err := noop("total")(ctx, in.Step)
	r.Padding = strings.Repeat("-", in.Pad)
	return r, err
}

// stateKey is the draft orders' CartwrightState search attribute.
var stateKey = temporal.NewSearchAttributeKeyKeyword("CartwrightState")

func runConfirmExtras(ctx workflow.Context, in ExtrasInput) (Result, error) {
	x := in.Extras
	opts := workflow.LocalActivityOptions{StartToCloseTimeout: 30 * time.Second, RetryPolicy: retry}
	exec := func(ctx workflow.Context, act any, args ...any) workflow.Future {
		o := opts
		if x.Summaries {
			o.Summary = "step " + act.(string) + ": 2 unit(s) in 1 line(s) to DE"
		}
		ctx = workflow.WithLocalActivityOptions(ctx, o)
		if act == "total" && x.MarkerPad > 0 {
			return workflow.ExecuteLocalActivity(ctx, "padded", padStep{Step: args[0].(Step), Pad: x.MarkerPad})
		}
		return workflow.ExecuteLocalActivity(ctx, act, args...)
	}
	pad := func(r Result) Result {
		if x.AnswerPad > 0 {
			r.Padding = strings.Repeat("-", x.AnswerPad)
		}
		return r
	}
	r := &confirmRun{}
	if err := r.handle(ctx); err != nil {
		return Result{}, err
	}
	total, err := steps(ctx, in.Order, exec, 5, nil)
	if err != nil {
		return Result{}, err
	}
	shown := pad(total)
	r.total = &shown
	wait := func() bool { return r.confirmed }
	if x.Timer {
		ok, err := workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{Timeout: 30 * time.Minute,
			TimerOptions: workflow.TimerOptions{Summary: "confirmation window"}}, wait)
		if err != nil || !ok {
			return Result{}, temporal.NewApplicationError("no confirmation", "EXPIRED")
		}
	} else if err := workflow.Await(ctx, wait); err != nil {
		return Result{}, err
	}
	done, err := steps(ctx, in.Order, exec, 6, &total)
	if err != nil {
		return Result{}, err
	}
	if x.Upsert {
		if err := workflow.UpsertTypedSearchAttributes(ctx, stateKey.ValueSet("DRAFT_CREATED")); err != nil {
			return Result{}, err
		}
	}
	done = pad(done)
	r.done = &done
	err = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	return done, err
}
