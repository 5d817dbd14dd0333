package commerce

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
	"github.com/cartwright-dev/cartwright/commerce/rules/shipping"
	"github.com/cartwright-dev/cartwright/commerce/rules/tax"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// TaxTTL is how long a duty and tax estimate holds; it rests on prices and
// a shipping cost that hold about as long.
const TaxTTL = 30 * time.Minute

// TaxEstimator estimates duty and tax. The built-in one is
// commerce/rules/tax; a landed-cost service can replace it.
type TaxEstimator interface {
	Estimate(ctx context.Context, in tax.Input) (tax.Result, error)
}

// RulesTax is the built-in TaxEstimator.
type RulesTax struct{}

// Estimate implements TaxEstimator.
func (RulesTax) Estimate(_ context.Context, in tax.Input) (tax.Result, error) {
	return tax.Estimate(in)
}

func dutiesSpec() toolkit.Spec {
	return lookupSpec(ToolDutiesAndTaxes, TaxTTL, "tax-rules",
		"Estimate import duty and VAT/GST/sales tax for the priced lines of a quote and the chosen shipping "+
			"option, shipped from the option's warehouse (ship_from of the option, DE when absent) and declared as postal or courier "+
			"import as that warehouse's rate card says for the service: destination rate (and US state / CA province), duty and tax de "+
			"minimis thresholds (Canada: CUSMA courier thresholds from the US), low-value schemes (IOSS, UK, AU/NZ, SG, NO), duty by HS chapter with FTA preferences, "+
			"DDP or DAP. Use it after pricing and shipping, before the total. Success: duty and tax per line and in "+
			"total, what is charged at checkout and what the recipient pays on delivery, notes and the ruleset version. "+
			"Common failures: ADDRESS_INVALID (destination, e.g. a missing US state, or a state or province the postal code "+
			"contradicts: both fields named), COMPLIANCE_BLOCKED (sanctioned destination, refused before any address check), "+
			"INVALID_ARGUMENT (lines or shipping in another currency, a line_total that is not unit_price × quantity, "+
			"unsupported destination). Warnings: address_region_from_postal_code when the region was derived.")
}

func (t *tools) estimateDuties(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
	var in DutiesAndTaxesArgs
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	if err := refuseSanctioned("destination", in.Destination); err != nil {
		return nil, err
	}
	dest, warnings, err := t.checkDestination("destination", in.Destination)
	if err != nil {
		return nil, err
	}
	out, err := t.dutiesFor(ctx, dest, in)
	if err != nil {
		return nil, err
	}
	o := &toolkit.Output{Data: out, RulesetVersion: out.RulesetVersion, Warnings: warnings}
	if len(out.NotModelled) > 0 {
		o.Status = toolkit.StatusDegraded
		o.Warnings = append(o.Warnings, WarnTaxNotModelled)
	}
	return o, nil
}

// WarnTaxNotModelled: the answer's tax leaves out what its not_modelled
// names (a US locality's rate, a state's taxing of shipping), so the real
// tax may be higher (commerce/rules/README.md#us-sales-tax).
const WarnTaxNotModelled = "tax_not_modelled"

// checkLineTotals refuses lines whose line_total is not unit_price ×
// quantity: duty and tax are charged on the customs value, and a caller's
// line_total of 1 for 999 units must not shrink it.
// The tool refuses rather than recomputing so a caller's bug is seen, not
// silently corrected.
func checkLineTotals(lines []QuoteLine) error {
	var fields []string
	var details []map[string]any
	for i, l := range lines {
		want, err := money.MulDiv(l.UnitPrice.Amount, int64(l.Quantity), 1)
		if err == nil && want == l.LineTotal.Amount {
			continue
		}
		name := fmt.Sprintf("lines[%d].line_total", i)
		fields = append(fields, name)
		details = append(details, map[string]any{"field": name, "sku": l.SKU, "expected": want, "got": l.LineTotal.Amount})
	}
	if len(fields) == 0 {
		return nil
	}
	return toolkit.Errorf(toolkit.InvalidArgument, "line_total must be unit_price × quantity: %v", fields).
		WithDetail("fields", fields).WithDetail("lines", details).
		WithRecovery("pass the lines of the price quote unchanged", ToolGetQuote)
}

func dutiesFrom(r tax.Result, dest Address, fxVersion string) DutiesAndTaxes {
	m := func(a int64) Money { return Money{Amount: a, Currency: r.Currency} }
	d := DutiesAndTaxes{
		Country: dest.Country, Region: dest.Region, Currency: r.Currency, Incoterm: string(r.Incoterm),
		Duty: m(r.Duty), Tax: m(r.Tax), TaxName: r.TaxName, TaxRateBPS: int(r.TaxRate.BPS()),
		DutyDeMinimis: r.DutyDeMinimisApplied, TaxDeMinimis: r.TaxDeMinimisApplied,
		CollectedAtCheckout: r.PayableOnDelivery == 0,
		ChargedAtCheckout:   m(r.ChargedAtCheckout), PayableOnDelivery: m(r.PayableOnDelivery),
		Regime: r.Regime, Scheme: r.Scheme, Notes: []string{}, NotModelled: r.NotModelled,
		RulesetVersion: r.RulesetVersion + "+" + fxVersion,
	}
	for _, l := range r.Lines {
		d.Lines = append(d.Lines, DutyLine{SKU: l.SKU, DutyRateBPS: int(l.DutyRate.BPS()), DutyBasis: l.DutyBasis,
			Duty: m(l.Duty), TaxRateBPS: int(l.TaxRate.BPS()), Tax: m(l.Tax)})
	}
	for _, n := range r.Notes {
		d.Notes = append(d.Notes, n.Code+": "+n.Message)
	}
	return d
}

