package draftorder

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

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

// quoteAll runs round 1: pricing and shipping in parallel, then
// compliance for the chosen option's transport mode (a power bank may go
// by road, not by air); a re-quote whose option ships by another mode
// checks again (recheckCompliance).
func (d *draftOrder) quoteAll(ctx workflow.Context) (*DraftOrderResult, error) {
	d.round++
	if end, err := d.chooseOrigins(ctx); end != nil || err != nil {
		return end, err
	}
	if d.split() {
		return d.quoteSplit(ctx)
	}
	pf := d.startPricing(ctx, "", "pricing")
	sf := d.startShipping(ctx)
	s, senv, serr := sf.Get(ctx)
	d.keepShipping(s, senv, serr)
	if serr != nil {
		q, qenv, perr := pf.Get(ctx)
		d.keepQuote("pricing", q, qenv, perr)
		return d.outcome(firstFailure(perr, serr))
	}
	if err := d.chooseShipping(); err != nil {
		return d.outcome(err)
	}
	cf := d.startCompliance(ctx)
	q, qenv, perr := pf.Get(ctx)
	d.keepQuote("pricing", q, qenv, perr)
	v, cenv, cerr := cf.Get(ctx)
	d.keepCompliance(v, cenv, cerr)
	if err := firstFailure(perr, cerr); err != nil {
		return d.outcome(err)
	}
	return d.blocked(), nil
}

// blocked ends the draft order when the compliance verdict is block.
func (d *draftOrder) blocked() *DraftOrderResult {
	if d.compliance != nil && d.compliance.Verdict == commerce.VerdictBlock {
		return d.end(StateComplianceBlocked, toolkit.ComplianceBlocked, "compliance blocked the basket: "+strings.Join(d.compliance.Reasons, ", ")).
			withDetail("reasons", d.compliance.Reasons).withDetail("ruleset_version", d.compliance.Ruleset)
	}
	return nil
}

// startCompliance checks the basket for the chosen option's transport mode.
func (d *draftOrder) startCompliance(ctx workflow.Context) flow.Future[commerce.ComplianceVerdict] {
	mode := d.option.TransportMode
	d.complianceMode = mode
	return callOrReuse[commerce.ComplianceVerdict](ctx, d, flow.Call{
		Tool:    commerce.ToolCheckCompliance,
		Wrap:    d.outliving(commerce.ToolCheckCompliance),
		Req:     d.request(ctx, d.step("compliance")),
		Args:    commerce.CheckComplianceArgs{Items: d.in.Items, Destination: d.in.ShipTo, TransportMode: mode},
		Summary: fmt.Sprintf("%s: %s to %s by %s", commerce.ToolCheckCompliance, d.basket(), d.in.ShipTo.Country, mode),
	})
}

// keepQuote keeps a pricing answer; step names it in the evidence.
func (d *draftOrder) keepQuote(step string, q commerce.Quote, env toolkit.Response, err error) {
	if err == nil {
		d.quote = &q
		d.sealRefs.PricingSnapshotID = env.SnapshotID()
	}
	d.recordAnswer(d.step(step), env, err)
}

// keepShipping keeps a shipping answer.
func (d *draftOrder) keepShipping(s commerce.ShippingQuote, env toolkit.Response, err error) {
	if err == nil {
		d.shipping = &s
	}
	d.recordAnswer(d.step("shipping"), env, err)
}

// keepCompliance keeps a compliance answer as the summary the status
// query shows (no personal data).
func (d *draftOrder) keepCompliance(v commerce.ComplianceVerdict, env toolkit.Response, err error) {
	d.recordAnswer(d.step("compliance"), env, err)
	if err != nil {
		return
	}
	d.sealRefs.ComplianceSnapshotID = env.SnapshotID()
	d.compliance = &ComplianceSummary{
		Verdict: v.Verdict, Confidence: v.Confidence, Ruleset: v.RulesetVersion, Reasons: []string{},
		NeedsApproval: v.NeedsApproval(d.in.ApprovalConfidence),
	}
	for _, r := range v.Reasons {
		d.compliance.Reasons = append(d.compliance.Reasons, reasonLine(r))
	}
}

// startShipping asks for shipping options for the whole basket.
func (d *draftOrder) startShipping(ctx workflow.Context) flow.Future[commerce.ShippingQuote] {
	return callOrReuse[commerce.ShippingQuote](ctx, d, flow.Call{
		Tool:    commerce.ToolQuoteShipping,
		Wrap:    d.outliving(commerce.ToolQuoteShipping),
		Req:     d.request(ctx, d.step("shipping")),
		Args:    commerce.QuoteShippingArgs{Items: d.in.Items, Destination: d.in.ShipTo, Currency: d.in.Currency, ShipFrom: d.shipFrom()},
		Summary: fmt.Sprintf("%s: %s to %s", commerce.ToolQuoteShipping, d.basket(), d.in.ShipTo.Country),
	})
}

// chooseShipping takes the option of the requested service level, or the
// cheapest one when the destination has no such service.
func (d *draftOrder) chooseShipping() error {
	i := commerce.ChooseOption(d.shipping.Options, d.in.ShippingService)
	if i < 0 {
		return noShippingOption(d.in.ShipTo.Country)
	}
	d.option = &d.shipping.Options[i]
	return nil
}

