package commerce

import (
	"context"
	"sort"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
	"github.com/cartwright-dev/cartwright/toolkit"
)

func totalSpec() toolkit.Spec {
	return toolkit.Spec{
		Name:    ToolComputeTotal,
		Version: "2.0.0",
		Description: "Derive a draft order's total from the evidence of its own workflow: the origin choice (each parcel's " +
			"warehouse, shipping option, duty and tax), the pricing call and the compliance call (and support staff's " +
			"approval when compliance needed one), named by snapshot id. It takes no amount, rate or verdict: it reads " +
			"the snapshots, checks them against each other (basket, destination, warehouses, transport mode, currency, " +
			"time) and adds up in integer minor units. Success: a breakdown (lines, subtotal, shipping, duty, tax, " +
			"grand_total, due_on_delivery), the quote_hash the user confirms and the seal naming every snapshot. Common " +
			"failures: FORBIDDEN (a snapshot is missing, another workflow's, expired, or does not match the others), " +
			"COMPLIANCE_BLOCKED, PRICE_CHANGED (the quote and the origin choice price the goods differently).",
		InputSchema:      ToolComputeTotal + ".input.json",
		OutputSchema:     ToolComputeTotal + ".output.json",
		Annotations:      toolkit.Annotations{ReadOnly: true, Idempotent: true},
		TTL:              QuoteTTL,
		Timeout:          2 * time.Second,
		Retry:            toolkit.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaxInterval: 2 * time.Second, MaxAttempts: 3},
		EvidenceRequired: true,
		Provider:         "builtin",
		// A step of the draft order: it seals what the workflow priced
		// (docs/quote-seals.md#internal-tools).
		Internal: true,
	}
}

func (t *tools) computeTotal(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
	var in ComputeTotalArgs
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	wf := toolkit.CallFrom(ctx).WorkflowID
	src, err := t.readSources(ctx, in.EvidenceRefs, wf)
	if err != nil {
		return nil, err
	}
	now := t.now()
	issued := now.Truncate(time.Second)
	total, err := deriveTotal(src, issued, now)
	if err != nil {
		return nil, err
	}
	if t.seals != nil {
		// Sealed here, in the activity, for the workflow that asked: the
		// workflow only carries the seal (docs/quote-seals.md#the-seal).
		e := TotalEvidence{EvidenceRefs: in.EvidenceRefs, IssuedAt: issued}
		if e.Seal, err = t.seals.Seal(wf, total, e); err != nil {
			return nil, toolkit.Errorf(toolkit.UpstreamError, "seal the total: %v", err)
		}
		total.Evidence = &e
	}
	return &toolkit.Output{Data: total, RulesetVersion: money.RulesetVersion()}, nil
}

// TotalParts are the parts checkout.compute_total adds up, as deriveTotal
// takes them from its snapshots: the quote and, for one warehouse, its
// shipping option and duty estimate, or, for a basket split between
// warehouses, the origin choice's parcels (each with its own).
type TotalParts struct {
	Quote    Quote
	Shipping ShippingOption
	Duties   DutiesAndTaxes
	// ShippingExpiresAt is the shipping quote's expiry; the total expires
	// at the earlier of it and the price quote's.
	ShippingExpiresAt *time.Time
	Parcels           []ParcelQuote
}

// ComputeTotal is the pure arithmetic of checkout.compute_total.
func ComputeTotal(in TotalParts) (Total, error) {
	q, cur := in.Quote, in.Quote.Currency
	if len(in.Parcels) > 0 {
		return computeSplit(in)
	}
	if err := oneCurrency(cur, in); err != nil {
		return Total{}, err
	}
	if err := checkLines(q); err != nil {
		return Total{}, err
	}
	shipFrom, err := sameWarehouse(in)
	if err != nil {
		return Total{}, err
	}
	t := Total{
		QuoteID: q.QuoteID, Currency: cur, Subtotal: q.Subtotal, Shipping: in.Shipping.Cost,
		ShippingOptionID: in.Shipping.OptionID, Duty: in.Duties.Duty, Tax: in.Duties.Tax,
		Incoterm: in.Duties.Incoterm, ShipToCountry: in.Duties.Country, ShipToRegion: in.Duties.Region,
		ExpiresAt: q.ExpiresAt, ShipFrom: shipFrom, FXRates: q.FXRates, TaxNotModelled: in.Duties.NotModelled,
	}
	if in.ShippingExpiresAt != nil && in.ShippingExpiresAt.Before(t.ExpiresAt) {
		t.ExpiresAt = *in.ShippingExpiresAt
	}
	for _, l := range q.Lines {
		t.Lines = append(t.Lines, TotalLine{SKU: l.SKU, Quantity: l.Quantity, UnitPrice: l.UnitPrice, LineTotal: l.LineTotal})
	}
	atCheckout, err := checkoutShare(in.Duties)
	if err != nil {
		return Total{}, err
	}
	if err := t.settle(atCheckout); err != nil {
		return Total{}, err
	}
	if t.QuoteHash, err = QuoteHash(t); err != nil {
		return Total{}, err
	}
	return t, nil
}

