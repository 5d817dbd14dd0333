package tax

import (
	"fmt"
	"slices"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
)

// Threshold describes a destination's import regime at a date, amounts in
// minor units of Currency. A nil pointer means the regime has no such
// threshold; a zero DutyFreeMax means de minimis relief is suspended.
type Threshold struct {
	// Regime is the regime key: the country, or "EU" for EU members.
	Regime   string `json:"regime"`
	Currency string `json:"currency"`
	// Valuation is "CIF" (shipping is dutiable) or "FOB".
	Valuation string `json:"valuation"`
	// DutyFreeMax: goods value at or below which no duty is charged
	// (strictly below when Strict). DutyBasis: "consignment" or "item".
	DutyFreeMax *int64 `json:"duty_free_max,omitempty"`
	DutyBasis   string `json:"duty_basis,omitempty"`
	Strict      bool   `json:"strict,omitempty"`
	// TaxFreeMax: consignment value at or below which no import tax is
	// charged at the border.
	TaxFreeMax *int64 `json:"tax_free_max,omitempty"`
	// TaxMinAmount: border tax amounts at or below it are not collected
	// (Switzerland, CHF 5).
	TaxMinAmount *int64 `json:"tax_min_amount,omitempty"`
	// CheckoutTaxMax: value at or below which the seller must charge the
	// tax at checkout (IOSS, UK £135, AU/NZ LVG, SG OVR, NO VOEC);
	// CheckoutBasis "consignment" or "item".
	CheckoutTaxMax *int64 `json:"checkout_tax_max,omitempty"`
	CheckoutBasis  string `json:"checkout_basis,omitempty"`
	// FlatDutyPerHS6 replaces duty relief below DutyFreeMax with a flat
	// amount per distinct HS6 (EU from 2026-07-01, EUR 3).
	FlatDutyPerHS6 *int64 `json:"flat_duty_per_hs6,omitempty"`
	// IneligibleOrigins lose the duty relief (US 2025: CN, HK).
	IneligibleOrigins []string `json:"ineligible_origins,omitempty"`
	Scheme            string   `json:"scheme,omitempty"`
	// ChannelBound: an override for this origin depends on the customs
	// channel (postal or courier), so the answer names the channel.
	ChannelBound bool   `json:"channel_bound,omitempty"`
	Notes        []Note `json:"notes"`
	Source       string `json:"source"`

	excluded []string
	period   *regimePeriod
	reg      *regime
}

func (r *rules) threshold(country, shipFrom string, channel Channel, at time.Time) (Threshold, error) {
	g, err := r.regimeFor(country)
	if err != nil {
		return Threshold{}, err
	}
	var p *regimePeriod
	for i := range g.Periods {
		if !g.Periods[i].From.After(at) {
			p = &g.Periods[i]
		}
	}
	if p == nil {
		return Threshold{}, fmt.Errorf("%w: import regime of %s before %s", ErrNoRuleInForce, country, g.Periods[0].From.Format(time.DateOnly))
	}
	amt := func(s *string) *int64 {
		if s == nil {
			return nil
		}
		v, _ := money.ParseMajor(*s, g.Currency) // validated at load
		return &v
	}
	t := Threshold{
		Regime: r.regimeKey(country), Currency: g.Currency, Valuation: g.Valuation,
		DutyFreeMax: amt(p.DutyFreeMax), DutyBasis: p.DutyBasis, Strict: p.Strict,
		TaxFreeMax: amt(p.TaxFreeMax), TaxMinAmount: amt(p.TaxMinAmount),
		CheckoutTaxMax: amt(p.CheckoutTaxMax), CheckoutBasis: p.CheckoutBasis,
		IneligibleOrigins: p.IneligibleOrigin, Scheme: p.Scheme, Source: p.Source,
		excluded: p.LowValueExcluded, period: p, reg: g,
	}
	if p.FlatDuty != nil && (p.FlatDuty.Until.IsZero() || at.Before(p.FlatDuty.Until.Time)) {
		t.FlatDutyPerHS6 = amt(&p.FlatDuty.Amount)
	}
	for _, n := range p.Notes {
		t.Notes = append(t.Notes, r.note(n))
	}
	for _, o := range p.Overrides {
		if !slices.Contains(o.ShipFrom, shipFrom) {
			continue
		}
		if o.Channel != "" {
			// The regime depends on the channel: say which one was
			// assumed, and skip the override for any other channel.
			t.ChannelBound = true
			if o.Channel != channel {
				continue
			}
		}
		if o.Source != "" {
			t.Source = o.Source
		}
		if o.DutyFreeMax != nil {
			t.DutyFreeMax = amt(o.DutyFreeMax)
		}
		if o.TaxFreeMax != nil {
			t.TaxFreeMax = amt(o.TaxFreeMax)
		}
		if o.Note != "" {
			t.Notes = append(t.Notes, r.note(o.Note))
		}
	}
	return t, nil
}

// within reports whether value is inside a threshold (≤, or < if strict).
func within(value int64, max *int64, strict bool) bool {
	if max == nil {
		return false
	}
	if strict {
		return value < *max
	}
	return value <= *max
}
