package draftorder

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// OriginsSummary is where a draft order ships from and why, as the status
// query, the result and the MCP answer show it: the chosen parcels and
// every candidate considered, with its landed cost and why it lost. No
// personal data: warehouses, SKUs and amounts.
type OriginsSummary struct {
	// Origins are the chosen warehouses, one per parcel.
	Origins []string `json:"origins"`
	Split   bool     `json:"split"`
	// Rule is the decision rule (commerce.OriginRule).
	Rule    string          `json:"rule"`
	Parcels []ParcelSummary `json:"parcels"`
	// Landed is what the customer pays in the end over all parcels.
	Landed     commerce.LandedCost        `json:"landed_cost"`
	Candidates []commerce.OriginCandidate `json:"candidates"`
	Splits     []commerce.OriginCandidate `json:"splits,omitempty"`
	// SnapshotID is the evidence of the choice (shipping.choose_origins).
	SnapshotID string `json:"snapshot_id"`
}

// ParcelSummary is one chosen parcel.
type ParcelSummary struct {
	ShipFrom      string              `json:"ship_from"`
	SKUs          []string            `json:"skus"`
	ServiceLevel  string              `json:"service_level"`
	Carrier       string              `json:"carrier"`
	TransportMode string              `json:"transport_mode"`
	MinDays       int                 `json:"min_days"`
	MaxDays       int                 `json:"max_days"`
	Landed        commerce.LandedCost `json:"landed_cost"`
}

// split reports whether the current plan ships in several parcels.
func (d *draftOrder) split() bool { return d.plan != nil && d.plan.Split }

// shipFrom is the warehouse pricing and shipping ask for: the plan's one
// warehouse ("" for a split, whose lines name theirs).
func (d *draftOrder) shipFrom() string {
	if d.plan == nil || d.plan.Split || len(d.plan.Parcels) == 0 {
		return ""
	}
	return d.plan.Parcels[0].ShipFrom
}

// pricingItems are the basket as pricing takes it: for a split, each line
// names the warehouse that ships it, where its stock is checked.
func (d *draftOrder) pricingItems() []commerce.LineItem {
	if !d.split() {
		return d.in.Items
	}
	out := make([]commerce.LineItem, len(d.in.Items))
	for i, it := range d.in.Items {
		out[i] = commerce.LineItem{SKU: it.SKU, Quantity: it.Quantity, ShipFrom: d.plan.ShipFromOf(it.SKU)}
	}
	return out
}

// chooseOrigins asks shipping.choose_origins where the order ships from,
// at the start of every quote round (a re-quote chooses again: stock and
// prices may have moved). It ends the order on a business refusal
// (OUT_OF_STOCK everywhere, ADDRESS_INVALID …).
func (d *draftOrder) chooseOrigins(ctx workflow.Context) (*DraftOrderResult, error) {
	p, env, err := callOrReuse[commerce.OriginPlan](ctx, d, flow.Call{
		Tool:    commerce.ToolChooseOrigins,
		Wrap:    d.outliving(commerce.ToolChooseOrigins),
		Req:     d.request(ctx, d.step(stepOrigins)),
		Args:    d.originArgs(),
		Summary: fmt.Sprintf("%s: %s to %s, %s", commerce.ToolChooseOrigins, d.basket(), d.in.ShipTo.Country, d.in.ShippingService),
	}).Get(ctx)
	d.recordAnswer(d.step(stepOrigins), env, err)
	if err != nil {
		return d.outcome(err)
	}
	d.plan = &p
	d.sealRefs.OriginsSnapshotID = env.SnapshotID()
	return nil, nil
}

// stepOrigins names the origin choice of a quote round.
const stepOrigins = "origins"

// originArgs is the input of shipping.choose_origins for this order.
func (d *draftOrder) originArgs() commerce.ChooseOriginsArgs {
	return commerce.ChooseOriginsArgs{Items: d.in.Items, Destination: d.in.ShipTo, Currency: d.in.Currency,
		ShippingService: d.in.ShippingService, Incoterm: d.in.Incoterm}
}

// useParcels takes a split plan's parcels as the order's shipping: no
// shipping call (the plan rated each parcel), and the option compliance
// is checked for is the strictest mode of any parcel (air before ground).
func (d *draftOrder) useParcels() {
	opts := make([]commerce.ShippingOption, len(d.plan.Parcels))
	pick := 0
	for i, p := range d.plan.Parcels {
		opts[i] = p.Shipping
		if p.Shipping.TransportMode == "air" && opts[pick].TransportMode != "air" {
			pick = i
		}
	}
	d.shipping = &commerce.ShippingQuote{Options: opts, ExpiresAt: d.plan.ExpiresAt, RulesetVersion: d.plan.RulesetVersion}
	d.option = &d.shipping.Options[pick]
}