// settle computes the grand total and what is due on delivery from the
// components and the part of duty and tax charged at checkout.
func (t *Total) settle(atCheckout int64) error {
	dutyTax, err := money.Add(t.Duty.Amount, t.Tax.Amount)
	if err != nil {
		return toolkit.Errorf(toolkit.InvalidArgument, "duty plus tax overflows")
	}
	if atCheckout < 0 || atCheckout > dutyTax {
		return toolkit.Errorf(toolkit.InvalidArgument, "duty and tax charged at checkout must be between 0 and duty + tax")
	}
	grand, err := money.Sum(t.Subtotal.Amount, t.Shipping.Amount, atCheckout)
	if err != nil {
		return toolkit.Errorf(toolkit.InvalidArgument, "total overflows")
	}
	t.GrandTotal = Money{Amount: grand, Currency: t.Currency}
	t.DueOnDelivery = Money{Amount: dutyTax - atCheckout, Currency: t.Currency}
	return nil
}

// checkoutShare is the part of duty and tax charged at checkout. A provider
// that does not split them (charged/payable left empty) only says whether
// everything is collected at checkout.
func checkoutShare(d DutiesAndTaxes) (int64, error) {
	if d.ChargedAtCheckout.Currency == "" && d.PayableOnDelivery.Currency == "" {
		if d.CollectedAtCheckout {
			return money.Add(d.Duty.Amount, d.Tax.Amount)
		}
		return 0, nil
	}
	sum, err := money.Add(d.ChargedAtCheckout.Amount, d.PayableOnDelivery.Amount)
	dutyTax, err2 := money.Add(d.Duty.Amount, d.Tax.Amount)
	if err != nil || err2 != nil || sum != dutyTax {
		return 0, toolkit.Errorf(toolkit.InvalidArgument, "duties: charged_at_checkout + payable_on_delivery must equal duty + tax").
			WithDetail("fields", []string{"duties.charged_at_checkout", "duties.payable_on_delivery"})
	}
	return d.ChargedAtCheckout.Amount, nil
}

// oneCurrency refuses an order whose amounts are not all in the quote's
// currency: adding minor units of different currencies is meaningless.
func oneCurrency(cur string, in TotalParts) error {
	seen := map[string]bool{cur: true}
	var fields []string
	check := func(field, c string) {
		if c != cur {
			seen[c] = true
			fields = append(fields, field)
		}
	}
	for _, l := range in.Quote.Lines {
		check("quote.lines["+l.SKU+"].unit_price.currency", l.UnitPrice.Currency)
		check("quote.lines["+l.SKU+"].line_total.currency", l.LineTotal.Currency)
	}
	check("quote.subtotal.currency", in.Quote.Subtotal.Currency)
	check("shipping.cost.currency", in.Shipping.Cost.Currency)
	check("duties.currency", in.Duties.Currency)
	check("duties.duty.currency", in.Duties.Duty.Currency)
	check("duties.tax.currency", in.Duties.Tax.Currency)
	if in.Duties.ChargedAtCheckout.Currency != "" || in.Duties.PayableOnDelivery.Currency != "" {
		check("duties.charged_at_checkout.currency", in.Duties.ChargedAtCheckout.Currency)
		check("duties.payable_on_delivery.currency", in.Duties.PayableOnDelivery.Currency)
	}
	if len(fields) == 0 {
		return nil
	}
	cs := make([]string, 0, len(seen))
	for c := range seen {
		cs = append(cs, c)
	}
	sort.Strings(cs)
	return toolkit.Errorf(toolkit.InvalidArgument, "an order has one currency; got %v", cs).
		WithDetail("fields", fields).WithDetail("currencies", cs).
		WithRecovery("quote shipping and duties in the quote's currency, then total again",
			ToolQuoteShipping, ToolDutiesAndTaxes)
}

