package draftorder

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// StateUnavailable ends a draft order whose dependency stayed down for the
// whole window (code UPSTREAM_ERROR).
const StateUnavailable = "UNAVAILABLE"

// outliving is the toolCall.wrap of the draft order's tool calls: each
// waits out outages for one confirm window (the order's own window: the
// longest the user is asked to wait for any one step).
func (d *draftOrder) outliving(what string) func(workflow.Context, func(workflow.Context) workflow.Future) workflow.Future {
	return func(ctx workflow.Context, start func(workflow.Context) workflow.Future) workflow.Future {
		return flow.Outlive(ctx, d.in.ConfirmWindow, what, start, d.waitingOn, d.cancelWins)
	}
}

// showStateWhileWaiting moves CartwrightState to the state the order is
// in before it waits out an outage: the order started showing where it
// would rest (startState), and an outage makes it rest here.
func (d *draftOrder) showStateWhileWaiting(ctx workflow.Context) {
	if err := d.setState(ctx, d.state); err != nil {
		workflow.GetLogger(ctx).Warn("could not show the state while waiting out an outage", "state", d.state, "error", err)
	}
}

// unavailable is the result of a call whose dependency stayed down for the
// whole window, or nil when err is not such a failure.
func (d *draftOrder) unavailable(err error) *Result {
	if !flow.Infrastructure(err) {
		return nil
	}
	if d.cancelWins() {
		// Cancelled while waiting out the outage: nothing is written,
		// so the cancel wins over the outage.
		return d.cancelledResult()
	}
	te := toolkit.AsError(err)
	return d.end(StateUnavailable, toolkit.UpstreamError,
		fmt.Sprintf("a dependency stayed unavailable for the order's window of %s (state %s): %s: %s",
			d.in.ConfirmWindow, d.state, te.Code, te.Message)).
		withDetail("cause", map[string]any{"code": te.Code, "message": te.Message})
}
