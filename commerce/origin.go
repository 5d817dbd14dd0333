package commerce

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
	"github.com/cartwright-dev/cartwright/commerce/rules/shipping"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// maxSplits bounds the ways to split a basket that are priced.
const maxSplits = 64

func chooseOriginsSpec() toolkit.Spec {
	s := lookupSpec(ToolChooseOrigins, ShippingTTL, "ratecard+tax-rules",
		"Choose where a draft order ships from: for every warehouse (DE, US, GB) that holds the whole basket, the landed "+
			"cost to the customer (goods + shipping + duty + tax for the requested service and incoterm) and the delivery "+
			"estimate; the cheapest that offers the requested service wins (ties: earliest delivery, then warehouse code). "+
			"When no warehouse holds everything, the basket is split into parcels per warehouse, each with its own shipping, "+
			"duty and tax, fewest parcels first. Success: the chosen parcels and every candidate with its landed cost and "+
			"why it lost. Common failures: OUT_OF_STOCK (a line no warehouse holds), ADDRESS_INVALID, COMPLIANCE_BLOCKED, "+
			"NOT_FOUND (unknown SKU).")
	// A step of the draft order: its answer is what the order ships as,
	// and the write checks the total against it (docs/quote-seals.md).
	s.Internal = true
	return s
}

// originRun is one shipping.choose_origins call: the basket resolved,
// goods priced once, and each parcel priced once however often it is
// considered.
type originRun struct {
	t        *tools
	ctx      context.Context
	in       ChooseOriginsArgs
	dest     Address
	products map[string]Product
	lines    map[string]QuoteLine
	memo     map[string]parcelResult
	// failed is the failure to answer when no candidate can ship.
	failed error
}

type parcelResult struct {
	pq  ParcelQuote
	err error
}

func (t *tools) chooseOrigins(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
	var in ChooseOriginsArgs
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	dest, products, warnings, err := t.basket(ctx, in.Destination, in.Items)
	if err != nil {
		return nil, err
	}
	r := &originRun{t: t, ctx: ctx, in: in, dest: dest, products: products, lines: map[string]QuoteLine{}, memo: map[string]parcelResult{}}
	// The lines are priced with the rates pricing.get_realtime_quote uses
	// at this moment (docs/tools.md#exchange-rates).
	fx, _, err := t.fx.Rates(ctx, t.now())
	if err != nil {
		return nil, err
	}
	for _, it := range in.Items {
		if r.lines[it.SKU], err = priceOriginLine(fx, products[it.SKU], it, in.Currency); err != nil {
			return nil, err
		}
	}
	plan, err := r.plan()
	if err != nil {
		return nil, err
	}
	return &toolkit.Output{Data: plan, RulesetVersion: plan.RulesetVersion, Warnings: warnings}, nil
}

// priceOriginLine prices one line as pricing.get_realtime_quote does.
func priceOriginLine(fx FXTable, p Product, it LineItem, currency string) (QuoteLine, error) {
	unit, err := fx.Convert(p.BasePrice, currency)
	if err != nil {
		return QuoteLine{}, err
	}
	total, err := money.MulDiv(unit.Amount, int64(it.Quantity), 1)
	if err != nil {
		return QuoteLine{}, toolkit.Errorf(toolkit.InvalidArgument, "line %s: amount overflows", it.SKU)
	}
	return QuoteLine{SKU: p.SKU, Title: p.Title, Quantity: it.Quantity, UnitPrice: unit,
		LineTotal: Money{Amount: total, Currency: currency}, HSCode: p.HSCode, Origin: p.Origin,
		Category: p.Category, WeightGrams: p.WeightGrams, Dims: p.Dims}, nil
}