// requote refreshes an expired quote: pricing (telling the tool which prices
// the user saw, so it answers PRICE_CHANGED when they moved) and shipping in
// parallel. Compliance does not depend on prices; it is asked again only
// when the chosen option now ships by another mode.
func (d *draftOrder) requote(ctx workflow.Context) (*DraftOrderResult, error) {
	d.round++
	d.requotes++
	// The origin is chosen again: stock and prices may have moved since
	// (docs/tools.md#origin-choice).
	if end, err := d.chooseOrigins(ctx); end != nil || err != nil {
		return end, err
	}
	split := d.split()
	pf := d.startPricing(ctx, d.quote.PriceHash, "pricing")
	var sf flow.Future[commerce.ShippingQuote]
	if !split {
		sf = d.startShipping(ctx)
	}
	q, qenv, perr := pf.Get(ctx)
	var s commerce.ShippingQuote
	var senv toolkit.Response
	var serr error
	if !split {
		s, senv, serr = sf.Get(ctx)
	}
	if toolkit.CodeOf(perr) == toolkit.PriceChanged {
		// The tool confirmed the change; ask once more without the
		// expectation to get the new quote itself.
		q, qenv, perr = d.startPricing(ctx, "", "pricing-new").Get(ctx)
		d.keepQuote("pricing-new", q, qenv, perr)
	} else {
		d.keepQuote("pricing", q, qenv, perr)
	}
	if split {
		d.useParcels()
	} else {
		d.keepShipping(s, senv, serr)
	}
	if err := firstFailure(perr, serr); err != nil {
		return d.outcome(err)
	}
	if !split {
		if err := d.chooseShipping(); err != nil {
			return d.outcome(err)
		}
	}
	if end, err := d.recheckCompliance(ctx); end != nil || err != nil {
		return end, err
	}
	return d.price(ctx)
}

// recheckCompliance checks compliance again when the chosen option ships by
// another mode than the one compliance cleared. A verdict
// that now needs a person asks support staff again.
func (d *draftOrder) recheckCompliance(ctx workflow.Context) (*DraftOrderResult, error) {
	if d.complianceMode == "" || d.option.TransportMode == d.complianceMode {
		return nil, nil
	}
	approved := d.approval != nil && d.approval.Approved()
	v, env, err := d.startCompliance(ctx).Get(ctx)
	d.keepCompliance(v, env, err)
	if err != nil {
		return d.outcome(err)
	}
	if end := d.blocked(); end != nil {
		return end, nil
	}
	if d.compliance.NeedsApproval && !approved {
		return d.approve(ctx)
	}
	return nil, nil
}

// startPricing starts a pricing call of the current round.
func (d *draftOrder) startPricing(ctx workflow.Context, expected, name string) flow.Future[commerce.Quote] {
	verb := "quote"
	if expected != "" {
		verb = "re-quote"
	}
	return callOrReuse[commerce.Quote](ctx, d, flow.Call{
		Tool:    commerce.ToolGetQuote,
		Wrap:    d.outliving(commerce.ToolGetQuote),
		Req:     d.request(ctx, d.step(name)),
		Args:    commerce.GetQuoteArgs{Items: d.pricingItems(), Currency: d.in.Currency, ExpectedPriceHash: expected, ShipFrom: d.shipFrom()},
		Summary: fmt.Sprintf("%s: %s %s in %s", commerce.ToolGetQuote, verb, d.basket(), d.in.Currency),
	})
}

// price computes duties and taxes on the quote and shipping option, then the
// total the user will confirm.
func (d *draftOrder) price(ctx workflow.Context) (*DraftOrderResult, error) {
	if d.split() {
		return d.priceSplit(ctx)
	}
	dt, env, err := callOrReuse[commerce.DutiesAndTaxes](ctx, d, flow.Call{
		Tool: commerce.ToolDutiesAndTaxes,
		Wrap: d.outliving(commerce.ToolDutiesAndTaxes),
		Req:  d.request(ctx, d.step("duties")),
		Args: commerce.DutiesAndTaxesArgs{Lines: d.quote.Lines, Shipping: *d.option, Destination: d.in.ShipTo,
			Currency: d.in.Currency, Incoterm: d.in.Incoterm},
		Summary: fmt.Sprintf("%s: %s to %s", commerce.ToolDutiesAndTaxes, d.in.Incoterm, d.in.ShipTo.Country),
	}).Get(ctx)
	d.recordAnswer(d.step("duties"), env, err)
	if err != nil {
		return d.outcome(err)
	}
	d.duties = &dt

	shipExp := d.shipping.ExpiresAt
	args := commerce.ComputeTotalArgs{Quote: *d.quote, Shipping: *d.option, Duties: *d.duties, ShippingExpiresAt: &shipExp}
	// The tool seals the total with the evidence it rests on
	// (docs/quote-seals.md#the-seal). The quote round's total is matched on its
	// input without the refs (activities.PrefetchSHA256).
	refs := d.sealRefs
	if d.approval != nil && d.approval.Approved() && d.approval.Evidence != nil {
		refs.ApprovalSnapshotID = d.approval.Evidence.SnapshotID
	}
	args.Evidence = &refs
	t, env, err := callOrReuse[commerce.Total](ctx, d, flow.Call{
		Tool:    commerce.ToolComputeTotal,
		Wrap:    d.outliving(commerce.ToolComputeTotal),
		Req:     d.request(ctx, d.step("total")),
		Args:    args,
		Summary: fmt.Sprintf("%s: %d line(s), %s shipping", commerce.ToolComputeTotal, len(d.quote.Lines), d.option.ServiceLevel),
	}).Get(ctx)
	d.recordAnswer(d.step("total"), env, err)
	if err != nil {
		return d.outcome(err)
	}
	d.total = &t
	return nil, nil
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
