package commerce

import (
	"context"
	"errors"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/rules/shipping"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// ShippingTTL is how long shipping options hold.
const ShippingTTL = 30 * time.Minute

// ShippingRater prices shipping options for a packed order. The built-in
// one is the rate card of commerce/rules/shipping; a carrier-rating API can
// replace it. Costs may come in any currency; the tool converts them.
type ShippingRater interface {
	Options(ctx context.Context, origin, country string, items []shipping.Item) ([]shipping.Option, string, error)
}

// RulesShipping is the built-in ShippingRater.
type RulesShipping struct{}

// Options implements ShippingRater.
func (RulesShipping) Options(_ context.Context, origin, country string, items []shipping.Item) ([]shipping.Option, string, error) {
	opts, err := shipping.Quote(shipping.Input{Origin: origin, Country: country, Items: items})
	return opts, shipping.RulesetVersion(), err
}

func shippingSpec() toolkit.Spec {
	return lookupSpec(ToolQuoteShipping, ShippingTTL, "ratecard",
		"Quote economy, standard and express shipping for a basket of catalog SKUs to a destination, from a "+
			"warehouse (ship_from DE, US or GB; DE when absent), as one parcel priced by zone and weight band on max(actual, dimensional) weight. Use it in "+
			"parallel with pricing and compliance; only country, region and postal code of the destination are needed. "+
			"Success: options cheapest first with carrier, cost in the requested currency, delivery estimate in business "+
			"days and transport mode, valid 30 min. Common failures: ADDRESS_INVALID (fields named), NOT_FOUND "+
			"(unknown SKU), COMPLIANCE_BLOCKED (destination under embargo or not served), INVALID_ARGUMENT (parcel "+
			"beyond every service's limits: split the order).")
}

func (t *tools) quoteShipping(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
	var in QuoteShippingArgs
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	shipFrom, err := warehouse("ship_from", in.ShipFrom)
	if err != nil {
		return nil, err
	}
	dest, products, warnings, err := t.basket(ctx, in.Destination, in.Items)
	if err != nil {
		return nil, err
	}
	out, err := t.rateParcel(ctx, shipFrom, dest.Country, products, in.Items, in.Currency)
	if err != nil {
		return nil, err
	}
	return &toolkit.Output{Data: out, RulesetVersion: out.RulesetVersion, Warnings: warnings}, nil
}

// shippingError maps the rate card's errors into the closed set.
func shippingError(err error) error {
	switch {
	case errors.Is(err, shipping.ErrNotServed):
		return toolkit.Errorf(toolkit.ComplianceBlocked, "%v", err).WithDetail("upstream_code", "not_served").
			WithRecovery("this destination cannot be shipped to; tell the user")
	case errors.Is(err, shipping.ErrUnknownDestination):
		return toolkit.Errorf(toolkit.AddressInvalid, "%v", err).WithDetail("fields", []string{"destination.country"})
	case errors.Is(err, shipping.ErrNoService):
		return toolkit.Errorf(toolkit.InvalidArgument, "%v", err).WithDetail("fields", []string{"items"}).
			WithRecovery("split the order into smaller parcels")
	case errors.Is(err, shipping.ErrUnknownOrigin):
		return toolkit.Errorf(toolkit.InvalidArgument, "%v", err).WithDetail("fields", []string{"ship_from"})
	case errors.Is(err, shipping.ErrInvalidInput):
		return toolkit.Errorf(toolkit.InvalidArgument, "%v", err).WithDetail("fields", []string{"items"})
	}
	return err
}

// rateParcel prices the options of one parcel of items (resolved in
// products) from warehouse shipFrom to country, in currency: the answer
// of shipping.quote_options, also what shipping.choose_origins compares.
func (t *tools) rateParcel(ctx context.Context, shipFrom, country string, products map[string]Product, lines []LineItem, currency string) (ShippingQuote, error) {
	items := make([]shipping.Item, 0, len(lines))
	for _, it := range lines {
		p := products[it.SKU]
		items = append(items, shipping.Item{SKU: it.SKU, Quantity: int64(it.Quantity), WeightGrams: int64(p.WeightGrams),
			LengthMM: int64(p.Dims.LengthMM), WidthMM: int64(p.Dims.WidthMM), HeightMM: int64(p.Dims.HeightMM)})
	}
	opts, version, err := t.shipping.Options(ctx, shipFrom, country, items)
	if err != nil {
		return ShippingQuote{}, shippingError(err)
	}
	now := t.now()
	fx, _, err := t.fx.Rates(ctx, now)
	if err != nil {
		return ShippingQuote{}, err
	}
	out := ShippingQuote{ExpiresAt: now.Add(ShippingTTL).Truncate(time.Second), RulesetVersion: version + "+" + fx.Version(), ShipFrom: shipFrom}
	for _, o := range opts {
		cost, err := fx.Convert(Money{Amount: o.Cost, Currency: o.Currency}, currency)
		if err != nil {
			return ShippingQuote{}, err
		}
		out.Options = append(out.Options, ShippingOption{
			OptionID: o.Service, ServiceLevel: o.Service, Carrier: o.Carrier, Cost: cost,
			MinDays: o.MinDays, MaxDays: o.MaxDays, ChargeableGrams: int(o.ChargeableGrams), Zone: o.Zone,
			TransportMode: string(o.Mode), ShipFrom: shipFrom,
		})
	}
	return out, nil
}