// checkLines re-derives every line total and the subtotal and the price
// hash, so a tampered or hand-edited quote cannot reach the user.
func checkLines(q Quote) error {
	var sum int64
	for _, l := range q.Lines {
		want, err := money.MulDiv(l.UnitPrice.Amount, int64(l.Quantity), 1)
		if err != nil || want != l.LineTotal.Amount {
			return toolkit.Errorf(toolkit.InvalidArgument, "line %s: line_total is not unit_price × quantity", l.SKU).
				WithDetail("fields", []string{"quote.lines"})
		}
		if sum, err = money.Add(sum, want); err != nil {
			return toolkit.Errorf(toolkit.InvalidArgument, "subtotal overflows")
		}
	}
	if sum != q.Subtotal.Amount {
		return toolkit.Errorf(toolkit.InvalidArgument, "quote subtotal %d is not the sum of its lines %d", q.Subtotal.Amount, sum).
			WithDetail("fields", []string{"quote.subtotal"})
	}
	h, err := PriceHash(q.Currency, q.Lines)
	if err != nil {
		return err
	}
	if h != q.PriceHash {
		return toolkit.Errorf(toolkit.InvalidArgument, "quote price_hash does not match its lines").
			WithDetail("fields", []string{"quote.price_hash"}).
			WithRecovery("use the quote exactly as pricing.get_realtime_quote returned it", ToolGetQuote)
	}
	return nil
}

// QuoteHash is toolkit.CanonicalHash of a total's priced content: every
// field but those tagged hash:"-" (QuoteID, ExpiresAt, QuoteHash,
// ShipFrom). A
// re-quote with the same prices therefore has the same hash, and the user's
// confirmation of it still holds.
func QuoteHash(t Total) (string, error) {
	view, err := toolkit.HashView(t)
	if err != nil {
		return "", err
	}
	if len(t.Parcels) > 0 {
		// Only a split total has parcels: the hashes of the others stay
		// what they were.
		view["parcels"] = t.Parcels
	}
	return toolkit.CanonicalHash(view)
}

// verifyTotal checks a total handed back by a caller: its arithmetic and
// its hash. It is how create_draft_order refuses a hand-edited total.
func verifyTotal(t Total) error {
	var sum int64
	for _, l := range t.Lines {
		want, err := money.MulDiv(l.UnitPrice.Amount, int64(l.Quantity), 1)
		if err != nil || want != l.LineTotal.Amount || l.UnitPrice.Currency != t.Currency || l.LineTotal.Currency != t.Currency {
			return toolkit.Errorf(toolkit.InvalidArgument, "total line %s is inconsistent", l.SKU).WithDetail("fields", []string{"total.lines"})
		}
		if sum, err = money.Add(sum, want); err != nil {
			return toolkit.Errorf(toolkit.InvalidArgument, "subtotal overflows")
		}
	}
	for _, m := range []Money{t.Subtotal, t.Shipping, t.Duty, t.Tax, t.GrandTotal, t.DueOnDelivery} {
		if m.Currency != t.Currency {
			return toolkit.Errorf(toolkit.InvalidArgument, "an order has one currency; total mixes %s and %s", t.Currency, m.Currency).
				WithDetail("fields", []string{"total"})
		}
	}
	check := t
	if sum != t.Subtotal.Amount {
		return toolkit.Errorf(toolkit.InvalidArgument, "total subtotal is not the sum of its lines").WithDetail("fields", []string{"total.subtotal"})
	}
	dutyTax, err := money.Add(t.Duty.Amount, t.Tax.Amount)
	if err != nil {
		return toolkit.Errorf(toolkit.InvalidArgument, "duty plus tax overflows")
	}
	if err := check.settle(dutyTax - t.DueOnDelivery.Amount); err != nil {
		return err
	}
	if check.GrandTotal != t.GrandTotal || check.DueOnDelivery != t.DueOnDelivery {
		return toolkit.Errorf(toolkit.InvalidArgument, "grand_total does not add up").WithDetail("fields", []string{"total.grand_total"})
	}
	h, err := QuoteHash(t)
	if err != nil {
		return err
	}
	if h != t.QuoteHash {
		return toolkit.Errorf(toolkit.InvalidArgument, "total quote_hash does not match its content").
			WithDetail("fields", []string{"total.quote_hash"}).
			WithRecovery("use the total exactly as checkout.compute_total returned it", ToolComputeTotal)
	}
	return nil
}
