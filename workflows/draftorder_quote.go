package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// commerceActs names the commerce activities; a nil receiver is enough for
// ExecuteActivity to take the method's name.
var commerceActs *activities.Commerce

// firstFailure picks the error that decides the outcome when several
// parallel calls failed: a business answer (address, compliance, stock)
// before an infrastructure error, in a fixed order, so the result does not
// depend on which call finished first.
func firstFailure(errs ...error) error {
	for _, code := range []toolkit.Code{toolkit.AddressInvalid, toolkit.ComplianceBlocked, toolkit.OutOfStock} {
		for _, err := range errs {
			if err != nil && toolkit.CodeOf(err) == code {
				return err
			}
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// quoteAll runs pricing, shipping and compliance in parallel (round 1).
func (d *draftOrder) quoteAll(ctx workflow.Context) (*DraftOrderResult, error) {
	d.round++
	n, dest := len(d.in.Items), d.in.ShipTo.Country
	pf := d.startPricing(ctx, "", "pricing")
	sf := d.startShipping(ctx)
	cf := d.call(ctx, toolSpec(commerce.ToolCheckCompliance), fmt.Sprintf("%s: %d item(s) to %s", commerce.ToolCheckCompliance, n, dest),
		commerceActs.CheckCompliance, activities.CheckComplianceInput{
			Request: d.request(ctx, d.step("compliance")),
			Args:    commerce.CheckComplianceArgs{Items: d.in.Items, Destination: d.in.ShipTo},
		})
	var q activities.GetQuoteResult
	var s activities.QuoteShippingResult
	var c activities.CheckComplianceResult
	perr, serr, cerr := pf.Get(ctx, &q), sf.Get(ctx, &s), cf.Get(ctx, &c)
	if err := firstFailure(perr, serr, cerr); err != nil {
		d.keep(q, s, c, perr, serr, cerr)
		return d.outcome(err)
	}
	d.keep(q, s, c, nil, nil, nil)
	if c.Verdict.Verdict == commerce.VerdictBlock {
		return d.end(StateComplianceBlocked, toolkit.ComplianceBlocked, "compliance blocked the basket: "+strings.Join(d.compliance.Reasons, ", ")), nil
	}
	return nil, d.chooseShipping()
}

// keep stores what the parallel calls returned successfully.
func (d *draftOrder) keep(q activities.GetQuoteResult, s activities.QuoteShippingResult, c activities.CheckComplianceResult, perr, serr, cerr error) {
	if perr == nil {
		d.quote = &q.Quote
		d.record(d.step("pricing"), q.Envelope)
	}
	if serr == nil {
		d.shipping = &s.Shipping
		d.record(d.step("shipping"), s.Envelope)
	}
	if cerr == nil {
		v := c.Verdict
		d.compliance = &ComplianceSummary{
			Verdict: v.Verdict, Confidence: v.Confidence, Ruleset: v.RulesetVersion, Reasons: []string{},
			NeedsApproval: v.Verdict == commerce.VerdictUncertain || v.Confidence < d.in.ApprovalConfidence,
		}
		for _, r := range v.Reasons {
			d.compliance.Reasons = append(d.compliance.Reasons, reasonLine(r))
		}
		d.record(d.step("compliance"), c.Envelope)
	}
}

// reasonLine renders a compliance reason without personal data (rule code,
// SKU and the rule's message only).
func reasonLine(r commerce.ComplianceReason) string {
	s := r.Code + " (" + r.Verdict
	if r.SKU != "" {
		s += ", " + r.SKU
	}
	return s + "): " + r.Message
}

// startShipping asks for shipping options for the whole basket.
func (d *draftOrder) startShipping(ctx workflow.Context) workflow.Future {
	return d.call(ctx, toolSpec(commerce.ToolQuoteShipping), fmt.Sprintf("%s: %d item(s) to %s", commerce.ToolQuoteShipping, len(d.in.Items), d.in.ShipTo.Country),
		commerceActs.QuoteShipping, activities.QuoteShippingInput{
			Request: d.request(ctx, d.step("shipping")),
			Args:    commerce.QuoteShippingArgs{Items: d.in.Items, Destination: d.in.ShipTo, Currency: d.in.Currency},
		})
}

// chooseShipping takes the option of the requested service level, or the
// cheapest one when the destination has no such service.
func (d *draftOrder) chooseShipping() error {
	var best *commerce.ShippingOption
	for i := range d.shipping.Options {
		o := &d.shipping.Options[i]
		if o.ServiceLevel == d.in.ShippingService {
			d.option = o
			return nil
		}
		if best == nil || o.Cost.Amount < best.Cost.Amount {
			best = o
		}
	}
	if best == nil {
		return invalidInput("no shipping option to %s", d.in.ShipTo.Country)
	}
	d.option = best
	return nil
}

// requote refreshes an expired quote: pricing (telling the tool which prices
// the user saw, so it answers PRICE_CHANGED when they moved) and shipping in
// parallel. Compliance does not depend on prices and is not asked again.
func (d *draftOrder) requote(ctx workflow.Context) (*DraftOrderResult, error) {
	d.round++
	d.requotes++
	pf := d.startPricing(ctx, d.quote.PriceHash, "pricing")
	sf := d.startShipping(ctx)
	var q activities.GetQuoteResult
	var s activities.QuoteShippingResult
	perr, serr := pf.Get(ctx, &q), sf.Get(ctx, &s)
	if toolkit.CodeOf(perr) == toolkit.PriceChanged {
		// The tool confirmed the change; ask once more without the
		// expectation to get the new quote itself.
		perr = d.startPricing(ctx, "", "pricing-new").Get(ctx, &q)
		if perr == nil {
			d.quote = &q.Quote
			d.record(d.step("pricing-new"), q.Envelope)
		}
	} else if perr == nil {
		d.quote = &q.Quote
		d.record(d.step("pricing"), q.Envelope)
	}
	if serr == nil {
		d.shipping = &s.Shipping
		d.record(d.step("shipping"), s.Envelope)
	}
	if err := firstFailure(perr, serr); err != nil {
		return d.outcome(err)
	}
	if err := d.chooseShipping(); err != nil {
		return nil, err
	}
	return d.price(ctx)
}

// startPricing starts a pricing call of the current round.
func (d *draftOrder) startPricing(ctx workflow.Context, expected, name string) workflow.Future {
	verb := "quote"
	if expected != "" {
		verb = "re-quote"
	}
	return d.call(ctx, toolSpec(commerce.ToolGetQuote), fmt.Sprintf("%s: %s %d item(s) in %s", commerce.ToolGetQuote, verb, len(d.in.Items), d.in.Currency),
		commerceActs.GetQuote, activities.GetQuoteInput{
			Request: d.request(ctx, d.step(name)),
			Args:    commerce.GetQuoteArgs{Items: d.in.Items, Currency: d.in.Currency, ExpectedPriceHash: expected},
		})
}

// price computes duties and taxes on the quote and shipping option, then the
// total the user will confirm.
func (d *draftOrder) price(ctx workflow.Context) (*DraftOrderResult, error) {
	var dt activities.EstimateDutiesAndTaxesResult
	err := d.call(ctx, toolSpec(commerce.ToolDutiesAndTaxes), fmt.Sprintf("%s: %s to %s", commerce.ToolDutiesAndTaxes, d.in.Incoterm, d.in.ShipTo.Country),
		commerceActs.EstimateDutiesAndTaxes, activities.EstimateDutiesAndTaxesInput{
			Request: d.request(ctx, d.step("duties")),
			Args: commerce.DutiesAndTaxesArgs{Lines: d.quote.Lines, Shipping: *d.option, Destination: d.in.ShipTo,
				Currency: d.in.Currency, Incoterm: d.in.Incoterm},
		}).Get(ctx, &dt)
	if err != nil {
		return d.outcome(err)
	}
	d.duties = &dt.Duties
	d.record(d.step("duties"), dt.Envelope)

	shipExp := d.shipping.ExpiresAt
	var tr activities.ComputeTotalResult
	err = d.call(ctx, toolSpec(commerce.ToolComputeTotal), fmt.Sprintf("%s: %d line(s), %s shipping", commerce.ToolComputeTotal, len(d.quote.Lines), d.option.ServiceLevel),
		commerceActs.ComputeTotal, activities.ComputeTotalInput{
			Request: d.request(ctx, d.step("total")),
			Args:    commerce.ComputeTotalArgs{Quote: *d.quote, Shipping: *d.option, Duties: *d.duties, ShippingExpiresAt: &shipExp},
		}).Get(ctx, &tr)
	if err != nil {
		return d.outcome(err)
	}
	d.total = &tr.Total
	d.record(d.step("total"), tr.Envelope)
	return nil, nil
}