// quoteSplit is round 1 of a split basket: pricing (each line at its
// parcel's warehouse) and compliance for the parcels' strictest mode, in
// parallel.
func (d *draftOrder) quoteSplit(ctx workflow.Context) (*DraftOrderResult, error) {
	pf := d.startPricing(ctx, "", "pricing")
	d.useParcels()
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

// priceSplit totals a split basket: the plan's parcels carry their own
// duty and tax estimates, so the total is the one call.
func (d *draftOrder) priceSplit(ctx workflow.Context) (*DraftOrderResult, error) {
	exp := d.plan.ExpiresAt
	refs := d.sealRefs
	if d.approval != nil && d.approval.Approved() && d.approval.Evidence != nil {
		refs.ApprovalSnapshotID = d.approval.Evidence.SnapshotID
	}
	t, env, err := callOrReuse[commerce.Total](ctx, d, flow.Call{
		Tool: commerce.ToolComputeTotal,
		Wrap: d.outliving(commerce.ToolComputeTotal),
		Req:  d.request(ctx, d.step("total")),
		Args: commerce.ComputeTotalArgs{Quote: *d.quote, Parcels: d.plan.Parcels, ShippingExpiresAt: &exp, Evidence: &refs},
		Summary: fmt.Sprintf("%s: %d line(s) in %d parcels from %s", commerce.ToolComputeTotal, len(d.quote.Lines),
			len(d.plan.Parcels), strings.Join(d.plan.Origins(), "+")),
	}).Get(ctx)
	d.recordAnswer(d.step("total"), env, err)
	if err != nil {
		return d.outcome(err)
	}
	d.total = &t
	return nil, nil
}

// originsSummary is the status's view of the current plan.
func (d *draftOrder) originsSummary() *OriginsSummary {
	p := d.plan
	if p == nil {
		return nil
	}
	s := &OriginsSummary{Origins: p.Origins(), Split: p.Split, Rule: p.Rule, Landed: p.Landed,
		Candidates: p.Candidates, Splits: p.Splits, SnapshotID: d.sealRefs.OriginsSnapshotID}
	for _, pq := range p.Parcels {
		ps := ParcelSummary{ShipFrom: pq.ShipFrom, ServiceLevel: pq.Shipping.ServiceLevel, Carrier: pq.Shipping.Carrier,
			TransportMode: pq.Shipping.TransportMode, MinDays: pq.Shipping.MinDays, MaxDays: pq.Shipping.MaxDays, Landed: pq.Landed}
		for _, it := range pq.Items {
			ps.SKUs = append(ps.SKUs, it.SKU)
		}
		s.Parcels = append(s.Parcels, ps)
	}
	return s
}

// originDetails is the Web UI's Current Details line on the origins.
func (d *draftOrder) originDetails() string {
	p := d.plan
	if p == nil {
		return ""
	}
	var b strings.Builder
	if p.Split {
		b.WriteString(fmt.Sprintf("\n\nShips in %d parcels (no warehouse holds the whole basket):", len(p.Parcels)))
	} else {
		b.WriteString(fmt.Sprintf("\n\nShips from %s:", p.Parcels[0].ShipFrom))
	}
	for _, pq := range p.Parcels {
		skus := make([]string, len(pq.Items))
		for i, it := range pq.Items {
			skus[i] = it.SKU
		}
		b.WriteString(fmt.Sprintf("\n- %s: %s, %s by %s, %d-%d days, landed %s", pq.ShipFrom, strings.Join(skus, ", "),
			pq.Shipping.ServiceLevel, pq.Shipping.Carrier, pq.Shipping.MinDays, pq.Shipping.MaxDays, pq.Landed.Total.Display()))
	}
	cands := p.Candidates
	if p.Split {
		cands = append(append([]commerce.OriginCandidate{}, cands...), p.Splits...)
	}
	for _, c := range cands {
		if c.Chosen {
			continue
		}
		b.WriteString(fmt.Sprintf("\n- not %s: %s (%s)", strings.Join(c.Origins, "+"), strings.ReplaceAll(c.Rejected, "_", " "), c.Reason))
	}
	return b.String()
}