// plan prices every warehouse alone, and the splits when none fills the
// basket, then decides (DecideOrigins).
func (r *originRun) plan() (OriginPlan, error) {
	warehouses := shipping.Origins()
	plan := OriginPlan{Currency: r.in.Currency, Destination: r.dest.Country, ShippingService: r.in.ShippingService,
		Incoterm: r.in.Incoterm, Rule: OriginRule, Candidates: []OriginCandidate{},
		ExpiresAt: r.t.now().Add(ShippingTTL).Truncate(time.Second)}
	available := map[string]map[string]int{}
	for _, w := range warehouses {
		available[w] = map[string]int{}
		c := OriginCandidate{Origins: []string{w}, Fills: true}
		for _, it := range r.in.Items {
			avail := r.products[it.SKU].AvailableAt(w)
			available[w][it.SKU] = avail
			if it.Quantity > avail {
				c.Fills = false
				c.Short = append(c.Short, StockShort{SKU: it.SKU, Requested: it.Quantity, Available: avail})
			}
		}
		if !c.Fills {
			c.Rejected, c.Reason = RejectOutOfStock, shortReason(w, c.Short)
			plan.Candidates = append(plan.Candidates, c)
			continue
		}
		r.price([]string{w}, [][]LineItem{stripOrigins(r.in.Items)}, &c)
		plan.Candidates = append(plan.Candidates, c)
	}
	pool := plan.Candidates
	if !slices.ContainsFunc(plan.Candidates, func(c OriginCandidate) bool { return c.Fills }) {
		splits, err := r.splits(warehouses, available)
		if err != nil {
			return OriginPlan{}, err
		}
		plan.Split, plan.Splits, pool = true, splits, splits
	}
	best := DecideOrigins(pool)
	if best < 0 {
		if r.failed != nil {
			return OriginPlan{}, r.failed
		}
		return OriginPlan{}, toolkit.Errorf(toolkit.InvalidArgument, "no warehouse can ship this basket to %s", r.dest.Country)
	}
	return r.finish(plan, pool[best])
}

// splits prices the ways to split the basket between warehouses.
func (r *originRun) splits(warehouses []string, available map[string]map[string]int) ([]OriginCandidate, error) {
	assignments, unfillable := SplitAssignments(r.in.Items, warehouses, available, maxSplits)
	if len(unfillable) > 0 {
		short := make([]map[string]any, 0, len(unfillable))
		for _, it := range r.in.Items {
			if slices.Contains(unfillable, it.SKU) {
				by := map[string]int{}
				for _, w := range warehouses {
					by[w] = available[w][it.SKU]
				}
				short = append(short, map[string]any{"sku": it.SKU, "requested": it.Quantity, "available_by_warehouse": by})
			}
		}
		return nil, toolkit.Errorf(toolkit.OutOfStock, "no warehouse holds %d line(s): %v", len(unfillable), unfillable).
			WithDetail("lines", short).
			WithRecovery("lower the quantity to what one warehouse holds or remove the line")
	}
	out := make([]OriginCandidate, 0, len(assignments))
	for _, a := range assignments {
		origins, parcels := GroupParcels(r.in.Items, a)
		c := OriginCandidate{Origins: origins, Fills: true}
		for _, p := range parcels {
			skus := make([]string, len(p))
			for i, it := range p {
				skus[i] = it.SKU
			}
			c.Parcels = append(c.Parcels, skus)
		}
		r.price(origins, parcels, &c)
		out = append(out, c)
	}
	return out, nil
}

// price prices each parcel of a candidate and fills its landed cost,
// service and delivery (the slowest parcel's); a parcel that cannot ship
// rejects the candidate (RejectCannotShip) with the tool's message.
func (r *originRun) price(origins []string, parcels [][]LineItem, c *OriginCandidate) {
	var pqs []ParcelQuote
	c.MeetsService = true
	for i, w := range origins {
		pq, err := r.parcel(w, parcels[i])
		if err != nil {
			c.Rejected = RejectCannotShip
			c.Reason = fmt.Sprintf("%s: %s", w, toolkit.AsError(err).Message)
			c.Landed = nil
			r.failed = pickFailure(r.failed, err)
			return
		}
		pqs = append(pqs, pq)
		c.MeetsService = c.MeetsService && pq.Shipping.ServiceLevel == r.in.ShippingService
		if c.ServiceLevel == "" || pq.Shipping.ServiceLevel != r.in.ShippingService {
			c.ServiceLevel = pq.Shipping.ServiceLevel
		}
		c.MinDays = max(c.MinDays, pq.Shipping.MinDays)
		c.MaxDays = max(c.MaxDays, pq.Shipping.MaxDays)
	}
	parts := make([]LandedCost, len(pqs))
	for i, pq := range pqs {
		parts[i] = pq.Landed
	}
	l := SumLanded(r.in.Currency, parts...)
	c.Landed = &l
}

// parcel prices one parcel (memoised): the option the order takes from
// warehouse w (ChooseOption) and the duty and tax of that parcel.
func (r *originRun) parcel(w string, items []LineItem) (ParcelQuote, error) {
	key := w + "|" + itemsKey(items)
	if got, ok := r.memo[key]; ok {
		return got.pq, got.err
	}
	pq, err := r.priceParcel(w, items)
	r.memo[key] = parcelResult{pq, err}
	return pq, err
}