// taxError maps the tax rules' errors into the closed set.
func taxError(err error) error {
	switch {
	case errors.Is(err, tax.ErrRegionRequired), errors.Is(err, tax.ErrUnknownRegion):
		return toolkit.Errorf(toolkit.AddressInvalid, "%v", err).WithDetail("fields", []string{"destination.region"}).
			WithRecovery("ask the user for the state or province")
	case errors.Is(err, tax.ErrUnsupportedRegion):
		return toolkit.Errorf(toolkit.AddressInvalid, "%v", err).WithDetail("fields", []string{"destination.region"}).
			WithRecovery("this region is not served; ask the user for a delivery address in a served state or province")
	case errors.Is(err, tax.ErrUnsupportedDestination):
		return toolkit.Errorf(toolkit.InvalidArgument, "%v", err).WithDetail("fields", []string{"destination.country"}).
			WithDetail("supported", tax.SupportedDestinations())
	case errors.Is(err, tax.ErrInvalidInput), errors.Is(err, tax.ErrNoRuleInForce):
		return toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	return err
}

// dutiesFor estimates duty and tax for a checked destination: the answer
// of tax.estimate_duties_and_taxes, also what shipping.choose_origins
// compares.
func (t *tools) dutiesFor(ctx context.Context, dest Address, in DutiesAndTaxesArgs) (DutiesAndTaxes, error) {
	// The estimate follows the chosen option's origin: EU import from the
	// US or GB warehouse, CUSMA courier relief into CA from the US, a
	// domestic sale inside the warehouse's country.
	shipFrom, err := warehouse("shipping.ship_from", in.Shipping.ShipFrom)
	if err != nil {
		return DutiesAndTaxes{}, err
	}
	// The customs channel (postal or courier) comes from the warehouse's
	// rate card for the service, never from the carrier text of the input:
	// a caller cannot buy USPS and claim the courier thresholds
	// (commerce/rules/README.md#canada-postal-and-courier-imports).
	channel, err := shipping.ServiceChannel(shipFrom, in.Shipping.ServiceLevel)
	if err != nil {
		return DutiesAndTaxes{}, toolkit.Errorf(toolkit.InvalidArgument, "%v", err).WithDetail("fields", []string{"shipping.service_level"})
	}
	now := t.now()
	fx, _, err := t.fx.Rates(ctx, now)
	if err != nil {
		return DutiesAndTaxes{}, err
	}
	thresholdFallback := false
	q := tax.Input{
		Destination: tax.Destination{Country: dest.Country, Region: dest.Region, PostalCode: dest.PostalCode}, ShipFrom: shipFrom, Channel: tax.Channel(channel),
		Currency: in.Currency, Shipping: in.Shipping.Cost.Amount, Incoterm: tax.Incoterm(in.Incoterm),
		// The rules in force now; the evidence keeps the answer, so an
		// audit does not need to recompute it later.
		At: now,
		// Thresholds are compared with the same FX table that priced the
		// order, so the two answers agree.
		Convert: func(amount int64, from, to string) (int64, error) {
			m, err := fx.Convert(Money{Amount: amount, Currency: from}, to)
			if err == nil {
				return m.Amount, nil
			}
			// A threshold's currency the rates in use lack (a feed without
			// it) is no fault of the caller's currency: compare with the
			// shipped table, say so, or fail as the rates' problem.
			v, ferr := builtinConvert(amount, from, to)
			if ferr != nil {
				return 0, toolkit.Errorf(toolkit.UpstreamError, "no exchange rate between %s and %s in the rates in use or the shipped table", from, to).
					WithDetail("upstream_code", "fx_rate_missing")
			}
			thresholdFallback = true
			return v, nil
		},
	}
	var fields []string
	if in.Shipping.Cost.Currency != in.Currency {
		fields = append(fields, "shipping.cost.currency")
	}
	for _, l := range in.Lines {
		if l.LineTotal.Currency != in.Currency || l.UnitPrice.Currency != in.Currency {
			fields = append(fields, "lines["+l.SKU+"].line_total.currency")
		}
		q.Lines = append(q.Lines, tax.Line{SKU: l.SKU, HSCode: l.HSCode, OriginCountry: l.Origin,
			CustomsValue: l.LineTotal.Amount, Quantity: int64(l.Quantity)})
	}
	if len(fields) > 0 {
		return DutiesAndTaxes{}, toolkit.Errorf(toolkit.InvalidArgument, "an order has one currency (%s)", in.Currency).
			WithDetail("fields", fields)
	}
	if err := checkLineTotals(in.Lines); err != nil {
		return DutiesAndTaxes{}, err
	}
	res, err := t.tax.Estimate(ctx, q)
	if err != nil {
		return DutiesAndTaxes{}, taxError(err)
	}
	out := dutiesFrom(res, dest, fx.Version())
	out.ShipFrom = shipFrom
	if thresholdFallback {
		out.Notes = append(out.Notes, "FX_THRESHOLD_FALLBACK: the exchange rates in use lack a threshold's currency; it was compared with the shipped table's indicative rates.")
	}
	return out, nil
}

// builtinConvert converts with the shipped table (data/fx_rates.json).
func builtinConvert(amount int64, from, to string) (int64, error) {
	t, err := BuiltinFX()
	if err != nil {
		return 0, err
	}
	m, err := t.Convert(Money{Amount: amount, Currency: from}, to)
	return m.Amount, err
}
