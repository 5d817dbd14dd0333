package draftorder

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// prefetchRound makes the first quote round's calls in one local activity
// (docs/performance.md#quote-round) and returns ctx
// carrying their answers. The workflow then quotes exactly as before:
// every call it makes (callTool) takes the prefetched answer of its step
// when the round made that call with the very input the workflow would
// send (same tool, same correlation id, same input bytes), and makes the
// call itself otherwise. So the round's own logic can only save calls,
// never decide anything: a round that stopped early, or failed (an outage,
// a timeout: one attempt, no retries), leaves the remaining calls to the
// workflow, with their retry policies and outlive.
func (d *draftOrder) prefetchRound(ctx workflow.Context) workflow.Context {
	in := activities.QuoteRoundInput{
		Items: d.in.Items, ShipTo: d.in.ShipTo, Currency: d.in.Currency, ShippingService: d.in.ShippingService,
		Incoterm: d.in.Incoterm, ApprovalConfidence: d.in.ApprovalConfidence,
		Requests: map[string]toolkit.Request{},
	}
	// Every step gets its request; the attempt may take as long as the
	// round's tools' timeouts together.
	var timeout time.Duration
	for _, st := range activities.QuoteRoundSteps {
		in.Requests[st.Step] = d.request(ctx, roundStep(d.round+1, st.Step))
		if spec, err := d.specs.Get(st.Tool); err == nil {
			timeout += spec.Timeout
		}
	}
	opts := workflow.LocalActivityOptions{
		StartToCloseTimeout: timeout + flow.EvidenceMargin,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		Summary:             "quote round: " + d.basket() + " to " + d.in.ShipTo.Country,
	}
	var tools *activities.Tools
	var res activities.QuoteRoundResult
	if err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, opts), tools.QuoteRound, in).Get(ctx, &res); err != nil {
		workflow.GetLogger(ctx).Warn("quote round failed; the workflow makes its calls", "code", string(toolkit.CodeOf(err)))
		return ctx
	}
	pre := flow.Prefetched{}
	for _, c := range res.Calls {
		pre[in.Requests[c.Step].CorrelationID] = c
	}
	return flow.WithPrefetched(ctx, pre)
}
