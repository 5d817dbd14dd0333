package commerce

import (
	"slices"
	"strings"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// computeSplit is checkout.compute_total for a basket split between
// warehouses: one total over the parcels of a shipping.choose_origins
// answer, each parcel with its own shipping, duty and tax
// (docs/tools.md#origin-choice). Every quote line must be in exactly one
// parcel, priced and stock-checked at that parcel's warehouse, and each
// parcel's goods must be what the quote priced: the duty was estimated
// on them.
func computeSplit(in TotalParts) (Total, error) {
	q, cur := in.Quote, in.Quote.Currency
	if err := checkLines(q); err != nil {
		return Total{}, err
	}
	byS := map[string]QuoteLine{}
	for _, l := range q.Lines {
		byS[l.SKU] = l
	}
	t := Total{QuoteID: q.QuoteID, Currency: cur, Subtotal: q.Subtotal, ExpiresAt: q.ExpiresAt,
		Shipping: Money{Currency: cur}, Duty: Money{Currency: cur}, Tax: Money{Currency: cur}, FXRates: q.FXRates}
	if in.ShippingExpiresAt != nil && in.ShippingExpiresAt.Before(t.ExpiresAt) {
		t.ExpiresAt = *in.ShippingExpiresAt
	}
	for _, l := range q.Lines {
		t.Lines = append(t.Lines, TotalLine{SKU: l.SKU, Quantity: l.Quantity, UnitPrice: l.UnitPrice, LineTotal: l.LineTotal})
	}
	seen := map[string]bool{}
	var atCheckout int64
	var ids []string
	for i, p := range in.Parcels {
		tp, share, err := totalParcel(i, p, cur, byS, seen)
		if err != nil {
			return Total{}, err
		}
		if i == 0 {
			t.Incoterm, t.ShipToCountry, t.ShipToRegion = p.Duties.Incoterm, p.Duties.Country, p.Duties.Region
		} else if p.Duties.Incoterm != t.Incoterm || p.Duties.Country != t.ShipToCountry || p.Duties.Region != t.ShipToRegion {
			return Total{}, splitError("parcels[%d]: every parcel goes to one destination under one incoterm", i)
		}
		var e1, e2, e3 error
		t.Shipping.Amount, e1 = money.Add(t.Shipping.Amount, tp.Shipping.Amount)
		t.Duty.Amount, e2 = money.Add(t.Duty.Amount, tp.Duty.Amount)
		t.Tax.Amount, e3 = money.Add(t.Tax.Amount, tp.Tax.Amount)
		if atCheckout, err = money.Add(atCheckout, share); err != nil || e1 != nil || e2 != nil || e3 != nil {
			return Total{}, toolkit.Errorf(toolkit.InvalidArgument, "total overflows")
		}
		if !slices.Contains(ids, tp.ShippingOptionID) {
			ids = append(ids, tp.ShippingOptionID)
		}
		t.Parcels = append(t.Parcels, tp)
		for _, nm := range p.Duties.NotModelled {
			if !slices.Contains(t.TaxNotModelled, nm) {
				t.TaxNotModelled = append(t.TaxNotModelled, nm)
			}
		}
	}
	if len(seen) != len(q.Lines) {
		return Total{}, splitError("every quote line must be in one parcel")
	}
	t.ShippingOptionID = strings.Join(ids, "+")
	if err := t.settle(atCheckout); err != nil {
		return Total{}, err
	}
	var err error
	if t.QuoteHash, err = QuoteHash(t); err != nil {
		return Total{}, err
	}
	return t, nil
}

// totalParcel checks one parcel against the quote and returns it as a
// total's parcel, with the part of its duty and tax charged at checkout.
func totalParcel(i int, p ParcelQuote, cur string, byS map[string]QuoteLine, seen map[string]bool) (TotalParcel, int64, error) {
	if _, err := warehouse("parcels.ship_from", p.ShipFrom); err != nil || p.ShipFrom == "" {
		return TotalParcel{}, 0, splitError("parcels[%d]: ship_from must name a warehouse", i)
	}
	if p.Shipping.ShipFrom != p.ShipFrom || p.Duties.ShipFrom != p.ShipFrom {
		return TotalParcel{}, 0, splitError("parcels[%d]: shipping and duties must ship from %s", i, p.ShipFrom)
	}
	for _, c := range []string{p.Shipping.Cost.Currency, p.Duties.Currency, p.Duties.Duty.Currency, p.Duties.Tax.Currency} {
		if c != cur {
			return TotalParcel{}, 0, splitError("parcels[%d]: an order has one currency (%s)", i, cur)
		}
	}
	tp := TotalParcel{ShipFrom: p.ShipFrom, Subtotal: Money{Currency: cur}, Shipping: p.Shipping.Cost,
		ShippingOptionID: p.Shipping.OptionID, Duty: p.Duties.Duty, Tax: p.Duties.Tax,
		MinDays: p.Shipping.MinDays, MaxDays: p.Shipping.MaxDays}
	for _, it := range p.Items {
		l, ok := byS[it.SKU]
		if !ok || seen[it.SKU] || l.Quantity != it.Quantity || l.ShipFrom != p.ShipFrom {
			return TotalParcel{}, 0, splitError("parcels[%d]: %s is not a quote line priced at %s, or is in two parcels", i, it.SKU, p.ShipFrom)
		}
		seen[it.SKU] = true
		tp.Items = append(tp.Items, LineItem{SKU: it.SKU, Quantity: it.Quantity})
		tp.Subtotal.Amount += l.LineTotal.Amount
	}
	if tp.Subtotal != p.Landed.Goods {
		return TotalParcel{}, 0, toolkit.Errorf(toolkit.PriceChanged, "parcel from %s: the quote prices its goods at %s, the origin choice at %s",
			p.ShipFrom, tp.Subtotal.Display(), p.Landed.Goods.Display()).
			WithRecovery("choose the origins again and re-quote", ToolChooseOrigins, ToolGetQuote)
	}
	share, err := checkoutShare(p.Duties)
	if err != nil {
		return TotalParcel{}, 0, err
	}
	tp.DueOnDelivery = Money{Amount: tp.Duty.Amount + tp.Tax.Amount - share, Currency: cur}
	return tp, share, nil
}

func splitError(format string, args ...any) *toolkit.Error {
	return toolkit.Errorf(toolkit.InvalidArgument, format, args...).WithDetail("fields", []string{"parcels"})
}
