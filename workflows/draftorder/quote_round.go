package draftorder

import (
	"encoding/json"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// roundAnswers are the calls of the first quote round made ahead in one
// local activity (docs/performance.md#quote-round), by correlation id. The
// workflow still quotes step by step: each step asks them first
// (callOrReuse), so the round can only save calls, never decide anything.
type roundAnswers map[string]activities.RoundCall

// quoteRound makes the first quote round's calls in one local activity
// and returns their answers. It has one attempt and no retries: a round
// that fails (an outage, a timeout) returns none, and the workflow makes
// the calls itself, with their retry policies and outlive; a round that
// stopped early leaves the rest to it the same way.
func (d *draftOrder) quoteRound(ctx workflow.Context) roundAnswers {
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
		return nil
	}
	answers := roundAnswers{}
	for _, c := range res.Calls {
		answers[in.Requests[c.Step].CorrelationID] = c
	}
	return answers
}

// take returns the round's answer to c and forgets it, if the round made
// this very call: same tool, same correlation id (the step) and the same
// input bytes (activities.PrefetchSHA256). Any other call is the
// workflow's to make.
func (r roundAnswers) take(c flow.Call) (toolkit.Response, bool) {
	got, ok := r[c.Req.CorrelationID]
	if !ok || got.Tool != c.Tool {
		return toolkit.Response{}, false
	}
	// encoding/json is deterministic (PrefetchSHA256 re-encodes a total's
	// input without its refs); workflowcheck sees only reflection.
	//workflowcheck:ignore
	if raw, err := json.Marshal(c.Args); err != nil || got.InputSHA256 != activities.PrefetchSHA256(c.Args, raw) {
		return toolkit.Response{}, false
	}
	delete(r, c.Req.CorrelationID)
	return got.Envelope, true
}

// callOrReuse is a step of a quote round: the first round's answer when it
// made this very call (take), else the call made by the workflow
// (flow.CallTool, with the tool's retry policy and outlive), in the worker
// where flow's tool lists say so (Call.InWorker).
func callOrReuse[T any](ctx workflow.Context, d *draftOrder, c flow.Call) flow.Future[T] {
	c.InWorker = true
	// A tool without a spec fails in CallTool (NOT_FOUND) even when the
	// round answered it: the round can save a call, never admit one.
	if _, err := d.specs.Get(c.Tool); err == nil {
		if env, ok := d.firstRound.take(c); ok {
			return flow.Answered[T](ctx, c.Tool, env)
		}
	}
	return flow.CallTool[T](ctx, d.specs, c)
}
