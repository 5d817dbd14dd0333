package draftorder

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// quoteTools are the tools a quote may call, whose timeouts and retry
// policies its local activity takes (flow.Steps).
var quoteTools = []string{commerce.ToolChooseOrigins, commerce.ToolGetQuote, commerce.ToolCheckCompliance, commerce.ToolComputeTotal}

// quote runs one quote of the order (activities.Tools.Quote: on the
// run's first, the order's currency against the rates in use
// (draftorder_rates.go); then the origin choice, pricing where it ships
// from, compliance for its transport mode and, when no person must
// decide first, the total) and keeps what it
// answered. expected is the price hash the user saw, on a re-quote. It
// ends the order on a refusal (out of stock, blocked, an unknown SKU …).
func (d *draftOrder) quote(ctx workflow.Context, expected string) (*Result, error) {
	d.round++
	d.total = nil
	in := activities.QuoteInput{Order: d.in.Order, ApprovalConfidence: d.in.ApprovalConfidence, Requests: map[string]toolkit.Request{},
		ExpectedPriceHash: expected, Cleared: d.cleared, CheckRates: d.round == 1}
	for _, st := range activities.QuoteSteps {
		in.Requests[st.Step] = d.request(ctx, d.step(st.Step))
	}
	verb := "quote"
	if expected != "" {
		verb = "re-quote"
	}
	var tools *activities.Tools
	var res activities.QuoteResult
	err := flow.Steps(ctx, d.specs, quoteTools, fmt.Sprintf("%s: %s to %s, %s", verb, d.basket(), d.in.ShipTo.Country, d.in.ShippingService),
		d.outliving("quote"), tools.Quote, in).Get(ctx, &res)
	if err != nil {
		return d.outcome(err)
	}
	if res.CurrencyRefused != nil {
		return nil, d.refuseRates(ctx, res.CurrencyRefused)
	}
	return d.keep(res.Calls)
}

// price derives the total of a quote support staff cleared
// (activities.Tools.Price), sealed with the approval.
func (d *draftOrder) price(ctx workflow.Context) (*Result, error) {
	refs := d.refs
	refs.ApprovalSnapshotID = d.cleared.ApprovalSnapshotID
	in := activities.PriceInput{Refs: refs, Request: d.request(ctx, d.step(activities.StepTotal))}
	var tools *activities.Tools
	var res activities.PriceResult
	err := flow.Steps(ctx, d.specs, []string{commerce.ToolComputeTotal}, fmt.Sprintf("total: %s to %s", d.basket(), d.in.ShipTo.Country),
		d.outliving("total"), tools.Price, in).Get(ctx, &res)
	if err != nil {
		return d.outcome(err)
	}
	return d.keep(res.Calls)
}

// keep reads a quote's or a price's answers in the order they were made,
// records their evidence and keeps what the order goes on with; the first
// refusal ends the order (a re-quote's PRICE_CHANGED is answered by the
// next call, which priced again).
func (d *draftOrder) keep(calls []activities.StepCall) (*Result, error) {
	for i, c := range calls {
		env := c.Envelope
		var err error
		switch c.Tool {
		case commerce.ToolChooseOrigins:
			var p commerce.OriginPlan
			if p, err = flow.Decode[commerce.OriginPlan](c.Tool, env); err == nil {
				d.plan, d.refs.OriginsSnapshotID = &p, env.SnapshotID()
			}
		case commerce.ToolGetQuote:
			var q commerce.Quote
			if q, err = flow.Decode[commerce.Quote](c.Tool, env); err == nil {
				d.priced, d.refs.PricingSnapshotID = &q, env.SnapshotID()
			} else if toolkit.CodeOf(err) == toolkit.PriceChanged && i+1 < len(calls) {
				d.recordAnswer(d.step(c.Step), env, err)
				continue
			}
		case commerce.ToolCheckCompliance:
			var v commerce.ComplianceVerdict
			if v, err = flow.Decode[commerce.ComplianceVerdict](c.Tool, env); err == nil {
				d.keepCompliance(v, env.SnapshotID())
			}
		case commerce.ToolComputeTotal:
			var t commerce.Total
			if t, err = flow.Decode[commerce.Total](c.Tool, env); err == nil {
				d.total = &t
			}
		}
		d.recordAnswer(d.step(c.Step), env, err)
		if err != nil {
			return d.outcome(err)
		}
	}
	return nil, nil
}

// keepCompliance keeps a compliance answer: the summary the status query
// shows (no personal data), and the verdict the order goes on with when
// no person must clear it.
func (d *draftOrder) keepCompliance(v commerce.ComplianceVerdict, snapshotID string) {
	d.refs.ComplianceSnapshotID, d.verdict = snapshotID, &v
	d.compliance = &ComplianceSummary{
		Verdict: v.Verdict, Confidence: v.Confidence, Ruleset: v.RulesetVersion, Reasons: []string{},
		NeedsApproval: v.NeedsApproval(d.in.ApprovalConfidence),
	}
	for _, r := range v.Reasons {
		d.compliance.Reasons = append(d.compliance.Reasons, reasonLine(r))
	}
	if !d.compliance.NeedsApproval {
		d.cleared = &activities.ClearedCompliance{SnapshotID: snapshotID, Mode: v.TransportMode}
	}
}

// option is the shipping option compliance was checked for: the one
// parcel's, or the first parcel by the strictest mode of a split.
func (d *draftOrder) option() *commerce.ShippingOption {
	if d.plan == nil {
		return nil
	}
	mode := commerce.StrictestMode(*d.plan)
	for i := range d.plan.Parcels {
		if o := &d.plan.Parcels[i].Shipping; o.TransportMode == mode {
			return o
		}
	}
	return nil
}

// basket is the activity summaries' count of the cart: units and lines, as
// Current Details counts them (a line of 3 is 3 units, not "1 item").
func (d *draftOrder) basket() string {
	units := 0
	for _, it := range d.in.Items {
		units += it.Quantity
	}
	return fmt.Sprintf("%d unit(s) in %d line(s)", units, len(d.in.Items))
}