func (r *originRun) priceParcel(w string, items []LineItem) (ParcelQuote, error) {
	sq, err := r.t.rateParcel(r.ctx, w, r.dest.Country, r.products, items, r.in.Currency)
	if err != nil {
		return ParcelQuote{}, err
	}
	i := ChooseOption(sq.Options, r.in.ShippingService)
	if i < 0 {
		return ParcelQuote{}, toolkit.Errorf(toolkit.InvalidArgument, "no shipping option from %s to %s", w, r.dest.Country)
	}
	opt := sq.Options[i]
	lines := make([]QuoteLine, len(items))
	var goods int64
	for k, it := range items {
		lines[k] = r.lines[it.SKU]
		goods += lines[k].LineTotal.Amount
	}
	d, err := r.t.dutiesFor(r.ctx, r.dest, DutiesAndTaxesArgs{Lines: lines, Shipping: opt, Destination: r.dest,
		Currency: r.in.Currency, Incoterm: r.in.Incoterm})
	if err != nil {
		return ParcelQuote{}, err
	}
	cur := r.in.Currency
	l := LandedCost{Goods: Money{goods, cur}, Shipping: opt.Cost, Duty: d.Duty, Tax: d.Tax}
	sum, err := money.Sum(goods, opt.Cost.Amount, d.Duty.Amount, d.Tax.Amount)
	if err != nil {
		return ParcelQuote{}, toolkit.Errorf(toolkit.InvalidArgument, "landed cost overflows")
	}
	l.Total = Money{sum, cur}
	return ParcelQuote{ShipFrom: w, Items: items, Shipping: opt, Duties: d, Landed: l}, nil
}

// finish fills the plan with the chosen candidate's parcels.
func (r *originRun) finish(plan OriginPlan, chosen OriginCandidate) (OriginPlan, error) {
	parcels := [][]LineItem{stripOrigins(r.in.Items)}
	if plan.Split {
		parcels = parcels[:0]
		for _, skus := range chosen.Parcels {
			var p []LineItem
			for _, it := range r.in.Items {
				if slices.Contains(skus, it.SKU) {
					p = append(p, LineItem{SKU: it.SKU, Quantity: it.Quantity})
				}
			}
			parcels = append(parcels, p)
		}
	}
	versions := map[string]bool{}
	for i, w := range chosen.Origins {
		pq, err := r.parcel(w, parcels[i])
		if err != nil {
			return OriginPlan{}, err
		}
		plan.Parcels = append(plan.Parcels, pq)
		versions[pq.Duties.RulesetVersion] = true
	}
	plan.Landed = *chosen.Landed
	plan.MinDays, plan.MaxDays = chosen.MinDays, chosen.MaxDays
	vs := make([]string, 0, len(versions))
	for v := range versions {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	plan.RulesetVersion = shipping.RulesetVersion() + "+" + strings.Join(vs, ",")
	return plan, nil
}

// pickFailure keeps the failure that should answer when no warehouse can
// ship: a business answer (address, compliance) before any other.
func pickFailure(have, err error) error {
	if have == nil {
		return err
	}
	rank := func(e error) int {
		switch toolkit.CodeOf(e) {
		case toolkit.AddressInvalid:
			return 0
		case toolkit.ComplianceBlocked:
			return 1
		}
		return 2
	}
	if rank(err) < rank(have) {
		return err
	}
	return have
}

func shortReason(w string, short []StockShort) string {
	// The reason is for a person (at most 500 characters in the output
	// schema); Short lists every line, so a long basket names a few here.
	const named = 5
	parts := make([]string, 0, named+1)
	for i, s := range short {
		if i == named {
			parts = append(parts, fmt.Sprintf("and %d more line(s)", len(short)-named))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d of %d", s.SKU, s.Available, s.Requested))
	}
	return w + " holds only " + strings.Join(parts, ", ")
}

// stripOrigins copies items without their ship_from.
func stripOrigins(items []LineItem) []LineItem {
	out := make([]LineItem, len(items))
	for i, it := range items {
		out[i] = LineItem{SKU: it.SKU, Quantity: it.Quantity}
	}
	return out
}

func itemsKey(items []LineItem) string {
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = fmt.Sprintf("%s*%d", it.SKU, it.Quantity)
	}
	return strings.Join(parts, ",")
}
