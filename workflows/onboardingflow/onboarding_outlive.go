package onboardingflow

import (
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// A dashboard request outlives a Stripe outage (docs/errors.md#outages).
// The login link's own retry policy (docs/tools.md#tool-list: 200 ms,
// doubling to 2 s, 3 attempts) gives up after about a second; a merchant
// who asked for the Express Dashboard during an outage would otherwise
// never get the link, while the relink step is made again at every wake-up
// of the loop. So the call is run again, as a draft order's are (flow.Outlive),
// after a backoff of 5 s doubling to 1 min, for as long as the onboarding
// lives (until its deadline); the request stays pending meanwhile.

// outlivingFlow is the flow.Call Wrap of an onboarding call a person asked
// for: it waits out an outage until the onboarding's deadline.
func (o *onboardingRun) outlivingFlow(what string) func(workflow.Context, func(workflow.Context) workflow.Future) workflow.Future {
	return func(ctx workflow.Context, start func(workflow.Context) workflow.Future) workflow.Future {
		return flow.Outlive(ctx, o.st.DeadlineAt.Sub(workflow.Now(ctx)), what, start, nil, nil)
	}
}
